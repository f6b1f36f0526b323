//! A user crate's view of the operator layer: operators declared outside the crate with
//! `operator!` (`aclnnSub` declared again under the user's promise, as a user would declare
//! an operator the crate lacks, and `aclnnMul` with a rule of the user's own), and the raw
//! escape hatch driving an aclnn operator by hand.

use crate::common;

use ascend_sys::{aclOpExecutor, aclTensor};
use ascendcl::precision::judge;
use ascendcl::protocol::{Call, Scalar, rules};
use ascendcl::{DType, DeviceTensor, Error, SocFamily, reference};
use common::*;
use half::f16;
use ndarray::{Array, ArrayD, IxDyn, array};

fn sub_products(soc: SocFamily) -> bool {
    soc != SocFamily::Inference310P
}

fn sub_dtypes(soc: SocFamily, dtype: DType) -> bool {
    dtype != DType::BF16 || soc.has_bf16()
}

ascendcl::operator! {
    /// `aclnnSub` under the user's own declaration: `unsafe` is the user's promise that
    /// the prototype below is the vendor's.
    pub unsafe struct UserSub: aclnnSub, aclnnSubGetWorkspaceSize;
    products: sub_products;
    dtypes: sub_dtypes;
    rule: rules::broadcast;

    /// `out = a − alpha·b`.
    pub fn user_sub<A, B, O>(
        a: input<A> = "self",
        b: input<B> = "other",
        alpha: attr<Scalar> = "alpha",
        out: output<O> = "out",
    );

    /// Its plan.
    pub type UserSubPlan;
}

// SAFETY: aclnnSub's phase 1 is `(const aclTensor *self, const aclTensor *other, const
// aclScalar *alpha, aclTensor *out, uint64_t *, aclOpExecutor **)` (the vendor's
// `aclnn_sub.h`), its phase 2 the common one, and it only reads `self` and `other`.
unsafe impl ascendcl::protocol::Promise for UserSub {}

ascendcl::operator! {
    /// `aclnnInplaceSub`, declared by the user too.
    pub unsafe struct UserInplaceSub: aclnnInplaceSub, aclnnInplaceSubGetWorkspaceSize;
    products: sub_products;
    dtypes: sub_dtypes;
    rule: rules::broadcast;

    /// `a = a − alpha·b`.
    pub fn user_sub_inplace<A, B>(
        a: inplace<A> = "selfRef",
        b: input<B> = "other",
        alpha: attr<Scalar> = "alpha",
    );

    /// Its plan.
    pub type UserInplaceSubPlan;
}

// SAFETY: aclnnInplaceSub's phase 1 is `(aclTensor *selfRef, const aclTensor *other,
// const aclScalar *alpha, uint64_t *, aclOpExecutor **)`, its phase 2 the common one, and
// it only reads `other`.
unsafe impl ascendcl::protocol::Promise for UserInplaceSub {}

/// What the device must give for `a − alpha·b`: the crate's reference of Add, alpha negated.
fn expected<T>(a: &ArrayD<T>, b: &ArrayD<T>, alpha: f64) -> ArrayD<T>
where
    T: ascendcl::element::Promote<T, Output = T>,
{
    reference::add(a.view(), b.view(), -alpha).unwrap()
}

#[test]
fn an_operator_declared_by_the_user_runs_on_the_simulator() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let a = array![[1.0f32, 2.5, -3.0], [0.1, 7.0, 1e6]].into_dyn();
    let b = array![[0.5f32, -1.0, 0.3], [2.0, 0.7, 3.0]].into_dyn();
    let (da, db) = (
        DeviceTensor::from_array(&s, &a).unwrap(),
        DeviceTensor::from_array(&s, &b).unwrap(),
    );
    let mut out = DeviceTensor::<f32>::zeros(&s, [2, 3]).unwrap();
    for alpha in [1.0, 0.5, -2.0] {
        user_sub(&da, &db, alpha, &mut out, &s).unwrap();
        let got: ArrayD<f32> = out.to_array(&s).unwrap();
        let p = judge(&got, &expected(&a, &b, alpha), DType::F32).unwrap();
        assert!(p.passed, "alpha {alpha}: {p:?}");
    }
    assert_eq!(
        out.to_array::<IxDyn>(&s).unwrap()[[0, 0]],
        1.0 + 2.0 * 0.5,
        "alpha −2 adds twice the other"
    );
    // Broadcasting [2, 1] against [3], f16, through a plan launched twice.
    let c: ArrayD<f16> = array![[10.0f32], [-0.3]].mapv(f16::from_f32).into_dyn();
    let d: ArrayD<f16> = array![1.0f32, 0.37, 2.9].mapv(f16::from_f32).into_dyn();
    let (dc, dd) = (
        DeviceTensor::from_array(&s, &c).unwrap(),
        DeviceTensor::from_array(&s, &d).unwrap(),
    );
    let mut wide = DeviceTensor::<f16>::zeros(&s, [2, 3]).unwrap();
    let mut plan: UserSubPlan<f16, f16, f16> = UserSubPlan::new(&dc, &dd, 3.0, &wide, &s).unwrap();
    for _ in 0..2 {
        plan.launch(&dc, &dd, &mut wide, &s).unwrap();
        let got: ArrayD<f16> = wide.to_array(&s).unwrap();
        assert_eq!(got.shape(), [2, 3]);
        let p = judge(&got, &expected(&c, &d, 3.0), DType::F16).unwrap();
        assert!(p.passed, "{p:?}");
    }
    // In place, with a broadcast other.
    let mut x = DeviceTensor::from_array(&s, &a).unwrap();
    let row = Array::from(vec![1.0f32, 2.0, 3.0]).into_dyn();
    let drow = DeviceTensor::from_array(&s, &row).unwrap();
    user_sub_inplace(&mut x, &drow, 0.25, &s).unwrap();
    let got: ArrayD<f32> = x.to_array(&s).unwrap();
    let p = judge(&got, &expected(&a, &row, 0.25), DType::F32).unwrap();
    assert!(p.passed, "{p:?}");
    // Bad input: typed errors naming the argument, before any C call.
    let before = ascend_sim::call_count("aclnnSubGetWorkspaceSize");
    let mut small = DeviceTensor::<f32>::zeros(&s, [2, 1]).unwrap();
    assert!(matches!(
        user_sub(&da, &db, 1.0, &mut small, &s),
        Err(Error::ShapeMismatch {
            argument: "out",
            ..
        })
    ));
    let e = user_sub(
        &da,
        drow.view().slice(0, 0, 2, 1).unwrap(),
        1.0,
        &mut out,
        &s,
    )
    .unwrap_err();
    assert!(e.to_string().contains("other"), "{e}");
    assert_eq!(ascend_sim::call_count("aclnnSubGetWorkspaceSize"), before);
    assert_eq!(UserSub::NAME, "aclnnSub");
    assert_eq!(UserInplaceSub::NAME, "aclnnInplaceSub");
    assert!(!UserSub::available_on(SocFamily::Inference310P));
    assert!(UserSub::available_on(SocFamily::Atlas310B));
    drop(plan);
    s.synchronize().unwrap();
}

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

