//! `ascendcl::copy`, device to device: property tests against the reference semantics
//! (`dst[i] = D::from(S::to_f32(broadcast(src)[i]))`, round to nearest even) over random
//! shapes (0-D and empty included), broadcast, permuted sources and destinations, and all
//! nine f32/f16/bf16 pairs, with the sanitizer silent; the DEVICE_TO_DEVICE fast path; and
//! typed errors.

use crate::common;

use ascendcl::{DeviceTensor, Element, Error, Stream, copy};
use common::props::{self, DevView, Elementwise, Host, Typed, typed};
use common::*;
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;

fn reversed(shape: &[usize]) -> Vec<usize> {
    shape.iter().rev().copied().collect()
}

/// Runs one case and returns whether the result equals the reference, bit for bit (NaN
/// only against NaN).
fn case<S: Element, D: Element>(
    stream: &Stream,
    dst_shape: &[usize],
    src_shape: &[usize],
    seed: u64,
    src_transposed: bool,
    dst_transposed: bool,
) -> Result<(), String> {
    let host: ArrayD<S> = array::<S>(src_shape, seed, -70_000.0, 70_000.0);
    let n = src_shape.len();
    let axes: Vec<usize> = (0..n).rev().collect();
    let src_storage = if src_transposed {
        DeviceTensor::from_array(stream, &host.view().reversed_axes()).unwrap()
    } else {
        DeviceTensor::from_array(stream, &host).unwrap()
    };
    let src_view = if src_transposed {
        src_storage.view().permute(&axes).unwrap()
    } else {
        src_storage.view()
    };
    let m = dst_shape.len();
    let daxes: Vec<usize> = (0..m).rev().collect();
    let mut dst = if dst_transposed {
        DeviceTensor::<D>::zeros(stream, reversed(dst_shape)).unwrap()
    } else {
        DeviceTensor::<D>::zeros(stream, dst_shape).unwrap()
    };
    if dst_transposed {
        copy(src_view, dst.view_mut().permute(&daxes).unwrap(), stream)
    } else {
        copy(src_view, &mut dst, stream)
    }
    .map_err(|e| e.to_string())?;
    let got = if dst_transposed {
        dst.view()
            .permute(&daxes)
            .unwrap()
            .to_array::<ndarray::IxDyn>(stream)
            .unwrap()
    } else {
        dst.to_array(stream).unwrap()
    };
    let expected = host
        .broadcast(IxDyn(dst_shape))
        .ok_or("reference broadcast failed")?
        .mapv(|v| D::from_f32(v.to_f32()));
    if got.shape() != expected.shape() {
        return Err(format!("shape {:?} vs {:?}", got.shape(), expected.shape()));
    }
    for (g, e) in got.iter().zip(expected.iter()) {
        let same =
            g.to_bits_u32() == e.to_bits_u32() || (g.to_f32().is_nan() && e.to_f32().is_nan());
        if !same {
            return Err(format!("{} vs {}", g.to_f32(), e.to_f32()));
        }
    }
    Ok(())
}

fn by_pair(
    pair: u8,
    stream: &Stream,
    dst: &[usize],
    src: &[usize],
    seed: u64,
    st: bool,
    dt: bool,
) -> Result<(), String> {
    match pair {
        0 => case::<f32, f32>(stream, dst, src, seed, st, dt),
        1 => case::<f32, f16>(stream, dst, src, seed, st, dt),
        2 => case::<f32, bf16>(stream, dst, src, seed, st, dt),
        3 => case::<f16, f32>(stream, dst, src, seed, st, dt),
        4 => case::<f16, f16>(stream, dst, src, seed, st, dt),
        5 => case::<f16, bf16>(stream, dst, src, seed, st, dt),
        6 => case::<bf16, f32>(stream, dst, src, seed, st, dt),
        7 => case::<bf16, f16>(stream, dst, src, seed, st, dt),
        _ => case::<bf16, bf16>(stream, dst, src, seed, st, dt),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn copy_matches_the_reference(
        dst in proptest::collection::vec(0usize..4, 0..5),
        keep in proptest::collection::vec(any::<bool>(), 5),
        drop_leading in 0usize..3,
        seed in any::<u64>(),
        pair in 0u8..9,
        st in any::<bool>(),
        dt in any::<bool>(),
    ) {
        let _leaks = LeakCheck::start();
        ascend_sim::clear_last_report();
        let stream = device(A2).stream().unwrap();
        // A source that broadcasts to `dst`: leading dims dropped, some dims set to 1.
        let lead = drop_leading.min(dst.len());
        let src: Vec<usize> = dst[lead..]
            .iter()
            .zip(&keep)
            .map(|(d, k)| if *k { *d } else { 1 })
            .collect();
        let r = by_pair(pair, &stream, &dst, &src, seed, st, dt);
        prop_assert_eq!(r, Ok(()), "dst {:?} src {:?} pair {}", dst, src, pair);
        stream.synchronize().unwrap();
        prop_assert_eq!(ascend_sim::last_report(), None);
    }
}

#[test]
fn casts_round_to_nearest_even() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    // 1 + 2^-11 is halfway between two f16 values (ties to 1.0, the even one); 1 + 3·2^-11
    // is halfway between 1 + 2^-10 and 1 + 2^-9 (ties to the even 1 + 2^-9).
    let src = DeviceTensor::from_array(
        &stream,
        &ndarray::array![1.0 + 2f32.powi(-11), 1.0 + 3.0 * 2f32.powi(-11), 65520.0],
    )
    .unwrap();
    let mut dst = DeviceTensor::<f16>::zeros(&stream, [3]).unwrap();
    copy(&src, &mut dst, &stream).unwrap();
    let got = dst.to_array::<ndarray::IxDyn>(&stream).unwrap();
    assert_eq!(got[0], f16::ONE);
    assert_eq!(got[1], f16::from_f32(1.0 + 2f32.powi(-9)));
    assert!(got[2].is_infinite(), "65520 rounds to +inf in f16");
}

