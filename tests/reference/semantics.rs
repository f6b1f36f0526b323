//! Shape rules, typed errors, empty tensors and every memory layout of
//! `ascendcl::reference` (`mish_backward`, then `mish`): strided, transposed, negatively strided, broadcast inputs and
//! non-contiguous outputs must give bitwise the same values as contiguous copies, on the
//! serial and the parallel paths.

use ascendcl::reference::{PARALLEL_THRESHOLD, mish, mish_backward, mish_backward_into, mish_into};
use ascendcl::{Error, FloatElement};
use half::{bf16, f16};
use ndarray::{Array, ArrayD, ArrayView, Axis, Dimension, Ix2, IxDyn, ShapeBuilder, Slice, s};
use proptest::prelude::*;

fn bits(a: &ArrayD<f32>) -> Vec<u32> {
    a.iter().map(|v| v.to_bits()).collect()
}

/// Deterministic values covering both branches, the root window and specials.
fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let k = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed);
            match k % 97 {
                0 => f32::NAN,
                1 => f32::NEG_INFINITY,
                2 => -1.192_431_2,
                _ => (k % 4001) as f32 / 100.0 - 20.0,
            }
        })
        .collect()
}

/// Expected output: the same inputs made contiguous (broadcast materialized here, in the
/// test only) through the contiguous path.
fn expected(g: &ArrayD<f32>, x: &ArrayD<f32>, shape: &[usize]) -> ArrayD<f32> {
    let gb = g
        .broadcast(shape)
        .unwrap()
        .as_standard_layout()
        .into_owned();
    let xb = x
        .broadcast(shape)
        .unwrap()
        .as_standard_layout()
        .into_owned();
    mish_backward(gb.view(), xb.view()).unwrap()
}

#[test]
fn errors_are_typed_and_leave_out_untouched() {
    let nine = ArrayD::<f32>::zeros(IxDyn(&[1; 9]));
    let one = ArrayD::<f32>::zeros(IxDyn(&[1]));
    assert!(matches!(
        mish_backward(nine.view(), one.view()),
        Err(Error::TooManyDims {
            dims: 9,
            max: 8,
            ..
        })
    ));
    assert!(matches!(
        mish_backward(one.view(), nine.view()),
        Err(Error::TooManyDims { dims: 9, .. })
    ));
    let a = ArrayD::<f32>::zeros(IxDyn(&[3]));
    let b = ArrayD::<f32>::zeros(IxDyn(&[4]));
    match mish_backward(a.view(), b.view()) {
        Err(Error::NotBroadcastable {
            argument,
            shape,
            other,
            other_shape,
        }) => {
            assert_eq!((argument, other), ("grad_output", "self"));
            assert_eq!(shape, vec![3]);
            assert_eq!(other_shape, vec![4]);
        }
        other => panic!("{other:?}"),
    }
    let g = ArrayD::<f32>::ones(IxDyn(&[2, 3]));
    let mut out = ArrayD::<f32>::from_elem(IxDyn(&[3, 2]), 7.0);
    match mish_backward_into(g.view(), g.view(), out.view_mut()) {
        Err(Error::ShapeMismatch {
            expected, actual, ..
        }) => {
            assert_eq!(expected, vec![2, 3]);
            assert_eq!(actual, vec![3, 2]);
        }
        other => panic!("{other:?}"),
    }
    assert!(out.iter().all(|&v| v == 7.0));
    let mut out9 = ArrayD::<f32>::zeros(IxDyn(&[1; 9]));
    assert!(matches!(
        mish_backward_into(one.view(), one.view(), out9.view_mut()),
        Err(Error::TooManyDims { .. })
    ));
    // the output may not broadcast: [3] into [1, 3] is a mismatch
    let x3 = ArrayD::<f32>::zeros(IxDyn(&[3]));
    let mut o13 = ArrayD::<f32>::zeros(IxDyn(&[1, 3]));
    assert!(matches!(
        mish_backward_into(x3.view(), x3.view(), o13.view_mut()),
        Err(Error::ShapeMismatch { .. })
    ));
}

