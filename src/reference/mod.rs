//! CPU reference of `aclnnMishBackward` on [`ndarray`] views: exact operator semantics,
//! correctly rounded values, SIMD- and thread-parallel.
//!
//! `grad_input = grad_output · mish'(x)` with `mish(x) = x·tanh(softplus(x))`, so
//! `mish'(x) = tanh(softplus(x)) + x·sigmoid(x)·(1 − tanh²(softplus(x)))`.
//!
//! # Semantics
//! - Shapes follow [`crate::shape::check_mish_backward`]: at most 8 dims per argument,
//!   numpy broadcasting of `grad` against `x`, and (for [`mish_backward_into`]) an output
//!   whose shape equals the broadcast shape. Violations are typed [`Error`]s; nothing
//!   panics. Empty shapes succeed without computing anything.
//! - The compute dtype is `P = promote(G, X)` ([`crate::DType::promote`]). The value is the
//!   exact real `grad·mish'(x)` of the inputs (widened exactly to `P`), rounded **once** to
//!   `P` (round to nearest, ties to even), and then converted to the output type `O` (a
//!   second rounding when `O` is narrower than `P`, as the device's final cast does).
//! - `mish'(+∞) = 1`, `mish'(−∞) = −0` (the sign of the limit), NaN propagates; signed
//!   zeros, subnormals and results at the edges of the exponent range come out as the
//!   exact value rounds (e.g. `x = −100` gives ≈ `−3.7e−42·grad`, `x = −1000` with
//!   `grad = +∞` gives `−∞`).
//!
//! # Accuracy
//! `mish'(x)` is evaluated in f64 with relative error of a few 1e−16 everywhere, including
//! next to its zero at `x ≈ −1.19243` (a Taylor expansion around the double-double root), so
//! the once-rounded result is the correctly rounded one except when the exact value lies
//! within ~1e−15 (relative) of a rounding boundary: never observed for f16/bf16, and for
//! f32 in fewer than 1 in 10^6 inputs (then 1 ulp off).
//!
//! # Speed
//! The f64 evaluation is vectorized (AVX-512F or AVX2+FMA chosen at run time, with a
//! portable scalar fallback giving bitwise identical results); inputs of at least
//! [`PARALLEL_THRESHOLD`] elements are split across the rayon thread pool. For f32 results
//! on AVX-512 a cheaper first pass with a proven error bound is kept wherever a rounding
//! test shows it rounds like the precise evaluation (bitwise the same results). Non-contiguous,
//! negatively strided and broadcast views are walked in the memory order of most of the
//! three views and processed in tiles of 1024 elements through stack buffers (16 × 64
//! tiles when a view is transposed against the others, so that cache lines are reused):
//! no temporary beyond the output is allocated.

mod kernel;
mod mish;

pub use mish::{mish, mish_into};

use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::shape::check_mish_backward;
use half::{bf16, f16};
use ndarray::{
    ArrayD, ArrayView2, ArrayViewD, ArrayViewMut2, ArrayViewMutD, Axis, Ix2, IxDyn, Slice, Zip,
};
use rayon::prelude::*;
use std::any::TypeId;

use half::slice::HalfFloatSliceExt;
use kernel::{Isa, Narrow};

/// Number of output elements from which the work is split across rayon's thread pool;
/// smaller inputs run on the calling thread only.
pub const PARALLEL_THRESHOLD: usize = 1 << 15;

/// Elements per stack buffer of the blocked kernels.
const BLOCK: usize = TILE_ROWS * TILE_COLS;

