//! `copy_from_array` / `copy_to_array` into existing tensors: any host layout, views,
//! staging reuse (no device allocation in the steady state, back-to-back uploads never
//! overwrite a queued one), typed errors, and `to_array` of a huge broadcast view
//! returning an error instead of aborting.

use crate::common;

use ascendcl::{DeviceTensor, Error};
use common::counting::SimCalls;
use common::*;
use half::{bf16, f16};
use ndarray::{Array1, Array2, Array3, ArrayD, ShapeBuilder, s};
use proptest::prelude::*;

fn assert_silent() {
    assert_eq!(ascend_sim::last_report(), None, "sanitizer report");
}

#[test]
fn round_trip_any_host_layout() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let stream = device(A2).stream().unwrap();
    let a = array::<f32>(&[3, 4, 5], 1, -3.0, 3.0)
        .into_dimensionality::<ndarray::Ix3>()
        .unwrap();
    let mut t = DeviceTensor::<f32>::zeros(&stream, [5, 4, 3]).unwrap();
    // A permuted, non-contiguous source.
    let src = a.view().reversed_axes();
    t.copy_from_array(&stream, &src).unwrap();
    // Column-major destination.
    let mut out = Array3::<f32>::zeros((5, 4, 3).f());
    t.copy_to_array(&stream, &mut out).unwrap();
    assert_eq!(out, src);
    // A stepped destination view of a bigger array.
    let mut big = Array3::<f32>::from_elem((10, 4, 6), -1.0);
    t.copy_to_array(&stream, &mut big.slice_mut(s![..;2, .., ..;2]))
        .unwrap();
    assert_eq!(big.slice(s![..;2, .., ..;2]), src);
    assert!(big.slice(s![1..;2, .., ..]).iter().all(|v| *v == -1.0));
    assert_silent();
}

#[test]
fn reversed_and_stepped_sources_upload_in_row_major_order() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let stream = device(A2).stream().unwrap();
    let a = array::<f32>(&[4, 6, 8], 2, -3.0, 3.0)
        .into_dimensionality::<ndarray::Ix3>()
        .unwrap();
    // Rows dense backwards, rows stepped, rows dense forwards under reversed outer axes,
    // and a permutation whose rows run across the storage.
    let sources = [
        a.slice(s![.., .., ..;-1]),
        a.slice(s![..;-1, 1.., ..;-2]),
        a.slice(s![..;-1, ..;-1, 2..]),
        a.slice(s![.., .., ..]).permuted_axes([2, 0, 1]),
    ];
    for src in sources {
        let mut t = DeviceTensor::<f32>::zeros(&stream, src.shape()).unwrap();
        t.copy_from_array(&stream, &src).unwrap();
        let back: Array3<f32> = t.to_array(&stream).unwrap();
        assert_eq!(back, src, "source strides {:?}", src.strides());
    }
    assert_silent();
}

#[test]
fn the_source_array_may_be_reused_at_once() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let stream = device(A2).stream().unwrap();
    let n = 4096;
    let mut tensors: Vec<DeviceTensor<f32>> = (0..4)
        .map(|_| DeviceTensor::zeros(&stream, [n]).unwrap())
        .collect();
    let mut host = Array1::<f32>::zeros(n);
    // Hold the stream so every upload is still queued when the next overwrites `host`
    // and would overwrite the staging buffer.
    let hold = ascend_sim::testing::hold_stream(stream.as_raw()).unwrap();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        hold.release();
    });
    for (i, t) in tensors.iter_mut().enumerate() {
        host.fill(i as f32 + 1.0);
        t.copy_from_array(&stream, &host).unwrap();
    }
    releaser.join().unwrap();
    for (i, t) in tensors.iter().enumerate() {
        let mut out = Array1::<f32>::zeros(n);
        t.copy_to_array(&stream, &mut out).unwrap();
        assert!(out.iter().all(|v| *v == i as f32 + 1.0), "tensor {i}");
    }
    assert_silent();
}

#[test]
fn steady_state_allocates_no_device_or_pinned_memory() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let a = array::<f32>(&[64, 32], 3, -1.0, 1.0);
    let mut t = DeviceTensor::<f32>::zeros(&stream, [64, 32]).unwrap();
    let mut out = ArrayD::<f32>::zeros(ndarray::IxDyn(&[64, 32]));
    t.copy_from_array(&stream, &a).unwrap();
    t.copy_to_array(&stream, &mut out).unwrap();
    let calls = SimCalls::now(&[]);
    for _ in 0..100 {
        t.copy_from_array(&stream, &a).unwrap();
        t.copy_to_array(&stream, &mut out).unwrap();
    }
    assert_eq!(out, a);
    calls.assert_no_memory_allocated();
}