#[test]
fn empty_and_zero_dim() {
    let e = ArrayD::<f32>::zeros(IxDyn(&[0, 3]));
    let x = ArrayD::<f32>::zeros(IxDyn(&[1, 3]));
    let out = mish_backward(e.view(), x.view()).unwrap();
    assert_eq!(out.shape(), &[0, 3]);
    let mut o = ArrayD::from_elem(IxDyn(&[0, 3]), bf16::ZERO);
    mish_backward_into(e.view(), x.view(), o.view_mut()).unwrap();
    // 8 dims are fine
    let g8 = ArrayD::<f32>::ones(IxDyn(&[1, 2, 1, 2, 1, 2, 1, 2]));
    let out: ArrayD<f32> =
        mish_backward(g8.view(), ndarray::arr0(0.0f32).into_dyn().view()).unwrap();
    assert!(out.iter().all(|&v| v == 0.6));
    // 0-d with 0-d
    let out: ArrayD<f32> = mish_backward(
        ndarray::arr0(2.0f32).into_dyn().view(),
        ndarray::arr0(0.0f32).into_dyn().view(),
    )
    .unwrap();
    assert_eq!(out.ndim(), 0);
    assert_eq!(out[IxDyn(&[])], 1.2);
}

#[test]
fn layouts_match_contiguous_bitwise() {
    for &(rows, cols) in &[(7usize, 13usize), (300, 260)] {
        // 300x260 = 78000 >= PARALLEL_THRESHOLD: parallel paths
        let g = Array::from_shape_vec((rows, cols), values(rows * cols, 1)).unwrap();
        let x = Array::from_shape_vec((rows, cols), values(rows * cols, 99)).unwrap();
        let want = expected(&g.clone().into_dyn(), &x.clone().into_dyn(), &[rows, cols]);

        // Fortran-order copies (same layout in all three: flat path)
        let gf = Array::from_shape_vec((rows, cols).f(), vec![0.0; rows * cols]).unwrap();
        let mut gf = gf;
        gf.assign(&g);
        let mut xf = Array::from_shape_vec((rows, cols).f(), vec![0.0; rows * cols]).unwrap();
        xf.assign(&x);
        let mut of = Array::from_shape_vec((rows, cols).f(), vec![0.0f32; rows * cols]).unwrap();
        mish_backward_into(
            gf.view().into_dyn(),
            xf.view().into_dyn(),
            of.view_mut().into_dyn(),
        )
        .unwrap();
        assert_eq!(bits(&of.into_dyn()), bits(&want));

        // transposed inputs, standard output
        let gt = g.t().as_standard_layout().into_owned();
        let xt = x.t().as_standard_layout().into_owned();
        let out: ArrayD<f32> = mish_backward(gt.t().into_dyn(), xt.t().into_dyn()).unwrap();
        assert_eq!(bits(&out), bits(&want));

        // negative strides everywhere, output written through a reversed view
        let mut gr = g.clone();
        gr.invert_axis(Axis(0));
        let gr = gr.as_standard_layout().into_owned();
        let mut grv = gr.view();
        grv.invert_axis(Axis(0));
        let mut out = Array::<f32, _>::zeros((rows, cols));
        let mut ov = out.view_mut();
        ov.invert_axis(Axis(1));
        let mut xv = x.view();
        xv.invert_axis(Axis(1));
        mish_backward_into(grv.into_dyn(), xv.into_dyn(), ov.into_dyn()).unwrap();
        // out[i][cols-1-j] = f(g[i][j], x[i][cols-1-j])... compare via an explicit oracle
        let mut xr = x.clone();
        xr.invert_axis(Axis(1));
        let want_r = expected(
            &g.clone().into_dyn(),
            &xr.as_standard_layout().into_owned().into_dyn(),
            &[rows, cols],
        );
        let mut got = out.clone();
        got.invert_axis(Axis(1));
        assert_eq!(
            bits(&got.as_standard_layout().into_owned().into_dyn()),
            bits(&want_r)
        );

        // stepped slices of bigger arrays, non-contiguous output
        let big_g =
            Array::from_shape_vec((rows * 2, cols * 3), values(rows * cols * 6, 5)).unwrap();
        let big_x =
            Array::from_shape_vec((rows * 2, cols * 3), values(rows * cols * 6, 6)).unwrap();
        let sg = big_g.slice(s![..;2, ..;3]);
        let sx = big_x.slice(s![1..;2, 2..;3]);
        let mut big_o = Array::<f32, _>::from_elem((rows * 3, cols * 2), 42.0);
        let mut so = big_o.slice_mut(s![..;3, 1..;2]);
        mish_backward_into(sg.into_dyn(), sx.into_dyn(), so.view_mut().into_dyn()).unwrap();
        let want_s = expected(
            &sg.to_owned().into_dyn(),
            &sx.to_owned().into_dyn(),
            &[rows, cols],
        );
        assert_eq!(bits(&so.to_owned().into_dyn()), bits(&want_s));
        // untouched elsewhere
        assert!(big_o.slice(s![1..;3, ..]).iter().all(|&v| v == 42.0));
        assert!(big_o.slice(s![..;3, ..;2]).iter().all(|&v| v == 42.0));
    }
}

