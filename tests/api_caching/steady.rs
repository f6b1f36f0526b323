//! Reserved memory reaches a steady state when shapes vary: 10,000 steps of random-length
//! allocating kernels, kept for a few steps or dropped with their work queued, synchronised every step or every 200 steps, keep
//! reserved memory within twice the live peak plus the largest block.

use super::SERIAL;
use crate::common::*;
use ascendcl::{DeviceTensor, MemoryStats, mish_new};
use ndarray::Array1;

const STEPS: usize = 10_000;
/// Tensors alive at once, at most.
const LIVE: usize = 6;
/// The longest tensor (elements): 64 KiB of f32, a small-pool block.
const SMALL: usize = 16 << 10;
/// Lengths of the rare large tensors (large pool: 2 and 4 MiB blocks), one allocation in 250.
const LARGE: [usize; 2] = [300 << 10, 600 << 10];

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}

/// Runs the loop, synchronising every `sync_every` steps; checks the bound after every
/// step and returns the figures (bytes beside the input tensor).
fn run(sync_every: usize, seed: u64) -> Figures {
    let dev = device(A2);
    dev.set_caching(true);
    dev.empty_cache();
    let s = dev.stream().unwrap();
    let xs = Array1::from_shape_fn(LARGE[1], |i| ((i % 997) as f32 - 498.0) * 0.01);
    let x = DeviceTensor::from_array(&s, &xs).unwrap();
    s.synchronize().unwrap();
    let start = dev.memory_stats();
    let base = start.allocated; // x
    let mut rng = Rng(seed);
    let mut live: Vec<DeviceTensor<f32>> = Vec::new();
    let (mut max_reserved, mut largest, mut peak) = (0u64, 0u64, 0u64);
    for step in 1..=STEPS {
        let grow = live.len() < 2 || (live.len() < LIVE && rng.below(2) == 0);
        if grow {
            let n = if rng.below(250) == 0 {
                LARGE[rng.below(LARGE.len())]
            } else {
                1 + rng.below(SMALL)
            };
            let y = mish_new::<f32, DeviceTensor<f32>>(x.view().slice(0, 0, n, 1).unwrap(), &s)
                .unwrap();
            largest = largest.max(y.len() as u64 * 4);
            live.push(y);
        } else {
            let y = live.swap_remove(rng.below(live.len()));
            if step % 1000 == 0 {
                // A value read after its queued kernel, never before.
                let got = y.to_array::<ndarray::Ix1>(&s).unwrap();
                let n = got.len();
                let want = ascendcl::reference::mish(xs.slice(ndarray::s![..n])).unwrap();
                let (mere, _) = mere_mare(&got.into_dyn(), &want.into_dyn());
                assert!(
                    mere < threshold(ascendcl::DType::F32),
                    "step {step}: {mere}"
                );
            }
        }
        // An intermediate, dropped with its kernel still queued.
        let n = 1 + rng.below(SMALL);
        drop(mish_new::<f32, DeviceTensor<f32>>(x.view().slice(0, 0, n, 1).unwrap(), &s).unwrap());
        largest = largest.max(n as u64 * 4);
        if step % sync_every == 0 {
            s.synchronize().unwrap();
        }
        let st = dev.memory_stats();
        max_reserved = max_reserved.max(st.reserved - base);
        // The allocator's own peak also sees the intermediates.
        peak = peak.max(st.peak - base);
        // The largest block a request of `largest` bytes gets (its size class).
        let block = ascendcl_size_class(largest);
        assert!(
            st.reserved - base <= 2 * peak + block,
            "step {step}: reserved {} > 2 x live peak {peak} + largest block {block}",
            st.reserved - base
        );
    }
    drop(live);
    s.synchronize().unwrap();
    let end = dev.memory_stats();
    assert_eq!(ascend_sim::last_report(), None);
    drop(x);
    dev.empty_cache();
    Figures {
        max_reserved,
        largest,
        peak,
        start,
        end,
    }
}

/// The allocator's size classes (512-byte steps up to 1 MiB, then 2 MiB steps).
fn ascendcl_size_class(bytes: u64) -> u64 {
    let unit = if bytes <= 1 << 20 { 512 } else { 2 << 20 };
    bytes.div_ceil(unit) * unit
}

struct Figures {
    max_reserved: u64,
    largest: u64,
    peak: u64,
    start: MemoryStats,
    end: MemoryStats,
}

fn report(name: &str, f: Figures) {
    let Figures {
        max_reserved,
        largest,
        peak,
        start,
        end,
    } = f;
    eprintln!(
        "{name}: {STEPS} steps: live peak {} B, largest tensor {largest} B, max reserved {max_reserved} B, \
         final reserved {} B; {} aclrtMalloc, {} aclrtFree, {} cache hits; {} free pieces, {} B free, largest {} B",
        peak,
        end.reserved - start.allocated,
        end.device_allocations - start.device_allocations,
        end.device_frees - start.device_frees,
        end.cache_hits - start.cache_hits,
        end.free_pieces,
        end.free_bytes,
        end.largest_free,
    );
}

#[test]
fn random_shapes_synchronised_every_step_keep_reserved_memory_bounded() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    report("synchronised every step", run(1, 0x9E37_79B9_7F4A_7C15));
}

#[test]
fn random_shapes_synchronised_every_200_steps_keep_reserved_memory_bounded() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    report(
        "synchronised every 200 steps",
        run(200, 0xD1B5_4A32_D192_ED03),
    );
}