/// `grad · mish'(x)` of two broadcastable views, as a new array of the broadcast shape
/// (standard layout) in element type `O`.
///
/// Computes in `promote(G, X)` with one rounding, then converts to `O` (see the
/// [module docs](self)).
///
/// # Errors
/// [`Error::TooManyDims`] when an input has more than 8 dims, [`Error::NotBroadcastable`]
/// when the shapes do not broadcast.
///
/// # Examples
/// ```
/// use ascendcl::reference::mish_backward;
/// use half::f16;
/// use ndarray::{ArrayD, IxDyn, array};
///
/// let grad = array![1.0f32, 2.0, -1.0].into_dyn();
/// let x = array![[0.0f32], [f32::INFINITY]].into_dyn(); // broadcasts to [2, 3]
/// let out: ArrayD<f32> = mish_backward(grad.view(), x.view())?;
/// assert_eq!(out.shape(), &[2, 3]);
/// assert_eq!(out[[0, 0]], 0.6); // mish'(0) = 3/5
/// assert_eq!(out[[1, 1]], 2.0); // mish'(+inf) = 1
///
/// // f16 inputs compute in f16; the output type can differ.
/// let g16 = ndarray::arr0(f16::from_f32(1.0)).into_dyn();
/// let x16 = ndarray::arr0(f16::from_f32(-100.0)).into_dyn();
/// let wide: ArrayD<f32> = mish_backward(g16.view(), x16.view())?;
/// assert_eq!(wide[IxDyn(&[])], -0.0); // -3.7e-42 rounds to -0 in f16
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn mish_backward<G: Element, X: Element, O: Element>(
    grad: ArrayViewD<'_, G>,
    x: ArrayViewD<'_, X>,
) -> Result<ArrayD<O>> {
    let shape = check_mish_backward(grad.shape(), x.shape(), None)?;
    let mut out = ArrayD::from_shape_vec(IxDyn(&shape), vec![O::default(); shape.numel()])
        .map_err(|e| Error::InvalidArgument(format!("cannot allocate the output: {e}")))?;
    mish_backward_into(grad, x, out.view_mut())?;
    Ok(out)
}

/// `grad · mish'(x)` written into `out`, whose shape must be the broadcast shape of `grad`
/// and `x`. All three views may have any strides (non-contiguous, negative, zero for
/// broadcast inputs).
///
/// # Errors
/// [`Error::TooManyDims`] when an argument has more than 8 dims,
/// [`Error::NotBroadcastable`] when `grad` and `x` do not broadcast,
/// [`Error::ShapeMismatch`] when `out` does not have the broadcast shape. On error `out`
/// is untouched.
///
/// # Examples
/// ```
/// use ascendcl::reference::mish_backward_into;
/// use ndarray::{Array2, array, s};
///
/// let grad = array![[1.0f32, 2.0], [3.0, 4.0]];
/// let x = array![0.0f32, 1.0];
/// let mut out = Array2::<f32>::zeros((2, 2));
/// // transposed output view
/// mish_backward_into(grad.view().into_dyn(), x.view().into_dyn(), out.view_mut().reversed_axes().into_dyn())?;
/// assert_eq!(out[[0, 0]], 0.6);
/// assert_eq!(out[[0, 1]], 1.8); // grad[1][0] · mish'(x[0]), rounded once
///
/// // a wrong output shape is a typed error
/// let mut bad = Array2::<f32>::zeros((3, 2));
/// let err = mish_backward_into(grad.view().into_dyn(), x.view().into_dyn(), bad.view_mut().into_dyn());
/// assert!(matches!(err, Err(ascendcl::Error::ShapeMismatch { .. })));
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn mish_backward_into<G: Element, X: Element, O: Element>(
    grad: ArrayViewD<'_, G>,
    x: ArrayViewD<'_, X>,
    mut out: ArrayViewMutD<'_, O>,
) -> Result<()> {
    let shape = check_mish_backward(grad.shape(), x.shape(), Some(out.shape()))?;
    if shape.numel() == 0 {
        return Ok(());
    }
    let not_broadcastable = || Error::NotBroadcastable {
        grad: grad.shape().to_vec(),
        x: x.shape().to_vec(),
    };
    let g = grad
        .broadcast(out.raw_dim())
        .ok_or_else(not_broadcastable)?;
    let xb = x.broadcast(out.raw_dim()).ok_or_else(not_broadcastable)?;
    let isa = Isa::detect();

    // Same strides and all three contiguous in memory: run over the flat slices.
    let same_layout = g.strides() == out.strides() && xb.strides() == out.strides();
    if same_layout
        && let (Some(gs), Some(xs)) = (g.as_slice_memory_order(), xb.as_slice_memory_order())
        && let Some(os) = out.as_slice_memory_order_mut()
    {
        flat(isa, gs, xs, os);
        return Ok(());
    }
    strided(isa, g, xb, out);
    Ok(())
}

/// The SIMD level the reference uses on this CPU: `"avx512f"`, `"avx2+fma"` or `"scalar"`
/// (all give bitwise identical results).
///
/// # Examples
/// ```
/// let isa = ascendcl::reference::simd_level();
/// assert!(["avx512f", "avx2+fma", "scalar"].contains(&isa));
/// ```
pub fn simd_level() -> &'static str {
    Isa::detect().name()
}

