//! Operators on run-time-dtype [`Tensor`]s: bit for bit the typed path's results, the
//! typed path's errors, inferred output dtypes, and the aliasing of shared storage.

use crate::common;

use ascendcl::{
    CubeMath, DType, DeviceTensor, Element, Error, MishPlan, Stream, Tensor, add, add_new,
    cast_new, cast_to, exp_new, fill_inplace, matmul_new, mish, mish_new, pow_tensor_scalar_new,
    reduce_sum_new, s_where_new,
};
use common::{A2, LeakCheck, device};
use half::{bf16, f16};
use proptest::prelude::*;

fn stream() -> Stream {
    device(A2).stream().expect("stream")
}

fn data<T: Element>(n: usize, seed: u64) -> Vec<T> {
    common::values(n, seed, -3.0, 3.0)
        .into_iter()
        .map(T::from_f32)
        .collect()
}

/// The bytes of a typed result, for a bitwise comparison.
fn bytes<T: Element>(t: DeviceTensor<T>, s: &Stream) -> Vec<u8> {
    Tensor::from(t).to_bytes(s).unwrap()
}

/// mish, exp, cast (to a second dtype), pow_tensor_scalar, s_where, add (with a second
/// dtype), matmul and reduce_sum of `T` inputs through the typed path and the run-time
/// path: the same bits, dtypes and shapes.
fn check_ops<T: Element, U: Element>(s: &Stream, m: usize, k: usize, seed: u64) {
    let (xs, ys) = (data::<T>(m * k, seed), data::<U>(m * k, seed + 1));
    let x = DeviceTensor::from_array(
        s,
        &ndarray::Array2::from_shape_vec((m, k), xs.clone()).unwrap(),
    )
    .unwrap();
    let y = DeviceTensor::from_array(
        s,
        &ndarray::Array2::from_shape_vec((m, k), ys.clone()).unwrap(),
    )
    .unwrap();
    let xt = Tensor::from_slice(s, &xs, (m, k)).unwrap();
    let yt = Tensor::from_slice(s, &ys, (m, k)).unwrap();
    let same = |typed: Vec<u8>, dynamic: &Tensor, dtype: DType, what: &str| {
        assert_eq!(dynamic.dtype(), dtype, "{what}: dtype");
        assert_eq!(dynamic.to_bytes(s).unwrap(), typed, "{what}: bits");
    };
    if T::DTYPE.is_float() {
        let typed = mish_new::<T, DeviceTensor<T>>(&x, s).unwrap();
        let dynamic: Tensor = mish_new(&xt, s).unwrap();
        same(bytes(typed, s), &dynamic, T::DTYPE, "mish");

        let typed = exp_new::<T, T, DeviceTensor<T>>(&x, s).unwrap();
        let dynamic: Tensor = exp_new(&xt, s).unwrap();
        same(bytes(typed, s), &dynamic, T::DTYPE, "exp");

        // a transposed view in, typed and run-time: the same product
        let typed =
            matmul_new::<T, T, T, DeviceTensor<T>>(&x, x.view().t(), CubeMath::KeepDtype, s)
                .unwrap();
        let dynamic: Tensor = matmul_new(&xt, xt.t(), CubeMath::KeepDtype, s).unwrap();
        same(bytes(typed, s), &dynamic, T::DTYPE, "matmul");
    }
    let typed: DeviceTensor<U> = cast_new(&x, s).unwrap();
    let dynamic = cast_to(&xt, U::DTYPE, s).unwrap();
    same(bytes(typed, s), &dynamic, U::DTYPE, "cast");

    let typed: DeviceTensor<T> = pow_tensor_scalar_new(&x, 2, s).unwrap();
    let dynamic: Tensor = pow_tensor_scalar_new(&xt, 2, s).unwrap();
    same(bytes(typed, s), &dynamic, T::DTYPE, "pow_tensor_scalar");

    // a broadcast condition row, with other another tensor of T
    let pattern: Vec<bool> = (0..k)
        .map(|j| (j as u64 + seed).is_multiple_of(3))
        .collect();
    let condition = Tensor::from_slice(s, &pattern, (1, k)).unwrap();
    let zs = data::<T>(m * k, seed + 2);
    let z = DeviceTensor::from_array(
        s,
        &ndarray::Array2::from_shape_vec((m, k), zs.clone()).unwrap(),
    )
    .unwrap();
    let zt = Tensor::from_slice(s, &zs, (m, k)).unwrap();
    let typed: DeviceTensor<T> = s_where_new(&condition, &x, &z, s).unwrap();
    let dynamic: Tensor = s_where_new(&condition, &xt, &zt, s).unwrap();
    same(bytes(typed, s), &dynamic, T::DTYPE, "s_where");

    let Some(promoted) = T::DTYPE.promote(U::DTYPE) else {
        return;
    };
    // the typed path with the output of the promoted dtype
    macro_rules! typed_add {
        ($($d:ident => $o:ty),*) => {
            match promoted {
                $(DType::$d => bytes(
                    add_new::<T, U, $o, DeviceTensor<$o>>(&x, &y, 2, s).unwrap(),
                    s,
                ),)*
            }
        };
    }
    let typed = typed_add!(F32 => f32, F16 => f16, BF16 => bf16, I32 => i32, I64 => i64, I8 => i8, U8 => u8, F64 => f64, Bool => bool);
    let dynamic: Tensor = add_new(&xt, &yt, 2, s).unwrap();
    same(typed, &dynamic, promoted, "add");
    // typed and run-time arguments mixed
    let mixed: Tensor = add_new(&x, &yt, 2, s).unwrap();
    same(dynamic.to_bytes(s).unwrap(), &mixed, promoted, "add mixed");

    let typed = reduce_sum_new::<T, T, DeviceTensor<T>>(&x, &[0i64], false, s).unwrap();
    let dynamic: Tensor = reduce_sum_new(&xt, &[0i64], false, s).unwrap();
    assert_eq!(dynamic.shape(), &[k]);
    same(bytes(typed, s), &dynamic, T::DTYPE, "reduce_sum");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn run_time_dtypes_compute_the_typed_bits(m in 1usize..9, k in 1usize..9, seed in 0u64..1000) {
        let _check = LeakCheck::start();
        let s = stream();
        check_ops::<f32, f32>(&s, m, k, seed);
        check_ops::<f16, f16>(&s, m, k, seed);
        check_ops::<bf16, bf16>(&s, m, k, seed);
        check_ops::<f16, f32>(&s, m, k, seed);
        check_ops::<bf16, f16>(&s, m, k, seed);
        check_ops::<i32, i64>(&s, m, k, seed);
        check_ops::<i32, f16>(&s, m, k, seed);
    }
}