/// `from_array` and `to_array` (of tensors and of strided views, dense and staged alike)
/// reuse the stream's staging buffer: after one round of warm-up, no pinned allocation.
#[test]
fn from_array_and_to_array_make_no_pinned_allocation_in_steady_state() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let stream = device(A2).stream().unwrap();
    let a = array::<f32>(&[16, 8], 5, -1.0, 1.0)
        .into_dimensionality::<ndarray::Ix2>()
        .unwrap();
    let round = || {
        // A dense source (copied at once) and a transposed one (staged and queued).
        let t = DeviceTensor::from_array(&stream, &a).unwrap();
        let tt = DeviceTensor::from_array(&stream, &a.t()).unwrap();
        let back: Array2<f32> = t.to_array(&stream).unwrap();
        assert_eq!(back, a);
        // A strided view: staged, then gathered.
        let back_t: Array2<f32> = t.view().t().to_array(&stream).unwrap();
        assert_eq!(back_t, a.t());
        let mut tt = tt;
        let col: Array1<f32> = tt
            .view_mut()
            .slice(1, 3, 4, 1)
            .unwrap()
            .to_array::<ndarray::Ix2>(&stream)
            .unwrap()
            .into_shape_with_order(8)
            .unwrap();
        assert_eq!(col, a.row(3));
    };
    round();
    let calls = SimCalls::now(&["aclrtFreeHost"]);
    for _ in 0..50 {
        round();
    }
    stream.synchronize().unwrap();
    assert_eq!(calls.since("aclrtMallocHost"), 0, "pinned allocations");
    assert_eq!(calls.since("aclrtFreeHost"), 0, "pinned releases");
    assert_silent();
}

#[test]
fn views_upload_into_dense_windows_and_download_any_window() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let stream = device(A2).stream().unwrap();
    let mut t = DeviceTensor::<f16>::zeros(&stream, [4, 3]).unwrap();
    let rows = Array2::from_shape_fn((2, 3), |(i, j)| f16::from_f32((i * 3 + j) as f32));
    t.view_mut()
        .slice(0, 1, 3, 1)
        .unwrap()
        .copy_from_array(&stream, &rows)
        .unwrap();
    let mut all = Array2::<f16>::from_elem((4, 3), f16::ZERO);
    t.copy_to_array(&stream, &mut all).unwrap();
    assert_eq!(all.slice(s![1..3, ..]), rows);
    assert!(all.row(0).iter().chain(all.row(3)).all(|v| *v == f16::ZERO));
    // Transposed and broadcast reads.
    let mut tt = Array2::<f16>::from_elem((3, 4), f16::ZERO);
    t.view().t().copy_to_array(&stream, &mut tt).unwrap();
    assert_eq!(tt, all.t());
    let mut b = Array3::<f16>::from_elem((2, 4, 3), f16::ZERO);
    t.view()
        .broadcast_to([2, 4, 3])
        .unwrap()
        .copy_to_array(&stream, &mut b)
        .unwrap();
    assert_eq!(b.index_axis(ndarray::Axis(0), 1), all);
    // A strided window cannot be written with one copy: a typed error.
    let err = t
        .view_mut()
        .t()
        .copy_from_array(&stream, &Array2::<f16>::from_elem((3, 4), f16::ZERO))
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert_silent();
}

#[test]
fn wrong_shapes_and_other_devices_are_typed_errors() {
    let _leaks = LeakCheck::start();
    let s0 = device(A2).stream().unwrap();
    let s1 = device(A910).stream().unwrap();
    let mut t = DeviceTensor::<bf16>::zeros(&s0, [2, 3]).unwrap();
    let wrong = Array2::<bf16>::from_elem((3, 2), bf16::ZERO);
    let err = t.copy_from_array(&s0, &wrong).unwrap_err();
    assert_eq!(
        err,
        Error::ShapeMismatch {
            argument: "array",
            expected: vec![2, 3],
            actual: vec![3, 2]
        }
    );
    let mut wrong = Array2::<bf16>::from_elem((2, 2), bf16::ZERO);
    assert!(matches!(
        t.copy_to_array(&s0, &mut wrong),
        Err(Error::ShapeMismatch { .. })
    ));
    let right = Array2::<bf16>::from_elem((2, 3), bf16::ZERO);
    assert!(matches!(
        t.copy_from_array(&s1, &right),
        Err(Error::DeviceMismatch { .. })
    ));
    let mut right = right;
    assert!(matches!(
        t.copy_to_array(&s1, &mut right),
        Err(Error::DeviceMismatch { .. })
    ));
}

