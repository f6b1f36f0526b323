//! Strided f32 tiles copied with AVX-512F gathers along their strided axis: a transposed
//! input into a row-major tile, a row-major tile into a transposed output.

use super::simd::Isa;
use ndarray::{ArrayView2, ArrayViewMut2};

/// Copies the f32 view `v` into `dst` (its length) in row-major order with AVX-512
/// gathers along each row, for a view whose rows are strided (a transposed input).
/// Returns `false`, copying nothing, when the ISA or the strides do not allow it.
pub(crate) fn gather_rows_f32(isa: Isa, v: ArrayView2<'_, f32>, dst: &mut [f32]) -> bool {
    let (rows, cols) = v.dim();
    assert_eq!(dst.len(), rows * cols);
    if dst.is_empty() {
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512
        && let Some(lanes) = x86::lane_offsets(v.strides()[1])
    {
        // SAFETY: AVX-512F was detected; ndarray guarantees that every (r, c) with
        // r < rows, c < cols addresses an element of `v`, and `lanes` are 16 multiples of
        // the column stride that fit in i32.
        unsafe { x86::gather_rows_avx512(v.as_ptr(), v.strides()[0], lanes, rows, cols, dst) };
        return true;
    }
    let _ = isa;
    false
}

/// Copies the row-major `src` (its length) into the f32 view `o`, 16 rows of a column at
/// a time with AVX-512 gathers from `src`, for a view whose columns are the shorter walk
/// in memory (a transposed output). Returns `false`, copying nothing, when the ISA or the
/// strides do not allow it.
pub(crate) fn scatter_columns_f32(isa: Isa, src: &[f32], mut o: ArrayViewMut2<'_, f32>) -> bool {
    let (rows, cols) = o.dim();
    assert_eq!(src.len(), rows * cols);
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512
        && let (Some(from), Some(to)) = (
            x86::lane_offsets(cols as isize),
            x86::lane_offsets(o.strides()[0]),
        )
    {
        let (row_stride, col_stride) = (o.strides()[0], o.strides()[1]);
        // SAFETY: AVX-512F was detected; ndarray guarantees that every (r, c) with
        // r < rows, c < cols addresses an element of `o`, which is borrowed mutably;
        // `from` and `to` are 16 multiples of `cols` and of the row stride that fit in i32.
        unsafe {
            x86::scatter_columns_avx512(
                src,
                from,
                o.as_mut_ptr(),
                row_stride,
                col_stride,
                to,
                (rows, cols),
            )
        };
        return true;
    }
    let _ = (isa, &mut o);
    false
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::array::from_fn;

    /// `[0, s, 2s, …, 15s]` as i32 lanes, when `15·s` fits in i32.
    pub(super) fn lane_offsets(s: isize) -> Option<[i32; 16]> {
        let s = i32::try_from(s).ok()?;
        s.checked_mul(15)?;
        Some(from_fn(|i| s * i as i32))
    }

    /// Mask of the first `k` lanes, all 16 when `k ≥ 16`.
    fn first_lanes(k: usize) -> __mmask16 {
        ((1u32 << k.min(16)) - 1) as __mmask16
    }

    /// See [`super::gather_rows_f32`].
    ///
    /// # Safety
    /// The CPU must support AVX-512F; `base + r·row_stride + lanes[1]·c` must address a
    /// readable f32 for every r < rows, c < cols (`lanes` from [`lane_offsets`]);
    /// `dst.len() == rows·cols`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn gather_rows_avx512(
        base: *const f32,
        row_stride: isize,
        lanes: [i32; 16],
        rows: usize,
        cols: usize,
        dst: &mut [f32],
    ) {
        // SAFETY: 16 i32 in `lanes`; unaligned load.
        let offsets = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) };
        let col_stride = lanes[1] as isize;
        for (r, row) in dst.chunks_exact_mut(cols).enumerate().take(rows) {
            for c0 in (0..cols).step_by(16) {
                let mask = first_lanes(cols - c0);
                // SAFETY: (r, c0) is an element of the view (the caller's contract), so
                // is every unmasked lane's (r, c0 + i); masked lanes are not read; `row`
                // has room for the unmasked lanes from c0.
                unsafe {
                    let start = base.offset(r as isize * row_stride + c0 as isize * col_stride);
                    let v =
                        _mm512_mask_i32gather_ps::<4>(_mm512_setzero_ps(), mask, offsets, start);
                    _mm512_mask_storeu_ps(row.as_mut_ptr().add(c0), mask, v);
                }
            }
        }
    }

    /// See [`super::scatter_columns_f32`].
    ///
    /// # Safety
    /// The CPU must support AVX-512F; `base + r·row_stride + c·col_stride` must address a
    /// writable f32, not aliased, for every r < rows, c < cols; `from` and `to` from
    /// [`lane_offsets`] of `cols` and `row_stride`; `src.len() == rows·cols`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn scatter_columns_avx512(
        src: &[f32],
        from: [i32; 16],
        base: *mut f32,
        row_stride: isize,
        col_stride: isize,
        to: [i32; 16],
        (rows, cols): (usize, usize),
    ) {
        // SAFETY: 16 i32 in each array; unaligned loads.
        let (from, to) = unsafe {
            (
                _mm512_loadu_si512(from.as_ptr().cast()),
                _mm512_loadu_si512(to.as_ptr().cast()),
            )
        };
        for c in 0..cols {
            for r0 in (0..rows).step_by(16) {
                let mask = first_lanes(rows - r0);
                // SAFETY: unmasked lanes read src[(r0 + i)·cols + c] with r0 + i < rows
                // (in bounds: src holds rows·cols) and write element (r0 + i, c) of the
                // view (the caller's contract); masked lanes are not accessed.
                unsafe {
                    let column = src.as_ptr().add(r0 * cols + c);
                    let v = _mm512_mask_i32gather_ps::<4>(_mm512_setzero_ps(), mask, from, column);
                    let start = base.offset(r0 as isize * row_stride + c as isize * col_stride);
                    if row_stride == 1 {
                        _mm512_mask_storeu_ps(start, mask, v);
                    } else {
                        _mm512_mask_i32scatter_ps::<4>(start, mask, to, v);
                    }
                }
            }
        }
    }
}
