//! Element conversion between dtypes, as a cast on the device does it: floating-point
//! results round to nearest even (one rounding from the source value), floating point to
//! integer truncates toward zero and saturates at the target's range (NaN to 0; the
//! vendor documents no other out-of-range result), integers wrap to the target width, anything nonzero is `true`, a complex number loses its imaginary part on the
//! way to a real type and a real one gets a zero imaginary part. Little-endian bytes.
//!
//! Every pair of BOOL, the signed and unsigned integers, FLOAT16, BF16, FLOAT, DOUBLE,
//! COMPLEX64 and COMPLEX128 converts; any dtype converts to itself (a byte copy).

use ascend_sys::*;
use half::{bf16, f16};

/// One element on its way between dtypes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Val {
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

fn bytes<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

fn read(dt: aclDataType, b: &[u8]) -> Option<Val> {
    Some(match dt {
        ACL_BOOL => Val::Int(i128::from(b[0] != 0)),
        ACL_INT8 => Val::Int(i128::from(b[0] as i8)),
        ACL_UINT8 => Val::Int(i128::from(b[0])),
        ACL_INT16 => Val::Int(i128::from(i16::from_le_bytes(bytes(b)))),
        ACL_UINT16 => Val::Int(i128::from(u16::from_le_bytes(bytes(b)))),
        ACL_INT32 => Val::Int(i128::from(i32::from_le_bytes(bytes(b)))),
        ACL_UINT32 => Val::Int(i128::from(u32::from_le_bytes(bytes(b)))),
        ACL_INT64 => Val::Int(i128::from(i64::from_le_bytes(bytes(b)))),
        ACL_UINT64 => Val::Int(i128::from(u64::from_le_bytes(bytes(b)))),
        ACL_FLOAT16 => Val::Float(f16::from_le_bytes(bytes(b)).to_f64()),
        ACL_BF16 => Val::Float(bf16::from_le_bytes(bytes(b)).to_f64()),
        ACL_FLOAT => Val::Float(f64::from(f32::from_le_bytes(bytes(b)))),
        ACL_DOUBLE => Val::Float(f64::from_le_bytes(bytes(b))),
        ACL_COMPLEX64 => Val::Complex(
            f64::from(f32::from_le_bytes(bytes(b))),
            f64::from(f32::from_le_bytes(bytes(&b[4..]))),
        ),
        ACL_COMPLEX128 => Val::Complex(
            f64::from_le_bytes(bytes(b)),
            f64::from_le_bytes(bytes(&b[8..])),
        ),
        _ => return None,
    })
}

/// The integer a value truncates to (saturating at the i128 range, NaN to 0).
fn integer(v: Val) -> i128 {
    match v {
        Val::Int(i) => i,
        Val::Float(f) | Val::Complex(f, _) => f as i128,
    }
}

/// The integer a value casts to in a target of range `lo..=hi`: a floating value
/// truncates and saturates at the target's range (NaN to 0); an integer is kept whole, and
/// the caller's narrowing wraps it.
fn in_range(v: Val, lo: i128, hi: i128) -> i128 {
    match v {
        Val::Int(i) => i,
        _ => integer(v).clamp(lo, hi),
    }
}

/// `x` as f32 rounded to odd: a half type rounded from it (to nearest even) is `x` rounded
/// once, its 13 or 16 extra bits keeping the second rounding exact; half's own f64
/// conversions round to nearest f32 first and so can round past a tie the wrong way.
fn f32_odd(x: f64) -> f32 {
    let nearest = x as f32;
    if x.is_nan() || f64::from(nearest) == x {
        return nearest;
    }
    // Inexact: the f32 toward zero is `nearest` or its neighbour toward zero (for an
    // overflow to ±∞, ±MAX).
    let toward_zero = if nearest.is_infinite() || f64::from(nearest).abs() > x.abs() {
        f32::from_bits(nearest.to_bits() - 1)
    } else {
        nearest
    };
    f32::from_bits(toward_zero.to_bits() | 1)
}

/// The integer `i` as f32 rounded to odd (see [`f32_odd`]), from its exact value: through
/// f64 an i64 beyond 2^53 would be rounded once already.
fn int_f32_odd(i: i128) -> f32 {
    let nearest = i as f32;
    // An inexact `nearest` is at least 2^24 in magnitude, so an integer: `back` is exact.
    let back = nearest as i128;
    if back == i {
        return nearest;
    }
    let toward_zero = if back.abs() > i.abs() {
        f32::from_bits(nearest.to_bits() - 1)
    } else {
        nearest
    };
    f32::from_bits(toward_zero.to_bits() | 1)
}

