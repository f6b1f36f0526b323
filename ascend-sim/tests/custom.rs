//! Operators a user simulates (`ascend_sim::custom`): registration (found by name, listed,
//! idempotent, refused for a name the simulator has, safe from many threads), the phase-1
//! checks the declaration adds to the shared steps, the kernel queued in order on the
//! stream with the executor protocol of shipped operators, and call counts and faults
//! under the C names.

mod common;

use ascend_sim::custom::{Checks, Kernel, RegisterError, Role};
use ascend_sim::sys::*;
use ascend_sim::{api, call_count, register, set_fault, simulated_symbols, symbol};
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

ascend_sim::simulated_operator! {
    /// `out = negate ? -(alpha·self + other + bias) : alpha·self + other + bias`, each
    /// element `times` times added: a test operator with every kind of value argument.
    static AXPY: aclnnUserAxpy, aclnnUserAxpyGetWorkspaceSize(
        self_: input = "self",
        other: input,
        alpha: scalar,
        bias: double,
        negate: bool,
        times: int,
        out: output,
    );
    checks: |c: &Checks<'_>| {
        c.require_dtype("self", &[ACL_FLOAT, ACL_FLOAT16])?;
        c.require_same_dtype("other", "self")?;
        c.require_same_shape("other", "self")?;
        if c.int("times")? < 1 {
            return Err(c.invalid(format!("times {} should be at least 1", c.int("times")?)));
        }
        c.require_cast(c.scalar_dtype("alpha")?, c.dtype("self")?)
    };
    output: |c: &Checks<'_>| {
        c.require_same_dtype("out", "self")?;
        c.require_same_shape("out", "self")
    };
    kernel: |k: &mut Kernel<'_>| {
        let (x, y) = (k.read_f64("self")?, k.read_f64("other")?);
        let (alpha, bias) = (k.scalar("alpha")?, k.scalar("bias")?);
        let (negate, times) = (k.flag("negate")?, k.int("times")?);
        let sign = if negate { -1.0 } else { 1.0 };
        let out: Vec<f64> = x
            .iter()
            .zip(&y)
            .map(|(x, y)| sign * (times as f64) * (alpha * x + y + bias))
            .collect();
        k.write_f64("out", &out)
    };
}

ascend_sim::simulated_operator! {
    /// `selfRef = 2·selfRef`, in place, read and written as stored f32.
    static DOUBLE: aclnnUserInplaceDouble, aclnnUserInplaceDoubleGetWorkspaceSize(
        self_ref: inplace = "selfRef",
    );
    output: |c: &Checks<'_>| c.require_dtype("selfRef", &[ACL_FLOAT]);
    kernel: |k: &mut Kernel<'_>| {
        let x: Vec<f32> = k.read("selfRef")?;
        k.write("selfRef", &x.iter().map(|v| 2.0 * v).collect::<Vec<_>>())
    };
}

ascend_sim::simulated_operator! {
    /// A kernel that writes one value too few: the stream reports it.
    static SHORT: aclnnUserShort, aclnnUserShortGetWorkspaceSize(self_: input = "self", out: output);
    output: |c: &Checks<'_>| c.require_same_shape("out", "self");
    kernel: |k: &mut Kernel<'_>| k.write_f64("out", &vec![0.0; k.len("out")? - 1]);
}

fn scalar_f32(v: f32) -> *mut aclScalar {
    let mut v = v;
    // SAFETY: `v` is a live f32 the simulator copies.
    let s = unsafe { api::aclCreateScalar((&raw mut v).cast(), ACL_FLOAT) };
    assert!(!s.is_null(), "{}", err_msg());
    s
}

fn destroy_scalar(s: *mut aclScalar) {
    // SAFETY: `s` came from aclCreateScalar.
    assert_eq!(unsafe { api::aclDestroyScalar(s) }, ACLNN_SUCCESS);
}

