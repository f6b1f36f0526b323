//! The references of `aclnnMatmul` and `aclnnAddmm`: hand-checked values, shapes (1-D
//! operands, batch broadcasting, empty, transposed views), the compute format each
//! `CubeMath` selects, errors, and the rounding against a 256-bit golden.

use crate::reference_golden;

use ascendcl::reference::{CubeFormat, addmm, addmm_as, cube_format, matmul, matmul_as};
use ascendcl::{CubeMath, DType, Error};
use astro_float::BigFloat;
use half::{bf16, f16};
use ndarray::{Array, Array2, ArrayD, ArrayView2, Axis, array, s};
use reference_golden::{PREC, RM, to_f64_odd};

/// Values `i / 8` for small integers: every product and sum is exact in f32.
fn exact_mat(rows: usize, cols: usize, seed: usize) -> Array2<f32> {
    Array2::from_shape_fn((rows, cols), |(i, j)| {
        ((i * 7 + j * 3 + seed * 5) % 17) as f32 / 8.0 - 1.0
    })
}

#[test]
fn matmul_hand_checked_and_one_dimensional_operands() {
    let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let b = array![[1.0f32, 0.0], [0.0, 1.0], [2.0, -1.0]];
    let c = matmul(a.view(), b.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(c, array![[7.0, -1.0], [16.0, -1.0]].into_dyn());
    let v = array![1.0f32, -1.0, 2.0];
    // (K)·(K) is 0-D
    let dot = matmul(v.view(), v.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(dot.shape(), &[] as &[usize]);
    assert_eq!(dot[[]], 6.0);
    // (M,K)·(K) drops N; (K)·(K,N) drops M
    let mv = matmul(a.view(), v.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(mv, array![5.0, 11.0].into_dyn());
    let vm = matmul(v.view(), b.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(vm, array![5.0, -3.0].into_dyn());
    // (B,M,K)·(K) gives (B,M); (K)·(B,K,N) gives (B,N)
    let batch = ndarray::stack![Axis(0), a, a.mapv(|x| -x)];
    let bv = matmul(batch.view(), v.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(bv, array![[5.0, 11.0], [-5.0, -11.0]].into_dyn());
    let bt = ndarray::stack![Axis(0), b, b];
    let vb = matmul(v.view(), bt.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(vb, array![[5.0, -3.0], [5.0, -3.0]].into_dyn());
}

#[test]
fn matmul_batch_broadcasting_matches_per_batch_products() {
    // (2, 1, 3, 4) · (3, 4, 5) broadcasts the batch to (2, 3)
    let a = Array::from_shape_fn((2, 1, 3, 4), |(i, _, j, k)| {
        (i * 12 + j * 4 + k) as f32 / 4.0
    });
    let b = Array::from_shape_fn((3, 4, 5), |(i, j, k)| {
        ((i + 2 * j + 3 * k) % 7) as f32 - 3.0
    });
    let c = matmul(a.view(), b.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(c.shape(), &[2, 3, 3, 5]);
    for i in 0..2 {
        for j in 0..3 {
            let (ai, bj): (ArrayView2<f32>, ArrayView2<f32>) =
                (a.slice(s![i, 0, .., ..]), b.slice(s![j, .., ..]));
            let want = ai.dot(&bj);
            assert_eq!(c.slice(s![i, j, .., ..]), want);
        }
    }
}

#[test]
fn matmul_transposed_strided_and_empty() {
    let a = exact_mat(5, 4, 1);
    let b = exact_mat(5, 3, 2);
    // a.t() is a transposed view: (4, 5) · (5, 3)
    let c = matmul(a.t(), b.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(c, a.t().dot(&b).into_dyn());
    // every other row, reversed columns
    let strided = a.slice(s![..;2, ..;-1]);
    let w = exact_mat(4, 2, 3);
    let c = matmul(strided, w.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(c, strided.dot(&w).into_dyn());
    // K = 0 gives zeros; an empty M gives an empty result
    let k0 = matmul(
        Array2::<f32>::zeros((3, 0)).view(),
        Array2::<f32>::zeros((0, 2)).view(),
        CubeMath::KeepDtype,
    )
    .unwrap();
    assert_eq!(k0, ArrayD::zeros(vec![3, 2]));
    let m0 = matmul(
        Array2::<f32>::zeros((0, 4)).view(),
        w.view(),
        CubeMath::KeepDtype,
    )
    .unwrap();
    assert_eq!(m0.shape(), &[0, 2]);
}

#[test]
fn matmul_errors_name_the_argument() {
    let m = Array2::<f32>::zeros((2, 3));
    let scalar = ndarray::arr0(1.0f32);
    let err = matmul(scalar.view(), m.view(), CubeMath::KeepDtype).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument(t) if t.contains("self is 0-D")),
        "{err}"
    );
    let err = matmul(m.view(), scalar.view(), CubeMath::KeepDtype).unwrap_err();
    assert!(err.to_string().contains("mat2 is 0-D"), "{err}");
    let seven = ArrayD::<f32>::zeros(vec![1; 7]);
    assert!(matches!(
        matmul(seven.view(), m.view(), CubeMath::KeepDtype),
        Err(Error::TooManyDims {
            argument: "self",
            dims: 7,
            max: 6
        })
    ));
    let err = matmul(m.view(), m.view(), CubeMath::KeepDtype).unwrap_err();
    assert!(
        err.to_string()
            .contains("last dim 3 differs from mat2's reduced dim 2"),
        "{err}"
    );
    let a = ArrayD::<f32>::zeros(vec![2, 2, 3]);
    let b = ArrayD::<f32>::zeros(vec![3, 3, 4]);
    assert!(matches!(
        matmul(a.view(), b.view(), CubeMath::KeepDtype),
        Err(Error::NotBroadcastable {
            argument: "self",
            other: "mat2",
            ..
        })
    ));
}

#[test]
fn cube_math_selects_the_compute_format() {
    use CubeMath::*;
    use DType::{BF16, F16, F32};
    for m in [KeepDtype, UseFp32Add] {
        assert_eq!(cube_format(F32, F32, m), CubeFormat::F32);
        assert_eq!(cube_format(F16, BF16, m), CubeFormat::F32);
    }
    for m in [AllowFp32DownPrecision, UseHf32] {
        assert_eq!(cube_format(F32, BF16, m), CubeFormat::Hf32);
    }
    assert_eq!(cube_format(F16, F32, UseFp16), CubeFormat::F16);
    assert_eq!(cube_format(BF16, F16, UseFp16), CubeFormat::F16);
    for m in CubeMath::ALL {
        assert_eq!(cube_format(F16, F16, m), CubeFormat::F16);
        assert_eq!(cube_format(BF16, BF16, m), CubeFormat::Bf16);
    }
    assert_eq!(CubeFormat::Hf32.dtype(), F32);
}

#[test]
fn cube_math_rounds_operands_and_results_as_the_device() {
    let p = |e: i32| 2f32.powi(e);
    let x = array![[1.0f32 + p(-12), 1.0 + p(-20)]];
    let ones = array![[1.0f32], [1.0]];
    // f32 kept: the exact sum
    let keep = matmul(x.view(), ones.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(keep[[0, 0]], 2.0 + p(-12) + p(-20));
    // HF32 keeps 11 significant bits of each operand
    let hf = matmul(x.view(), ones.view(), CubeMath::UseHf32).unwrap();
    assert_eq!(hf[[0, 0]], 2.0);
    // UseFp16: operands and the result in f16, output still f32
    let y = array![[1000.0f32, 0.3]];
    let h = matmul(y.view(), ones.view(), CubeMath::UseFp16).unwrap();
    let f16_sum = f16::from_f64(1000.0 + f16::from_f32(0.3).to_f64());
    assert_eq!(h[[0, 0]], f16_sum.to_f32());
    assert_ne!(h[[0, 0]], 1000.3f32);
    // f16 × f16 into f16 rounds the f32 accumulation once; into f32 not at all
    let a = array![[f16::from_f32(1.0), f16::from_f32(p(-11))]];
    let b = array![[f16::ONE], [f16::ONE]];
    let narrow = matmul(a.view(), b.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(narrow[[0, 0]], f16::ONE); // 1 + 2^-11 ties to even
    let wide: ArrayD<f32> = matmul_as(a.view(), b.view(), CubeMath::KeepDtype).unwrap();
    assert_eq!(wide[[0, 0]], 1.0 + p(-11));
    // bf16 likewise
    let a = array![[bf16::from_f32(1.0), bf16::from_f32(p(-9))]];
    let b = array![[bf16::ONE], [bf16::ONE]];
    assert_eq!(
        matmul(a.view(), b.view(), CubeMath::KeepDtype).unwrap()[[0, 0]],
        bf16::ONE
    );
}

#[test]
fn matmul_f32_is_the_correctly_rounded_dot_product() {
    // Random f32 operands of mixed magnitudes; the golden sums the exact products in 256
    // bits and rounds once to f32.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let unit = (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        (unit * 2f64.powi((state % 24) as i32 - 12)) as f32
    };
    let (m, k, n) = (7, 33, 9);
    let a = Array2::from_shape_fn((m, k), |_| next());
    let b = Array2::from_shape_fn((k, n), |_| next());
    let c = matmul(a.view(), b.view(), CubeMath::KeepDtype).unwrap();
    for i in 0..m {
        for j in 0..n {
            let mut sum = BigFloat::from_f64(0.0, PREC);
            for t in 0..k {
                let prod = f64::from(a[[i, t]]) * f64::from(b[[t, j]]); // exact
                sum = sum.add(&BigFloat::from_f64(prod, PREC), PREC, RM);
            }
            let golden = to_f64_odd(&sum) as f32;
            assert_eq!(c[[i, j]], golden, "element ({i}, {j})");
        }
    }
}

#[test]
fn addmm_hand_checked_with_bias_shapes() {
    let x = exact_mat(3, 4, 1);
    let w = exact_mat(4, 2, 2);
    let xw = x.dot(&w);
    let row = array![0.5f32, -1.0];
    let h = addmm(row.view(), x.view(), w.view(), 1, 1, CubeMath::KeepDtype).unwrap();
    assert_eq!(h, &xw + &row);
    let row2 = row.clone().insert_axis(Axis(0)); // (1, p)
    let h2 = addmm(row2.view(), x.view(), w.view(), 1, 1, CubeMath::KeepDtype).unwrap();
    assert_eq!(h2, h);
    let full = exact_mat(3, 2, 4); // (n, p)
    let h3 = addmm(full.view(), x.view(), w.view(), 0.5, 2, CubeMath::KeepDtype).unwrap();
    assert_eq!(h3, &full * 0.5 + &xw * 2.0);
    let scalar = ndarray::arr0(3.0f32); // 0-D bias
    let h4 = addmm(
        scalar.view(),
        x.view(),
        w.view(),
        -1,
        1,
        CubeMath::KeepDtype,
    )
    .unwrap();
    assert_eq!(h4, xw.mapv(|v| v - 3.0));
    // transposed weights, as in a linear layer's x · Wᵀ
    let wt = w.t().to_owned();
    let h5 = addmm(row.view(), x.view(), wt.t(), 1, 1, CubeMath::KeepDtype).unwrap();
    assert_eq!(h5, h);
}

#[test]
fn addmm_skips_what_alpha_or_beta_zero_removes() {
    let x = array![[f32::NAN, 1.0]];
    let w = array![[1.0f32], [f32::INFINITY]];
    let bias = array![2.0f32];
    // alpha 0: the product is not computed, NaN and ∞ do not reach the result
    let h = addmm(bias.view(), x.view(), w.view(), 3, 0, CubeMath::KeepDtype).unwrap();
    assert_eq!(h, array![[6.0]]);
    let tiny = f64::from(f32::EPSILON) / 2.0;
    let h = addmm(
        bias.view(),
        x.view(),
        w.view(),
        1,
        tiny,
        CubeMath::KeepDtype,
    )
    .unwrap();
    assert_eq!(h, array![[2.0]]);
    // beta 0: a NaN bias is never read
    let ok = array![[1.0f32, 2.0]];
    let nan_bias = array![f32::NAN];
    let ones = array![[1.0f32], [1.0]];
    let with_beta = |beta: i32| {
        addmm(
            nan_bias.view(),
            ok.view(),
            ones.view(),
            beta,
            1,
            CubeMath::KeepDtype,
        )
        .unwrap()
    };
    assert_eq!(with_beta(0), array![[3.0]]);
    // otherwise NaN propagates
    assert!(with_beta(1)[[0, 0]].is_nan());
    // K = 0: beta·self broadcast
    let e = Array2::<f32>::zeros((2, 0));
    let h = addmm(
        bias.view(),
        e.view(),
        Array2::<f32>::zeros((0, 3)).view(),
        2,
        1,
        CubeMath::KeepDtype,
    )
    .unwrap();
    assert_eq!(h, Array2::from_elem((2, 3), 4.0));
    // n = 0: empty
    let h = addmm(
        bias.view(),
        Array2::<f32>::zeros((0, 2)).view(),
        w.view(),
        1,
        1,
        CubeMath::KeepDtype,
    )
    .unwrap();
    assert_eq!(h.dim(), (0, 1));
}

#[test]
fn addmm_rounds_once_into_the_output_type() {
    let p = |e: i32| 2f32.powi(e);
    let a = array![[1.0f32, 1.0]];
    let b = array![[p(-12)], [p(-12)]];
    let bias = array![1.0f32];
    // f32: 1 + 2^-11 exactly; in f16 it ties to even, 1
    let wide = addmm(bias.view(), a.view(), b.view(), 1, 1, CubeMath::KeepDtype).unwrap();
    assert_eq!(wide[[0, 0]], 1.0 + p(-11));
    let narrow: Array2<f16> =
        addmm_as(bias.view(), a.view(), b.view(), 1, 1, CubeMath::KeepDtype).unwrap();
    assert_eq!(narrow[[0, 0]], f16::ONE);
    // an f32 computation into f16: the kernel writes f32, the cast rounds again
    // (1 + 2^-11 + 2^-30 becomes 1 + 2^-11 in f32, which ties to even in f16)
    let b = array![[p(-11)], [p(-30)]];
    let twice: Array2<f16> =
        addmm_as(bias.view(), a.view(), b.view(), 1, 1, CubeMath::KeepDtype).unwrap();
    assert_eq!(twice[[0, 0]], f16::ONE);
    // f16 operands into f16: one rounding of the exact value, up
    let h = |v: f32| f16::from_f32(v);
    let a16 = array![[h(1.0), h(1.0)]];
    let b16 = array![[h(p(-11))], [h(p(-24))]];
    let once = addmm(
        array![h(1.0)].view(),
        a16.view(),
        b16.view(),
        1,
        1,
        CubeMath::KeepDtype,
    )
    .unwrap();
    assert_eq!(once[[0, 0]], h(1.0 + p(-10)));
    // UseFp16 computes in f16 even into f32
    let y = array![[0.1f32]];
    let one = array![[1.0f32]];
    let zero = array![0.0f32];
    let h = addmm(zero.view(), y.view(), one.view(), 1, 1, CubeMath::UseFp16).unwrap();
    assert_eq!(h[[0, 0]], f16::from_f32(0.1).to_f32());
}

#[test]
fn addmm_errors_name_the_argument() {
    let m = Array2::<f32>::zeros((2, 3));
    let bias = array![0.0f32, 0.0];
    let err = addmm(bias.view(), m.view(), m.view(), 1, 1, CubeMath::KeepDtype).unwrap_err();
    assert!(
        err.to_string()
            .contains("mat1 [2, 3] and mat2 [2, 3] do not chain"),
        "{err}"
    );
    let w = Array2::<f32>::zeros((3, 2));
    let cube = ArrayD::<f32>::zeros(vec![1, 1, 2]);
    assert!(matches!(
        addmm(cube.view(), m.view(), w.view(), 1, 1, CubeMath::KeepDtype),
        Err(Error::TooManyDims {
            argument: "self",
            dims: 3,
            max: 2
        })
    ));
    let wrong = array![0.0f32, 0.0, 0.0];
    assert!(matches!(
        addmm(wrong.view(), m.view(), w.view(), 1, 1, CubeMath::KeepDtype),
        Err(Error::NotBroadcastable {
            argument: "self",
            other: "out",
            ..
        })
    ));
    // a bias of (n, 1) broadcasts along the columns
    let col = array![[1.0f32], [2.0]];
    let h = addmm(col.view(), m.view(), w.view(), 1, 1, CubeMath::KeepDtype).unwrap();
    assert_eq!(h, array![[1.0, 1.0], [2.0, 2.0]]);
}

/// Random ranks 1..=4 for both operands (batch dims 1 or shared sizes), transposed or
/// not: the result matches a naive f64 loop over the broadcast batch, rounded to f32.
mod properties {
    use super::*;
    use ndarray::Dimension;
    use proptest::prelude::*;

    fn naive(a: &ArrayD<f32>, b: &ArrayD<f32>) -> ArrayD<f32> {
        let a2 = if a.ndim() == 1 {
            a.clone().insert_axis(Axis(0))
        } else {
            a.clone()
        };
        let b2 = if b.ndim() == 1 {
            b.clone().insert_axis(Axis(1))
        } else {
            b.clone()
        };
        let (ra, rb) = (a2.ndim(), b2.ndim());
        let (m, k, n) = (a2.shape()[ra - 2], a2.shape()[ra - 1], b2.shape()[rb - 1]);
        let ba = &a2.shape()[..ra - 2];
        let bb = &b2.shape()[..rb - 2];
        let nb = ba.len().max(bb.len());
        let dim = |s: &[usize], i: usize| (i + s.len()).checked_sub(nb).map_or(1, |j| s[j]);
        let batch: Vec<usize> = (0..nb).map(|i| dim(ba, i).max(dim(bb, i))).collect();
        let mut full_a = batch.clone();
        full_a.extend([m, k]);
        let mut full_b = batch.clone();
        full_b.extend([k, n]);
        let av = a2.broadcast(full_a).unwrap();
        let bv = b2.broadcast(full_b).unwrap();
        let mut shape = batch.clone();
        shape.extend([m, n]);
        let out = ArrayD::from_shape_fn(shape, |ix| {
            let ix = ix.slice();
            let (bi, (i, j)) = (&ix[..nb], (ix[nb], ix[nb + 1]));
            let mut s = 0.0f64;
            for t in 0..k {
                let mut ia = bi.to_vec();
                ia.extend([i, t]);
                let mut ib = bi.to_vec();
                ib.extend([t, j]);
                s += f64::from(av[ia.as_slice()]) * f64::from(bv[ib.as_slice()]);
            }
            s as f32
        });
        let mut want = batch;
        if a.ndim() > 1 {
            want.push(m);
        }
        if b.ndim() > 1 {
            want.push(n);
        }
        out.into_shape_with_order(want).unwrap()
    }

    fn operand(rank: usize, batch: &[usize], rows: usize, cols: usize, seed: usize) -> ArrayD<f32> {
        let mut shape: Vec<usize> = batch[batch.len() - rank.saturating_sub(2)..].to_vec();
        if rank >= 2 {
            shape.push(rows);
        }
        shape.push(cols);
        ArrayD::from_shape_fn(shape, |ix| {
            let h = ix.slice().iter().fold(seed, |h, &i| h * 31 + i);
            (h % 13) as f32 / 4.0 - 1.5
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn matmul_matches_a_naive_loop(
            ra in 1usize..=4, rb in 1usize..=4,
            m in 1usize..4, k in 0usize..5, n in 1usize..4,
            batch in proptest::collection::vec(1usize..3, 2),
            ones in proptest::collection::vec(any::<bool>(), 2),
            transpose in any::<bool>(),
        ) {
            // batch dims of a: as drawn; of b: 1 where `ones` says (broadcast)
            let bb: Vec<usize> = batch.iter().zip(&ones).map(|(&d, &o)| if o { 1 } else { d }).collect();
            let a = operand(ra, &batch, m, k, 1);
            let b = if rb == 1 {
                operand(1, &bb, 0, k, 2)
            } else {
                operand(rb, &bb, k, n, 2)
            };
            let want = naive(&a, &b);
            let got = if transpose && a.ndim() >= 2 {
                // the same values through a transposed view of a transposed copy
                let r = a.ndim();
                let mut axes: Vec<usize> = (0..r).collect();
                axes.swap(r - 2, r - 1);
                let t = a.view().permuted_axes(axes.clone()).as_standard_layout().into_owned();
                matmul(t.view().permuted_axes(axes), b.view(), CubeMath::KeepDtype).unwrap()
            } else {
                matmul(a.view(), b.view(), CubeMath::KeepDtype).unwrap()
            };
            prop_assert_eq!(got, want);
        }
    }
}