// SAFETY: aclnnMul's phase 1 is `(const aclTensor *self, const aclTensor *other,
// aclTensor *out, uint64_t *, aclOpExecutor **)`, its phase 2 the common one, and it only
// reads `self` and `other`.
unsafe impl ascendcl::protocol::Promise for UserMul {}

#[test]
fn an_operator_declared_in_a_user_crate_runs_with_the_crates_checks() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let a = DeviceTensor::from_array(&s, &array![[1.0f32, 2.0], [3.0, 4.0]]).unwrap();
    let b = DeviceTensor::from_array(&s, &array![2.0f32, -1.0]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2, 2]).unwrap();
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
    let mut small = DeviceTensor::<f32>::zeros(&s, [2, 1]).unwrap();
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

ascendcl::operator! {
    /// `aclnnInplaceAdd` declared from its header, which says `const aclTensor *selfRef`
    /// although the operator writes it.
    pub struct ConstSelfAdd: aclnnInplaceAdd, aclnnInplaceAddGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    dtypes: |_soc: SocFamily, _dtype: DType| true;
    rule: rules::broadcast;

    /// `a = a + alpha·b`, with `a` declared as an input.
    pub fn const_self_add<A, B>(
        a: input<A> = "selfRef",
        b: input<B> = "other",
        alpha: attr<Scalar> = "alpha",
    );

    /// Its plan.
    pub type ConstSelfAddPlan;
}

#[test]
fn a_checked_declaration_cannot_hide_a_write_from_another_streams_reader() {
    let _check = LeakCheck::start();
    let dev = device(A2);
    let (a, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let n = 4096;
    let x = DeviceTensor::from_array(&a, &Array::from_elem(n, 1.0f32)).unwrap();
    let one = DeviceTensor::from_array(&a, &Array::from_elem(n, 1.0f32)).unwrap();
    a.synchronize().unwrap();
    let hold = ascend_sim::testing::hold_stream(a.as_raw()).expect("a created stream");
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(150));
        hold.release();
    });
    const_self_add(&x, &one, 1.0, &a).unwrap(); // writes x on A, late
    let seen = x.to_array::<IxDyn>(&b).unwrap(); // read on B
    release.join().unwrap();
    assert!(
        seen.iter().all(|&v| v == 2.0),
        "B read x before A's write: {:?}",
        &seen.as_slice().unwrap()[..4]
    );
    a.synchronize().unwrap();
}

#[test]
fn a_forgotten_raw_access_still_holds_the_tensor_for_its_work() {
    // Leaks a descriptor and a block: no leak check may count them.
    let _serial = serial();
    let dev = device(A2);
    let (s, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let n = 4096;
    let mut x = DeviceTensor::from_array(&s, &Array::from_elem(n, 5.0f32)).unwrap();
    s.synchronize().unwrap();
    let phase1 = ascend_sim::symbol("aclnnInplaceZeroGetWorkspaceSize").unwrap();
    let phase2 = ascend_sim::symbol("aclnnInplaceZero").unwrap();
    let hold = ascend_sim::testing::hold_stream(s.as_raw()).expect("a created stream");
    {
        let mut whole = x.view_mut();
        // SAFETY: only aclnnInplaceZero is queued with the access, on `s`, over the view.
        let raw = unsafe { whole.raw_access_mut(&s).unwrap() };
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
        // Safe code may leak the access: the zeroing stays queued, held back.
        std::mem::forget(raw);
    }
    drop(x);
    let y = DeviceTensor::from_array(&b, &Array::from_elem(n, 1.0f32)).unwrap();
    hold.release();
    s.synchronize().unwrap();
    let got = y.to_array::<IxDyn>(&b).unwrap();
    assert!(
        got.iter().all(|&v| v == 1.0),
        "the new tensor's memory was written by the leaked access's work: {:?}",
        &got.as_slice().unwrap()[..4]
    );
}