/// Phase 1 of AXPY through its generated C function: `(status, workspace, executor)`.
fn axpy_phase1(
    x: *mut aclTensor,
    y: *mut aclTensor,
    alpha: *mut aclScalar,
    (bias, negate, times): (f64, bool, i64),
    out: *mut aclTensor,
) -> (i32, u64, *mut aclOpExecutor) {
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: simulator handles or NULL, and valid out-pointers.
    let rc = unsafe {
        aclnnUserAxpyGetWorkspaceSize(x, y, alpha, bias, negate, times, out, &mut ws, &mut ex)
    };
    (rc, ws, ex)
}

fn axpy_phase2(ex: *mut aclOpExecutor, s: aclrtStream) -> i32 {
    // SAFETY: the executor is a simulator handle; no workspace is needed.
    unsafe { aclnnUserAxpy(null_mut(), 0, ex, s) }
}

/// Device buffers and tensors of one AXPY call over `x` and `y` (f32, shape [n]).
struct Axpy {
    bufs: [*mut c_void; 3],
    tensors: [*mut aclTensor; 3],
    alpha: *mut aclScalar,
}

impl Axpy {
    fn new(x: &[f32], y: &[f32], alpha: f32) -> Axpy {
        let n = x.len();
        let bufs = [malloc(4 * n), malloc(4 * n), malloc(4 * n)];
        h2d(bufs[0], x);
        h2d(bufs[1], y);
        let dims = [n as i64];
        let tensors = bufs.map(|b| tensor(&dims, ACL_FLOAT, b));
        Axpy {
            bufs,
            tensors,
            alpha: scalar_f32(alpha),
        }
    }

    fn phase1(&self, values: (f64, bool, i64)) -> (i32, u64, *mut aclOpExecutor) {
        let [x, y, out] = self.tensors;
        axpy_phase1(x, y, self.alpha, values, out)
    }

    fn out(&self, n: usize) -> Vec<f32> {
        d2h(self.bufs[2], n)
    }
}

impl Drop for Axpy {
    fn drop(&mut self) {
        self.tensors.iter().for_each(|&t| destroy_tensor(t));
        self.bufs.iter().for_each(|&b| free(b));
        destroy_scalar(self.alpha);
    }
}

fn expected(x: &[f32], y: &[f32], alpha: f32, (bias, negate, times): (f64, bool, i64)) -> Vec<f32> {
    let sign = if negate { -1.0 } else { 1.0 };
    x.iter()
        .zip(y)
        .map(|(&x, &y)| {
            (sign * times as f64 * (f64::from(alpha) * f64::from(x) + f64::from(y) + bias)) as f32
        })
        .collect()
}

#[test]
fn a_registered_operator_is_found_by_its_c_names_and_listed() {
    setup();
    register(&AXPY).unwrap();
    let p1 = symbol("aclnnUserAxpyGetWorkspaceSize").expect("phase 1 is found");
    let p2 = symbol("aclnnUserAxpy").expect("phase 2 is found");
    assert_eq!(p1, aclnnUserAxpyGetWorkspaceSize as *const c_void);
    assert_eq!(p2, aclnnUserAxpy as *const c_void);
    let all = simulated_symbols();
    assert!(all.contains(&"aclnnUserAxpyGetWorkspaceSize") && all.contains(&"aclnnUserAxpy"));
    assert!(AXPY.is_registered());
    assert_eq!(AXPY.name(), "aclnnUserAxpy");
    assert_eq!(AXPY.phase1_name(), "aclnnUserAxpyGetWorkspaceSize");
    let roles: Vec<_> = AXPY.params().iter().map(|p| (p.name, p.role)).collect();
    assert_eq!(
        roles,
        [
            ("self", Role::Input),
            ("other", Role::Input),
            ("alpha", Role::Scalar),
            ("bias", Role::Double),
            ("negate", Role::Bool),
            ("times", Role::Int),
            ("out", Role::Output),
        ]
    );
}

#[test]
fn registering_again_changes_nothing() {
    setup();
    register(&DOUBLE).unwrap();
    let before = simulated_symbols();
    for _ in 0..3 {
        register(&DOUBLE).unwrap();
    }
    assert_eq!(simulated_symbols(), before);
    let n = before
        .iter()
        .filter(|s| **s == "aclnnUserInplaceDouble")
        .count();
    assert_eq!(n, 1);
}

