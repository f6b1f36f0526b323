//! The MishBackward kernel: the vendor's f32 formula, dtype conversions and strided,
//! broadcasting, bounds-checked element access.

use half::{bf16, f16};

/// `grad * mish'(x)` evaluated in f32 the way the vendor kernel does (see the crate docs
/// for the handling of infinities and of `x` below about -88).
///
/// `t = tanh(softplus(x))` is `(e^2 + 2e) / (e^2 + 2e + 2)` with `e = exp(x)` for `x < 0`,
/// and the same divided through by `exp(2x)` for `x >= 0` (`e' = exp(-x)`,
/// `t = (1 + 2e') / (1 + 2e' + 2e'^2)`); then `mish'(x) = t - x * (t^2 - 1) / (1 + exp(-x))`.
/// Where `exp(-x)` overflows (x below about -88.7) the division by `1 + exp(-x)` is
/// evaluated as the multiplication by the divided-through sigmoid `e / (1 + e)`.
/// At `x = +inf` the result is `grad * 1`, at `x = -inf` it is `grad * 0`.
pub fn mish_grad_f32(grad: f32, x: f32) -> f32 {
    if x.is_nan() {
        return f32::NAN;
    }
    if x == f32::INFINITY {
        return grad * 1.0;
    }
    if x == f32::NEG_INFINITY {
        return grad * 0.0;
    }
    let t = if x < 0.0 {
        let e = x.exp();
        let n = e * e + 2.0 * e;
        n / (n + 2.0)
    } else {
        let e = (-x).exp();
        let n = 1.0 + 2.0 * e;
        n / (n + 2.0 * e * e)
    };
    let d = 1.0 + (-x).exp();
    let term = if d.is_finite() {
        x * (t * t - 1.0) / d
    } else {
        let e = x.exp();
        x * (t * t - 1.0) * (e / (1.0 + e))
    };
    (t - term) * grad
}

/// The floating-point dtypes the operator computes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DType {
    F32,
    F16,
    Bf16,
}

impl DType {
    pub fn from_acl(dt: i32) -> Option<DType> {
        match dt {
            ascend_sys::ACL_FLOAT => Some(DType::F32),
            ascend_sys::ACL_FLOAT16 => Some(DType::F16),
            ascend_sys::ACL_BF16 => Some(DType::Bf16),
            _ => None,
        }
    }

    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::Bf16 => 2,
        }
    }

    /// promote(a, b): same -> same, anything with f32 -> f32, f16 + bf16 -> f32.
    pub fn promote(a: DType, b: DType) -> DType {
        if a == b { a } else { DType::F32 }
    }

    /// Rounds an f32 to this dtype (round to nearest even) and widens it back.
    #[inline]
    pub fn round(self, v: f32) -> f32 {
        match self {
            DType::F32 => v,
            DType::F16 => f16::from_f32(v).to_f32(),
            DType::Bf16 => bf16::from_f32(v).to_f32(),
        }
    }

    #[inline]
    fn read(self, b: &[u8], p: usize) -> f32 {
        match self {
            DType::F32 => f32::from_le_bytes([b[p], b[p + 1], b[p + 2], b[p + 3]]),
            DType::F16 => f16::from_bits(u16::from_le_bytes([b[p], b[p + 1]])).to_f32(),
            DType::Bf16 => bf16::from_bits(u16::from_le_bytes([b[p], b[p + 1]])).to_f32(),
        }
    }

    /// Writes `v` converted to this dtype (round to nearest even).
    #[inline]
    fn write(self, b: &mut [u8], p: usize, v: f32) {
        match self {
            DType::F32 => b[p..p + 4].copy_from_slice(&v.to_le_bytes()),
            DType::F16 => b[p..p + 2].copy_from_slice(&f16::from_f32(v).to_bits().to_le_bytes()),
            DType::Bf16 => b[p..p + 2].copy_from_slice(&bf16::from_f32(v).to_bits().to_le_bytes()),
        }
    }
}

