//! Data movement of one block of at most [`BLOCK`] elements: the inputs widened to f32
//! (a contiguous f32 run used in place, others converted or gathered), the formula
//! computed, and its results rounded to the compute type and stored in the output's type
//! (in place when the output run is contiguous, else through a buffer copied into the
//! output view).

use super::gather;
use super::narrow::{Narrow, narrow16};
use super::simd::{self, Formula, Isa};
use crate::element::sealed::{TypedView, TypedViewMut};
use crate::element::{DType, Element};
use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
use half::{bf16, f16};
use ndarray::{ArrayView2, ArrayViewMut2, Zip};

/// Tile shape when a view runs across the output's rows: 16 rows, each reading 64 cache
/// lines of a transposed view that the next 15 rows reuse (the fastest of the shapes of
/// 1024 elements measured on a 1000×1000 transpose).
pub(crate) const TILE_ROWS: usize = 16;
pub(crate) const TILE_COLS: usize = 64;

/// Elements per block, the size of every buffer.
pub(crate) const BLOCK: usize = TILE_ROWS * TILE_COLS;

/// A contiguous run of inputs, by element type.
#[derive(Clone, Copy)]
pub(crate) enum Src<'a> {
    F32(&'a [f32]),
    F16(&'a [f16]),
    Bf16(&'a [bf16]),
}

impl<'a> Src<'a> {
    /// The contiguous memory of `v` in memory order, if it has one.
    pub(crate) fn of<D: ndarray::Dimension>(v: &TypedView<'a, D>) -> Option<Src<'a>> {
        match v {
            TypedView::F32(v) => v.to_slice_memory_order().map(Src::F32),
            TypedView::F16(v) => v.to_slice_memory_order().map(Src::F16),
            TypedView::Bf16(v) => v.to_slice_memory_order().map(Src::Bf16),
        }
    }

    /// The elements `range`.
    pub(crate) fn get(self, range: std::ops::Range<usize>) -> Src<'a> {
        match self {
            Src::F32(s) => Src::F32(&s[range]),
            Src::F16(s) => Src::F16(&s[range]),
            Src::Bf16(s) => Src::Bf16(&s[range]),
        }
    }

    /// The run as f32 values: in place for f32, else widened into `buf` (at least as long).
    pub(crate) fn widened<'b>(self, buf: &'b mut [f32]) -> &'b [f32]
    where
        'a: 'b,
    {
        match self {
            Src::F32(s) => s,
            Src::F16(s) => {
                let buf = &mut buf[..s.len()];
                s.convert_to_f32_slice(buf);
                buf
            }
            Src::Bf16(s) => {
                let buf = &mut buf[..s.len()];
                s.convert_to_f32_slice(buf);
                buf
            }
        }
    }
}

/// A contiguous run of outputs, by element type.
pub(crate) enum Dst<'a> {
    F32(&'a mut [f32]),
    F16(&'a mut [f16]),
    Bf16(&'a mut [bf16]),
}

impl<'a> Dst<'a> {
    /// The memory of `v` when it is contiguous in memory order (for views of equal
    /// strides), for as long as `v` is borrowed.
    pub(crate) fn memory_order<'b, D: ndarray::Dimension>(
        v: &'b mut TypedViewMut<'_, D>,
    ) -> Option<Dst<'b>> {
        match v {
            TypedViewMut::F32(v) => v.as_slice_memory_order_mut().map(Dst::F32),
            TypedViewMut::F16(v) => v.as_slice_memory_order_mut().map(Dst::F16),
            TypedViewMut::Bf16(v) => v.as_slice_memory_order_mut().map(Dst::Bf16),
        }
    }

    /// The memory of `v` when it is contiguous in row-major order (the order of the
    /// inputs' buffers), for as long as `v` is borrowed.
    fn row_major<'b, D: ndarray::Dimension>(v: &'b mut TypedViewMut<'_, D>) -> Option<Dst<'b>> {
        match v {
            TypedViewMut::F32(v) => v.as_slice_mut().map(Dst::F32),
            TypedViewMut::F16(v) => v.as_slice_mut().map(Dst::F16),
            TypedViewMut::Bf16(v) => v.as_slice_mut().map(Dst::Bf16),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Dst::F32(s) => s.len(),
            Dst::F16(s) => s.len(),
            Dst::Bf16(s) => s.len(),
        }
    }

    /// The elements `range`, for as long as `self` is borrowed.
    pub(crate) fn get(&mut self, range: std::ops::Range<usize>) -> Dst<'_> {
        match self {
            Dst::F32(s) => Dst::F32(&mut s[range]),
            Dst::F16(s) => Dst::F16(&mut s[range]),
            Dst::Bf16(s) => Dst::Bf16(&mut s[range]),
        }
    }

    /// Splits at `mid`, as `split_at_mut`.
    pub(crate) fn split_at(self, mid: usize) -> (Dst<'a>, Dst<'a>) {
        match self {
            Dst::F32(s) => {
                let (a, b) = s.split_at_mut(mid);
                (Dst::F32(a), Dst::F32(b))
            }
            Dst::F16(s) => {
                let (a, b) = s.split_at_mut(mid);
                (Dst::F16(a), Dst::F16(b))
            }
            Dst::Bf16(s) => {
                let (a, b) = s.split_at_mut(mid);
                (Dst::Bf16(a), Dst::Bf16(b))
            }
        }
    }
}

