//! Integer element types (`i32`, `i64`, `i8`, `u8`) on the simulator: uploads, downloads,
//! strided views, pinned host tensors and `try_clone` keep every value bit for bit;
//! `copy` between element types casts as `aclnnInplaceCopy` does (float to integer
//! truncates toward zero and saturates, NaN gives 0; integer to integer wraps; integer
//! to float rounds to nearest even), judged against the CPU's `as` conversions, which
//! have exactly those semantics; `zero_inplace` and `fill_inplace` write integer views;
//! `add`, `mul` and `reduce_sum` compute integers exactly, wrapping to the width, with
//! CANN's promotion for mixed dtypes (judged against Rust's wrapping arithmetic, with
//! operands whose exact results stay below 2^53, where the simulator is exact); and the
//! floating-only operators refuse integer tensors with a typed error before any C call.

use crate::common;

use ascendcl::{DType, DeviceTensor, Element, Error, HostTensor, copy, zero_inplace};
use common::*;
use half::{bf16, f16};
use ndarray::{ArrayD, Dimension, IxDyn, array};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// `bits` as a `T`, every bit pattern of `T` reachable.
trait FromBits: Element {
    fn from_bits(bits: u64) -> Self;
}
/// `FromBits` for each integer type: the low bits, as `as` keeps them.
macro_rules! from_bits {
    ($($t:ty),*) => {$(
        impl FromBits for $t {
            fn from_bits(bits: u64) -> Self {
                bits as $t
            }
        }
    )*};
}
from_bits!(i32, i64, i8, u8);

fn ints<T: FromBits>(shape: &[usize], bits: &[u64]) -> ArrayD<T> {
    ArrayD::from_shape_fn(IxDyn(shape), |i| {
        let k = i.as_array_view().iter().fold(0usize, |a, &x| a * 7 + x);
        T::from_bits(bits[k % bits.len()].rotate_left((k % 64) as u32))
    })
}

/// Upload, whole and strided downloads, a pinned round trip and a clone: all exact.
fn round_trip<T: FromBits>(shape: &[usize], bits: &[u64]) -> Result<(), TestCaseError> {
    let dev = device(A2);
    let s = dev.stream().unwrap();
    let host = ints::<T>(shape, bits);
    let t = DeviceTensor::from_array(&s, &host).unwrap();
    prop_assert_eq!(t.dtype(), T::DTYPE);
    prop_assert_eq!(t.to_array::<IxDyn>(&s).unwrap(), host.clone());
    if shape[0] > 1 {
        let every_other = t.view().slice(0, 0, shape[0], 2).unwrap();
        let want = host.slice_axis(ndarray::Axis(0), ndarray::Slice::new(0, None, 2));
        prop_assert_eq!(every_other.to_array::<IxDyn>(&s).unwrap(), want.to_owned());
    }
    let clone = t.try_clone(&s).unwrap();
    let mut pinned = HostTensor::<T>::zeros(&dev, shape).unwrap();
    clone.copy_to_host(&s, &mut pinned).unwrap();
    s.synchronize().unwrap();
    prop_assert_eq!(pinned.view::<IxDyn>().unwrap().to_owned(), host);
    Ok(())
}

/// `copy` from `S` to `D` on the device against the CPU's `as` cast (`cast`).
fn cast_check<S: Element, D: Element>(
    src: &ArrayD<S>,
    cast: impl Fn(S) -> D,
) -> Result<(), TestCaseError> {
    let s = device(A2).stream().unwrap();
    let d_src = DeviceTensor::from_array(&s, src).unwrap();
    let mut dst = DeviceTensor::<D>::zeros(&s, src.shape()).unwrap();
    copy(&d_src, &mut dst, &s).unwrap();
    let got = dst.to_array::<IxDyn>(&s).unwrap();
    for (g, v) in got.iter().zip(src.iter()) {
        let want = cast(*v);
        prop_assert!(
            g.to_bits_u64() == want.to_bits_u64(),
            "{:?} {v:?} -> {:?}: got {g:?}, want {want:?}",
            S::DTYPE,
            D::DTYPE
        );
    }
    Ok(())
}

fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..=5, 1..=3)
}

