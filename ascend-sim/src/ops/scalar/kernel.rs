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
        return complex(row, call, compute, out_dtype, n, other * alpha);
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
        let (f, t) = (row.f32, term as f32);
        let no_temporaries = decision.ws[SELF].is_none() && decision.ws[OUT].is_none();
        if dt == DType::F32
            && no_temporaries
            && let Some(done) = call.dense_f32([SELF], OUT, |[x]| f(x, t))
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
/// `compute`'s, written as `out`'s dtype (a real `out` takes the real part).
fn complex(
    row: &ScalarOp,
    call: &KernelCall,
    compute: aclDataType,
    out_dtype: aclDataType,
    n: usize,
    term: f64,
) -> Result<(), String> {
    let mut bytes = vec![0u8; n * 16];
    call.gather_as(SELF, ACL_COMPLEX128, &mut bytes)?;
    let part = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    let narrow = |v: f64| {
        if compute == ACL_COMPLEX64 {
            f64::from(v as f32)
        } else {
            v
        }
    };
    let values: Vec<Complex64> = bytes
        .chunks_exact(16)
        .map(|c| {
            let (re, im) = (part(&c[..8]), part(&c[8..]));
            let (re, im) = match row.rule {
                Rule::Adds | Rule::Subs => ((row.f64)(re, term), im),
                Rule::Pow => {
                    let z = pow_complex(Complex64::new(re, im), term);
                    (z.re, z.im)
                }
                // Muls and Divs (comparisons of complex values are refused in phase 1).
                _ => ((row.f64)(re, term), (row.f64)(im, term)),
            };
            Complex64::new(narrow(re), narrow(im))
        })
        .collect();
    match out_dtype {
        ACL_COMPLEX64 | ACL_COMPLEX128 => {
            let wide = out_dtype == ACL_COMPLEX128;
            let b: Vec<u8> = values
                .iter()
                .flat_map(|z| {
                    if wide {
                        [z.re.to_le_bytes(), z.im.to_le_bytes()].concat()
                    } else {
                        [(z.re as f32).to_le_bytes(), (z.im as f32).to_le_bytes()].concat()
                    }
                })
                .collect();
            call.scatter_bytes(OUT, &b)
        }
        _ => call.write_f64(OUT, &values.iter().map(|z| z.re).collect::<Vec<_>>()),
    }
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