/// Buffers of the compute step: f64 values before their rounding to a 16-bit type, f32
/// and 16-bit results before their conversion to the output's type.
pub(crate) struct Work {
    values: [f64; BLOCK],
    rounded: [f32; BLOCK],
    bits: [u16; BLOCK],
}

/// Buffers of one block: the inputs widened to f32, the compute step's, and the results
/// in the output's type when the output's memory is not contiguous (f32 or the bits of a
/// 16-bit type).
pub(crate) struct Scratch<const N: usize> {
    inputs: [[f32; BLOCK]; N],
    work: Work,
    out32: [f32; BLOCK],
    out16: [u16; BLOCK],
}

impl<const N: usize> Scratch<N> {
    pub(crate) fn new() -> Self {
        Scratch {
            inputs: [[0.0; BLOCK]; N],
            work: Work {
                values: [0.0; BLOCK],
                rounded: [0.0; BLOCK],
                bits: [0; BLOCK],
            },
            out32: [0.0; BLOCK],
            out16: [0; BLOCK],
        }
    }

    /// The input buffers and the compute step's, borrowed together.
    pub(crate) fn inputs_and_work(&mut self) -> (&mut [[f32; BLOCK]; N], &mut Work) {
        (&mut self.inputs, &mut self.work)
    }
}

/// `f(a[i], b[i])` for each `i`.
pub(crate) fn zip_map<A, B, C, const N: usize>(
    a: [A; N],
    b: [B; N],
    mut f: impl FnMut(A, B) -> C,
) -> [C; N] {
    let mut b = b.into_iter();
    a.map(|a| f(a, b.next().expect("arrays of the same length")))
}

/// Computes `K` on one run of at most [`BLOCK`] elements, `x` widened to f32, in the
/// compute type `compute` (one rounding), and stores the results in `out`'s type (a
/// second rounding when that is narrower).
pub(crate) fn block<K: Formula<N>, const N: usize>(
    isa: Isa,
    compute: DType,
    x: [&[f32]; N],
    out: Dst<'_>,
    w: &mut Work,
) {
    let n = out.len();
    match Narrow::of(compute) {
        None => match out {
            Dst::F32(o) => simd::rounded_f32::<K, N>(isa, x, o),
            Dst::F16(o) => {
                simd::rounded_f32::<K, N>(isa, x, &mut w.rounded[..n]);
                o.convert_from_f32_slice(&w.rounded[..n]);
            }
            Dst::Bf16(o) => {
                simd::rounded_f32::<K, N>(isa, x, &mut w.rounded[..n]);
                o.convert_from_f32_slice(&w.rounded[..n]);
            }
        },
        Some(to) => {
            let values = &mut w.values[..n];
            simd::narrowable::<K, N>(isa, to, x, values);
            match (to, out) {
                (Narrow::F16, Dst::F16(o)) => narrow16(isa, to, values, o.reinterpret_cast_mut()),
                (Narrow::Bf16, Dst::Bf16(o)) => narrow16(isa, to, values, o.reinterpret_cast_mut()),
                (to, out) => {
                    let bits = &mut w.bits[..n];
                    narrow16(isa, to, values, bits);
                    match out {
                        Dst::F32(o) => from_bits(to, bits, o),
                        Dst::F16(o) => from_bits(to, bits, o),
                        Dst::Bf16(o) => from_bits(to, bits, o),
                    }
                }
            }
        }
    }
}

/// Converts values of the 16-bit format `to` (bits) to `T`.
fn from_bits<T: Element>(to: Narrow, bits: &[u16], out: &mut [T]) {
    for (o, &b) in out.iter_mut().zip(bits) {
        *o = T::from_f32(to.value(b));
    }
}