ascend_sim::simulated_operator! {
    /// `aclnnExp`, which a family of the simulator ships.
    static EXP: aclnnExp, aclnnExpGetWorkspaceSize(self_: input = "self", out: output);
    output: |c: &Checks<'_>| c.require_same_shape("out", "self");
    kernel: |_k: &mut Kernel<'_>| Ok(());
}

ascend_sim::simulated_operator! {
    /// `aclnnMish`, which the simulator's entry list ships.
    static MISH: aclnnMish, aclnnMishGetWorkspaceSize(self_: input = "self", out: output);
    output: |c: &Checks<'_>| c.require_same_shape("out", "self");
    kernel: |_k: &mut Kernel<'_>| Ok(());
}

#[test]
fn a_shipped_operator_cannot_be_replaced() {
    setup();
    let exp = symbol("aclnnExp").unwrap();
    let mish = symbol("aclnnMishGetWorkspaceSize").unwrap();
    for (op, name) in [(&EXP, "aclnnExp"), (&MISH, "aclnnMish")] {
        let e = register(op).unwrap_err();
        assert!(
            matches!(e, RegisterError::AlreadySimulated { shipped: true, name: n } if n.starts_with(name)),
            "{e:?}"
        );
        assert!(e.to_string().contains("ships"), "{e}");
        assert!(!op.is_registered());
    }
    assert_eq!(symbol("aclnnExp"), Some(exp));
    assert_eq!(symbol("aclnnMishGetWorkspaceSize"), Some(mish));
    // Its entry point refuses to run rather than shadow the shipped one.
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: NULL tensors are checked; the out-pointers are valid.
    let rc = unsafe { aclnnExpGetWorkspaceSize(null(), null_mut(), &mut ws, &mut ex) };
    assert_eq!(rc, ACLNN_ERR_INNER);
    assert_err_msg_contains(&["aclnnExp", "ships"]);
}

ascend_sim::simulated_operator! {
    static TWIN_A: aclnnUserTwin, aclnnUserTwinGetWorkspaceSize(self_: input = "self", out: output);
    output: |c: &Checks<'_>| c.require_same_shape("out", "self");
    kernel: |k: &mut Kernel<'_>| k.write_f64("out", &k.read_f64("self")?);
}

/// A second declaration of the same C names (in a module of its own, as in another crate).
mod twin {
    use super::*;
    ascend_sim::simulated_operator! {
        pub static TWIN_B: aclnnUserTwin, aclnnUserTwinGetWorkspaceSize(self_: input = "self", out: output);
        output: |c: &Checks<'_>| c.require_same_shape("out", "self");
        kernel: |k: &mut Kernel<'_>| k.write_f64("out", &vec![0.0; k.len("out")?]);
    }
}
use twin::TWIN_B;

type TwinPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type Phase2 = unsafe extern "C" fn(*mut c_void, u64, *mut aclOpExecutor, aclrtStream) -> i32;