/// Flat slices of equal length, element `i` of each corresponding.
fn flat<G: Element, X: Element, O: Element>(isa: Isa, g: &[G], x: &[X], o: &mut [O]) {
    let threads = rayon::current_num_threads();
    if o.len() >= PARALLEL_THRESHOLD && threads > 1 {
        let chunk = (o.len() / (threads * 4)).max(PARALLEL_THRESHOLD / 2);
        let chunk = chunk.next_multiple_of(BLOCK);
        o.par_chunks_mut(chunk)
            .zip(g.par_chunks(chunk))
            .zip(x.par_chunks(chunk))
            .for_each(|((o, g), x)| flat_serial(isa, g, x, o));
    } else {
        flat_serial(isa, g, x, o);
    }
}

/// `s` as a slice of `U` when `T` is `U` (the generic element type resolved at run time).
fn same_type<T: 'static, U: 'static>(s: &[T]) -> Option<&[U]> {
    (TypeId::of::<T>() == TypeId::of::<U>())
        // SAFETY: `T` and `U` are the same type: same layout, same length.
        .then(|| unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<U>(), s.len()) })
}

/// `s` as a mutable slice of `U` when `T` is `U`.
fn same_type_mut<T: 'static, U: 'static>(s: &mut [T]) -> Option<&mut [U]> {
    if TypeId::of::<T>() == TypeId::of::<U>() {
        // SAFETY: `T` and `U` are the same type: same layout, same length; the borrow of
        // `s` moves into the result.
        Some(unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<U>(), s.len()) })
    } else {
        None
    }
}

/// `v` as a view of `U` when `T` is `U`.
fn same_type_view<'a, T: 'static, U: 'static>(v: &ArrayView2<'a, T>) -> Option<ArrayView2<'a, U>> {
    (TypeId::of::<T>() == TypeId::of::<U>())
        // SAFETY: `T` and `U` are the same type, and the elements of `v` stay borrowed
        // for 'a.
        .then(|| unsafe { v.raw_view().cast::<U>().deref_into_view() })
}

/// `v` as a mutable view of `U` when `T` is `U`, for as long as `v` is borrowed.
fn same_type_view_mut<'b, T: 'static, U: 'static>(
    v: &'b mut ArrayViewMut2<'_, T>,
) -> Option<ArrayViewMut2<'b, U>> {
    if TypeId::of::<T>() == TypeId::of::<U>() {
        // SAFETY: `T` and `U` are the same type, and `v` stays mutably borrowed for 'b.
        Some(unsafe { v.raw_view_mut().cast::<U>().deref_into_view_mut() })
    } else {
        None
    }
}

fn flat_serial<G: Element, X: Element, O: Element>(isa: Isa, g: &[G], x: &[X], o: &mut [O]) {
    // All f32: no widening or narrowing, the kernel works on the slices in place.
    if let (Some(g), Some(x)) = (same_type::<_, f32>(g), same_type::<_, f32>(x))
        && let Some(o) = same_type_mut::<_, f32>(o)
    {
        kernel::rounded_f32(isa, g, x, o);
        return;
    }
    let mut gb = [0.0f32; BLOCK];
    let mut xb = [0.0f32; BLOCK];
    for ((o, g), x) in o
        .chunks_mut(BLOCK)
        .zip(g.chunks(BLOCK))
        .zip(x.chunks(BLOCK))
    {
        let n = o.len();
        widen(g, &mut gb[..n]);
        widen(x, &mut xb[..n]);
        block::<G, X, O>(isa, &gb[..n], &xb[..n], o);
    }
}

/// Computes one block (at most [`BLOCK`] elements) from f32-widened inputs.
#[inline]
fn block<G: Element, X: Element, O: Element>(isa: Isa, g: &[f32], x: &[f32], o: &mut [O]) {
    let n = o.len();
    match G::DTYPE.promote(X::DTYPE) {
        DType::F32 => {
            if let Some(o) = same_type_mut::<_, f32>(o) {
                return kernel::rounded_f32(isa, g, x, o);
            }
            let mut r = [0.0f32; BLOCK];
            kernel::rounded_f32(isa, g, x, &mut r[..n]);
            for (o, &v) in o.iter_mut().zip(&r[..n]) {
                *o = O::from_f32(v);
            }
        }
        DType::F16 => narrowed(isa, Narrow::F16, g, x, o),
        DType::BF16 => narrowed(isa, Narrow::Bf16, g, x, o),
    }
}

