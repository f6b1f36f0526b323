//! The run-time-dtype [`Tensor`]: views as values over shared storage, conversions that
//! move, uploads and downloads of every dtype, uniqueness, and outputs without a fill.

use crate::common;

use ascendcl::{DType, DeviceTensor, Error, Stream, Tensor};
use common::{A2, LeakCheck, device};
use half::{bf16, f16};
use ndarray::{Array2, ArrayD, IxDyn, array, s};

/// The simulator's calls that copy or fill device memory.
const COPIES: [&str; 5] = [
    "aclrtMemcpy",
    "aclrtMemcpyAsync",
    "aclrtMemset",
    "aclnnInplaceCopy",
    "aclnnInplaceZero",
];

fn copy_calls() -> u64 {
    COPIES.iter().map(|s| ascend_sim::call_count(s)).sum()
}

fn stream() -> Stream {
    device(A2).stream().expect("stream")
}

fn iota(shape: &[usize]) -> ArrayD<f32> {
    let n = shape.iter().product::<usize>();
    ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|v| v as f32).collect()).unwrap()
}

#[test]
fn views_match_ndarray_and_share_storage_without_copies() {
    let _check = LeakCheck::start();
    let s = stream();
    let host = iota(&[2, 3, 4]);
    let a = Tensor::from_array(&s, &host).unwrap();
    let before = copy_calls();
    let permuted = a.permute(&[2, 0, 1]).unwrap();
    let swapped = a.transpose(0, 2).unwrap();
    let reversed = a.t();
    let stepped = a.slice(2, 1.., 2).unwrap();
    let inclusive = a.slice(1, 0..=1, 1).unwrap();
    let narrowed = a.narrow(1, 1, 2).unwrap();
    let row = a.narrow(0, 1, 1).unwrap().squeeze(0).unwrap();
    let lifted = row.unsqueeze(1).unwrap();
    let wide = a
        .slice(0, 0..1, 1)
        .unwrap()
        .broadcast_to((3, 3, 4))
        .unwrap();
    let flat = a.reshape(24, &s).unwrap();
    assert_eq!(copy_calls(), before, "no view copies");
    for v in [
        &permuted, &swapped, &reversed, &stepped, &inclusive, &narrowed, &row, &lifted, &wide,
        &flat,
    ] {
        assert!(v.shares_storage(&a));
    }
    let got = |t: &Tensor| t.to_array::<f32, IxDyn>(&s).unwrap();
    assert_eq!(got(&permuted), host.view().permuted_axes(vec![2, 0, 1]));
    assert_eq!(got(&swapped), host.view().permuted_axes(vec![2, 1, 0]));
    assert_eq!(got(&reversed), host.t());
    assert_eq!(got(&stepped), host.slice(s![.., .., 1..;2]).into_dyn());
    assert_eq!(got(&inclusive), host.slice(s![.., 0..=1, ..]).into_dyn());
    assert_eq!(got(&narrowed), host.slice(s![.., 1..3, ..]).into_dyn());
    assert_eq!(got(&row), host.slice(s![1, .., ..]).into_dyn());
    assert_eq!(
        got(&lifted),
        host.slice(s![1, .., ..])
            .insert_axis(ndarray::Axis(1))
            .into_dyn()
    );
    let want_wide = host
        .slice(s![0..1, .., ..])
        .broadcast((3, 3, 4))
        .unwrap()
        .to_owned();
    assert_eq!(got(&wide), want_wide.into_dyn());
    assert_eq!(got(&flat), host.to_shape(24).unwrap().into_dyn());
    assert_eq!(lifted.shape(), &[3, 1, 4]);
    assert!(lifted.is_contiguous());
}

