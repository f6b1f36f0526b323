//! Strided, broadcasting, bounds-checked element access to device bytes, the dtypes
//! operators compute in, and the parallel elementwise loop operator kernels share.

use half::{bf16, f16};

/// The floating-point dtypes operators compute with.
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

    pub fn to_acl(self) -> i32 {
        match self {
            DType::F32 => ascend_sys::ACL_FLOAT,
            DType::F16 => ascend_sys::ACL_FLOAT16,
            DType::Bf16 => ascend_sys::ACL_BF16,
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

    /// Reads `dst.len()` dense elements from `b`, widening to f32. The dtype is matched
    /// once, so that each loop is a plain conversion the compiler vectorises.
    fn read_dense(self, b: &[u8], dst: &mut [f32]) {
        match self {
            DType::F32 => {
                for (d, c) in dst.iter_mut().zip(b.chunks_exact(4)) {
                    *d = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                }
            }
            DType::F16 => {
                for (d, c) in dst.iter_mut().zip(b.chunks_exact(2)) {
                    *d = f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32();
                }
            }
            DType::Bf16 => {
                for (d, c) in dst.iter_mut().zip(b.chunks_exact(2)) {
                    *d = bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32();
                }
            }
        }
    }

    /// Writes `src` densely into `b`, converted to this dtype (round to nearest even),
    /// matching the dtype once as [`read_dense`](Self::read_dense) does.
    fn write_dense(self, b: &mut [u8], src: &[f32]) {
        match self {
            DType::F32 => {
                for (c, &x) in b.chunks_exact_mut(4).zip(src) {
                    c.copy_from_slice(&x.to_le_bytes());
                }
            }
            DType::F16 => {
                for (c, &x) in b.chunks_exact_mut(2).zip(src) {
                    c.copy_from_slice(&f16::from_f32(x).to_bits().to_le_bytes());
                }
            }
            DType::Bf16 => {
                for (c, &x) in b.chunks_exact_mut(2).zip(src) {
                    c.copy_from_slice(&bf16::from_f32(x).to_bits().to_le_bytes());
                }
            }
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
            // Past the last element the offset may leave i64 (a size-1 dim with any
            // stride): wrapping keeps every offset actually visited exact.
            off = off.wrapping_add(inner_stride);
        }
        // Advance the outer dims.
        let mut k = last;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            base = base.wrapping_add(strides[k]);
            if idx[k] < shape[k] {
                break;
            }
            base = base.wrapping_sub(strides[k].wrapping_mul(shape[k] as i64));
            idx[k] = 0;
        }
    }
}

/// Minimum and maximum element offset reached by a view (`Ok(None)` if it is empty,
/// `Err` if an offset does not fit in an `i64`, which no allocation can hold).
pub(crate) fn offset_range(shape: &[usize], strides: &[i64]) -> Result<Option<(i64, i64)>, String> {
    if shape.contains(&0) {
        return Ok(None);
    }
    let overflow = || {
        format!("the element offsets of dims {shape:?} with strides {strides:?} overflow an i64")
    };
    let (mut lo, mut hi) = (0i64, 0i64);
    for (&d, &s) in shape.iter().zip(strides) {
        let last = i64::try_from(d - 1).map_err(|_| overflow())?;
        let reach = s.checked_mul(last).ok_or_else(overflow)?;
        if reach < 0 {
            lo = lo.checked_add(reach).ok_or_else(overflow)?;
        } else {
            hi = hi.checked_add(reach).ok_or_else(overflow)?;
        }
    }
    Ok(Some((lo, hi)))
}

/// A strided view into a byte buffer.
pub(crate) struct View<'a> {
    pub dims: &'a [usize],
    pub strides: &'a [i64],
    /// Element offset of the view's first element from `base_byte`.
    pub offset: i64,
    /// Byte position of element offset 0 inside the buffer.
    pub base_byte: usize,
    /// Bytes per element.
    pub elem: usize,
}

