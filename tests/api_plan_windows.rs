//! Plans in a training loop: a batch window moving over one device-resident data set (the
//! same dims and strides at other offsets), a learning rate changed between launches with
//! `set_attr`, no allocation per launch in a steady state, and the misuse a plan still
//! refuses (other dims, strides or dtype).

mod common;

use ascendcl::protocol::Scalar;
use ascendcl::{AddPlan, DeviceTensor, Error, InplaceAddPlan, Stream, Tensor, reference};
use common::counting::{Counting, allocations_during};
use ndarray::{Array2, ArrayD, Axis, IxDyn, s};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn stream() -> Stream {
    common::runtime().device(0).unwrap().stream().unwrap()
}

fn data(rows: usize, cols: usize, seed: usize) -> Array2<f32> {
    Array2::from_shape_fn((rows, cols), |(i, j)| {
        ((i * cols + j + seed) % 13) as f32 - 6.0
    })
}

/// `out = x[rows] + alpha·w` on the reference, for a batch of rows.
fn want(x: &Array2<f32>, rows: std::ops::Range<usize>, w: &Array2<f32>, alpha: f32) -> ArrayD<f32> {
    let batch = x.slice(s![rows, ..]).to_owned().into_dyn();
    reference::add(batch.view(), w.view().into_dyn(), f64::from(alpha)).unwrap()
}

/// The window moves by `cols` elements a step: for 4 columns of f32 that is 64 bytes (a
/// rebind alone), for 3 columns 48 bytes (two offset residues, each planned once).
fn a_window_moving_over_a_resident_data_set(cols: usize) {
    let s = stream();
    let xh = data(16, cols, 1);
    let wh = data(4, cols, 7);
    let x = DeviceTensor::from_array(&s, &xh).unwrap();
    let w = DeviceTensor::from_array(&s, &wh).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [4, cols]).unwrap();
    let batch = |k: usize| x.view().slice(0, 4 * k, 4 * k + 4, 1).unwrap();
    let mut plan = AddPlan::new(batch(0), &w, 0.5f32, &out, &s).unwrap();
    // Every window, twice over: rows 0..4, 4..8, 8..12, 12..16.
    for round in 0..2 {
        for k in 0..4 {
            let (mine, _) = allocations_during(|| plan.launch(batch(k), &w, &mut out, &s).unwrap());
            // The second round has seen every residue: nothing is made any more.
            if round == 1 || cols.is_multiple_of(8) {
                assert_eq!(mine, 0, "cols {cols}, round {round}, window {k} allocated");
            }
            let got = out.to_array::<IxDyn>(&s).unwrap();
            assert_eq!(
                got,
                want(&xh, 4 * k..4 * k + 4, &wh, 0.5),
                "cols {cols}, window {k}"
            );
        }
    }
}

#[test]
fn a_plan_follows_a_batch_window_aligned_to_32_bytes_by_rebinding_alone() {
    a_window_moving_over_a_resident_data_set(4);
}

#[test]
fn a_plan_follows_a_batch_window_at_any_offset() {
    a_window_moving_over_a_resident_data_set(3);
}

#[test]
fn a_learning_rate_set_between_launches_takes_effect() {
    let s = stream();
    let gh = data(4, 5, 3);
    let g = DeviceTensor::from_array(&s, &gh).unwrap();
    let mut w = DeviceTensor::<f32>::zeros(&s, [4, 5]).unwrap();
    let mut plan = InplaceAddPlan::new(&w, &g, -0.5f32, &s).unwrap();
    plan.launch(&mut w, &g, &s).unwrap();
    let after_one = w.to_array::<ndarray::Ix2>(&s).unwrap();
    assert_eq!(after_one, gh.mapv(|v| -0.5 * v));
    // A schedule lowers the rate: the next launch uses it, and so do the ones after.
    plan.set_attr("alpha", Scalar::from(-0.25f32)).unwrap();
    plan.launch(&mut w, &g, &s).unwrap();
    s.synchronize().unwrap();
    let (mine, _) = allocations_during(|| plan.launch(&mut w, &g, &s).unwrap());
    assert_eq!(
        mine, 0,
        "the launches after the first one with the new rate allocate nothing"
    );
    let got = w.to_array::<ndarray::Ix2>(&s).unwrap();
    assert_eq!(got, gh.mapv(|v| -0.5 * v - 0.25 * v - 0.25 * v));
    // The C name works too; an unknown name or a tensor argument is refused.
    plan.set_attr("alpha", Scalar::from(1.0f32)).unwrap();
    assert!(matches!(
        plan.set_attr("beta", Scalar::from(1.0f32)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        plan.set_attr("other", Scalar::from(1.0f32)),
        Err(Error::InvalidArgument(_))
    ));
    plan.launch(&mut w, &g, &s).unwrap();
    let got = w.to_array::<ndarray::Ix2>(&s).unwrap();
    assert_eq!(got, gh.mapv(|v| -0.5 * v - 0.25 * v - 0.25 * v + v));
}

#[test]
fn a_plan_still_refuses_other_dims_strides_or_dtypes() {
    let s = stream();
    let x = DeviceTensor::from_array(&s, &data(8, 4, 1)).unwrap();
    let w = DeviceTensor::from_array(&s, &data(4, 4, 2)).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [4, 4]).unwrap();
    let mut plan = AddPlan::new(x.view().slice(0, 0, 4, 1).unwrap(), &w, 1.0f32, &out, &s).unwrap();
    // Five rows: other dims.
    let err = plan
        .launch(x.view().slice(0, 0, 5, 1).unwrap(), &w, &mut out, &s)
        .unwrap_err();
    assert!(matches!(err, Error::PlanMismatch { .. }), "{err}");
    // Every other row: other strides.
    let err = plan
        .launch(x.view().slice(0, 0, 8, 2).unwrap(), &w, &mut out, &s)
        .unwrap_err();
    assert!(matches!(err, Error::PlanMismatch { .. }), "{err}");
    // The transpose: other strides.
    let err = plan
        .launch(x.view().slice(0, 4, 8, 1).unwrap().t(), &w, &mut out, &s)
        .unwrap_err();
    assert!(matches!(err, Error::PlanMismatch { .. }), "{err}");
    // A run-time dtype other than the planned one.
    let xf32: Tensor = DeviceTensor::from_array(&s, &data(4, 4, 1)).unwrap().into();
    let xf64: Tensor = DeviceTensor::from_array(&s, &data(4, 4, 1).mapv(f64::from))
        .unwrap()
        .into();
    let wd: Tensor = DeviceTensor::from_array(&s, &data(4, 4, 2)).unwrap().into();
    let mut od: Tensor = DeviceTensor::<f32>::zeros(&s, [4, 4]).unwrap().into();
    let mut dyn_plan = AddPlan::new(&xf32, &wd, 1.0f32, &od, &s).unwrap();
    dyn_plan.launch(&xf32, &wd, &mut od, &s).unwrap();
    let err = dyn_plan.launch(&xf64, &wd, &mut od, &s).unwrap_err();
    assert!(matches!(err, Error::PlanMismatch { .. }), "{err}");
    // The rows still sum right after the refusals.
    plan.launch(x.view().slice(0, 4, 8, 1).unwrap(), &w, &mut out, &s)
        .unwrap();
    let xh = data(8, 4, 1);
    let got = out.to_array::<IxDyn>(&s).unwrap();
    let rows = xh.slice_axis(Axis(0), (4..8).into()).to_owned().into_dyn();
    let wh = data(4, 4, 2);
    assert_eq!(
        got,
        reference::add(rows.view(), wh.view().into_dyn(), 1.0).unwrap()
    );
}