/// A shape and the bit patterns [`ints`] fills it from.
fn shape_and_bits() -> impl Strategy<Value = (Vec<usize>, Vec<u64>)> {
    (shape(), prop::collection::vec(any::<u64>(), 1..8))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn integer_tensors_round_trip_exactly(
        (shape, bits) in shape_and_bits(),
        which in 0usize..4,
    ) {
        let _check = LeakCheck::start();
        match which {
            0 => round_trip::<i32>(&shape, &bits)?,
            1 => round_trip::<i64>(&shape, &bits)?,
            2 => round_trip::<i8>(&shape, &bits)?,
            _ => round_trip::<u8>(&shape, &bits)?,
        }
    }

    /// Integer to integer wraps (two's complement), as the device's cast does.
    #[test]
    fn integer_copies_wrap(
        (shape, bits) in shape_and_bits(),
    ) {
        let _check = LeakCheck::start();
        let wide = ints::<i64>(&shape, &bits);
        cast_check(&wide, |v| v as i32)?;
        cast_check(&wide, |v| v as i8)?;
        cast_check(&wide, |v| v as u8)?;
        let narrow = ints::<i32>(&shape, &bits);
        cast_check(&narrow, |v| v as i64)?;
        cast_check(&narrow, |v| v as u8)?;
        cast_check(&ints::<u8>(&shape, &bits), |v| v as i8)?;
        cast_check(&ints::<i8>(&shape, &bits), |v| v as u8)?;
    }

    /// Float to integer truncates toward zero and saturates (NaN to 0); integer to float
    /// rounds to nearest even.
    #[test]
    fn float_integer_copies_truncate_saturate_and_round(
        shape in shape(),
        vals in prop::collection::vec(
            prop_oneof![
                -3.0e9f32..3.0e9,
                -300.0f32..300.0,
                Just(f32::NAN),
                Just(f32::INFINITY),
                Just(f32::NEG_INFINITY),
                Just(-0.7f32),
            ],
            1..8,
        ),
        bits in prop::collection::vec(any::<u64>(), 1..8),
    ) {
        let _check = LeakCheck::start();
        let floats = ArrayD::from_shape_fn(IxDyn(&shape), |i| {
            vals[i.as_array_view().iter().sum::<usize>() % vals.len()]
        });
        cast_check(&floats, |v| v as i32)?;
        cast_check(&floats, |v| v as i64)?;
        cast_check(&floats, |v| v as i8)?;
        cast_check(&floats, |v| v as u8)?;
        let halves = floats.mapv(f16::from_f32);
        cast_check(&halves, |v| v.to_f32() as i32)?;
        // One rounding to nearest even from the integer's exact value (`as f32` is one;
        // an i32 is exact in f64, so `from_f64` of it is one).
        cast_check(&ints::<i64>(&shape, &bits), |v| v as f32)?;
        let i32s = ints::<i32>(&shape, &bits);
        cast_check(&i32s, |v| <bf16 as Element>::from_f64(f64::from(v)))?;
        cast_check(&i32s, |v| <f16 as Element>::from_f64(f64::from(v)))?;
    }
}

/// `zero_inplace` zeroes only the elements of an integer view.
#[test]
fn integer_views_are_zeroed() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let mut x =
        DeviceTensor::from_array(&s, &array![[1i64, -2, 3], [i64::MAX, i64::MIN, 6]]).unwrap();
    zero_inplace(x.view_mut().slice(1, 1, 3, 1).unwrap(), &s).unwrap();
    assert_eq!(
        x.to_array::<ndarray::Ix2>(&s).unwrap(),
        array![[1i64, 0, 0], [i64::MAX, 0, 0]]
    );
    let mut y = DeviceTensor::from_array(&s, &array![7u8, 255]).unwrap();
    zero_inplace(&mut y, &s).unwrap();
    assert_eq!(y.to_array::<ndarray::Ix1>(&s).unwrap(), array![0u8, 0]);
}