#[test]
fn empty_and_zero_d() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let stream = device(A2).stream().unwrap();
    let mut e = DeviceTensor::<f32>::zeros(&stream, [0, 3]).unwrap();
    e.copy_from_array(&stream, &Array2::<f32>::zeros((0, 3)))
        .unwrap();
    let mut out = Array2::<f32>::zeros((0, 3));
    e.copy_to_array(&stream, &mut out).unwrap();
    let mut z = DeviceTensor::<f32>::zeros(&stream, []).unwrap();
    z.copy_from_array(&stream, &ndarray::arr0(2.5f32)).unwrap();
    let mut o = ndarray::arr0(0.0f32);
    z.copy_to_array(&stream, &mut o).unwrap();
    assert_eq!(o[()], 2.5);
    assert_silent();
}

/// A broadcast view far larger than memory used to abort the process in
/// `to_array` ("memory allocation of … bytes failed").
#[test]
fn to_array_of_a_huge_broadcast_view_is_a_typed_error() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let t = DeviceTensor::from_array(&stream, &ndarray::arr1(&[1.0f32])).unwrap();
    // 2^58 f32 elements: 2^60 bytes, beyond any address space.
    let huge = t.view().broadcast_to([1 << 29, 1 << 29]).unwrap();
    let err = huge.to_array::<ndarray::IxDyn>(&stream).unwrap_err();
    assert_eq!(
        err,
        Error::HostAllocation {
            what: "to_array",
            bytes: 1 << 60
        }
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random shapes (0-D to 4-D, empty dims included), a permuted upload source and a
    /// permuted / stepped download: the round trip is exact and the sanitizer silent.
    #[test]
    fn round_trip_property(
        dims in proptest::collection::vec(0usize..5, 0..5),
        seed in any::<u64>(),
        reverse in any::<bool>(),
    ) {
        let _leaks = LeakCheck::start();
        ascend_sim::clear_last_report();
        let stream = device(A2).stream().unwrap();
        let a = array::<f32>(&dims, seed, -5.0, 5.0);
        let src = if reverse { a.view().reversed_axes() } else { a.view() };
        let mut t = DeviceTensor::<f32>::zeros(&stream, src.shape()).unwrap();
        t.copy_from_array(&stream, &src).unwrap();
        let mut out = ArrayD::<f32>::zeros(ndarray::IxDyn(src.shape()).f());
        t.copy_to_array(&stream, &mut out).unwrap();
        prop_assert_eq!(&out.view(), &src);
        let back_shape: Vec<usize> = src.shape().iter().rev().copied().collect();
        let mut back = ArrayD::<f32>::zeros(ndarray::IxDyn(&back_shape));
        let axes: Vec<usize> = (0..dims.len()).rev().collect();
        t.view().permute(&axes).unwrap().copy_to_array(&stream, &mut back).unwrap();
        prop_assert_eq!(&back.view(), &src.reversed_axes());
        prop_assert_eq!(ascend_sim::last_report(), None);
    }
}

#[test]
fn reshape_in_place_keeps_data_and_refreshes_the_cached_descriptor() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let stream = device(A2).stream().unwrap();
    let a = array::<f32>(&[2, 6], 9, -2.0, 2.0);
    let mut x = DeviceTensor::from_array(&stream, &a).unwrap();
    let g = DeviceTensor::from_array(&stream, &ArrayD::from_elem(ndarray::IxDyn(&[3, 4]), 1.0f32))
        .unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, [2, 6]).unwrap();
    // Caches the whole-tensor descriptors of `x` and `out` for shape [2, 6].
    ascendcl::mish_backward(&x, &x, &mut out, &stream).unwrap();
    x.reshape([3, 4]).unwrap();
    out.reshape([3, 4]).unwrap();
    assert_eq!(x.shape(), &[3, 4]);
    ascendcl::mish_backward(&g, &x, &mut out, &stream).unwrap();
    let got = out.to_array(&stream).unwrap();
    let expected = ascendcl::reference::mish_backward(
        g.to_array::<ndarray::IxDyn>(&stream).unwrap().view(),
        a.clone()
            .into_shape_with_order(ndarray::IxDyn(&[3, 4]))
            .unwrap()
            .view(),
    )
    .unwrap();
    assert_eq!(got.shape(), &[3, 4]);
    let (mere, _) = mere_mare(&got, &expected);
    assert!(mere < threshold(ascendcl::DType::F32), "{mere}");
    // Wrong counts and overflowing products are typed errors; the tensor is unchanged.
    assert!(matches!(
        x.reshape([5, 2]),
        Err(Error::ReshapeMismatch { .. })
    ));
    assert!(matches!(
        x.reshape([usize::MAX, 2, 0, 3]),
        Err(Error::ReshapeMismatch { .. })
    ));
    assert!(matches!(x.reshape([1; 9]), Err(Error::TooManyDims { .. })));
    assert_eq!(x.shape(), &[3, 4]);
    assert_eq!(ascend_sim::last_report(), None);
}