/// `v` as f32 rounded to odd, from its exact value.
fn odd(v: Val) -> f32 {
    match v {
        Val::Int(i) => int_f32_odd(i),
        _ => f32_odd(real(v)),
    }
}

/// The real part as f64 (an integer rounds to nearest).
fn real(v: Val) -> f64 {
    match v {
        Val::Int(i) => i as f64,
        Val::Float(f) | Val::Complex(f, _) => f,
    }
}

fn write(dt: aclDataType, v: Val, out: &mut [u8]) -> Option<()> {
    // Truncation to the target width is the wrap of an integer cast.
    match dt {
        ACL_BOOL => {
            out[0] = u8::from(match v {
                Val::Int(i) => i != 0,
                Val::Float(f) => f != 0.0,
                Val::Complex(re, im) => re != 0.0 || im != 0.0,
            })
        }
        ACL_INT8 => out[0] = in_range(v, i8::MIN.into(), i8::MAX.into()) as u8,
        ACL_UINT8 => out[0] = in_range(v, 0, u8::MAX.into()) as u8,
        ACL_INT16 => out[..2]
            .copy_from_slice(&(in_range(v, i16::MIN.into(), i16::MAX.into()) as u16).to_le_bytes()),
        ACL_UINT16 => {
            out[..2].copy_from_slice(&(in_range(v, 0, u16::MAX.into()) as u16).to_le_bytes())
        }
        ACL_INT32 => out[..4]
            .copy_from_slice(&(in_range(v, i32::MIN.into(), i32::MAX.into()) as u32).to_le_bytes()),
        ACL_UINT32 => {
            out[..4].copy_from_slice(&(in_range(v, 0, u32::MAX.into()) as u32).to_le_bytes())
        }
        ACL_INT64 => out[..8]
            .copy_from_slice(&(in_range(v, i64::MIN.into(), i64::MAX.into()) as u64).to_le_bytes()),
        ACL_UINT64 => {
            out[..8].copy_from_slice(&(in_range(v, 0, u64::MAX.into()) as u64).to_le_bytes())
        }
        // One rounding from the source: an integer goes to f32 directly, not through f64.
        ACL_FLOAT => {
            let f = match v {
                Val::Int(i) => i as f32,
                _ => real(v) as f32,
            };
            out[..4].copy_from_slice(&f.to_le_bytes());
        }
        ACL_FLOAT16 => out[..2].copy_from_slice(&f16::from_f32(odd(v)).to_le_bytes()),
        ACL_BF16 => out[..2].copy_from_slice(&bf16::from_f32(odd(v)).to_le_bytes()),
        ACL_DOUBLE => out[..8].copy_from_slice(&real(v).to_le_bytes()),
        ACL_COMPLEX64 | ACL_COMPLEX128 => {
            let (re, im) = match v {
                Val::Complex(re, im) => (re, im),
                _ => (real(v), 0.0),
            };
            if dt == ACL_COMPLEX64 {
                // An integer rounds once, to f32 directly (as to FLOAT).
                let re = match v {
                    Val::Int(i) => i as f32,
                    _ => re as f32,
                };
                out[..4].copy_from_slice(&re.to_le_bytes());
                out[4..8].copy_from_slice(&(im as f32).to_le_bytes());
            } else {
                out[..8].copy_from_slice(&re.to_le_bytes());
                out[8..16].copy_from_slice(&im.to_le_bytes());
            }
        }
        _ => return None,
    }
    Some(())
}

/// Whether elements of `from` convert to `to`.
pub(crate) fn supported(from: aclDataType, to: aclDataType) -> bool {
    let probe = [0u8; 16];
    from == to || read(from, &probe).is_some_and(|v| write(to, v, &mut [0u8; 16]).is_some())
}

/// Converts one element of `from` (its bytes at the start of `src`) into `to` (its bytes
/// at the start of `dst`), for a [`supported`] pair.
pub(crate) fn convert(from: aclDataType, src: &[u8], to: aclDataType, dst: &mut [u8]) {
    if from == to {
        dst.copy_from_slice(&src[..dst.len()]);
    } else if let Some(v) = read(from, src) {
        let _ = write(to, v, dst);
    }
}

