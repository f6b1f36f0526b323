//! `cat`, `cat_new` and `CatPlan` (a tensor list argument) against the reference: every
//! element type, empty tensors in the list, transposed and stepped views, negative dims;
//! plans relaunched on other tensors of the planned layouts without allocating; the typed
//! errors before any call.

mod common;

use ascendcl::{
    CatPlan, DeviceTensor, Element, Error, Stream, TensorView, cat, cat_new, reference,
};
use common::counting::{Counting, allocations_during};
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn stream() -> Stream {
    common::runtime().device(0).unwrap().stream().unwrap()
}

/// A small deterministic generator (the cases must be reproducible without a seed file).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

/// Values that every dtype holds exactly (small integers; 0 and 1 for bool).
fn values<T: Element>(shape: &[usize], seed: usize, from: impl Fn(usize) -> T) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|i| from(seed * 31 + i)).collect()).unwrap()
}

/// Random lists of one element type joined along a random dim, some tensors given as
/// transposed or stepped views and some empty along the joined dim, against the reference.
fn joins_like_the_reference<T: Element + PartialEq + std::fmt::Debug>(
    from: impl Fn(usize) -> T + Copy,
    seed: u64,
) -> usize {
    let s = stream();
    let mut rng = Lcg(seed);
    let mut cases = 0;
    for _ in 0..12 {
        let rank = 1 + rng.next(3);
        let dim = rng.next(rank);
        let base: Vec<usize> = (0..rank).map(|_| 1 + rng.next(3)).collect();
        let count = 1 + rng.next(4);
        let mut hosts = Vec::new();
        let mut devices = Vec::new();
        for k in 0..count {
            let mut shape = base.clone();
            shape[dim] = rng.next(4); // 0: an empty tensor in the list
            let how = rng.next(3);
            let host = values(&shape, k, from);
            // 0: whole; 1: the transpose of a transposed upload; 2: every other row of a
            // taller upload (a stepped view).
            let dev = match how {
                1 => DeviceTensor::from_array(&s, &host.t().as_standard_layout()).unwrap(),
                2 => {
                    let mut tall = shape.clone();
                    tall[0] = 2 * shape[0];
                    let mut big = ArrayD::from_elem(IxDyn(&tall), from(999));
                    for (i, row) in host.outer_iter().enumerate() {
                        big.index_axis_mut(ndarray::Axis(0), 2 * i).assign(&row);
                    }
                    DeviceTensor::from_array(&s, &big).unwrap()
                }
                _ => DeviceTensor::from_array(&s, &host).unwrap(),
            };
            hosts.push(host);
            devices.push((dev, how));
        }
        let views: Vec<TensorView<'_, T>> = devices
            .iter()
            .zip(&hosts)
            .map(|((d, how), h)| match how {
                1 => d.view().t(),
                2 if h.shape()[0] > 0 => d.view().slice(0, 0, 2 * h.shape()[0], 2).unwrap(),
                2 => d.view().slice(0, 0, 0, 1).unwrap(),
                _ => d.view(),
            })
            .collect();
        let host_views: Vec<_> = hosts.iter().map(|h| h.view()).collect();
        // Only 1-D empty tensors: the vendor drops them all and computes nothing, the
        // allocating form makes an empty `[0]`.
        let want = if hosts.iter().all(|h| h.shape() == [0]) {
            ArrayD::from_shape_vec(IxDyn(&[0]), Vec::new()).unwrap()
        } else {
            reference::cat(&host_views, dim as isize - rank as isize).unwrap()
        };
        let got: DeviceTensor<T> = cat_new(&views, dim as i64 - rank as i64, &s).unwrap();
        assert_eq!(
            got.to_array::<IxDyn>(&s).unwrap(),
            want,
            "dim {dim}, shapes {:?}",
            hosts.iter().map(|h| h.shape().to_vec()).collect::<Vec<_>>()
        );
        let mut out = DeviceTensor::<T>::zeros(&s, want.shape()).unwrap();
        cat(&views, dim as i64, &mut out, &s).unwrap();
        assert_eq!(out.to_array::<IxDyn>(&s).unwrap(), want);
        cases += 1;
    }
    cases
}

#[test]
fn joins_every_element_type_like_the_reference() {
    let mut cases = 0;
    cases += joins_like_the_reference(|i| (i % 17) as f32 - 8.0, 1);
    cases += joins_like_the_reference(|i| f16::from_f32((i % 17) as f32), 2);
    cases += joins_like_the_reference(|i| bf16::from_f32((i % 17) as f32), 3);
    cases += joins_like_the_reference(|i| (i % 17) as f64 * 0.5, 4);
    cases += joins_like_the_reference(|i| (i % 100) as i32 - 50, 5);
    cases += joins_like_the_reference(|i| i as i64 * 1_000_000_007, 6);
    cases += joins_like_the_reference(|i| (i % 120) as i8 - 60, 7);
    cases += joins_like_the_reference(|i| (i % 250) as u8, 8);
    cases += joins_like_the_reference(|i| i % 3 == 0, 9);
    assert_eq!(cases, 9 * 12);
}