#[test]
fn integer_exp_infers_the_family_output_dtype() {
    let _check = LeakCheck::start();
    let s = stream();
    let x = Tensor::from_slice(&s, &[0i64, 1, 2], 3).unwrap();
    let y: Tensor = exp_new(&x, &s).unwrap();
    assert_eq!(y.dtype(), DType::F32);
    let typed = exp_new::<i64, f32, DeviceTensor<f32>>(x.typed_view::<i64>().unwrap(), &s).unwrap();
    assert_eq!(y.to_bytes(&s).unwrap(), bytes(typed, &s));
}

#[test]
fn run_time_dtypes_get_the_typed_errors() {
    let _check = LeakCheck::start();
    let s = stream();
    let ints = DeviceTensor::from_array(&s, &ndarray::array![1i32, 2]).unwrap();
    let mut typed_out = DeviceTensor::<i32>::zeros(&s, 2).unwrap();
    let typed = mish(&ints, &mut typed_out, &s).unwrap_err();
    let dynamic_in = Tensor::from_slice(&s, &[1i32, 2], 2).unwrap();
    let mut dynamic_out = Tensor::zeros(&s, 2, DType::I32).unwrap();
    let dynamic = mish(&dynamic_in, &mut dynamic_out, &s).unwrap_err();
    assert!(matches!(
        dynamic,
        Error::UnsupportedDtype {
            dtype: DType::I32,
            ..
        }
    ));
    assert_eq!(dynamic, typed);
    assert_eq!(mish_new::<_, Tensor>(&dynamic_in, &s).unwrap_err(), typed);

    let i8s = Tensor::from_slice(&s, &[1i8, 2], 2).unwrap();
    let u8s = Tensor::from_slice(&s, &[1u8, 2], 2).unwrap();
    assert!(matches!(
        add_new::<_, _, _, Tensor>(&i8s, &u8s, 1, &s),
        Err(Error::InvalidArgument(m)) if m.contains("INT16")
    ));

    let x = Tensor::from_slice(&s, &[1.0f32, 2.0], (2, 1)).unwrap();
    let mut wide = Tensor::zeros(&s, (1, 1), DType::F32)
        .unwrap()
        .expand((2, 1))
        .unwrap();
    assert!(matches!(
        add(&x, &x, 1, &mut wide, &s),
        Err(Error::InvalidArgument(m)) if m.contains("broadcast")
    ));
}