#[test]
fn two_declarations_race_for_one_name_and_exactly_one_wins() {
    setup();
    let racers: Vec<_> = (0..8)
        .map(|k| {
            std::thread::spawn(move || {
                let op = if k % 2 == 0 { &TWIN_A } else { &TWIN_B };
                (k % 2, register(op))
            })
        })
        .collect();
    let results: Vec<_> = racers.into_iter().map(|t| t.join().unwrap()).collect();
    let winner = usize::from(TWIN_B.is_registered());
    assert_ne!(TWIN_A.is_registered(), TWIN_B.is_registered());
    for (who, r) in results {
        if who == winner {
            assert_eq!(r, Ok(()), "the winner's every registration succeeds");
        } else {
            let lost = RegisterError::AlreadySimulated {
                name: "aclnnUserTwin",
                shipped: false,
            };
            assert_eq!(r, Err(lost));
        }
    }
    let names = simulated_symbols();
    assert_eq!(names.iter().filter(|s| **s == "aclnnUserTwin").count(), 1);
    // The winner's kernel is the one that runs.
    let x = malloc(8);
    h2d(x, &[1.5f32, -2.0]);
    let out = malloc(8);
    let (tx, tout) = (tensor(&[2], ACL_FLOAT, x), tensor(&[2], ACL_FLOAT, out));
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: the registered functions of these names have these prototypes; live
    // tensors and valid out-pointers; the phase 2 gets the executor.
    unsafe {
        let p1: TwinPhase1 = std::mem::transmute(symbol("aclnnUserTwinGetWorkspaceSize").unwrap());
        let p2: Phase2 = std::mem::transmute(symbol("aclnnUserTwin").unwrap());
        assert_eq!(p1(tx, tout, &mut ws, &mut ex), 0);
        assert_eq!(p2(null_mut(), 0, ex, null_mut()), 0);
    }
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    let want = if winner == 0 {
        [1.5f32, -2.0]
    } else {
        [0.0, 0.0]
    };
    assert_eq!(d2h::<f32>(out, 2), want);
    [tx, tout].into_iter().for_each(destroy_tensor);
    [x, out].into_iter().for_each(free);
}

ascend_sim::simulated_operator! {
    static MANY: aclnnUserMany, aclnnUserManyGetWorkspaceSize(a: input, b: input, c: input, d: input, out: output);
    output: |c: &Checks<'_>| c.require_same_shape("out", "a");
    kernel: |_k: &mut Kernel<'_>| Ok(());
}

ascend_sim::simulated_operator! {
    static NO_OUTPUT: aclnnUserNoOutput, aclnnUserNoOutputGetWorkspaceSize(a: input);
    output: |_c: &Checks<'_>| Ok(());
    kernel: |_k: &mut Kernel<'_>| Ok(());
}

ascend_sim::simulated_operator! {
    static MISNAMED: aclnnUserMisnamed, aclnnUserOtherGetWorkspaceSize(a: input, out: output);
    output: |_c: &Checks<'_>| Ok(());
    kernel: |_k: &mut Kernel<'_>| Ok(());
}

#[test]
fn a_declaration_the_executor_cannot_hold_is_refused() {
    setup();
    for (op, why) in [
        (&MANY, "4 tensor slots"),
        (&NO_OUTPUT, "no output"),
        (&MISNAMED, "aclnnUserMisnamedGetWorkspaceSize"),
    ] {
        match register(op) {
            Err(RegisterError::Invalid(m)) => assert!(m.contains(why), "{m}"),
            other => panic!("{}: {other:?}", op.name()),
        }
        assert!(symbol(op.name()).is_none());
        assert!(
            set_fault(op.name(), 1).is_err(),
            "an unregistered name has no fault slot"
        );
    }
}

#[test]
fn concurrent_registrations_of_many_operators_each_take_one_entry() {
    setup();
    let threads: Vec<_> = (0..6)
        .map(|k| {
            std::thread::spawn(move || {
                for op in [&AXPY, &DOUBLE, &SHORT] {
                    register(op).unwrap();
                }
                k
            })
        })
        .collect();
    threads.into_iter().for_each(|t| {
        t.join().unwrap();
    });
    let names = simulated_symbols();
    for op in [&AXPY, &DOUBLE, &SHORT] {
        assert_eq!(names.iter().filter(|s| **s == op.name()).count(), 1);
        assert_eq!(names.iter().filter(|s| **s == op.phase1_name()).count(), 1);
    }
}