/// `copy` under the generic elementwise harness: `dst = cast(src)`, one rounding.
struct CopyOp;

impl Elementwise for CopyOp {
    const NAME: &'static str = "copy";
    const INPUTS: &'static [&'static str] = &["src"];
    const WIDE: &'static [bool] = &[true];
    const BROADCASTS: bool = false;

    fn accepts(_: ascendcl::SocFamily, _: &[ascendcl::DType]) -> bool {
        true
    }

    fn reference<O: Typed>(x: &[Host]) -> ascendcl::Result<ArrayD<O>> {
        Ok(x[0].to_f64().mapv(O::from_f64))
    }

    fn launch<O: Typed>(
        x: Vec<DevView<'_>>,
        out: ascendcl::TensorViewMut<'_, O>,
        stream: &Stream,
    ) -> ascendcl::Result<()> {
        let src = x.into_iter().next().expect("one input");
        typed!(DevView, src, |src| copy(src, out, stream))
    }
}

/// Strided, offset, permuted views and special values (NaN, ±inf, subnormals, overflow
/// to the narrower type) in all nine dtype pairs.
#[test]
fn copy_matches_the_reference_on_random_views() {
    let _leaks = LeakCheck::start();
    let device = device(A2);
    let stream = device.stream().unwrap();
    let sizes = props::Sizes {
        cases: 64,
        max_out: 4096,
        max_storage: Some(8 * 4096),
    };
    let regressions = "tests/ops/copy.proptest-regressions";
    let tally =
        props::property_suite::<CopyOp>(&stream, device.soc_name(), sizes, regressions, "copy")
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tally.per_dtypes.len(), 9, "{:?}", tally.per_dtypes);
}

#[test]
fn dense_same_dtype_copies_are_one_memcpy() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let stream = device(A2).stream().unwrap();
    let a = array::<f32>(&[8, 16], 5, -1.0, 1.0);
    let src = DeviceTensor::from_array(&stream, &a).unwrap();
    let mut dst = DeviceTensor::<f32>::zeros(&stream, [8, 16]).unwrap();
    let ops = ascend_sim::call_count("aclnnInplaceCopy");
    let copies = ascend_sim::call_count("aclrtMemcpyAsync");
    copy(&src, &mut dst, &stream).unwrap();
    assert_eq!(ascend_sim::call_count("aclnnInplaceCopy"), ops);
    assert_eq!(ascend_sim::call_count("aclrtMemcpyAsync"), copies + 1);
    assert_eq!(dst.to_array(&stream).unwrap(), a);
    // A dense row window of a larger tensor also takes the memcpy path.
    let mut big = DeviceTensor::<f32>::zeros(&stream, [10, 16]).unwrap();
    copy(&src, big.view_mut().slice(0, 2, 10, 1).unwrap(), &stream).unwrap();
    let back = big.to_array::<ndarray::IxDyn>(&stream).unwrap();
    assert_eq!(back.slice(ndarray::s![2.., ..]).into_dyn(), a);
    assert!(back.slice(ndarray::s![..2, ..]).iter().all(|v| *v == 0.0));
    assert_eq!(ascend_sim::call_count("aclnnInplaceCopy"), ops);
    assert_eq!(ascend_sim::last_report(), None);
}

#[test]
fn bad_shapes_and_devices_are_typed_errors() {
    let _leaks = LeakCheck::start();
    let s0 = device(A2).stream().unwrap();
    let s1 = device(A910).stream().unwrap();
    let src = DeviceTensor::<f32>::zeros(&s0, [2, 3]).unwrap();
    let mut dst = DeviceTensor::<f32>::zeros(&s0, [3, 2]).unwrap();
    let err = copy(&src, &mut dst, &s0).unwrap_err();
    assert!(matches!(err, Error::NotBroadcastable { .. }), "{err}");
    // Broadcasting the destination is not allowed: src must broadcast to dst's shape.
    let mut small = DeviceTensor::<f32>::zeros(&s0, [1, 3]).unwrap();
    let err = copy(&src, &mut small, &s0).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    let mut other = DeviceTensor::<f32>::zeros(&s1, [2, 3]).unwrap();
    let err = copy(&src, &mut other, &s0).unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
    let err = copy(&src, &mut other, &s1).unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
}