/// [`block`] for a 16-bit compute type: the f64 products rounded once to it (in place
/// when the output has that type), then converted to `O`.
fn narrowed<O: Element>(isa: Isa, to: Narrow, g: &[f32], x: &[f32], o: &mut [O]) {
    let n = o.len();
    let mut r = [0.0f64; BLOCK];
    kernel::products_narrowable(isa, to, g, x, &mut r[..n]);
    if let Some(bits) = as_bits16_mut(o, to) {
        return kernel::narrow16(isa, to, &r[..n], bits);
    }
    let mut h = [0u16; BLOCK];
    kernel::narrow16(isa, to, &r[..n], &mut h[..n]);
    for (o, &b) in o.iter_mut().zip(&h[..n]) {
        *o = O::from_f32(match to {
            Narrow::F16 => f16::from_bits(b).to_f32(),
            Narrow::Bf16 => bf16::from_bits(b).to_f32(),
        });
    }
}

/// `s` as the raw bits of its elements when `T` is the 16-bit type `to`.
fn as_bits16_mut<T: Element>(s: &mut [T], to: Narrow) -> Option<&mut [u16]> {
    match to {
        Narrow::F16 => same_type_mut::<_, f16>(s).map(|h| h.reinterpret_cast_mut()),
        Narrow::Bf16 => same_type_mut::<_, bf16>(s).map(|h| h.reinterpret_cast_mut()),
    }
}

/// Widens `src` into `dst` (same length): f16 with half's vectorized slice conversion.
fn widen<T: Element>(src: &[T], dst: &mut [f32]) {
    if let Some(h) = same_type::<_, f16>(src) {
        return h.convert_to_f32_slice(dst);
    }
    for (d, s) in dst.iter_mut().zip(src) {
        *d = s.to_f32();
    }
}

/// Any layout: orders the axes by the strides of the three views, merges axes that are
/// contiguous in all three, picks the tile orientation, splits large work across threads.
fn strided<G: Element, X: Element, O: Element>(
    isa: Isa,
    g: ArrayViewD<'_, G>,
    x: ArrayViewD<'_, X>,
    o: ArrayViewMutD<'_, O>,
) {
    let mut axes: Vec<usize> = (0..o.ndim()).collect();
    // Largest strides first (summed over the three views): logical C order then walks
    // memory in order in most of them; ties keep the output's order.
    let weight = |a: usize| {
        [g.strides(), x.strides(), o.strides()]
            .iter()
            .map(|s| s[a].unsigned_abs())
            .sum::<usize>()
    };
    axes.sort_by_key(|&a| {
        (
            std::cmp::Reverse(weight(a)),
            std::cmp::Reverse(o.strides()[a].unsigned_abs()),
        )
    });
    let mut g = g.permuted_axes(axes.clone());
    let mut x = x.permuted_axes(axes.clone());
    let mut o = o.permuted_axes(axes);
    // Walk the output forwards (its negative strides made positive).
    for a in 0..o.ndim() {
        if o.strides()[a] < 0 {
            g.invert_axis(Axis(a));
            x.invert_axis(Axis(a));
            o.invert_axis(Axis(a));
        }
    }
    // Merge outer axes into the inner ones where all three views allow it.
    if o.ndim() > 1 {
        let mut into = o.ndim() - 1;
        for take in (0..o.ndim() - 1).rev() {
            let (lt, li) = (o.len_of(Axis(take)), o.len_of(Axis(into)));
            let ok = lt <= 1
                || li <= 1
                || [g.strides(), x.strides(), o.strides()]
                    .iter()
                    .all(|s| s[take] == li as isize * s[into]);
            if ok {
                g.merge_axes(Axis(take), Axis(into));
                x.merge_axes(Axis(take), Axis(into));
                o.merge_axes(Axis(take), Axis(into));
            } else {
                into = take;
            }
        }
    }
    // Drop the axes of length 1 (merging leaves them behind).
    for a in (0..o.ndim()).rev() {
        if o.len_of(Axis(a)) == 1 {
            g.index_axis_inplace(Axis(a), 0);
            x.index_axis_inplace(Axis(a), 0);
            o.index_axis_inplace(Axis(a), 0);
        }
    }
    // A view walked against its memory order along the rows (transposed against the
    // others) is read or written in tiles: its fastest axis becomes the row axis of the
    // 2-D core, so the cache lines one tile row touches serve the next rows too.
    if o.ndim() >= 2 {
        let inner = o.ndim() - 1;
        let tile_axis = [g.strides(), x.strides(), o.strides()]
            .iter()
            .find_map(|s| {
                let along_rows = s[inner].unsigned_abs();
                (0..inner)
                    .filter(|&a| s[a] != 0)
                    .min_by_key(|&a| s[a].unsigned_abs())
                    .filter(|&a| along_rows > 1 && s[a].unsigned_abs() < along_rows)
            });
        if let Some(t) = tile_axis {
            let mut axes: Vec<usize> = (0..o.ndim()).filter(|&a| a != t).collect();
            axes.insert(inner - 1, t);
            g = g.permuted_axes(axes.clone());
            x = x.permuted_axes(axes.clone());
            o = o.permuted_axes(axes);
        }
    }
    strided_split(isa, g, x, o, rayon::current_num_threads() > 1);
}