#[test]
fn the_kernel_runs_in_order_on_the_stream_with_its_fixed_arguments() {
    // Faults armed on AXPY's symbols by another test must not hit this one.
    let _serial = serial();
    setup();
    register(&AXPY).unwrap();
    let (x, y) = ([1.0f32, -2.5, 3.25, 1e3], [0.5f32, 4.0, -1.0, 2.0]);
    let call = Axpy::new(&x, &y, 2.0);
    let values = (0.25, true, 3);
    let (rc, ws, ex) = call.phase1(values);
    assert_eq!((rc, ws), (ACLNN_SUCCESS, 0), "{}", err_msg());
    // The kernel waits for the work queued before it, and the copy after it sees its result.
    let s = create_stream();
    let hold = ascend_sim::testing::hold_stream(s).expect("a created stream");
    assert_eq!(axpy_phase2(ex, s), ACLNN_SUCCESS, "{}", err_msg());
    let mut host = [0f32; 4];
    let rc = memcpy_async(
        host.as_mut_ptr().cast(),
        16,
        call.bufs[2],
        16,
        ACL_MEMCPY_DEVICE_TO_HOST,
        s,
    );
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
    assert_eq!(host, [0.0; 4], "nothing ran while the stream is held");
    hold.release();
    assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(host.to_vec(), expected(&x, &y, 2.0, values));
    // The executor was consumed, as a shipped operator's is.
    assert_consumed(ex);
    destroy_stream(s);
}

/// The executor is gone after its one phase 2.
fn assert_consumed(ex: *mut aclOpExecutor) {
    assert_double_release(ex, &["consumed by its phase-2 call"]);
}

#[test]
fn a_repeatable_executor_relaunches_with_rebound_addresses() {
    // Faults armed on AXPY's symbols by another test must not hit this one.
    let _serial = serial();
    setup();
    register(&AXPY).unwrap();
    let (x, y) = ([1.0f32, 2.0, 3.0], [10.0f32, 20.0, 30.0]);
    let call = Axpy::new(&x, &y, 1.0);
    let values = (0.0, false, 1);
    let (rc, _, ex) = call.phase1(values);
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    // SAFETY: a live executor.
    assert_eq!(unsafe { api::aclSetAclOpExecutorRepeatable(ex) }, 0);
    for _ in 0..2 {
        assert_eq!(axpy_phase2(ex, null_mut()), ACLNN_SUCCESS, "{}", err_msg());
    }
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(call.out(3), [11.0, 22.0, 33.0]);
    // Input index 1 is `other`, output index 0 is `out`: rebind both, launch again.
    let (other2, out2) = (malloc(12), malloc(12));
    h2d(other2, &[-1.0f32, -2.0, -3.0]);
    // SAFETY: live executor, tensors and device addresses.
    unsafe {
        assert_eq!(
            api::aclSetInputTensorAddr(ex, 1, call.tensors[1], other2),
            0,
            "{}",
            err_msg()
        );
        assert_eq!(
            api::aclSetOutputTensorAddr(ex, 0, call.tensors[2], out2),
            0,
            "{}",
            err_msg()
        );
        assert_eq!(
            api::aclSetInputTensorAddr(ex, 2, call.tensors[1], other2),
            ACLNN_ERR_PARAM_INVALID,
            "AXPY has two inputs"
        );
    }
    assert_eq!(axpy_phase2(ex, null_mut()), ACLNN_SUCCESS, "{}", err_msg());
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(d2h::<f32>(out2, 3), [0.0, 0.0, 0.0]);
    // SAFETY: a live repeatable executor.
    assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, 0);
    [other2, out2].into_iter().for_each(free);
}