#[test]
fn broadcast_inputs_match_materialized() {
    // row and column vectors against a matrix, large enough to go parallel
    let (r, c) = (400usize, 300usize);
    assert!(r * c >= PARALLEL_THRESHOLD);
    let gcol = Array::from_shape_vec((r, 1), values(r, 3))
        .unwrap()
        .into_dyn();
    let xrow = Array::from_shape_vec((c,), values(c, 4))
        .unwrap()
        .into_dyn();
    let want = expected(&gcol, &xrow, &[r, c]);
    let got: ArrayD<f32> = mish_backward(gcol.view(), xrow.view()).unwrap();
    assert_eq!(bits(&got), bits(&want));
    // scalar grad, 3-d x with a transposed output
    let x3 = Array::from_shape_vec((5, 6, 7), values(210, 8))
        .unwrap()
        .into_dyn();
    let g0 = ndarray::arr0(-1.5f32).into_dyn();
    let want = expected(&g0, &x3, &[5, 6, 7]);
    let mut out = Array::<f32, _>::zeros((7, 6, 5));
    mish_backward_into(
        g0.view(),
        x3.view(),
        out.view_mut().reversed_axes().into_dyn(),
    )
    .unwrap();
    assert_eq!(
        bits(
            &out.reversed_axes()
                .as_standard_layout()
                .into_owned()
                .into_dyn()
        ),
        bits(&want)
    );
}

/// `mish_backward_into` a new standard-layout array of `O`, for inputs of one shape.
fn into_new<O, G, X, D>(g: ArrayView<'_, G, D>, x: ArrayView<'_, X, D>) -> Array<O, D>
where
    O: FloatElement,
    G: FloatElement,
    X: FloatElement,
    D: Dimension,
{
    let mut out = Array::from_elem(g.raw_dim(), O::default());
    mish_backward_into(g, x, out.view_mut()).unwrap();
    out
}

#[test]
fn other_dtypes_through_strided_paths() {
    let g: Vec<f16> = values(600, 11).iter().map(|&v| f16::from_f32(v)).collect();
    let x: Vec<f16> = values(600, 12).iter().map(|&v| f16::from_f32(v)).collect();
    let g = Array::from_shape_vec((20, 30), g).unwrap();
    let x = Array::from_shape_vec((20, 30), x).unwrap();
    let want: Array<bf16, Ix2> = into_new(g.view(), x.view());
    let gt = g.t().as_standard_layout().into_owned();
    let got: Array<bf16, Ix2> = into_new(gt.t(), x.view());
    let b16 = |a: &Array<bf16, Ix2>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(b16(&want), b16(&got));
    // each element equals the 0-d computation
    for ((i, j), gv) in g.indexed_iter() {
        let one: Array<bf16, _> =
            into_new(ndarray::arr0(*gv).view(), ndarray::arr0(x[[i, j]]).view());
        assert_eq!(one[()].to_bits(), want[[i, j]].to_bits());
    }
}