fn strided_split<G: Element, X: Element, O: Element>(
    isa: Isa,
    g: ArrayViewD<'_, G>,
    x: ArrayViewD<'_, X>,
    o: ArrayViewMutD<'_, O>,
    parallel: bool,
) {
    if parallel
        && o.len() >= PARALLEL_THRESHOLD
        && let Some(axis) = (0..o.ndim()).find(|&a| o.len_of(Axis(a)) > 1)
    {
        // Halves on a multiple of 64 indices where possible, so that two threads share
        // no cache line of a view that is contiguous along this axis.
        let half = o.len_of(Axis(axis)) / 2;
        let mid = if half >= 64 { half - half % 64 } else { half };
        let (g1, g2) = g.split_at(Axis(axis), mid);
        let (x1, x2) = x.split_at(Axis(axis), mid);
        let (o1, o2) = o.split_at(Axis(axis), mid);
        rayon::join(
            || strided_split(isa, g1, x1, o1, parallel),
            || strided_split(isa, g2, x2, o2, parallel),
        );
    } else {
        strided_serial(isa, g, x, o);
    }
}

/// Buffers of one tile: the inputs widened to f32, the output.
struct Scratch<O> {
    g: [f32; BLOCK],
    x: [f32; BLOCK],
    o: [O; BLOCK],
}

/// Serial work on any layout.
fn strided_serial<G: Element, X: Element, O: Element>(
    isa: Isa,
    g: ArrayViewD<'_, G>,
    x: ArrayViewD<'_, X>,
    o: ArrayViewMutD<'_, O>,
) {
    let mut scratch = Scratch {
        g: [0.0; BLOCK],
        x: [0.0; BLOCK],
        o: [O::default(); BLOCK],
    };
    outer(isa, g, x, o, &mut scratch);
}

/// The outer axes one index at a time, the last two in tiles.
fn outer<G: Element, X: Element, O: Element>(
    isa: Isa,
    mut g: ArrayViewD<'_, G>,
    mut x: ArrayViewD<'_, X>,
    mut o: ArrayViewMutD<'_, O>,
    scratch: &mut Scratch<O>,
) {
    if o.ndim() > 2 {
        for ((o, g), x) in o.outer_iter_mut().zip(g.outer_iter()).zip(x.outer_iter()) {
            outer(isa, g, x, o, scratch);
        }
        return;
    }
    while o.ndim() < 2 {
        g.insert_axis_inplace(Axis(0));
        x.insert_axis_inplace(Axis(0));
        o.insert_axis_inplace(Axis(0));
    }
    // Two dims now, so the conversions cannot fail.
    if let (Ok(g), Ok(x), Ok(o)) = (
        g.into_dimensionality::<Ix2>(),
        x.into_dimensionality::<Ix2>(),
        o.into_dimensionality::<Ix2>(),
    ) {
        tiles(isa, g, x, o, scratch);
    }
}

/// Tile shape when an input runs across the output's rows: 16 rows, each reading 64
/// cache lines of a transposed input that the next 15 rows reuse (the fastest of the
/// shapes of 1024 elements measured on a 1000×1000 transpose).
const TILE_ROWS: usize = 16;
const TILE_COLS: usize = 64;