#[test]
fn phase1_runs_the_shared_steps_then_the_declared_checks_in_order() {
    // Faults armed on AXPY's symbols by another test must not hit this one.
    let _serial = serial();
    setup();
    register(&AXPY).unwrap();
    let call = Axpy::new(&[1.0, 2.0], &[3.0, 4.0], 1.0);
    let [x, y, out] = call.tensors;
    let ok = (0.0, false, 1);
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: NULL out-pointers are checked before anything else.
    let rc = unsafe {
        aclnnUserAxpyGetWorkspaceSize(x, y, call.alpha, 0.0, false, 1, out, null_mut(), &mut ex)
    };
    assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["workspaceSize"]);
    // SAFETY: as above.
    let rc = unsafe {
        aclnnUserAxpyGetWorkspaceSize(x, y, call.alpha, 0.0, false, 1, out, &mut ws, null_mut())
    };
    assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["executor"]);
    // Pointer arguments in their order, by their vendor names.
    let (rc, ..) = axpy_phase1(null_mut(), null_mut(), null_mut(), ok, null_mut());
    assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["self is nullptr"]);
    let (rc, ..) = axpy_phase1(x, y, null_mut(), ok, null_mut());
    assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["alpha is nullptr"]);
    let (rc, ..) = axpy_phase1(x, y, call.alpha, ok, null_mut());
    assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["out is nullptr"]);
    // The declared checks: dtypes, shapes, values, then out's.
    let i32buf = malloc(8);
    let ints = tensor(&[2], ACL_INT32, i32buf);
    let (rc, ..) = axpy_phase1(ints, y, call.alpha, ok, out);
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &[
            "self dtype INT32 is not supported on Ascend910B4",
            "FLOAT16",
        ],
    );
    let (rc, ..) = axpy_phase1(x, ints, call.alpha, ok, out);
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["other dtype INT32 is not self's dtype FLOAT"],
    );
    let (rc, ..) = axpy_phase1(x, y, call.alpha, (0.0, false, 0), out);
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["times 0 should be at least 1"],
    );
    let (rc, ..) = axpy_phase1(x, y, call.alpha, ok, ints);
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["out dtype INT32 is not self's dtype FLOAT"],
    );
    let wide = tensor(&[1, 2], ACL_FLOAT, call.bufs[2]);
    let (rc, ..) = axpy_phase1(x, y, call.alpha, ok, wide);
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["out shape [1, 2] is not self's shape [2]"],
    );
    // A stale tensor handle is a finding, as for shipped operators.
    destroy_tensor(ints);
    let (rc, ..) = axpy_phase1(x, y, call.alpha, ok, ints);
    assert_eq!(rc, ACLNN_ERR_PARAM_INVALID, "{}", err_msg());
    assert!(ascend_sim::last_report().is_some_and(|r| r.contains("out")));
    destroy_tensor(wide);
    free(i32buf);
}

#[test]
fn faults_and_call_counts_work_under_the_c_names() {
    let _serial = serial();
    setup();
    register(&AXPY).unwrap();
    let call = Axpy::new(&[1.0], &[2.0], 1.0);
    let ok = (0.0, false, 1);
    let (p1, p2) = ("aclnnUserAxpyGetWorkspaceSize", "aclnnUserAxpy");
    let (n1, n2) = (call_count(p1), call_count(p2));
    set_fault(p1, 1).unwrap();
    let (rc, _, ex) = call.phase1(ok);
    assert_fails_with(rc, ACLNN_ERR_INNER_CREATE_EXECUTOR, &["injected fault", p1]);
    assert!(ex.is_null());
    let (rc, _, ex) = call.phase1(ok);
    assert_eq!(rc, ACLNN_SUCCESS, "the fault fired once: {}", err_msg());
    set_fault(p2, 1).unwrap();
    assert_fails_with(
        axpy_phase2(ex, null_mut()),
        ACLNN_ERR_RUNTIME_ERROR,
        &["injected fault", p2],
    );
    // Like a failed phase 2 on CANN, the fault released the executor.
    assert_released_by_failed_phase2(ex);
    let (_, _, ex) = call.phase1(ok);
    assert_eq!(axpy_phase2(ex, null_mut()), ACLNN_SUCCESS, "{}", err_msg());
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(call.out(1), [3.0]);
    assert_eq!(call_count(p1), n1 + 3);
    assert_eq!(call_count(p2), n2 + 2);
}