#[test]
fn one_dimensional_empty_tensors_are_dropped_and_an_all_empty_list_makes_an_empty_result() {
    let s = stream();
    let a = DeviceTensor::from_array(&s, &ndarray::array![[1.0f32, 2.0], [3.0, 4.0]]).unwrap();
    let none = DeviceTensor::<f32>::zeros(&s, [0]).unwrap();
    let got: DeviceTensor<f32> = cat_new(&[none.view(), a.view(), none.view()], 0, &s).unwrap();
    assert_eq!(
        got.to_array::<IxDyn>(&s).unwrap(),
        ndarray::array![[1.0f32, 2.0], [3.0, 4.0]].into_dyn()
    );
    let empty: DeviceTensor<f32> = cat_new(&[none.view(), none.view()], 0, &s).unwrap();
    assert_eq!(empty.shape(), &[0]);
}

#[test]
fn a_plan_follows_new_tensors_of_the_planned_layouts_without_allocating() {
    let s = stream();
    let up = |v: [f32; 4]| {
        DeviceTensor::from_array(
            &s,
            &ndarray::Array::from_shape_vec((2, 2), v.to_vec()).unwrap(),
        )
        .unwrap()
    };
    let (a, b) = (up([1.0, 2.0, 3.0, 4.0]), up([5.0, 6.0, 7.0, 8.0]));
    let (c, d) = (up([-1.0, -2.0, -3.0, -4.0]), up([-5.0, -6.0, -7.0, -8.0]));
    let mut out = DeviceTensor::<f32>::zeros(&s, [2, 4]).unwrap();
    let mut plan = CatPlan::new(&[a.view(), b.view()], 1, &out, &s).unwrap();
    assert!(plan.is_reusable());
    plan.launch(&[a.view(), b.view()], &mut out, &s).unwrap();
    let want = |x: &DeviceTensor<f32>, y: &DeviceTensor<f32>| {
        let (x, y) = (
            x.to_array::<IxDyn>(&s).unwrap(),
            y.to_array::<IxDyn>(&s).unwrap(),
        );
        reference::cat(&[x.view(), y.view()], 1).unwrap()
    };
    assert_eq!(out.to_array::<IxDyn>(&s).unwrap(), want(&a, &b));
    // Other tensors, and the same ones again: rebinding allocates nothing.
    for (x, y) in [(&c, &d), (&a, &d), (&c, &b)] {
        plan.launch(&[x.view(), y.view()], &mut out, &s).unwrap();
        s.synchronize().unwrap();
        let (mine, _) =
            allocations_during(|| plan.launch(&[x.view(), y.view()], &mut out, &s).unwrap());
        assert_eq!(mine, 0, "a launch allocated");
        assert_eq!(out.to_array::<IxDyn>(&s).unwrap(), want(x, y));
    }
    // Another length or another layout is refused before any call.
    let err = plan.launch(&[a.view()], &mut out, &s).unwrap_err();
    assert!(matches!(err, Error::PlanMismatch { .. }), "{err}");
    let err = plan
        .launch(&[a.view().t(), b.view()], &mut out, &s)
        .unwrap_err();
    assert!(matches!(err, Error::PlanMismatch { .. }), "{err}");
}

#[test]
fn shapes_and_dims_that_do_not_join_are_refused_with_typed_errors() {
    let s = stream();
    let a = DeviceTensor::<f32>::zeros(&s, [2, 3]).unwrap();
    let b = DeviceTensor::<f32>::zeros(&s, [2, 2]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [4, 3]).unwrap();
    // Along dim 0 the dims off it differ.
    let err = cat(&[a.view(), b.view()], 0, &mut out, &s).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    // Along dim 1 they join into [2, 5], not out's [4, 3].
    let err = cat(&[a.view(), b.view()], 1, &mut out, &s).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    // dim outside the rank.
    let err = cat(&[a.view(), a.view()], 2, &mut out, &s).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    // f32 into i32 does not cast.
    let mut ints = DeviceTensor::<i32>::zeros(&s, [4, 3]).unwrap();
    let err = cat(&[a.view(), a.view()], 0, &mut ints, &s).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    // i32 into f32 does.
    let x = DeviceTensor::from_array(&s, &ndarray::array![[1i32, 2, 3], [4, 5, 6]]).unwrap();
    let mut floats = DeviceTensor::<f32>::zeros(&s, [4, 3]).unwrap();
    cat(&[x.view(), x.view()], 0, &mut floats, &s).unwrap();
    assert_eq!(floats.to_array::<ndarray::Ix2>(&s).unwrap()[[3, 2]], 6.0);
}