/// A 2-D problem in tiles of at most [`BLOCK`] elements: whole rows (or row segments) when
/// all inputs run along the rows, [`TILE_ROWS`] × [`TILE_COLS`] when one runs across them.
fn tiles<G: Element, X: Element, O: Element>(
    isa: Isa,
    g: ArrayView2<'_, G>,
    x: ArrayView2<'_, X>,
    mut o: ArrayViewMut2<'_, O>,
    scratch: &mut Scratch<O>,
) {
    let (rows, cols) = o.dim();
    let across = [g.strides(), x.strides(), o.strides()]
        .iter()
        .any(|s| along_columns(s));
    let (tile_rows, tile_cols) = if across && rows > 1 {
        (TILE_ROWS, TILE_COLS)
    } else {
        let c = cols.clamp(1, BLOCK);
        (BLOCK / c, c)
    };
    for r0 in (0..rows).step_by(tile_rows) {
        let rs = Slice::from(r0..(r0 + tile_rows).min(rows));
        for c0 in (0..cols).step_by(tile_cols) {
            let cs = Slice::from(c0..(c0 + tile_cols).min(cols));
            tile_block(
                isa,
                g.slice_axis(Axis(0), rs).slice_axis_move(Axis(1), cs),
                x.slice_axis(Axis(0), rs).slice_axis_move(Axis(1), cs),
                o.slice_axis_mut(Axis(0), rs).slice_axis_move(Axis(1), cs),
                scratch,
            );
        }
    }
}

/// One tile (at most [`BLOCK`] elements): gathers the inputs into f32 buffers (a
/// contiguous f32 row is used in place), computes, scatters the output (or writes a
/// contiguous output row directly).
fn tile_block<G: Element, X: Element, O: Element>(
    isa: Isa,
    g: ArrayView2<'_, G>,
    x: ArrayView2<'_, X>,
    mut o: ArrayViewMut2<'_, O>,
    scratch: &mut Scratch<O>,
) {
    let n = o.len();
    let Scratch {
        g: gb,
        x: xb,
        o: ob,
    } = scratch;
    let gs = tile_input(isa, g, &mut gb[..n]);
    let xs = tile_input(isa, x, &mut xb[..n]);
    // A contiguous output row is written by `block` itself (in place where its type is
    // the compute type) instead of through the scratch.
    if o.nrows() == 1
        && let Some(os) = o.as_slice_mut()
    {
        return block::<G, X, O>(isa, gs, xs, os);
    }
    block::<G, X, O>(isa, gs, xs, &mut ob[..n]);
    let cols = o.ncols();
    if along_columns(o.strides()) {
        if let (Some(src), Some(o32)) = (
            same_type::<_, f32>(&ob[..n]),
            same_type_view_mut::<_, f32>(&mut o),
        ) && kernel::scatter_columns_f32(isa, src, o32)
        {
            return;
        }
        // a transposed output: each column is a short walk in memory, while the scratch
        // read at a stride is in L1
        for (c, col) in o.columns_mut().into_iter().enumerate() {
            for (d, &v) in col.into_iter().zip(ob[c..n].iter().step_by(cols)) {
                *d = v;
            }
        }
    } else if let Ok(ov) = ArrayView2::from_shape(o.dim(), &ob[..n]) {
        Zip::from(&mut o).and(&ov).for_each(|d, &v| *d = v);
    }
}

/// Whether a 2-D view is closer in memory along its columns than along its rows (a
/// transposed view; a zero stride is a broadcast, not a short walk).
fn along_columns(strides: &[isize]) -> bool {
    strides[0] != 0 && strides[0].unsigned_abs() < strides[1].unsigned_abs()
}

/// One input of a tile as f32 values in row-major order: a contiguous f32 row in place,
/// another contiguous row widened like the flat path's inputs, anything else gathered
/// into `buf`.
fn tile_input<'v: 'b, 'b, T: Element>(
    isa: Isa,
    v: ArrayView2<'v, T>,
    buf: &'b mut [f32],
) -> &'b [f32] {
    if v.nrows() == 1
        && let Some(s) = v.to_slice()
    {
        if let Some(s) = same_type::<_, f32>(s) {
            return s;
        }
        widen(s, buf);
        return buf;
    }
    gather(isa, &v, buf);
    buf
}

/// Copies a 2-D view into `buf` in row-major order, widened to f32.
fn gather<T: Element>(isa: Isa, v: &ArrayView2<'_, T>, buf: &mut [f32]) {
    let buf = &mut buf[..v.len()];
    if along_columns(v.strides())
        && let Some(v32) = same_type_view::<_, f32>(v)
        && kernel::gather_rows_f32(isa, v32, buf)
    {
        return;
    }
    if let Ok(bv) = ArrayViewMut2::from_shape(v.dim(), buf) {
        Zip::from(bv).and(v).for_each(|d, s| *d = s.to_f32());
    }
}
