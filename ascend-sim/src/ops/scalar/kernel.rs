//! The tensor–scalar family's kernel: each element of `self` with the scalar term, in the
//! compute dtype, cast to `out`'s.

use super::{ALPHA_ATTR, OTHER_ATTR, OUT, SELF};
use crate::cast::round;
use crate::nnopbase::KernelCall;
use crate::ops::checks::is_complex;
use crate::stream::Scratch;
use crate::strided::{DType, par_chunks};
use ascend_ops::scalar::{Rule, ScalarOp};
use ascend_ops::unary::Complex64;
use ascend_sys::*;

/// The queued compute: `self` read whole before `out` is written, so the in-place form
/// needs no care about overlap.
pub(super) fn run(row: &ScalarOp, call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let decision = call.decision();
    let (compute, n) = (decision.compute, decision.numel());
    let other = decision.attr_f64(OTHER_ATTR);
    let alpha = if row.alpha {
        decision.attr_f64(ALPHA_ATTR)
    } else {
        1.0
    };
    let (self_dtype, out_dtype) = (call.dtype(SELF)?, call.dtype(OUT)?);
    if is_complex(compute) && !row.compares() {
        return complex(row, call, compute, other * alpha);
    }
    let term = row.term(compute, other, alpha, round);
    if row.compares() {
        // Both operands in the compute dtype; the BOOL result cast to out's dtype.
        let [x] = scratch.wide::<1>(n);
        call.read_f64(SELF, &decision.out_shape, x)?;
        for v in x.iter_mut() {
            *v = (row.f64)(round(compute, *v), term);
        }
        return call.write_f64(OUT, x);
    }
    if let Some(dt) =
        DType::from_acl(compute).filter(|_| self_dtype == compute && out_dtype == compute)
    {
        let (f, f_slice, t) = (row.f32, row.f32_slice, term as f32);
        let no_temporaries = decision.ws[SELF].is_none() && decision.ws[OUT].is_none();
        if dt == DType::F32
            && no_temporaries
            && let Some(done) = call.dense_f32_map(SELF, OUT, |x| f_slice(x, t))
        {
            return done;
        }
        // The contiguous-friendly path: f32 values, one tight loop, split over threads
        // when large.
        let [x] = scratch.get::<1>(n);
        call.read(SELF, &decision.out_shape, x)?;
        call.through_workspace(SELF, dt, x)?;
        par_chunks(x, |_, x| {
            for v in x {
                *v = dt.round(f(*v, t));
            }
        });
        call.through_workspace(OUT, dt, x)?;
        return call.write(OUT, x);
    }
    let [x] = scratch.wide::<1>(n);
    call.read_f64(SELF, &decision.out_shape, x)?;
    // The cast of an integer result to an integer out wraps (a DOUBLE one would saturate).
    let wrap = crate::tables::is_integral(compute) && crate::tables::is_integral(out_dtype);
    for v in x.iter_mut() {
        let input = round(compute, *v);
        *v = match (compute, row.int) {
            (ACL_DOUBLE, _) => (row.f64)(input, term),
            (ACL_FLOAT | ACL_FLOAT16 | ACL_BF16, _) => {
                round(compute, f64::from((row.f32)(input as f32, term as f32)))
            }
            (ACL_BOOL, _) | (_, None) => round(compute, (row.f64)(input, term)),
            (_, Some(g)) => round(compute, g(input as i64, term as i64) as f64),
        };
        if wrap {
            *v = round(out_dtype, *v);
        }
    }
    call.write_f64(OUT, x)
}

/// The complex kernel: each element with the real term, in f64, each part rounded to
/// `compute`'s, written as `out`'s dtype.
fn complex(
    row: &ScalarOp,
    call: &KernelCall,
    compute: aclDataType,
    term: f64,
) -> Result<(), String> {
    let values: Vec<Complex64> = crate::ops::complex::read(call, SELF)?
        .into_iter()
        .map(|z| {
            let z = match row.rule {
                Rule::Adds | Rule::Subs => Complex64::new((row.f64)(z.re, term), z.im),
                Rule::Pow => pow_complex(z, term),
                // Muls and Divs (comparisons of complex values are refused in phase 1).
                _ => Complex64::new((row.f64)(z.re, term), (row.f64)(z.im, term)),
            };
            crate::ops::complex::narrow(compute, z)
        })
        .collect();
    crate::ops::complex::write(call, OUT, &values)
}

/// `z^t` for a real `t`: 2 as the vendor's Square (`z·z`), 1 and 0 exactly, otherwise in
/// polar form.
fn pow_complex(z: Complex64, t: f64) -> Complex64 {
    if t == 2.0 {
        z * z
    } else if t == 1.0 {
        z
    } else if t == 0.0 {
        Complex64::new(1.0, 0.0)
    } else {
        z.powf(t)
    }
}