/// Calls `f(linear_index, element_offset)` for every element of `shape` in row-major order,
/// where the element offset is `sum(index_k * strides_k)`.
fn for_each_offset(shape: &[usize], strides: &[i64], mut f: impl FnMut(usize, i64)) {
    let n: usize = shape.iter().product();
    if n == 0 {
        return;
    }
    if shape.is_empty() {
        f(0, 0);
        return;
    }
    let last = shape.len() - 1;
    let (inner, inner_stride) = (shape[last], strides[last]);
    let mut idx = crate::slab::Shape::zeroed(shape.len());
    let mut base: i64 = 0;
    let mut linear = 0;
    loop {
        let mut off = base;
        for _ in 0..inner {
            f(linear, off);
            linear += 1;
            off += inner_stride;
        }
        // Advance the outer dims.
        let mut k = last;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            base += strides[k];
            if idx[k] < shape[k] {
                break;
            }
            base -= strides[k] * shape[k] as i64;
            idx[k] = 0;
        }
    }
}

/// Minimum and maximum element offset reached by a view (`None` if it is empty).
pub(crate) fn offset_range(shape: &[usize], strides: &[i64]) -> Option<(i64, i64)> {
    if shape.contains(&0) {
        return None;
    }
    let (mut lo, mut hi) = (0i64, 0i64);
    for (&d, &s) in shape.iter().zip(strides) {
        let reach = s.checked_mul(d as i64 - 1)?;
        if reach < 0 {
            lo = lo.checked_add(reach)?;
        } else {
            hi = hi.checked_add(reach)?;
        }
    }
    Some((lo, hi))
}

/// A strided view into a byte buffer.
pub(crate) struct View<'a> {
    pub dims: &'a [usize],
    pub strides: &'a [i64],
    /// Element offset of the view's first element from `base_byte`.
    pub offset: i64,
    /// Byte position of element offset 0 inside the buffer.
    pub base_byte: usize,
    pub dtype: DType,
}

impl View<'_> {
    /// Checks that every element lies inside a buffer of `len` bytes.
    pub fn check_bounds(&self, len: usize, what: &str) -> Result<(), String> {
        let Some((lo, hi)) = offset_range(self.dims, self.strides) else {
            return Ok(());
        };
        let es = self.dtype.size() as i64;
        let first = self.base_byte as i64 + (self.offset + lo) * es;
        let end = self.base_byte as i64 + (self.offset + hi + 1) * es;
        if first < 0 || end > len as i64 {
            return Err(format!(
                "{what}: the view (dims {:?}, strides {:?}, offset {}) reaches bytes [{first}, {end}) of its allocation of {len} bytes",
                self.dims, self.strides, self.offset
            ));
        }
        Ok(())
    }
}

/// Strides that broadcast `dims`/`strides` to `out` (numpy rules, already validated).
pub(crate) fn broadcast_strides(
    dims: &[usize],
    strides: &[i64],
    out: &[usize],
) -> crate::slab::Dims64 {
    let lead = out.len() - dims.len();
    let mut bs = crate::slab::Dims64::zeroed(out.len());
    for (k, b) in bs.iter_mut().enumerate() {
        *b = if k < lead {
            0
        } else {
            let j = k - lead;
            if dims[j] == 1 && out[k] != 1 {
                0
            } else {
                strides[j]
            }
        };
    }
    bs
}

/// Reads a (bounds-checked) view, broadcast to `out`, widening to f32.
pub(crate) fn gather(buf: &[u8], v: &View<'_>, out: &[usize], dst: &mut [f32]) {
    let bs = broadcast_strides(v.dims, v.strides, out);
    let es = v.dtype.size() as i64;
    let base = v.base_byte as i64 + v.offset * es;
    let dt = v.dtype;
    for_each_offset(out, &bs, |i, off| {
        dst[i] = dt.read(buf, (base + off * es) as usize);
    });
}

/// Writes `src` (row-major over the view's dims) through a (bounds-checked) view.
pub(crate) fn scatter(buf: &mut [u8], v: &View<'_>, src: &[f32]) {
    let es = v.dtype.size() as i64;
    let base = v.base_byte as i64 + v.offset * es;
    let dt = v.dtype;
    for_each_offset(v.dims, v.strides, |i, off| {
        dt.write(buf, (base + off * es) as usize, src[i]);
    });
}

