//! The strided elementwise engine: one formula of `N` inputs over views of any element
//! types, shapes and strides, into an output view of any element type and strides.
//!
//! Views of equal strides that are contiguous in memory run as flat slices. Any other
//! layout has its axes ordered by the strides of all views (so that C order walks memory
//! in order in most of them), the output's negative strides made positive, axes that are
//! contiguous in every view merged, and is then walked in 2-D tiles of at most
//! [`BLOCK`] elements through stack buffers ([`tile`]): whole rows (or row segments) when
//! every view runs along the rows, 16 × 64 when one runs across them, so that the cache
//! lines one tile row touches serve the next rows too. Large work is split across
//! rayon's thread pool. Nothing is allocated beyond a few axis lists.

use super::PARALLEL_THRESHOLD;
use super::simd::{Formula, Isa};
use super::tile::{self, BLOCK, Dst, Scratch, Src, TILE_COLS, TILE_ROWS, along_columns, zip_map};
use crate::element::DType;
use crate::element::sealed::{TypedView, TypedViewMut};
use ndarray::{Axis, Ix2, IxDyn, Slice};

/// `match` over the variants of a typed view (enum `$t`), binding the view to `$v` in
/// each arm and wrapping the result in the same variant.
macro_rules! typed_map {
    ($e:expr, $t:ident, |$v:ident| $body:expr) => {
        match $e {
            $t::F32($v) => $t::F32($body),
            $t::F16($v) => $t::F16($body),
            $t::Bf16($v) => $t::Bf16($body),
        }
    };
}

/// `match` over the variants of a typed view, binding the view to `$v` in each arm and
/// returning the result.
macro_rules! typed_each {
    ($e:expr, $t:ident, |$v:ident| $body:expr) => {
        match $e {
            $t::F32($v) => $body,
            $t::F16($v) => $body,
            $t::Bf16($v) => $body,
        }
    };
}

/// The views of one call: `N` inputs and the output, of the same shape.
struct Operands<'a, const N: usize, D> {
    x: [TypedView<'a, D>; N],
    out: TypedViewMut<'a, D>,
}

impl<'a, const N: usize> Operands<'a, N, IxDyn> {
    fn shape(&self) -> &[usize] {
        typed_each!(&self.out, TypedViewMut, |v| v.shape())
    }

    fn ndim(&self) -> usize {
        self.shape().len()
    }

    fn len(&self) -> usize {
        self.shape().iter().product()
    }

    fn out_strides(&self) -> &[isize] {
        typed_each!(&self.out, TypedViewMut, |v| v.strides())
    }

    /// The strides of every view, the output's last.
    fn strides(&self) -> impl Iterator<Item = &[isize]> {
        let x = self
            .x
            .iter()
            .map(|v| typed_each!(v, TypedView, |v| v.strides()));
        x.chain(std::iter::once(self.out_strides()))
    }

    /// Applies the same change of axes to every view.
    fn each(&mut self, mut f: impl FnMut(&mut dyn AxisOps)) {
        for v in &mut self.x {
            typed_each!(v, TypedView, |v| f(v));
        }
        typed_each!(&mut self.out, TypedViewMut, |v| f(v));
    }

    fn permuted(self, axes: &[usize]) -> Self {
        Operands {
            x: self
                .x
                .map(|v| typed_map!(v, TypedView, |v| v.permuted_axes(IxDyn(axes)))),
            out: typed_map!(self.out, TypedViewMut, |v| v.permuted_axes(IxDyn(axes))),
        }
    }

