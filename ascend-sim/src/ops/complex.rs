//! Complex tensors in the kernels: operands read as complex doubles, results rounded part
//! by part to the compute dtype's precision and written as the output's dtype.

use crate::nnopbase::{Attr, KernelCall};
use ascend_ops::unary::Complex64;
use ascend_sys::*;

/// Argument `arg` broadcast to the decision's shape, each element as a complex double
/// (a real dtype's elements with a zero imaginary part).
pub(super) fn read(call: &KernelCall, arg: usize) -> Result<Vec<Complex64>, String> {
    let mut bytes = vec![0u8; call.decision().numel() * 16];
    call.gather_as(arg, ACL_COMPLEX128, &mut bytes)?;
    let part = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    Ok(bytes
        .chunks_exact(16)
        .map(|c| Complex64::new(part(&c[..8]), part(&c[8..])))
        .collect())
}

/// `z` with each part rounded to `compute`'s precision (COMPLEX64 holds two f32).
pub(super) fn narrow(compute: aclDataType, z: Complex64) -> Complex64 {
    if compute == ACL_COMPLEX64 {
        Complex64::new(f64::from(z.re as f32), f64::from(z.im as f32))
    } else {
        z
    }
}

/// Scalar attribute `k` as a complex double (a real scalar with a zero imaginary part).
pub(super) fn scalar_attr(call: &KernelCall, k: usize) -> Complex64 {
    match &call.decision().attrs[k] {
        Attr::Scalar(s) => {
            let mut bytes = [0u8; 16];
            s.convert_to(ACL_COMPLEX128, &mut bytes);
            let part = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
            Complex64::new(part(&bytes[..8]), part(&bytes[8..]))
        }
        _ => Complex64::new(call.decision().attr_f64(k), 0.0),
    }
}

/// Writes `values` (row-major over argument `arg`'s dims) through its view: a complex
/// dtype takes both parts, a real one the real part (as the device's cast does).
pub(super) fn write(call: &KernelCall, arg: usize, values: &[Complex64]) -> Result<(), String> {
    match call.dtype(arg)? {
        ACL_COMPLEX64 => {
            let b: Vec<u8> = values
                .iter()
                .flat_map(|z| [(z.re as f32).to_le_bytes(), (z.im as f32).to_le_bytes()])
                .flatten()
                .collect();
            call.scatter_bytes(arg, &b)
        }
        ACL_COMPLEX128 => {
            let b: Vec<u8> = values
                .iter()
                .flat_map(|z| [z.re.to_le_bytes(), z.im.to_le_bytes()])
                .flatten()
                .collect();
            call.scatter_bytes(arg, &b)
        }
        _ => call.write_f64(arg, &values.iter().map(|z| z.re).collect::<Vec<_>>()),
    }
}