#[test]
fn invalid_views_are_refused() {
    let _check = LeakCheck::start();
    let s = stream();
    let a = Tensor::from_array(&s, &iota(&[2, 3])).unwrap();
    assert!(matches!(a.permute(&[0, 0]), Err(Error::InvalidArgument(_))));
    assert!(matches!(a.transpose(0, 2), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        a.slice(1, 2..5, 1),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(a.slice(0, .., 0), Err(Error::InvalidArgument(_))));
    assert!(matches!(a.squeeze(1), Err(Error::InvalidArgument(_))));
    assert!(matches!(a.unsqueeze(3), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        a.broadcast_to((4, 3)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        a.reshape(7, &s),
        Err(Error::ReshapeMismatch { .. })
    ));
}

#[test]
fn reshape_of_a_strided_view_copies_once_into_new_storage() {
    let _check = LeakCheck::start();
    let s = stream();
    let host = iota(&[3, 4]);
    let a = Tensor::from_array(&s, &host).unwrap();
    let copies = ascend_sim::call_count("aclnnInplaceCopy");
    let r = a.t().reshape((2, 6), &s).unwrap();
    assert_eq!(ascend_sim::call_count("aclnnInplaceCopy"), copies + 1);
    assert!(!r.shares_storage(&a) && r.is_unique());
    let want: Vec<f32> = host.t().iter().copied().collect();
    assert_eq!(r.to_vec::<f32>(&s).unwrap(), want);
    assert_eq!(r.shape(), &[2, 6]);
}

#[test]
fn uniqueness_follows_clones_drops_and_broadcasts() {
    let _check = LeakCheck::start();
    let s = stream();
    let a = Tensor::from_slice(&s, &[1i64, 2, 3], 3).unwrap();
    assert!(a.is_unique() && a.can_mut());
    let b = a.clone();
    assert!(!a.is_unique() && !a.can_mut() && !b.can_mut());
    let v = b.slice(0, 1.., 1).unwrap();
    drop(b);
    assert!(!a.can_mut() && !v.can_mut());
    drop(v);
    assert!(a.can_mut());
    let one = a.narrow(0, 0, 1).unwrap();
    drop(a);
    assert!(one.can_mut(), "a size-1 dim is not a broadcast");
    let wide = one.expand((4, 1)).unwrap();
    assert!(wide.is_unique() && !wide.can_mut());
}

#[test]
fn the_last_handle_returns_the_storage() {
    let _check = LeakCheck::start();
    let s = stream();
    let dev = device(A2);
    let held = dev.memory_stats().allocated;
    let a = Tensor::zeros(&s, (256, 256), DType::F32).unwrap();
    let grown = dev.memory_stats().allocated;
    assert!(grown > held);
    let views = [a.t(), a.narrow(0, 3, 5).unwrap(), a.clone()];
    drop(a);
    assert_eq!(
        dev.memory_stats().allocated,
        grown,
        "views keep the storage"
    );
    drop(views);
    assert_eq!(dev.memory_stats().allocated, held);
}

#[test]
fn conversions_move_without_copying() {
    let _check = LeakCheck::start();
    let s = stream();
    let typed = DeviceTensor::from_array(&s, &array![[1.0f32, 2.0], [3.0, 4.0]]).unwrap();
    let before = copy_calls();
    let t = Tensor::from(typed);
    let flat = t.reshape(4, &s).unwrap();
    drop(t);
    let back: DeviceTensor<f32> = flat.into_typed().unwrap();
    assert_eq!(copy_calls(), before);
    assert_eq!(back.shape(), &[4]);
    assert_eq!(
        back.to_array::<ndarray::Ix1>(&s).unwrap(),
        array![1.0f32, 2.0, 3.0, 4.0]
    );
    // the reshaped tensor's own descriptor: operators still run on it
    let doubled =
        ascendcl::add_new::<f32, f32, f32, DeviceTensor<f32>>(&back, &back, 1.0, &s).unwrap();
    assert_eq!(doubled.to_array::<ndarray::Ix1>(&s).unwrap()[3], 8.0);
}

#[test]
fn into_typed_refuses_with_the_tensor_back() {
    let _check = LeakCheck::start();
    let s = stream();
    let t = Tensor::from_slice(&s, &[1.0f32, 2.0, 3.0, 4.0], (2, 2)).unwrap();
    let e = t.into_typed::<f16>().unwrap_err();
    assert!(matches!(
        e.error,
        Error::DtypeMismatch {
            expected: DType::F16,
            actual: DType::F32,
            ..
        }
    ));
    let t = e.tensor;
    let other = t.clone();
    let e = t.into_typed::<f32>().unwrap_err();
    assert!(matches!(e.error, Error::SharedStorage { handles: 2, .. }));
    let t = e.tensor;
    drop(other);
    let e = t.t().into_typed::<f32>().unwrap_err();
    assert!(matches!(e.error, Error::NotWholeStorage { storage: 4, .. }));
    let e = t.narrow(0, 1, 1).unwrap().into_typed::<f32>().unwrap_err();
    assert!(matches!(e.error, Error::NotWholeStorage { offset: 2, .. }));
    drop(e);
    let as_error: Error = t.clone().into_typed::<f32>().unwrap_err().into();
    assert!(matches!(as_error, Error::SharedStorage { .. }));
    assert_eq!(t.to_vec::<f32>(&s).unwrap(), [1.0, 2.0, 3.0, 4.0]);
}

/// A round trip of `values` through every upload and download of the dtype.
fn round_trip<T: ascendcl::Element>(s: &Stream, values: &[T], bytes_of: impl Fn(&T) -> Vec<u8>) {
    let shape = (2, values.len() / 2);
    let bytes: Vec<u8> = values.iter().flat_map(&bytes_of).collect();
    let from_slice = Tensor::from_slice(s, values, shape).unwrap();
    let from_bytes = Tensor::from_bytes(s, &bytes, T::DTYPE, shape).unwrap();
    let host = Array2::from_shape_vec(shape, values.to_vec()).unwrap();
    let from_array = Tensor::from_array(s, &host).unwrap();
    for t in [&from_slice, &from_bytes, &from_array] {
        assert_eq!(t.dtype(), T::DTYPE);
        assert_eq!(t.shape(), &[2, values.len() / 2]);
        assert_eq!(t.to_vec::<T>(s).unwrap(), values);
        assert_eq!(t.to_bytes(s).unwrap(), bytes);
        assert_eq!(t.to_array::<T, ndarray::Ix2>(s).unwrap(), host);
    }
    // a strided view's bytes are its elements' bytes, in its order
    let want: Vec<u8> = host.t().iter().flat_map(&bytes_of).collect();
    assert_eq!(from_bytes.t().to_bytes(s).unwrap(), want);
}

#[test]
fn every_dtype_uploads_and_downloads_as_elements_and_bytes() {
    let _check = LeakCheck::start();
    let s = stream();
    let f = [1.5f32, -0.0, f32::MAX, f32::INFINITY, 3.25, -7.0];
    round_trip(&s, &f[..4], |v| v.to_ne_bytes().to_vec());
    let h: Vec<f16> = f.iter().map(|v| f16::from_f32(*v)).collect();
    round_trip(&s, &h, |v| v.to_ne_bytes().to_vec());
    let b: Vec<bf16> = f.iter().map(|v| bf16::from_f32(*v)).collect();
    round_trip(&s, &b, |v| v.to_ne_bytes().to_vec());
    round_trip(&s, &[i32::MIN, -1, 0, i32::MAX], |v| {
        v.to_ne_bytes().to_vec()
    });
    round_trip(&s, &[i64::MIN, -1, 7, i64::MAX, 0, 3], |v| {
        v.to_ne_bytes().to_vec()
    });
    round_trip(&s, &[-128i8, -1, 0, 127], |v| v.to_ne_bytes().to_vec());
    round_trip(&s, &[0u8, 1, 254, 255], |v| v.to_ne_bytes().to_vec());
    round_trip(&s, &[1.0f64, -0.5, f64::MAX, 1e-300], |v| {
        v.to_ne_bytes().to_vec()
    });
    round_trip(&s, &[true, false, false, true], |v| vec![u8::from(*v)]);
}

#[test]
fn dtype_and_length_mismatches_are_typed_errors() {
    let _check = LeakCheck::start();
    let s = stream();
    let t = Tensor::from_slice(&s, &[1i32, 2, 3], 3).unwrap();
    assert!(matches!(
        t.to_vec::<i64>(&s),
        Err(Error::DtypeMismatch {
            expected: DType::I64,
            actual: DType::I32,
            ..
        })
    ));
    assert!(matches!(
        t.to_array::<f32, IxDyn>(&s),
        Err(Error::DtypeMismatch { .. })
    ));
    assert!(matches!(
        t.typed_view::<u8>(),
        Err(Error::DtypeMismatch { .. })
    ));
    assert!(matches!(
        Tensor::from_slice(&s, &[1.0f32; 5], (2, 3)),
        Err(Error::LengthMismatch {
            expected: 6,
            actual: 5,
            ..
        })
    ));
    assert!(matches!(
        Tensor::from_bytes(&s, &[0u8; 6], DType::F32, 2),
        Err(Error::LengthMismatch {
            expected: 8,
            actual: 6,
            ..
        })
    ));
    let mut wide = t.clone().expand((2, 3)).unwrap();
    assert!(matches!(
        wide.typed_view_mut::<i32>(),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn empty_allocates_without_a_fill() {
    let _check = LeakCheck::start();
    let s = stream();
    let fills =
        || ascend_sim::call_count("aclrtMemset") + ascend_sim::call_count("aclnnInplaceZero");
    let before = fills();
    let mut typed = DeviceTensor::<bf16>::empty(&s, (3, 5)).unwrap();
    let mut dynamic = Tensor::empty(&s, (5, 3), DType::I64).unwrap();
    assert_eq!(fills(), before, "no fill");
    assert_eq!(typed.shape(), &[3, 5]);
    assert_eq!(
        (dynamic.shape(), dynamic.dtype()),
        (&[5usize, 3][..], DType::I64)
    );
    ascendcl::fill_inplace(&mut typed, 2.0, &s).unwrap();
    ascendcl::fill_inplace(dynamic.typed_view_mut::<i64>().unwrap(), -4, &s).unwrap();
    assert_eq!(
        typed.to_array::<ndarray::Ix2>(&s).unwrap(),
        Array2::from_elem((3, 5), bf16::from_f32(2.0))
    );
    assert_eq!(dynamic.to_vec::<i64>(&s).unwrap(), vec![-4; 15]);
}

/// The kernels and fills an allocating call makes, against a zero-filled output and
/// an `empty` one: the allocating form makes no fill.
#[test]
fn allocating_forms_launch_only_their_operator() {
    let _check = LeakCheck::start();
    let s = stream();
    let x = DeviceTensor::from_array(&s, &iota(&[64, 64])).unwrap();
    let count = |name: &str| ascend_sim::call_count(name);
    let snapshot = || {
        (
            count("aclnnExp"),
            count("aclrtMemset"),
            count("aclnnInplaceZero"),
        )
    };
    let calls = |f: &dyn Fn()| {
        let (e0, m0, z0) = snapshot();
        f();
        let (e1, m1, z1) = snapshot();
        (e1 - e0, m1 - m0 + z1 - z0)
    };
    let zeroed = calls(&|| {
        let mut y = DeviceTensor::<f32>::zeros(&s, (64, 64)).unwrap();
        ascendcl::exp(&x, &mut y, &s).unwrap();
    });
    let empty = calls(&|| {
        let mut y = DeviceTensor::<f32>::empty(&s, (64, 64)).unwrap();
        ascendcl::exp(&x, &mut y, &s).unwrap();
    });
    let new = calls(&|| {
        let y: DeviceTensor<f32> = ascendcl::exp_new(&x, &s).unwrap();
        drop(y);
    });
    eprintln!("exp launches and fills: zeros+exp {zeroed:?}, empty+exp {empty:?}, exp_new {new:?}");
    assert_eq!(zeroed, (1, 1));
    assert_eq!(empty, (1, 0));
    assert_eq!(new, (1, 0));
}

/// BOOL bytes other than 0 and 1 (uploaded as bytes, or left by another dtype) come
/// back as `true`, never as an invalid `bool`; the bytes themselves are kept.
#[test]
fn bool_downloads_normalise_any_byte() {
    let _check = LeakCheck::start();
    let s = stream();
    let raw = [0u8, 1, 2, 255];
    let t = Tensor::from_bytes(&s, &raw, DType::Bool, 4).unwrap();
    assert_eq!(t.to_vec::<bool>(&s).unwrap(), [false, true, true, true]);
    assert_eq!(
        t.slice(0, .., 2).unwrap().to_vec::<bool>(&s).unwrap(),
        [false, true]
    );
    assert_eq!(t.to_bytes(&s).unwrap(), raw);
}