/// `v`, an operator's result computed in f64, as `dt` holds it (floating: to nearest
/// even; integers: truncated toward zero and wrapped to the width, as integer arithmetic
/// wraps; bool: 0 or 1), widened back to f64.
pub(crate) fn round(dt: aclDataType, v: f64) -> f64 {
    match dt {
        ACL_DOUBLE => v,
        ACL_FLOAT => f64::from(v as f32),
        ACL_INT8 | ACL_UINT8 | ACL_INT16 | ACL_UINT16 | ACL_INT32 | ACL_UINT32 | ACL_INT64
        | ACL_UINT64 => {
            let mut b = [0u8; 8];
            let _ = write(dt, Val::Int(v as i128), &mut b);
            read(dt, &b).map_or(v, real)
        }
        _ => {
            let mut b = [0u8; 16];
            let mut out = [0u8; 8];
            convert(ACL_DOUBLE, &v.to_le_bytes(), dt, &mut b);
            convert(dt, &b, ACL_DOUBLE, &mut out);
            f64::from_le_bytes(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(from: aclDataType, src: &[u8], to: aclDataType, n: usize) -> Vec<u8> {
        let mut out = vec![0u8; n];
        convert(from, src, to, &mut out);
        out
    }

    #[test]
    fn casts_round_to_nearest_even_and_truncate() {
        // 1 + 2^-11 is halfway between two f16 values: to even (1.0).
        let x = 1.0f32 + 2f32.powi(-11);
        assert_eq!(
            one(ACL_FLOAT, &x.to_le_bytes(), ACL_FLOAT16, 2),
            f16::ONE.to_le_bytes()
        );
        let y = 1.0f32 + 3.0 * 2f32.powi(-11);
        let want = f16::from_f32(y).to_le_bytes();
        assert_eq!(one(ACL_FLOAT, &y.to_le_bytes(), ACL_FLOAT16, 2), want);
        assert_eq!(
            f16::from_le_bytes(bytes(&want)).to_f32(),
            1.0 + 2f32.powi(-9)
        );
        let z = bf16::from_f32(3.5).to_le_bytes();
        assert_eq!(one(ACL_BF16, &z, ACL_FLOAT, 4), 3.5f32.to_le_bytes());
        // Just above a tie between two bf16 values: rounds away from the lower one.
        let x = -1_581_253_424i32;
        assert_eq!(
            bf16::from_f32(f32_odd(f64::from(x))).to_f32(),
            -1_585_446_912.0
        );
        assert_eq!(f32_odd(-1.0), -1.0);
        assert_eq!(
            one(ACL_FLOAT, &(-2.7f32).to_le_bytes(), ACL_INT32, 4),
            (-2i32).to_le_bytes()
        );
        assert_eq!(one(ACL_INT32, &300i32.to_le_bytes(), ACL_UINT8, 1), [44]);
        assert_eq!(
            one(ACL_FLOAT, &f32::NAN.to_le_bytes(), ACL_INT64, 8),
            [0; 8]
        );
        assert_eq!(one(ACL_FLOAT, &0.5f32.to_le_bytes(), ACL_BOOL, 1), [1]);
        // Out of range: a float saturates at the target's range, an integer wraps.
        let inf = f32::INFINITY.to_le_bytes();
        assert_eq!(one(ACL_FLOAT, &inf, ACL_INT32, 4), i32::MAX.to_le_bytes());
        assert_eq!(
            one(ACL_FLOAT, &(-3e9f32).to_le_bytes(), ACL_INT32, 4),
            i32::MIN.to_le_bytes()
        );
        assert_eq!(one(ACL_FLOAT, &(-1.0f32).to_le_bytes(), ACL_UINT8, 1), [0]);
        assert_eq!(
            one(ACL_DOUBLE, &1e300f64.to_le_bytes(), ACL_UINT16, 2),
            [0xff; 2]
        );
        assert_eq!(
            one(ACL_INT64, &(-1i64).to_le_bytes(), ACL_UINT32, 4),
            [0xff; 4]
        );
        let i = (1i64 << 60) + 1;
        assert_eq!(
            one(ACL_INT64, &i.to_le_bytes(), ACL_FLOAT, 4),
            (i as f32).to_le_bytes()
        );
        // An i64 beyond 2^53 rounds once: 2^60 + 2^52 + 1 is just above a bf16 tie (up),
        // which through f64 (to the tie itself, then to even) would round down.
        let i = (1i64 << 60) + (1 << 52) + 1;
        let up = bf16::from_f64(((1u64 << 60) + (1 << 53)) as f64).to_le_bytes();
        assert_eq!(one(ACL_INT64, &i.to_le_bytes(), ACL_BF16, 2), up);
        let i = (1i64 << 60) + (1 << 36) + 1;
        let c = one(ACL_INT64, &i.to_le_bytes(), ACL_COMPLEX64, 8);
        assert_eq!(c[..4], (i as f32).to_le_bytes());
        let c = one(ACL_FLOAT, &2.0f32.to_le_bytes(), ACL_COMPLEX64, 8);
        assert_eq!(c, [2.0f32.to_le_bytes(), 0.0f32.to_le_bytes()].concat());
        assert!(supported(ACL_COMPLEX128, ACL_INT8));
        assert!(supported(35, 35) && !supported(35, ACL_FLOAT));
    }
}