/// Every axis order of a 3-D problem for each of the three views (216 layouts), with
/// sides that leave partial tiles (the tiled gather and scatter of transposed views), in
/// f32 and with f16 inputs and a bf16 output.
#[test]
fn transposed_3d_layouts_in_tiles() {
    let shape = [5usize, 37, 70];
    let n: usize = shape.iter().product();
    let perms = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let g = ArrayD::from_shape_vec(IxDyn(&shape), values(n, 31)).unwrap();
    let x = ArrayD::from_shape_vec(IxDyn(&shape), values(n, 32)).unwrap();
    let want = expected(&g, &x, &shape);
    let g16 = g.mapv(f16::from_f32);
    let x16 = x.mapv(f16::from_f32);
    let want16: ArrayD<bf16> = into_new(g16.view(), x16.view());
    // A copy of `a` stored in the axis order `perm`, viewed back in the logical order.
    fn stored<T: Clone>(a: &ArrayD<T>, perm: [usize; 3]) -> ArrayD<T> {
        let mut inverse = [0usize; 3];
        for (i, &p) in perm.iter().enumerate() {
            inverse[p] = i;
        }
        a.view()
            .permuted_axes(perm.to_vec())
            .as_standard_layout()
            .into_owned()
            .permuted_axes(inverse.to_vec())
    }
    for pg in perms {
        let gs = stored(&g, pg);
        let gs16 = stored(&g16, pg);
        for px in perms {
            let xs = stored(&x, px);
            let xs16 = stored(&x16, px);
            for po in perms {
                let mut out = stored(&ArrayD::<f32>::zeros(IxDyn(&shape)), po);
                mish_backward_into(gs.view(), xs.view(), out.view_mut()).unwrap();
                assert_eq!(bits(&out), bits(&want), "f32 g{pg:?} x{px:?} out{po:?}");
                let mut out16 = stored(&ArrayD::from_elem(IxDyn(&shape), bf16::ZERO), po);
                mish_backward_into(gs16.view(), xs16.view(), out16.view_mut()).unwrap();
                assert!(
                    out16
                        .iter()
                        .zip(&want16)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "f16->bf16 g{pg:?} x{px:?} out{po:?}"
                );
            }
        }
    }
}

/// Transposed 2-D f32 views with whole and partial tiles (the strided copies in and out
/// of a tile go 16 lanes at a time): an input stored column-major, reversed, or
/// transposed with a step; an output transposed, reversed, or transposed with a step of
/// two between its rows in memory.
#[test]
fn transposed_f32_views_of_many_tile_sizes() {
    for (rows, cols) in [(100usize, 130usize), (33, 65), (16, 64), (5, 200)] {
        let shape = [rows, cols];
        let n = rows * cols;
        let g = ArrayD::from_shape_vec(IxDyn(&shape), values(n, 41)).unwrap();
        let x = ArrayD::from_shape_vec(IxDyn(&shape), values(n, 42)).unwrap();
        let want = expected(&g, &x, &shape);
        let mut g_cols = ArrayD::<f32>::zeros(IxDyn(&shape).f());
        g_cols.assign(&g);
        // g stored reversed and transposed: logical [i, j] at memory (cols-1-j, rows-1-i)
        let g_back = g
            .slice(s![..;-1, ..;-1])
            .t()
            .as_standard_layout()
            .into_owned();
        let g_rev = g_back.slice(s![..;-1, ..;-1]);
        let g_rev = g_rev.t();
        // g transposed with a step: every other row of a (2·cols, rows) array
        let mut g_wide = ndarray::Array2::<f32>::zeros((2 * cols, rows));
        g_wide.slice_mut(s![..;2, ..]).assign(&g.t());
        let g_step = g_wide.slice(s![..;2, ..]);
        let g_step = g_step.t();
        let inputs = [g.view(), g_cols.view(), g_rev.into_dyn(), g_step.into_dyn()];
        for (k, gv) in inputs.iter().enumerate() {
            assert_eq!(gv.shape(), &shape);
            // output transposed, reversed and transposed, transposed with a row step of 2
            let mut plain = ndarray::Array2::<f32>::zeros((cols, rows));
            let mut wide = ndarray::Array2::<f32>::zeros((cols, 2 * rows));
            let mut back = ndarray::Array2::<f32>::zeros((cols, rows));
            mish_backward_into(
                gv.clone(),
                x.view(),
                plain.view_mut().reversed_axes().into_dyn(),
            )
            .unwrap();
            mish_backward_into(
                gv.clone(),
                x.view(),
                wide.slice_mut(s![.., ..;2]).reversed_axes().into_dyn(),
            )
            .unwrap();
            mish_backward_into(
                gv.clone(),
                x.view(),
                back.slice_mut(s![..;-1, ..;-1]).reversed_axes().into_dyn(),
            )
            .unwrap();
            let as_logical = |a: ndarray::ArrayView2<'_, f32>| a.t().to_owned().into_dyn();
            let back_logical = back.slice(s![..;-1, ..;-1]);
            for (name, got) in [
                ("transposed", as_logical(plain.view())),
                ("stepped", as_logical(wide.slice(s![.., ..;2]))),
                ("reversed", as_logical(back_logical)),
            ] {
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{rows}x{cols} input {k}, output {name}"
                );
            }
        }
    }
}