#[test]
fn an_in_place_operator_reads_and_writes_its_tensor_as_stored() {
    setup();
    register(&DOUBLE).unwrap();
    let buf = malloc(4 * 6);
    h2d(buf, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    // The transposed view of a 2×3 matrix: doubled through its strides.
    let t = tensor_view(&[3, 2], &[1, 3], 0, &[6], ACL_FLOAT, buf);
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: a live tensor and valid out-pointers; the phase 2 gets the executor.
    unsafe {
        assert_eq!(
            aclnnUserInplaceDoubleGetWorkspaceSize(t, &mut ws, &mut ex),
            0,
            "{}",
            err_msg()
        );
        assert_eq!(
            aclnnUserInplaceDouble(null_mut(), 0, ex, null_mut()),
            0,
            "{}",
            err_msg()
        );
    }
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(d2h::<f32>(buf, 6), [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
    // f16 is refused by the declaration's output check.
    let h = tensor(&[2], ACL_FLOAT16, buf);
    // SAFETY: as above.
    let rc = unsafe { aclnnUserInplaceDoubleGetWorkspaceSize(h, &mut ws, &mut ex) };
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["selfRef dtype FLOAT16 is not supported"],
    );
    [t, h].into_iter().for_each(destroy_tensor);
    free(buf);
}

#[test]
fn a_kernel_error_fails_the_stream_with_its_text() {
    setup();
    let (x, out) = (malloc(12), malloc(12));
    let (tx, tout) = (tensor(&[3], ACL_FLOAT, x), tensor(&[3], ACL_FLOAT, out));
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: live tensors and valid out-pointers; the phase 2 gets the executor.
    unsafe {
        assert_eq!(
            aclnnUserShortGetWorkspaceSize(tx, tout, &mut ws, &mut ex),
            0,
            "{}",
            err_msg()
        );
        assert_eq!(
            aclnnUserShort(null_mut(), 0, ex, null_mut()),
            0,
            "{}",
            err_msg()
        );
    }
    assert_fails_with(
        sync(null_mut()),
        ACL_ERROR_RT_INTERNAL_ERROR,
        &[
            "aclnnUserShort (queued)",
            "wrote 2 values to out, which has 3 elements",
        ],
    );
    [tx, tout].into_iter().for_each(destroy_tensor);
    [x, out].into_iter().for_each(free);
}

ascend_sim::simulated_operator! {
    /// Registered by the first call of its phase 1, by no test before.
    static LAZY: aclnnUserLazy, aclnnUserLazyGetWorkspaceSize(self_: input = "self", out: output);
    output: |c: &Checks<'_>| c.require_same_shape("out", "self");
    kernel: |k: &mut Kernel<'_>| k.write_f64("out", &k.read_f64("self")?.iter().map(|v| v + 1.0).collect::<Vec<_>>());
}

#[test]
fn calling_an_entry_point_registers_its_operator() {
    setup();
    assert!(!LAZY.is_registered());
    assert!(symbol("aclnnUserLazy").is_none());
    let (x, out) = (malloc(8), malloc(8));
    h2d(x, &[1.0f32, 2.0]);
    let (tx, tout) = (tensor(&[2], ACL_FLOAT, x), tensor(&[2], ACL_FLOAT, out));
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: live tensors and valid out-pointers.
    let rc = unsafe { aclnnUserLazyGetWorkspaceSize(tx, tout, &mut ws, &mut ex) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    assert!(LAZY.is_registered());
    assert_eq!(
        symbol("aclnnUserLazy"),
        Some(aclnnUserLazy as *const c_void)
    );
    assert_eq!(call_count("aclnnUserLazyGetWorkspaceSize"), 1);
    // SAFETY: the executor of this operator's phase 1.
    let rc = unsafe { aclnnUserLazy(null_mut(), 0, ex, null_mut()) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(d2h::<f32>(out, 2), [2.0, 3.0]);
    [tx, tout].into_iter().for_each(destroy_tensor);
    [x, out].into_iter().for_each(free);
}

#[test]
fn an_executor_of_a_user_operator_is_refused_by_another_operators_phase2() {
    // Faults armed on AXPY's symbols by another test must not hit this one.
    let _serial = serial();
    setup();
    register(&AXPY).unwrap();
    let call = Axpy::new(&[1.0], &[1.0], 1.0);
    let (rc, _, ex) = call.phase1((0.0, false, 1));
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    // SAFETY: a live executor, checked against its operator.
    let rc = unsafe { api::aclnnMish(null_mut(), 0, ex, null_mut()) };
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["made by the phase 1 of UserAxpy", "aclnnUserAxpy"],
    );
}
