//! Registration: found by name, listed, idempotent, refused for a name the simulator has
//! or for a declaration an executor cannot hold, safe from many threads, and done by the
//! first call of an entry point.

use super::*;

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
    static MANY: aclnnUserMany, aclnnUserManyGetWorkspaceSize(
        a: input, b: input, c: input, d: input, e: input, f: input, g: input, h: input, out: output
    );
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
        (&MANY, "8 tensor slots"),
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
