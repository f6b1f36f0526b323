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

/// An f32 operand's first element, as an address, so that the per-thread closures are
/// `Send` (a raw pointer is not).
#[derive(Clone, Copy)]
struct Span(usize);

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
        let mut spans = [Span(0); MAX_OPERANDS];
        for (k, &(op, layout, arg)) in args.iter().enumerate() {
            let (buffer, len) = buffers[k];
            if let Err(e) = layout.check_bounds(op.base_byte(), len, self.name(arg)) {
                return Some(Err(e));
            }
            if numel == 0 {
                continue;
            }
            let first = op.base_byte() as i64 + layout.view(op.base_byte()).offset * 4;
            spans[k] = Span(buffer + first as usize);
        }
        let out_span = spans[0];
        let bytes = numel * 4;
        for span in &spans[1..=N] {
            let disjoint = span.0 + bytes <= out_span.0 || out_span.0 + bytes <= span.0;
            if span.0 != out_span.0 && !disjoint {
                return None;
            }
        }

        let run = |start: usize, end: usize| {
            let out = out_span.0 as *mut f32;
            for i in start..end {
                let mut x = [0.0f32; N];
                for (v, span) in x.iter_mut().zip(&spans[1..=N]) {
                    // SAFETY: the span's allocation is locked for the whole computation,
                    // and `check_bounds` put elements `0..numel` of the span inside it;
                    // `i < numel`. The bytes may be unaligned for f32 (a view's offset is
                    // any element count), hence the unaligned read.
                    *v = unsafe { (span.0 as *const f32).add(i).read_unaligned() };
                }
                // SAFETY: as above, for the output; it partly overlaps no input, and an
                // input it aliases exactly had element `i` read just above.
                unsafe { out.add(i).write_unaligned(f(x)) };
            }
        };
        let threads = crate::strided::threads_for(numel);
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