/// The floating-only operators refuse an integer tensor: an `UnsupportedDtype` naming the
/// argument, before any C call.
#[test]
fn floating_operators_refuse_integers_before_any_c_call() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let i = DeviceTensor::from_array(&s, &array![[1i32, 2], [3, 4]]).unwrap();
    let mut oi = DeviceTensor::<i32>::zeros(&s, [2, 2]).unwrap();
    let before = (
        ascend_sim::call_count("aclnnMishGetWorkspaceSize"),
        ascend_sim::call_count("aclnnMatmulGetWorkspaceSize"),
    );
    let dtype_of = |r: ascendcl::Result<()>| match r {
        Err(Error::UnsupportedDtype {
            argument, dtype, ..
        }) => (argument, dtype),
        other => panic!("{other:?}"),
    };
    let keep = ascendcl::CubeMath::KeepDtype;
    for (r, arg) in [
        (ascendcl::mish(&i, &mut oi, &s), "self"),
        (ascendcl::matmul(&i, &i, &mut oi, keep, &s), "self"),
    ] {
        let (argument, got) = dtype_of(r);
        assert!(argument.contains(arg), "{argument} names {arg}");
        assert_eq!(got, DType::I32);
    }
    assert_eq!(
        (
            ascend_sim::call_count("aclnnMishGetWorkspaceSize"),
            ascend_sim::call_count("aclnnMatmulGetWorkspaceSize"),
        ),
        before
    );
    s.synchronize().unwrap();
}

/// The elementwise result of `f` over `a` and `b` of one shape.
fn zip<A: Copy, B: Copy, O>(a: &ArrayD<A>, b: &ArrayD<B>, f: impl Fn(A, B) -> O) -> ArrayD<O> {
    ndarray::Zip::from(a).and(b).map_collect(|&x, &y| f(x, y))
}

/// `op` on the device over `a` and `b` uploaded, into an `O` of `a`'s shape, downloaded.
fn run_binary<A: Element, B: Element, O: Element>(
    a: &ArrayD<A>,
    b: &ArrayD<B>,
    op: impl FnOnce(
        &DeviceTensor<A>,
        &DeviceTensor<B>,
        &mut DeviceTensor<O>,
        &ascendcl::Stream,
    ) -> ascendcl::Result<()>,
) -> ascendcl::Result<ArrayD<O>> {
    let s = device(A2).stream().unwrap();
    let (da, db) = (
        DeviceTensor::from_array(&s, a)?,
        DeviceTensor::from_array(&s, b)?,
    );
    let mut out = DeviceTensor::<O>::zeros(&s, a.shape())?;
    op(&da, &db, &mut out, &s)?;
    out.to_array(&s)
}

fn run_add<A: Element, B: Element, O: Element>(
    a: &ArrayD<A>,
    b: &ArrayD<B>,
    alpha: impl Into<ascendcl::protocol::Scalar>,
) -> ascendcl::Result<ArrayD<O>> {
    run_binary(a, b, |da, db, out, s| ascendcl::add(da, db, alpha, out, s))
}

fn run_mul<A: Element, B: Element, O: Element>(
    a: &ArrayD<A>,
    b: &ArrayD<B>,
) -> ascendcl::Result<ArrayD<O>> {
    run_binary(a, b, |da, db, out, s| ascendcl::mul(da, db, out, s))
}