/// Random shapes (≤ 4 dims), broadcasting, axis permutations, reversed axes and steps.
fn layout_case() -> impl Strategy<Value = (Vec<usize>, u8, u8, Vec<usize>, u8, u8)> {
    (
        prop::collection::vec(1usize..6, 1..=4),
        any::<u8>(),
        any::<u8>(),
        Just(vec![0usize, 1, 2, 3]).prop_shuffle(),
        any::<u8>(),
        any::<u8>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn any_layout_matches_contiguous((shape, gmask, xmask, perm, rev, step) in layout_case()) {
        let nd = shape.len();
        // a dim broadcast in both inputs is 1 in the output too
        let shape: Vec<usize> = (0..nd)
            .map(|d| if (gmask & xmask) >> d & 1 == 1 { 1 } else { shape[d] })
            .collect();
        // inputs broadcast along the dims of their mask
        let gshape: Vec<usize> = (0..nd).map(|d| if gmask >> d & 1 == 1 { 1 } else { shape[d] }).collect();
        let xshape: Vec<usize> = (0..nd).map(|d| if xmask >> d & 1 == 1 { 1 } else { shape[d] }).collect();
        // x drops its leading dim when it is 1 (rank broadcasting)
        let xshape = if xshape[0] == 1 && nd > 1 { xshape[1..].to_vec() } else { xshape };
        let gn: usize = gshape.iter().product();
        let xn: usize = xshape.iter().product();
        // stepped storage for g: every other element along the last axis
        let mut gst = gshape.clone();
        if step & 1 == 1 { gst[nd - 1] *= 2; }
        let gbig = ArrayD::from_shape_vec(IxDyn(&gst), values(gst.iter().product(), 21)).unwrap();
        let mut gv = gbig.view();
        if step & 1 == 1 { gv.slice_axis_inplace(Axis(nd - 1), Slice::new(0, None, 2)); }
        let mut g = gv.to_owned();
        prop_assert_eq!(g.len(), gn);
        let x = ArrayD::from_shape_vec(IxDyn(&xshape), values(xn, 22)).unwrap();
        let want = expected(&g, &x, &shape);
        // reversed axes in g
        for d in 0..nd { if rev >> d & 1 == 1 { g.invert_axis(Axis(d)); } }
        let g = g.as_standard_layout().into_owned();
        let mut gview = g.view();
        for d in 0..nd { if rev >> d & 1 == 1 { gview.invert_axis(Axis(d)); } }
        // output: permuted storage
        let perm: Vec<usize> = perm.into_iter().filter(|&p| p < nd).collect();
        let pshape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let mut ostore = ArrayD::<f32>::zeros(IxDyn(&pshape));
        let mut inv = vec![0; nd];
        for (i, &p) in perm.iter().enumerate() { inv[p] = i; }
        let mut ov = ostore.view_mut().permuted_axes(inv.clone());
        if rev >> 4 & 1 == 1 { ov.invert_axis(Axis(0)); }
        prop_assert_eq!(ov.shape(), &shape[..]);
        let r = mish_backward_into(gview, x.view(), ov);
        prop_assert!(r.is_ok(), "{:?} {:?} {:?}", r, gshape, xshape);
        let mut got = ostore.view().permuted_axes(inv).to_owned();
        if rev >> 4 & 1 == 1 { got.invert_axis(Axis(0)); }
        let got = got.as_standard_layout().into_owned();
        prop_assert_eq!(bits(&got), bits(&want));
    }
}

// ------------------------------------------------------------------------ mish (forward)

#[test]
fn mish_errors_are_typed_and_leave_out_untouched() {
    let nine = ArrayD::<f32>::zeros(IxDyn(&[1; 9]));
    assert!(matches!(
        mish(nine.view()),
        Err(Error::TooManyDims {
            argument: "self",
            dims: 9,
            max: 8
        })
    ));
    let mut out9 = ArrayD::<f32>::zeros(IxDyn(&[1; 9]));
    assert!(matches!(
        mish_into(nine.view(), out9.view_mut()),
        Err(Error::TooManyDims { .. })
    ));
    let x = Array::<f32, _>::ones((2, 3));
    let mut out = Array::<f32, _>::from_elem((3, 2), 7.0);
    match mish_into(x.view(), out.view_mut()) {
        Err(Error::ShapeMismatch {
            argument,
            expected,
            actual,
        }) => {
            assert_eq!(argument, "out");
            assert_eq!(expected, vec![2, 3]);
            assert_eq!(actual, vec![3, 2]);
        }
        other => panic!("{other:?}"),
    }
    assert!(out.iter().all(|&v| v == 7.0));
    // no broadcasting: [3] into [1, 3] is a mismatch, as in aclnnMish
    let x3 = Array::<f32, _>::zeros(3);
    let mut o13 = Array::<f32, _>::zeros((1, 3));
    assert!(matches!(
        mish_into(x3.view(), o13.view_mut()),
        Err(Error::ShapeMismatch { .. })
    ));
}

#[test]
fn mish_empty_zero_dim_and_dimension_types() {
    let e = Array::from_elem((0, 3), f16::ZERO);
    let out: Array<f16, Ix2> = mish(e.view()).unwrap();
    assert_eq!(out.dim(), (0, 3));
    let out = mish(ndarray::arr0(1.0f32).view()).unwrap();
    assert_eq!(out.ndim(), 0);
    assert_eq!(out[()], 0.865_098_4);
    // 8 dims are fine, and the dimension type is kept (here IxDyn)
    let x8 = ArrayD::<f32>::zeros(IxDyn(&[1, 2, 1, 2, 1, 2, 1, 2]));
    let out: ArrayD<f32> = mish(x8.view()).unwrap();
    assert_eq!(out.shape(), x8.shape());
    // output of another dimension type than the input
    let x = Array::from_shape_vec((2, 3), values(6, 3)).unwrap();
    let mut o = ArrayD::<f32>::zeros(IxDyn(&[2, 3]));
    mish_into(x.view(), o.view_mut()).unwrap();
    assert_eq!(
        o.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        mish(x.view())
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    );
}

/// Transposed, reversed, stepped and broadcast inputs, non-contiguous outputs, serial and
/// parallel sizes, three dtypes: each element equals the 0-d computation of its input.
#[test]
fn mish_layouts_match_elementwise() {
    fn check<T: ascendcl::FloatElement>(rows: usize, cols: usize) {
        let big = Array::from_shape_vec(
            (2 * rows, 3 * cols),
            values(6 * rows * cols, 17)
                .into_iter()
                .map(T::from_f32)
                .collect(),
        )
        .unwrap();
        let one = |v: T| mish(ndarray::arr0(v).view()).unwrap()[()].to_bits_u32();
        let row = big.slice(s![0..1, ..cols]);
        let inputs = [
            big.slice(s![..rows, ..cols]),
            big.slice(s![..;2, ..;3]),
            big.slice(s![..;-2, 1..;3]),
            big.slice(s![..cols, ..rows]).reversed_axes(),
            row.broadcast((rows, cols)).unwrap(),
        ];
        for (k, x) in inputs.iter().enumerate() {
            let fresh = mish(x.view()).unwrap();
            let mut wide = Array::from_elem((cols, 2 * rows), T::default());
            mish_into(x.view(), wide.slice_mut(s![..;-1, ..;2]).reversed_axes()).unwrap();
            let written = wide.slice(s![..;-1, ..;2]).reversed_axes().to_owned();
            for ((&x, &a), &b) in x.iter().zip(&fresh).zip(&written) {
                assert_eq!(a.to_bits_u32(), one(x), "{:?} input {k}", T::DTYPE);
                assert_eq!(b.to_bits_u32(), one(x), "{:?} input {k} written", T::DTYPE);
            }
            assert!(wide.slice(s![.., 1..;2]).iter().all(|&v| v == T::default()));
        }
    }
    check::<f32>(7, 13);
    check::<f32>(300, 260);
    check::<f16>(40, 30);
    check::<bf16>(300, 120);
}

/// The output's element type is the promoted one and its dimension type the larger of the
/// inputs' (ndarray's `DimMax`), without annotations; a too large broadcast shape is a
/// typed error, not a panic.
#[test]
fn output_types_follow_the_inputs() {
    let row = Array::from_vec(values(3, 1));
    let matrix = Array::from_shape_vec((2, 3), values(6, 2)).unwrap();
    let out: Array<f32, Ix2> = mish_backward(row.view(), matrix.view()).unwrap();
    let dynamic = matrix.clone().into_dyn();
    let out_dyn: ArrayD<f32> = mish_backward(row.view(), dynamic.view()).unwrap();
    assert_eq!(bits(&out.into_dyn()), bits(&out_dyn));
    let h = matrix.mapv(f16::from_f32);
    let b = matrix.mapv(bf16::from_f32);
    let hh: Array<f16, Ix2> = mish_backward(h.view(), h.view()).unwrap();
    let bb: Array<bf16, Ix2> = mish_backward(b.view(), b.view()).unwrap();
    let hb: Array<f32, Ix2> = mish_backward(h.view(), b.view()).unwrap();
    assert_eq!((hh.dim(), bb.dim(), hb.dim()), ((2, 3), (2, 3), (2, 3)));
    let y: Array<bf16, ndarray::Ix1> = mish(b.row(0)).unwrap();
    assert_eq!(y.len(), 3);

    let one = ndarray::arr0(1.0f32);
    let tall = one.broadcast((1usize << 40, 1)).unwrap();
    let wide = one.broadcast((1, 1usize << 40)).unwrap();
    assert!(matches!(
        mish_backward(tall, wide),
        Err(Error::TooManyElements { .. })
    ));
}

/// Every combination of input and output element types (27) through the flat path, a
/// transposed input, a transposed and stepped output: each element equals the 0-d
/// computation of its inputs.
#[test]
fn every_dtype_combination_through_every_path() {
    fn run<G: ascendcl::FloatElement, X: ascendcl::FloatElement, O: ascendcl::FloatElement>() {
        let (rows, cols) = (37usize, 70usize);
        let g = Array::from_shape_vec((rows, cols), values(rows * cols, 51))
            .unwrap()
            .mapv(G::from_f32);
        let x = Array::from_shape_vec((rows, cols), values(rows * cols, 52))
            .unwrap()
            .mapv(X::from_f32);
        let one = |g: G, x: X| -> u32 {
            let o: Array<O, _> = into_new(ndarray::arr0(g).view(), ndarray::arr0(x).view());
            o[()].to_bits_u32()
        };
        let flat: Array<O, Ix2> = into_new(g.view(), x.view());
        let gt = g.t().as_standard_layout().into_owned();
        let transposed_in: Array<O, Ix2> = into_new(gt.t(), x.view());
        let mut wide = Array::from_elem((cols, 2 * rows), O::default());
        mish_backward_into(
            g.view(),
            x.view(),
            wide.slice_mut(s![.., ..;2]).reversed_axes(),
        )
        .unwrap();
        let stepped_out = wide.slice(s![.., ..;2]).reversed_axes().to_owned();
        for ((i, j), &gv) in g.indexed_iter() {
            let want = one(gv, x[[i, j]]);
            let got = [flat[[i, j]], transposed_in[[i, j]], stepped_out[[i, j]]];
            assert!(
                got.iter().all(|v| v.to_bits_u32() == want),
                "{:?}+{:?}->{:?} at ({i}, {j})",
                G::DTYPE,
                X::DTYPE,
                O::DTYPE
            );
        }
    }
    fn outputs<G: ascendcl::FloatElement, X: ascendcl::FloatElement>() {
        run::<G, X, f32>();
        run::<G, X, f16>();
        run::<G, X, bf16>();
    }
    fn inputs<G: ascendcl::FloatElement>() {
        outputs::<G, f32>();
        outputs::<G, f16>();
        outputs::<G, bf16>();
    }
    inputs::<f32>();
    inputs::<f16>();
    inputs::<bf16>();
}