/// Stores `vals` contiguously as `dt` at `buf[at..]` and reads them back (the workspace
/// round trip of a temporary).
pub(crate) fn through_workspace(buf: &mut [u8], at: usize, dt: DType, vals: &mut [f32]) {
    let es = dt.size();
    for (i, v) in vals.iter().enumerate() {
        dt.write(buf, at + i * es, *v);
    }
    for (i, v) in vals.iter_mut().enumerate() {
        *v = dt.read(buf, at + i * es);
    }
}

/// Computes `out[i] = round_compute(mish_grad_f32(g[i], x[i]))` in place in `g`.
pub(crate) fn compute(g: &mut [f32], x: &[f32], compute_dtype: DType) {
    let work = |g: &mut [f32], x: &[f32]| {
        for (gv, &xv) in g.iter_mut().zip(x) {
            *gv = compute_dtype.round(mish_grad_f32(*gv, xv));
        }
    };
    const CHUNK: usize = 1 << 16;
    // Asked once: `available_parallelism` reads cgroup files (and allocates) every time.
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    if g.len() < 4 * CHUNK {
        work(g, x);
        return;
    }
    let threads =
        *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)));
    if threads < 2 {
        work(g, x);
        return;
    }
    let per = g.len().div_ceil(threads);
    std::thread::scope(|s| {
        for (gc, xc) in g.chunks_mut(per).zip(x.chunks(per)) {
            s.spawn(move || work(gc, xc));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_sample_values() {
        let expect = [
            (0.0, 1.0, 0.0),
            (1.0, 1.0, 1.049036),
            (2.0, 1.0, 2.098072),
            (6.0, 3.0, 6.126641),
            (7.0, 3.0, 7.147748),
            (3.0, 2.0, 3.207954),
        ];
        for (g, x, want) in expect {
            let got = mish_grad_f32(g, x);
            assert!((got - want).abs() < 1e-4, "{g} {x}: {got} vs {want}");
        }
    }

    #[test]
    fn special_values() {
        assert!(mish_grad_f32(1.0, f32::NAN).is_nan());
        assert_eq!(mish_grad_f32(2.0, f32::INFINITY), 2.0);
        assert_eq!(mish_grad_f32(-3.0, f32::INFINITY), -3.0);
        assert_eq!(mish_grad_f32(2.0, f32::NEG_INFINITY), 0.0);
        assert!(mish_grad_f32(f32::INFINITY, f32::NEG_INFINITY).is_nan());
        assert_eq!(mish_grad_f32(f32::INFINITY, 1.0), f32::INFINITY);
        assert_eq!(mish_grad_f32(f32::NEG_INFINITY, 1.0), f32::NEG_INFINITY);
        // Very negative x: mish'(x) ~ e^x (1 + x) < 0, tiny.
        let v = mish_grad_f32(1.0, -95.0);
        assert!(v <= 0.0 && v.is_finite(), "{v}");
        let v = mish_grad_f32(1.0, -87.0);
        assert!(v < 0.0 && v.is_finite(), "{v}");
        assert_eq!(mish_grad_f32(1.0, 200.0), 1.0);
        assert!(mish_grad_f32(1.0, -200.0).abs() == 0.0);
    }

    #[test]
    fn strided_iteration() {
        let mut seen = Vec::new();
        for_each_offset(&[2, 3], &[1, 2], |i, off| seen.push((i, off)));
        assert_eq!(seen, vec![(0, 0), (1, 2), (2, 4), (3, 1), (4, 3), (5, 5)]);
        let mut n = 0;
        for_each_offset(&[], &[], |_, off| {
            assert_eq!(off, 0);
            n += 1
        });
        assert_eq!(n, 1);
        assert_eq!(offset_range(&[2, 3], &[3, 1]), Some((0, 5)));
        assert_eq!(offset_range(&[2, 0], &[3, 1]), None);
    }

    #[test]
    fn promotion() {
        assert_eq!(DType::promote(DType::F16, DType::F16), DType::F16);
        assert_eq!(DType::promote(DType::F16, DType::Bf16), DType::F32);
        assert_eq!(DType::promote(DType::Bf16, DType::F32), DType::F32);
    }
}
