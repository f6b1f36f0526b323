//! The one-pass path of FLOAT elementwise kernels. When every operand of a call is FLOAT
//! and laid out row-major over the output's shape (no broadcast, no gaps), the kernel
//! reads and writes device memory where it lies, in one pass, instead of gathering each
//! operand into scratch buffers and scattering the result: the same arithmetic in the
//! same order per element, so the same bits as the general path, at about a third of the
//! memory traffic.

use super::phase2::KernelCall;
use crate::mem::Alloc;
use crate::state::lock;
use crate::strided::is_row_major;
use ascend_sys::ACL_FLOAT;
use std::sync::{Arc, MutexGuard};

/// The most operands (inputs and the output) one call may bring.
const MAX_OPERANDS: usize = 4;

/// Elements per block of the one-pass loop (2 KiB of each operand).
const BLOCK: usize = 512;

/// Elements from which a streaming formula is split over threads: below it, a second
/// thread's start-up and the other core's cold cache cost more than it computes.
const STREAMING_PARALLEL_FROM: usize = 1 << 22;

/// Threads for a streaming formula over `len` elements.
fn streaming_threads(len: usize) -> usize {
    if len < STREAMING_PARALLEL_FROM {
        1
    } else {
        crate::strided::threads_for(len)
    }
}

/// The block of a per-element formula: `ys[j] = f([xs[0][j], …])`.
fn elementwise<const N: usize>(
    f: impl Fn([f32; N]) -> f32 + Sync,
) -> impl Fn([&[f32]; N], &mut [f32]) + Sync {
    move |xs, ys| {
        for (j, y) in ys.iter_mut().enumerate() {
            *y = f(std::array::from_fn(|k| xs[k][j]));
        }
    }
}

impl KernelCall {
    /// Computes `out[i] = f([inputs[0][i], …])` for every element, in one pass over device
    /// memory, when `inputs` and `out` are all FLOAT with the output's dims, row-major.
    /// `None` when the call does not qualify, for the caller's general path (so it must
    /// compute the same formula); an output that partly overlaps an input also falls back
    /// (an exact alias, as in the in-place forms, is fine: each element is read before it
    /// is written). Large tensors are split over threads as the general path does.
    pub(crate) fn dense_f32<const N: usize>(
        &self,
        inputs: [usize; N],
        out: usize,
        f: impl Fn([f32; N]) -> f32 + Sync,
    ) -> Option<Result<(), String>> {
        self.dense_blocks(inputs, out, crate::strided::threads_for, elementwise(f))
    }

    /// [`dense_f32`](Self::dense_f32) for a formula cheaper than its memory traffic (a
    /// sum, a product): one thread below [`STREAMING_PARALLEL_FROM`] elements.
    pub(crate) fn dense_f32_streaming<const N: usize>(
        &self,
        inputs: [usize; N],
        out: usize,
        f: impl Fn([f32; N]) -> f32 + Sync,
    ) -> Option<Result<(), String>> {
        self.dense_blocks(inputs, out, streaming_threads, elementwise(f))
    }

    /// [`dense_f32_streaming`](Self::dense_f32_streaming) of one input whose formula maps a
    /// slice in place (`map` receives a block of the input and leaves the output's values
    /// in it).
    pub(crate) fn dense_f32_map(
        &self,
        input: usize,
        out: usize,
        map: impl Fn(&mut [f32]) + Sync,
    ) -> Option<Result<(), String>> {
        self.dense_blocks([input], out, streaming_threads, |[x], ys| {
            ys.copy_from_slice(&x[..ys.len()]);
            map(ys);
        })
    }