#[test]
fn a_plan_refuses_a_tensor_of_another_run_time_dtype() {
    let _check = LeakCheck::start();
    let s = stream();
    let x = Tensor::from_slice(&s, &[1.0f32, 2.0], 2).unwrap();
    let mut y = Tensor::empty(&s, 2, DType::F32).unwrap();
    let mut plan = MishPlan::new(&x, &y, &s).unwrap();
    plan.launch(&x, &mut y, &s).unwrap();
    let h = Tensor::from_slice(&s, &[f16::ONE; 2], 2).unwrap();
    let mut hy = Tensor::empty(&s, 2, DType::F16).unwrap();
    assert!(matches!(
        plan.launch(&h, &mut hy, &s),
        Err(Error::PlanMismatch { detail, .. }) if detail.contains("dtype f16")
    ));
    let want: Tensor = mish_new(&x, &s).unwrap();
    assert_eq!(y.to_bytes(&s).unwrap(), want.to_bytes(&s).unwrap());
}

#[test]
fn writes_are_seen_through_every_view_across_streams() {
    let _check = LeakCheck::start();
    let dev = device(A2);
    let (s1, s2) = (dev.stream().unwrap(), dev.stream().unwrap());
    let base = Tensor::zeros(&s1, (3, 4), DType::F32).unwrap();
    let transposed = base.t();
    let mut row = base.narrow(0, 1, 1).unwrap();
    let mut alias = base.clone();
    // on stream 2: the whole storage, then one row through a view
    fill_inplace(&mut alias, 1.0, &s2).unwrap();
    fill_inplace(&mut row, 5.0, &s2).unwrap();
    // read on stream 1 through another view: ordered after both writes
    let seen = transposed.to_vec::<f32>(&s1).unwrap();
    let want: Vec<f32> = (0..12)
        .map(|i| if i % 3 == 1 { 5.0 } else { 1.0 })
        .collect();
    assert_eq!(seen, want);
    // an operator on stream 1 reads the row written on stream 2, into a third view
    let mut column = alias.narrow(1, 3, 1).unwrap();
    let doubled: Tensor = add_new(&row, &row, 1, &s1).unwrap();
    assert_eq!(doubled.to_vec::<f32>(&s2).unwrap(), vec![10.0; 4]);
    fill_inplace(&mut column, -1.0, &s1).unwrap();
    assert_eq!(base.to_vec::<f32>(&s2).unwrap()[3], -1.0);
    assert_eq!(base.to_vec::<f32>(&s2).unwrap()[7], -1.0);
    assert!(ascend_sim::last_report().is_none());
}
