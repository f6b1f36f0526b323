//! Data-parallel training steps over every device, with HCCL.
//!
//! Every rank (one thread per device) holds the same parameters `w` (broadcast from rank
//! 0), receives its own upstream gradient `g_r` for each step (its shard of the batch),
//! computes the local gradient `mish_backward(g_r, w)` on its device and sums the local
//! gradients of all ranks with `all_reduce`. After the last step, each rank's local
//! gradient is checked against the CPU reference `reference::mish_backward(g_r, w)` under
//! CANN's precision standard for f32, and the summed gradient must be, on every rank and
//! bit for bit, the sum in rank order of the local gradients. Prints the time per step.
//!
//! On the simulator (no CANN found) the devices are `ASCEND_SIM_DEVICES`, four Atlas A2 by
//! default; on an Atlas machine, every NPU.
//!
//! ```sh
//! cargo run --release --example data_parallel -- [elements per rank] [steps]
//! ```

use ascendcl::hccl::{Communicator, ReduceOp};
use ascendcl::{Device, DeviceTensor, Runtime, Stream, mish_backward, reference};
use ndarray::{Array1, ArrayD, Ix1};
use std::time::{Duration, Instant};

/// The upstream gradient of rank `rank` at step `step`: a deterministic pattern.
fn upstream(n: usize, rank: usize, step: usize) -> Array1<f32> {
    Array1::from_shape_fn(n, |i| {
        (((i * 7 + rank * 13 + step * 5) % 17) as f32 - 8.0) / 16.0
    })
}

fn parameters(n: usize) -> Array1<f32> {
    Array1::from_shape_fn(n, |i| ((i * 37 % 101) as f32 - 50.0) / 10.0)
}

/// What one rank measured and computed.
struct RankRun {
    step_times: Vec<Duration>,
    /// The last step's local gradient, and the summed one.
    local: Vec<f32>,
    total: Vec<f32>,
}

fn rank_loop(comm: &Communicator, n: usize, steps: usize) -> ascendcl::Result<RankRun> {
    let stream: Stream = comm.device().stream()?;
    let rank = comm.rank() as usize;
    // The parameters start on rank 0 and reach every rank by broadcast.
    let mut w = if rank == 0 {
        DeviceTensor::from_array(&stream, &parameters(n))?
    } else {
        DeviceTensor::<f32>::zeros(&stream, &[n])?
    };
    comm.broadcast(&mut w, 0, &stream)?;
    let mut local = DeviceTensor::<f32>::zeros(&stream, &[n])?;
    let mut total = DeviceTensor::<f32>::zeros(&stream, &[n])?;
    let mut step_times = Vec::with_capacity(steps);
    for step in 0..steps {
        let started = Instant::now();
        let g = DeviceTensor::from_array(&stream, &upstream(n, rank, step))?;
        mish_backward(&g, &w, &mut local, &stream)?;
        comm.all_reduce(&local, &mut total, ReduceOp::Sum, &stream)?;
        stream.synchronize()?;
        step_times.push(started.elapsed());
    }
    Ok(RankRun {
        step_times,
        local: local.to_array::<Ix1>(&stream)?.into_iter().collect(),
        total: total.to_array::<Ix1>(&stream)?.into_iter().collect(),
    })
}

/// MERE and MARE of `got` against `want` (CANN's precision standard).
fn mere_mare(got: &[f32], want: &[f32]) -> (f64, f64) {
    let (mut sum, mut max) = (0.0f64, 0.0f64);
    for (&a, &g) in got.iter().zip(want) {
        let rel = (f64::from(a) - f64::from(g)).abs() / (f64::from(g).abs() + 1e-7);
        sum += rel;
        max = max.max(rel);
    }
    (sum / got.len().max(1) as f64, max)
}

fn main() -> ascendcl::Result<()> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1 << 18);
    let steps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    // Four Atlas A2 when the simulator runs (no CANN found) and the environment does not
    // describe another machine.
    #[cfg(feature = "sim")]
    if std::env::var_os("ASCEND_SIM_DEVICES").is_none() {
        Runtime::configure_simulator(&ascendcl::SimConfig::new().devices(["Ascend910B4"; 4]))?;
    }
    let rt = Runtime::auto()?;
    let devices = (0..rt.device_count()?)
        .map(|id| rt.device(id))
        .collect::<ascendcl::Result<Vec<Device>>>()?;
    println!(
        "backend: {}; {} rank(s) on {}; {n} f32 elements per rank, {steps} steps",
        rt.backend(),
        devices.len(),
        devices.first().map_or("no device", |d| d.soc_name())
    );
    let comms = Communicator::init_all(&devices)?;

    // One thread per rank: HCCL's calls meet the other ranks' calls.
    let runs = std::thread::scope(|s| {
        let handles: Vec<_> = comms
            .iter()
            .map(|comm| s.spawn(move || rank_loop(comm, n, steps)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread panicked"))
            .collect::<ascendcl::Result<Vec<RankRun>>>()
    })?;

    // Each rank's local gradient of the last step against the CPU reference.
    let w = parameters(n).into_dyn();
    let t = 2f64.powi(-13);
    let mut precise = true;
    for (rank, run) in runs.iter().enumerate() {
        let g = upstream(n, rank, steps.saturating_sub(1)).into_dyn();
        let want: ArrayD<f32> = reference::mish_backward(g.view(), w.view())?;
        let (mere, mare) = mere_mare(&run.local, want.as_slice().unwrap_or_default());
        precise &= mere < t && mare < 10.0 * t;
        println!("rank {rank}: local gradient vs CPU reference: MERE {mere:.2e}, MARE {mare:.2e}");
    }
    // The summed gradient: the local gradients added in rank order, the same on every rank.
    let mut sum = runs[0].local.clone();
    for run in &runs[1..] {
        for (acc, v) in sum.iter_mut().zip(&run.local) {
            *acc += v;
        }
    }
    let summed = runs.iter().all(|r| {
        r.total
            .iter()
            .zip(&sum)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    });
    println!(
        "f32 limits: MERE < {t:.2e}, MARE < {:.2e}; all_reduce sum exact on every rank: {summed}",
        10.0 * t
    );
    for (rank, run) in runs.iter().enumerate() {
        let total: Duration = run.step_times.iter().sum();
        let fastest = run.step_times.iter().min().copied().unwrap_or_default();
        println!(
            "rank {rank}: {:.3} ms per step (mean of {steps}), fastest {:.3} ms",
            total.as_secs_f64() * 1e3 / steps.max(1) as f64,
            fastest.as_secs_f64() * 1e3
        );
    }
    if !precise || !summed {
        return Err(ascendcl::Error::InvalidArgument(
            "the gradients do not match the CPU reference and their sum".into(),
        ));
    }
    println!("ok");
    Ok(())
}