    /// The two halves along `axis`, split before index `mid`.
    fn split(self, axis: Axis, mid: usize) -> (Self, Self) {
        let (lo, hi) = (Slice::from(..mid), Slice::from(mid..));
        let left = self
            .x
            .clone()
            .map(|v| typed_map!(v, TypedView, |v| v.slice_axis_move(axis, lo)));
        let right = self
            .x
            .map(|v| typed_map!(v, TypedView, |v| v.slice_axis_move(axis, hi)));
        let (a, b) = match self.out {
            TypedViewMut::F32(v) => {
                let (a, b) = v.split_at(axis, mid);
                (TypedViewMut::F32(a), TypedViewMut::F32(b))
            }
            TypedViewMut::F16(v) => {
                let (a, b) = v.split_at(axis, mid);
                (TypedViewMut::F16(a), TypedViewMut::F16(b))
            }
            TypedViewMut::Bf16(v) => {
                let (a, b) = v.split_at(axis, mid);
                (TypedViewMut::Bf16(a), TypedViewMut::Bf16(b))
            }
        };
        (Operands { x: left, out: a }, Operands { x: right, out: b })
    }

    /// The views at index `i` of axis 0, for as long as `self` is borrowed.
    fn index(&mut self, i: usize) -> Operands<'_, N, IxDyn> {
        let x: [TypedView<'_, IxDyn>; N] = self
            .x
            .each_ref()
            .map(|v| typed_map!(v, TypedView, |v| v.view().index_axis_move(Axis(0), i)));
        let out: TypedViewMut<'_, IxDyn> = typed_map!(&mut self.out, TypedViewMut, |v| v
            .view_mut()
            .index_axis_move(Axis(0), i));
        Operands { x, out }
    }

    /// The views as 2-D views (`None` unless they have 2 dims).
    fn into_2d(self) -> Option<Operands<'a, N, Ix2>> {
        fn ix2<T, V>(v: ndarray::ArrayBase<V, IxDyn>) -> Option<ndarray::ArrayBase<V, Ix2>>
        where
            V: ndarray::RawData<Elem = T>,
        {
            v.into_dimensionality::<Ix2>().ok()
        }
        let mut x = self.x.map(|v| match v {
            TypedView::F32(v) => ix2(v).map(TypedView::F32),
            TypedView::F16(v) => ix2(v).map(TypedView::F16),
            TypedView::Bf16(v) => ix2(v).map(TypedView::Bf16),
        });
        let out = match self.out {
            TypedViewMut::F32(v) => ix2(v).map(TypedViewMut::F32),
            TypedViewMut::F16(v) => ix2(v).map(TypedViewMut::F16),
            TypedViewMut::Bf16(v) => ix2(v).map(TypedViewMut::Bf16),
        }?;
        if x.iter().any(Option::is_none) {
            return None;
        }
        Some(Operands {
            x: std::array::from_fn(|k| x[k].take().expect("checked above")),
            out,
        })
    }
}

/// The in-place axis changes of a view that the engine makes to all views alike.
trait AxisOps {
    fn invert_axis(&mut self, axis: Axis);
    fn merge_axes(&mut self, take: Axis, into: Axis) -> bool;
    fn index_axis_inplace(&mut self, axis: Axis, index: usize);
    fn insert_axis_inplace(&mut self, axis: Axis);
}

impl<S: ndarray::Data> AxisOps for ndarray::ArrayBase<S, IxDyn> {
    fn invert_axis(&mut self, axis: Axis) {
        ndarray::ArrayBase::invert_axis(self, axis);
    }
    fn merge_axes(&mut self, take: Axis, into: Axis) -> bool {
        ndarray::ArrayBase::merge_axes(self, take, into)
    }
    fn index_axis_inplace(&mut self, axis: Axis, index: usize) {
        ndarray::ArrayBase::index_axis_inplace(self, axis, index);
    }
    fn insert_axis_inplace(&mut self, axis: Axis) {
        ndarray::ArrayBase::insert_axis_inplace(self, axis);
    }
}