impl View<'_> {
    /// Checks that every element lies inside a buffer of `len` bytes.
    pub fn check_bounds(&self, len: usize, what: &str) -> Result<(), String> {
        let range = offset_range(self.dims, self.strides).map_err(|m| format!("{what}: {m}"))?;
        let Some((lo, hi)) = range else {
            return Ok(());
        };
        // In i128, every term fits: no descriptor can overflow the check itself.
        let es = self.elem as i128;
        let base = self.base_byte as i128;
        let first = base + (i128::from(self.offset) + i128::from(lo)) * es;
        let end = base + (i128::from(self.offset) + i128::from(hi) + 1) * es;
        if first < 0 || end > len as i128 {
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

/// Whether `strides` walk `shape` in row-major order without gaps (dims of size 1 may
/// have any stride).
pub(crate) fn is_row_major(shape: &[usize], strides: &[i64]) -> bool {
    let mut expect = 1i64;
    for (&d, &s) in shape.iter().zip(strides).rev() {
        if d != 1 && s != expect {
            return false;
        }
        expect = expect.saturating_mul(d as i64);
    }
    true
}

/// Reads a (bounds-checked) view of `dt` elements, broadcast to `out`, widening to f32.
pub(crate) fn gather(buf: &[u8], v: &View<'_>, dt: DType, out: &[usize], dst: &mut [f32]) {
    let bs = broadcast_strides(v.dims, v.strides, out);
    let es = v.elem as i64;
    let base = v.base_byte as i64 + v.offset * es;
    if is_row_major(out, &bs) {
        // The common dense case, without the index walk.
        let at = base as usize;
        dt.read_dense(&buf[at..at + dst.len() * v.elem], dst);
        return;
    }
    for_each_offset(out, &bs, |i, off| {
        dst[i] = dt.read(buf, (base + off * es) as usize);
    });
}

/// Writes `src` (row-major over the view's dims) through a (bounds-checked) view of `dt`
/// elements (round to nearest even).
pub(crate) fn scatter(buf: &mut [u8], v: &View<'_>, dt: DType, src: &[f32]) {
    let es = v.elem as i64;
    let base = v.base_byte as i64 + v.offset * es;
    if is_row_major(v.dims, v.strides) {
        let at = base as usize;
        let n: usize = v.dims.iter().product();
        dt.write_dense(&mut buf[at..at + n * v.elem], &src[..n]);
        return;
    }
    for_each_offset(v.dims, v.strides, |i, off| {
        dt.write(buf, (base + off * es) as usize, src[i]);
    });
}

/// Reads a (bounds-checked) view of `from` elements, broadcast to `out`, converted to
/// `to` (`to_size` bytes each, row-major) into `dst` ([`crate::cast`]).
pub(crate) fn gather_cast(
    buf: &[u8],
    v: &View<'_>,
    from: i32,
    out: &[usize],
    (to, to_size): (i32, usize),
    dst: &mut [u8],
) {
    let bs = broadcast_strides(v.dims, v.strides, out);
    let es = v.elem as i64;
    let base = v.base_byte as i64 + v.offset * es;
    for_each_offset(out, &bs, |i, off| {
        let at = (base + off * es) as usize;
        let d = &mut dst[i * to_size..(i + 1) * to_size];
        crate::cast::convert(from, &buf[at..at + v.elem], to, d);
    });
}

/// Reads a (bounds-checked) view of `from` elements, broadcast to `out`, as f64.
pub(crate) fn gather_f64(buf: &[u8], v: &View<'_>, from: i32, out: &[usize], dst: &mut [f64]) {
    let bs = broadcast_strides(v.dims, v.strides, out);
    let es = v.elem as i64;
    let base = v.base_byte as i64 + v.offset * es;
    let mut d = [0u8; 8];
    for_each_offset(out, &bs, |i, off| {
        let at = (base + off * es) as usize;
        crate::cast::convert(from, &buf[at..at + v.elem], ascend_sys::ACL_DOUBLE, &mut d);
        dst[i] = f64::from_le_bytes(d);
    });
}

/// Writes `src` (row-major over the view's dims) through a (bounds-checked) view of `to`
/// elements, converted by [`crate::cast`].
pub(crate) fn scatter_f64(buf: &mut [u8], v: &View<'_>, to: i32, src: &[f64]) {
    let es = v.elem as i64;
    let base = v.base_byte as i64 + v.offset * es;
    for_each_offset(v.dims, v.strides, |i, off| {
        let at = (base + off * es) as usize;
        let bytes = src[i].to_le_bytes();
        crate::cast::convert(
            ascend_sys::ACL_DOUBLE,
            &bytes,
            to,
            &mut buf[at..at + v.elem],
        );
    });
}

/// Writes `src` (row-major over the view's dims, the view's element size each) through a
/// (bounds-checked) view.
pub(crate) fn scatter_bytes(buf: &mut [u8], v: &View<'_>, src: &[u8]) {
    let es = v.elem as i64;
    let base = v.base_byte as i64 + v.offset * es;
    for_each_offset(v.dims, v.strides, |i, off| {
        let at = (base + off * es) as usize;
        buf[at..at + v.elem].copy_from_slice(&src[i * v.elem..(i + 1) * v.elem]);
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

/// Threads for an elementwise loop over `len` elements (1 below 256 Ki elements).
pub(crate) fn threads_for(len: usize) -> usize {
    const MIN: usize = 1 << 18;
    // Asked once: `available_parallelism` reads cgroup files (and allocates) every time.
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    if len < MIN {
        return 1;
    }
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
}

/// Runs `f(start, chunk)` over consecutive chunks of `a` (`start`: the chunk's first
/// index), on several threads when the array is large.
pub(crate) fn par_chunks(a: &mut [f32], f: impl Fn(usize, &mut [f32]) + Sync) {
    let threads = threads_for(a.len());
    if threads < 2 {
        f(0, a);
        return;
    }
    let per = a.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        for (k, chunk) in a.chunks_mut(per).enumerate() {
            s.spawn(move || {
                crate::stream::mark_device_thread();
                f(k * per, chunk)
            });
        }
    });
}

/// Runs `f(a_chunk, b_chunk)` over matching chunks of `a` and `b` (equal lengths), on
/// several threads when the arrays are large.
pub(crate) fn par_zip(a: &mut [f32], b: &[f32], f: impl Fn(&mut [f32], &[f32]) + Sync) {
    par_chunks(a, |start, chunk| f(chunk, &b[start..start + chunk.len()]));
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(offset_range(&[2, 3], &[3, 1]), Ok(Some((0, 5))));
        assert_eq!(offset_range(&[2, 3], &[-3, 1]), Ok(Some((-3, 2))));
        assert_eq!(offset_range(&[2, 0], &[3, 1]), Ok(None));
        assert!(offset_range(&[3, 2], &[i64::MAX, 1]).is_err());
        // A size-1 dim may have any stride: the walk never steps by it to an element.
        let mut seen = Vec::new();
        for_each_offset(&[2, 1], &[1, i64::MAX], |i, off| seen.push((i, off)));
        assert_eq!(seen, vec![(0, 0), (1, 1)]);
        let mut seen = Vec::new();
        for_each_offset(&[1, 2], &[i64::MIN, 3], |i, off| seen.push((i, off)));
        assert_eq!(seen, vec![(0, 0), (1, 3)]);
    }

    #[test]
    fn promotion() {
        assert_eq!(DType::promote(DType::F16, DType::F16), DType::F16);
        assert_eq!(DType::promote(DType::F16, DType::Bf16), DType::F32);
        assert_eq!(DType::promote(DType::Bf16, DType::F32), DType::F32);
    }
}