    /// The one pass: `block(inputs, outputs)` for consecutive blocks of at most [`BLOCK`]
    /// elements, on `threads(numel)` threads. The blocks are the device memory itself when
    /// every operand is aligned for f32 and none is the output; otherwise the inputs'
    /// blocks are copied to the stack first (a block read whole before its output is
    /// written keeps an exact alias, the in-place forms, correct).
    fn dense_blocks<const N: usize>(
        &self,
        inputs: [usize; N],
        out: usize,
        threads: fn(usize) -> usize,
        block: impl Fn([&[f32]; N], &mut [f32]) + Sync,
    ) -> Option<Result<(), String>> {
        const { assert!(N < MAX_OPERANDS, "inputs and the output fit MAX_OPERANDS") };
        let (out_op, out_layout) = self.operand(out).ok()?;
        let dims = &out_layout.dims;
        let mut args = [(out_op, out_layout, out); MAX_OPERANDS];
        for (k, &arg) in inputs.iter().enumerate() {
            let (op, layout) = self.operand(arg).ok()?;
            args[k + 1] = (op, layout, arg);
        }
        let args = &args[..=N];
        for &(op, layout, _) in args {
            let view = layout.view(op.base_byte());
            if layout.dtype != ACL_FLOAT
                || layout.dims != *dims
                || !is_row_major(view.dims, view.strides)
            {
                return None;
            }
        }

        // Every allocation locked once, in address order (as every path that holds two
        // allocations' locks takes them), for the whole computation.
        let mut order = [0usize; MAX_OPERANDS];
        for (k, slot) in order.iter_mut().enumerate() {
            *slot = k;
        }
        let order = &mut order[..=N];
        order.sort_by_key(|&k| args[k].0.alloc.start);
        let mut guards: [Option<MutexGuard<'_, Vec<u8>>>; MAX_OPERANDS] =
            [const { None }; MAX_OPERANDS];
        // Per argument: its allocation's buffer address and length.
        let mut buffers = [(0usize, 0usize); MAX_OPERANDS];
        for (i, &k) in order.iter().enumerate() {
            let alloc: &Arc<Alloc> = &args[k].0.alloc;
            if i > 0 && Arc::ptr_eq(&args[order[i - 1]].0.alloc, alloc) {
                buffers[k] = buffers[order[i - 1]];
                continue;
            }
            let mut guard = lock(&alloc.data);
            buffers[k] = (guard.as_mut_ptr() as usize, guard.len());
            guards[i] = Some(guard);
        }

        let numel: usize = dims.iter().product();
        // Each operand's first element as an address (a `usize`, so that the per-thread
        // closures are `Send`, which a raw pointer is not).
        let mut spans = [0usize; MAX_OPERANDS];
        for (k, &(op, layout, arg)) in args.iter().enumerate() {
            let (buffer, len) = buffers[k];
            if let Err(e) = layout.check_bounds(op.base_byte(), len, self.name(arg)) {
                return Some(Err(e));
            }
            if numel == 0 {
                continue;
            }
            let first = op.base_byte() as i64 + layout.view(op.base_byte()).offset * 4;
            spans[k] = buffer + first as usize;
        }
        let out_span = spans[0];
        let bytes = numel * 4;
        for &span in &spans[1..=N] {
            let disjoint = span + bytes <= out_span || out_span + bytes <= span;
            if span != out_span && !disjoint {
                return None;
            }
        }

        let inputs: [usize; N] = std::array::from_fn(|k| spans[k + 1]);
        let out_addr = out_span;
        let direct = spans[..=N].iter().all(|s| s % align_of::<f32>() == 0)
            && inputs.iter().all(|&a| a != out_addr);
        let run = |start: usize, end: usize| {
            if direct {
                // SAFETY: the spans' allocations are locked for the whole computation,
                // `check_bounds` put elements `0..numel` of each inside them, `start..end`
                // lies in `0..numel`, every span is aligned for f32, and the output
                // overlaps no input (checked above), so these slices alias nothing else.
                let (xs, ys) = unsafe {
                    (
                        inputs.map(|a| {
                            std::slice::from_raw_parts((a as *const f32).add(start), end - start)
                        }),
                        std::slice::from_raw_parts_mut(
                            (out_addr as *mut f32).add(start),
                            end - start,
                        ),
                    )
                };
                for (i, y) in ys.chunks_mut(BLOCK).enumerate() {
                    let at = i * BLOCK;
                    block(xs.map(|x| &x[at..at + y.len()]), y);
                }
                return;
            }
            let mut xs = [[0.0f32; BLOCK]; N];
            let mut ys = [0.0f32; BLOCK];
            let mut i = start;
            while i < end {
                let n = BLOCK.min(end - i);
                for (buf, &addr) in xs.iter_mut().zip(&inputs) {
                    // SAFETY: as above, for `i..i + n`; bytes are copied because the span
                    // may be unaligned for f32; the stack buffer is not device memory.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            (addr as *const u8).add(i * 4),
                            buf.as_mut_ptr().cast::<u8>(),
                            n * 4,
                        );
                    }
                }
                block(std::array::from_fn(|k| &xs[k][..n]), &mut ys[..n]);
                // SAFETY: as above, for the output, which partly overlaps no input; every
                // input element of this block was read above.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        ys.as_ptr().cast::<u8>(),
                        (out_addr as *mut u8).add(i * 4),
                        n * 4,
                    );
                }
                i += n;
            }
        };
        let threads = threads(numel);
        if threads < 2 {
            run(0, numel);
        } else {
            let per = numel.div_ceil(threads);
            let run = &run;
            std::thread::scope(|s| {
                for start in (0..numel).step_by(per) {
                    s.spawn(move || {
                        crate::stream::mark_device_thread();
                        run(start, (start + per).min(numel));
                    });
                }
            });
        }
        drop(guards);
        Some(Ok(()))
    }
}