/// Runs `K` over `x` (each already broadcast to `out`'s shape) into `out`, computing in
/// `compute`. (ndarray's views are invariant in their lifetime: callers pass reborrows.)
pub(crate) fn run<'a, K: Formula<N>, const N: usize>(
    compute: DType,
    x: [TypedView<'a, IxDyn>; N],
    mut out: TypedViewMut<'a, IxDyn>,
) {
    let isa = Isa::detect();
    let same_layout = {
        let out_strides = typed_each!(&out, TypedViewMut, |v| v.strides());
        x.iter()
            .all(|v| typed_each!(v, TypedView, |v| v.strides()) == out_strides)
    };
    if same_layout {
        let src: [Option<Src<'_>>; N] = x.each_ref().map(Src::of);
        if src.iter().all(Option::is_some)
            && let Some(dst) = Dst::memory_order(&mut out)
        {
            let src = src.map(|s| s.expect("checked above"));
            return flat::<K, N>(isa, compute, src, dst);
        }
    }
    strided::<K, N>(isa, compute, Operands { x, out });
}

/// Flat runs of equal length, element `i` of each corresponding.
fn flat<K: Formula<N>, const N: usize>(isa: Isa, compute: DType, x: [Src<'_>; N], out: Dst<'_>) {
    let threads = rayon::current_num_threads();
    if out.len() >= PARALLEL_THRESHOLD && threads > 1 {
        let chunk = (out.len() / (threads * 4)).max(PARALLEL_THRESHOLD / 2);
        flat_split::<K, N>(isa, compute, x, out, chunk.next_multiple_of(BLOCK));
    } else {
        flat_serial::<K, N>(isa, compute, x, out);
    }
}

/// Halves the runs (at multiples of `chunk`) across the thread pool down to `chunk`.
fn flat_split<K: Formula<N>, const N: usize>(
    isa: Isa,
    compute: DType,
    x: [Src<'_>; N],
    out: Dst<'_>,
    chunk: usize,
) {
    let n = out.len();
    if n <= chunk {
        return flat_serial::<K, N>(isa, compute, x, out);
    }
    let mid = (n / chunk).div_ceil(2) * chunk;
    let (lo, hi) = out.split_at(mid);
    rayon::join(
        || flat_split::<K, N>(isa, compute, x.map(|s| s.get(0..mid)), lo, chunk),
        || flat_split::<K, N>(isa, compute, x.map(|s| s.get(mid..n)), hi, chunk),
    );
}

fn flat_serial<K: Formula<N>, const N: usize>(
    isa: Isa,
    compute: DType,
    x: [Src<'_>; N],
    mut out: Dst<'_>,
) {
    let mut scratch = Scratch::<N>::new();
    let n = out.len();
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        let (inputs, work) = scratch.inputs_and_work();
        let xs = zip_map(x, inputs.each_mut(), |s, buf| {
            s.get(start..end).widened(buf)
        });
        tile::block::<K, N>(isa, compute, xs, out.get(start..end), work);
    }
}

/// Any layout: orders the axes by the strides of all views, merges axes that are
/// contiguous in all of them, picks the tile orientation, splits large work across
/// threads.
fn strided<K: Formula<N>, const N: usize>(isa: Isa, compute: DType, ops: Operands<'_, N, IxDyn>) {
    let nd = ops.ndim();
    let mut axes: Vec<usize> = (0..nd).collect();
    // Largest strides first (summed over the views): logical C order then walks memory in
    // order in most of them; ties keep the output's order.
    let weight = |a: usize| ops.strides().map(|s| s[a].unsigned_abs()).sum::<usize>();
    axes.sort_by_key(|&a| {
        (
            std::cmp::Reverse(weight(a)),
            std::cmp::Reverse(ops.out_strides()[a].unsigned_abs()),
        )
    });
    let mut ops = ops.permuted(&axes);
    // Walk the output forwards (its negative strides made positive).
    for a in 0..nd {
        if ops.out_strides()[a] < 0 {
            ops.each(|v| v.invert_axis(Axis(a)));
        }
    }
    // Merge outer axes into the inner ones where all views allow it.
    if nd > 1 {
        let mut into = nd - 1;
        for take in (0..nd - 1).rev() {
            let (lt, li) = (ops.shape()[take], ops.shape()[into]);
            let ok = lt <= 1 || li <= 1 || ops.strides().all(|s| s[take] == li as isize * s[into]);
            if ok {
                ops.each(|v| {
                    v.merge_axes(Axis(take), Axis(into));
                });
            } else {
                into = take;
            }
        }
    }
    // Drop the axes of length 1 (merging leaves them behind).
    for a in (0..nd).rev() {
        if ops.shape()[a] == 1 {
            ops.each(|v| v.index_axis_inplace(Axis(a), 0));
        }
    }
    // A view walked against its memory order along the rows (transposed against the
    // others) is read or written in tiles: its fastest axis becomes the row axis of the
    // 2-D core, so the cache lines one tile row touches serve the next rows too.
    let nd = ops.ndim();
    if nd >= 2 {
        let inner = nd - 1;
        let tile_axis = ops.strides().find_map(|s| {
            let along_rows = s[inner].unsigned_abs();
            (0..inner)
                .filter(|&a| s[a] != 0)
                .min_by_key(|&a| s[a].unsigned_abs())
                .filter(|&a| along_rows > 1 && s[a].unsigned_abs() < along_rows)
        });
        if let Some(t) = tile_axis {
            let mut axes: Vec<usize> = (0..nd).filter(|&a| a != t).collect();
            axes.insert(inner - 1, t);
            ops = ops.permuted(&axes);
        }
    }
    strided_split::<K, N>(isa, compute, ops, rayon::current_num_threads() > 1);
}

fn strided_split<K: Formula<N>, const N: usize>(
    isa: Isa,
    compute: DType,
    ops: Operands<'_, N, IxDyn>,
    parallel: bool,
) {
    if parallel
        && ops.len() >= PARALLEL_THRESHOLD
        && let Some(axis) = (0..ops.ndim()).find(|&a| ops.shape()[a] > 1)
    {
        // Halves on a multiple of 64 indices where possible, so that two threads share
        // no cache line of a view that is contiguous along this axis.
        let half = ops.shape()[axis] / 2;
        let mid = if half >= 64 { half - half % 64 } else { half };
        let (a, b) = ops.split(Axis(axis), mid);
        rayon::join(
            || strided_split::<K, N>(isa, compute, a, parallel),
            || strided_split::<K, N>(isa, compute, b, parallel),
        );
    } else {
        let mut scratch = Scratch::<N>::new();
        outer::<K, N>(isa, compute, ops, &mut scratch);
    }
}

/// The outer axes one index at a time, the last two in tiles.
fn outer<K: Formula<N>, const N: usize>(
    isa: Isa,
    compute: DType,
    mut ops: Operands<'_, N, IxDyn>,
    scratch: &mut Scratch<N>,
) {
    if ops.ndim() > 2 {
        for i in 0..ops.shape()[0] {
            outer::<K, N>(isa, compute, ops.index(i), scratch);
        }
        return;
    }
    while ops.ndim() < 2 {
        ops.each(|v| v.insert_axis_inplace(Axis(0)));
    }
    if let Some(ops) = ops.into_2d() {
        tiles::<K, N>(isa, compute, ops, scratch);
    }
}

/// A 2-D problem in tiles of at most [`BLOCK`] elements: whole rows (or row segments) when
/// all views run along the rows, [`TILE_ROWS`] × [`TILE_COLS`] when one runs across them.
fn tiles<K: Formula<N>, const N: usize>(
    isa: Isa,
    compute: DType,
    mut ops: Operands<'_, N, Ix2>,
    scratch: &mut Scratch<N>,
) {
    let (rows, cols) = typed_each!(&ops.out, TypedViewMut, |v| v.dim());
    let across = ops
        .x
        .iter()
        .any(|v| typed_each!(v, TypedView, |v| along_columns(v.strides())))
        || typed_each!(&ops.out, TypedViewMut, |v| along_columns(v.strides()));
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
            let x = ops.x.map(|v| {
                typed_map!(v, TypedView, |v| v
                    .slice_axis_move(Axis(0), rs)
                    .slice_axis_move(Axis(1), cs))
            });
            let out = typed_map!(&mut ops.out, TypedViewMut, |v| v
                .slice_axis_mut(Axis(0), rs)
                .slice_axis_move(Axis(1), cs));
            tile::tile::<K, N>(isa, compute, x, out, scratch);
        }
    }
}
