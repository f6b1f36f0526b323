//! A user crate's view of the operator layer: an operator declared outside the crate with
//! `operator!`, and the raw escape hatch driving an aclnn operator by hand.

mod common;

use ascend_sys::{aclOpExecutor, aclTensor};
use ascendcl::protocol::{Call, rules};
use ascendcl::{DType, DeviceTensor, Error, SocFamily};
use common::*;
use ndarray::array;

ascendcl::operator! {
    /// `aclnnMul` as a user declares it, with a rule of its own: the first input must be
    /// a matrix.
    pub unsafe struct UserMul: aclnnMul, aclnnMulGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    dtypes: |_soc: SocFamily, dtype: DType| dtype != DType::BF16;
    rule: |c: &Call<'_>| {
        if c.dims(0).len() != 2 {
            return Err(Error::InvalidArgument(format!("{} must be a matrix", c.label(0))));
        }
        rules::broadcast(c)
    };

    /// `out = lhs · rhs`.
    pub fn user_mul<T>(lhs: input<T> = "self", rhs: input<T> = "other", out: output<T> = "out");

    /// Its plan.
    pub type UserMulPlan;
}

#[test]
fn an_operator_declared_in_a_user_crate_runs_with_the_crates_checks() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let a = DeviceTensor::from_array(&s, &array![[1.0f32, 2.0], [3.0, 4.0]]).unwrap();
    let b = DeviceTensor::from_array(&s, &array![2.0f32, -1.0]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, &[2, 2]).unwrap();
    user_mul(&a, &b, &mut out, &s).unwrap();
    assert_eq!(
        out.to_array(&s).unwrap(),
        array![[2.0f32, -2.0], [6.0, -4.0]].into_dyn()
    );
    let mut plan: UserMulPlan<f32> = UserMulPlan::new(&a, &a, &out, &s).unwrap();
    plan.launch(&a, &a, &mut out, &s).unwrap();
    assert_eq!(
        out.to_array(&s).unwrap(),
        array![[1.0f32, 4.0], [9.0, 16.0]].into_dyn()
    );
    // The user's rule and the crate's checks, before any C call.
    let before = ascend_sim::call_count("aclnnMulGetWorkspaceSize");
    let e = user_mul(&b, &b, &mut out, &s).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid argument: lhs (self) must be a matrix"
    );
    let mut small = DeviceTensor::<f32>::zeros(&s, &[2, 1]).unwrap();
    assert!(matches!(
        user_mul(&a, &b, &mut small, &s),
        Err(Error::ShapeMismatch {
            argument: "out",
            ..
        })
    ));
    assert_eq!(ascend_sim::call_count("aclnnMulGetWorkspaceSize"), before);
    assert_eq!(UserMul::NAME, "aclnnMul");
    assert!(!UserMul::available_on(SocFamily::Atlas310B));
    drop(plan);
    s.synchronize().unwrap();
}

type ZeroPhase1 = unsafe extern "C" fn(*mut aclTensor, *mut u64, *mut *mut aclOpExecutor) -> i32;

#[test]
fn the_raw_escape_hatch_drives_an_operator_by_hand() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let mut x = DeviceTensor::from_array(&s, &array![[1.0f32, 2.0], [3.0, 4.0]]).unwrap();
    let phase1 = ascend_sim::symbol("aclnnInplaceZeroGetWorkspaceSize").unwrap();
    let phase2 = ascend_sim::symbol("aclnnInplaceZero").unwrap();
    {
        let mut column = x.view_mut().slice(1, 1, 2, 1).unwrap();
        // SAFETY: only aclnnInplaceZero is queued with the access, on `s`, and it writes
        // the view's elements only.
        let raw = unsafe { column.raw_access_mut(&s).unwrap() };
        let (mut ws, mut exec) = (0u64, std::ptr::null_mut());
        // SAFETY: the simulator's functions of these names have these prototypes; the
        // descriptor is live; the workspace size is 0 (checked) and the stream is `s`'s.
        unsafe {
            let p1: ZeroPhase1 = std::mem::transmute(phase1);
            let p2: ascend_sys::OperatorLaunchFn = std::mem::transmute(phase2);
            assert_eq!(p1(raw.acl_tensor(), &mut ws, &mut exec), 0);
            assert_eq!(ws, 0);
            assert_eq!(p2(std::ptr::null_mut(), 0, exec, s.as_raw()), 0);
        }
        assert_eq!(raw.device_ptr() as usize, raw.base_ptr() as usize + 4);
    }
    // The access was recorded: the download waits for the hand-made launch.
    assert_eq!(
        x.to_array(&s).unwrap(),
        array![[1.0f32, 0.0], [3.0, 0.0]].into_dyn()
    );
}