/// Whether a 2-D view is closer in memory along its columns than along its rows (a
/// transposed view; a zero stride is a broadcast, not a short walk).
pub(crate) fn along_columns(strides: &[isize]) -> bool {
    strides[0] != 0 && strides[0].unsigned_abs() < strides[1].unsigned_abs()
}

/// One 2-D tile (at most [`BLOCK`] elements): gathers the inputs into f32 buffers (a
/// contiguous f32 tile in place), computes, and writes the output (in place when its tile
/// is contiguous, else through `out32`/`out16`).
pub(crate) fn tile<K: Formula<N>, const N: usize>(
    isa: Isa,
    compute: DType,
    x: [TypedView<'_, ndarray::Ix2>; N],
    mut out: TypedViewMut<'_, ndarray::Ix2>,
    scratch: &mut Scratch<N>,
) {
    let Scratch {
        inputs,
        work,
        out32,
        out16,
    } = scratch;
    let x = zip_map(x, inputs.each_mut(), |v, buf| input(isa, v, buf));
    if let Some(o) = Dst::row_major(&mut out) {
        return block::<K, N>(isa, compute, x, o, work);
    }
    match out {
        TypedViewMut::F32(mut o) => {
            let src = &mut out32[..o.len()];
            block::<K, N>(isa, compute, x, Dst::F32(src), work);
            if !(along_columns(o.strides()) && gather::scatter_columns_f32(isa, src, o.view_mut()))
            {
                copy_into(src, o);
            }
        }
        TypedViewMut::F16(o) => {
            let src: &mut [f16] = out16[..o.len()].reinterpret_cast_mut();
            block::<K, N>(isa, compute, x, Dst::F16(src), work);
            copy_into(src, o);
        }
        TypedViewMut::Bf16(o) => {
            let src: &mut [bf16] = out16[..o.len()].reinterpret_cast_mut();
            block::<K, N>(isa, compute, x, Dst::Bf16(src), work);
            copy_into(src, o);
        }
    }
}

/// One input of a tile as f32 values in row-major order: a contiguous f32 tile in place,
/// another contiguous tile widened, anything else gathered into `buf`.
fn input<'v: 'b, 'b>(isa: Isa, v: TypedView<'v, ndarray::Ix2>, buf: &'b mut [f32]) -> &'b [f32] {
    let buf = &mut buf[..v_len(&v)];
    match v {
        TypedView::F32(v) => {
            if let Some(s) = v.to_slice() {
                return s;
            }
            if !(along_columns(v.strides()) && gather::gather_rows_f32(isa, v, buf)) {
                gather(v, buf);
            }
        }
        TypedView::F16(v) => match v.to_slice() {
            Some(s) => s.convert_to_f32_slice(buf),
            None => gather(v, buf),
        },
        TypedView::Bf16(v) => match v.to_slice() {
            Some(s) => s.convert_to_f32_slice(buf),
            None => gather(v, buf),
        },
    }
    buf
}

fn v_len<D: ndarray::Dimension>(v: &TypedView<'_, D>) -> usize {
    match v {
        TypedView::F32(v) => v.len(),
        TypedView::F16(v) => v.len(),
        TypedView::Bf16(v) => v.len(),
    }
}

/// Copies a 2-D view into `buf` (its length) in row-major order, widened to f32.
fn gather<T: Element>(v: ArrayView2<'_, T>, buf: &mut [f32]) {
    if let Ok(bv) = ArrayViewMut2::from_shape(v.dim(), buf) {
        Zip::from(bv).and(v).for_each(|d, s| *d = s.to_f32());
    }
}

/// Copies the row-major `src` (its length) into the 2-D view `o`: column by column for a
/// transposed view (each column a short walk in memory, while `src` read at a stride is
/// in L1), else in `o`'s memory order.
fn copy_into<T: Copy>(src: &[T], mut o: ArrayViewMut2<'_, T>) {
    let cols = o.ncols();
    if along_columns(o.strides()) {
        for (c, col) in o.columns_mut().into_iter().enumerate() {
            for (d, &v) in col.into_iter().zip(src[c..].iter().step_by(cols)) {
                *d = v;
            }
        }
    } else if let Ok(ov) = ArrayView2::from_shape(o.dim(), src) {
        Zip::from(&mut o).and(&ov).for_each(|d, &v| *d = v);
    }
}