proptest! {
    #![proptest_config(config())]

    /// Integer add and mul wrap to their width; an integer alpha scales; mixed dtypes
    /// follow CANN's promotion (i32 with i64 → i64, i32 with f32 → f32).
    #[test]
    fn integer_arithmetic_wraps_and_promotes(
        (shape, bits) in shape_and_bits(),
        more in prop::collection::vec(any::<u64>(), 1..8),
        alpha in -5i64..=5,
    ) {
        let _check = LeakCheck::start();
        let (a, b) = (ints::<i32>(&shape, &bits), ints::<i32>(&shape, &more));
        // Full-range i32 sums (below 2^53 before the wrap: exact on the simulator).
        let got: ArrayD<i32> = run_add(&a, &b, alpha).unwrap();
        let a_times = alpha as i32;
        prop_assert_eq!(got, zip(&a, &b, |x, y| x.wrapping_add(y.wrapping_mul(a_times))));
        let wide = ints::<i64>(&shape, &more).mapv(|v| v >> 14); // |v| < 2^50
        let got: ArrayD<i64> = run_add(&a, &wide, 1).unwrap();
        prop_assert_eq!(got, zip(&a, &wide, |x, y| i64::from(x) + y));
        // Products below 2^53: operands below 2^26.
        let (p, q) = (a.mapv(|v| v >> 6), b.mapv(|v| v >> 6));
        let got: ArrayD<i32> = run_mul(&p, &q).unwrap();
        prop_assert_eq!(got, zip(&p, &q, |x: i32, y: i32| x.wrapping_mul(y)));
        let small = ints::<u8>(&shape, &bits);
        let got: ArrayD<u8> = run_mul(&small, &small).unwrap();
        prop_assert_eq!(got, zip(&small, &small, |x: u8, y: u8| x.wrapping_mul(y)));
        let f = a.mapv(|v| (v >> 8) as f32 * 0.25);
        let got: ArrayD<f32> = run_add(&f, &b, 1).unwrap();
        prop_assert_eq!(got, zip(&f, &b, |x, y| x + y as f32));
    }

    /// Integer sums over dims, in out's dtype: exact.
    #[test]
    fn integer_reduce_sum_is_exact(
        (shape, bits) in shape_and_bits(),
        dim in 0usize..3,
    ) {
        let _check = LeakCheck::start();
        let dim = dim % shape.len();
        let s = device(A2).stream().unwrap();
        let x = ints::<i32>(&shape, &bits);
        let dx = DeviceTensor::from_array(&s, &x).unwrap();
        let want = x.mapv(i64::from).sum_axis(ndarray::Axis(dim));
        let mut out = DeviceTensor::<i64>::zeros(&s, want.shape()).unwrap();
        ascendcl::reduce_sum(&dx, &[dim as i64], false, &mut out, &s).unwrap();
        prop_assert_eq!(out.to_array::<IxDyn>(&s).unwrap(), want);
    }
}

/// A floating alpha cannot cast to an integer promote: CANN refuses it (161002).
#[test]
fn a_floating_alpha_with_integers_is_refused() {
    let _check = LeakCheck::start();
    let a = array![1i32, 2].into_dyn();
    let r: ascendcl::Result<ArrayD<i32>> = run_add(&a, &a, 2.0);
    assert!(matches!(r, Err(Error::Aclnn { .. })), "{r:?}");
    let r: ascendcl::Result<ArrayD<i32>> = run_add(&a, &a, 2);
    assert_eq!(r.unwrap(), array![3i32, 6].into_dyn());
}

/// `fill_inplace` writes an integer value exactly.
#[test]
fn integer_fill() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let mut x = DeviceTensor::<i64>::zeros(&s, [2, 2]).unwrap();
    let big = (1i64 << 40) + 1;
    ascendcl::fill_inplace(x.view_mut().slice(0, 1, 2, 1).unwrap(), big, &s).unwrap();
    assert_eq!(
        x.to_array::<ndarray::Ix2>(&s).unwrap(),
        array![[0i64, 0], [big, big]]
    );
    let mut y = DeviceTensor::<u8>::zeros(&s, [3]).unwrap();
    ascendcl::fill_inplace(&mut y, 7, &s).unwrap();
    assert_eq!(y.to_array::<ndarray::Ix1>(&s).unwrap(), array![7u8, 7, 7]);
}

/// The dtype facts of the integer types.
#[test]
fn integer_dtypes() {
    let _gate = crate::common::shared();
    for (d, size, name, acl) in [
        (DType::I32, 4, "INT32", ascend_sys::ACL_INT32),
        (DType::I64, 8, "INT64", ascend_sys::ACL_INT64),
        (DType::I8, 1, "INT8", ascend_sys::ACL_INT8),
        (DType::U8, 1, "UINT8", ascend_sys::ACL_UINT8),
    ] {
        assert_eq!((d.size(), d.name(), d.acl()), (size, name, acl));
        assert!(!d.is_float());
        assert_eq!(ascendcl::precision::threshold(d), 0.0);
    }
    let exact = ascendcl::precision::judge(&array![1i32, 2], &array![1.0f64, 2.0], DType::I32);
    assert!(exact.unwrap().passed);
    let off = ascendcl::precision::judge(&array![1i32, 3], &array![1.0f64, 2.0], DType::I32);
    assert!(!off.unwrap().passed);
}
