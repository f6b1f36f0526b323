//! Runs `N` calls of one way of launching `aclnnMishBackward` on 1-element f32 tensors on
//! the simulator, for instruction counting under callgrind (setup cancels out in the
//! difference of two runs with different `N`):
//!
//! ```sh
//! cargo build --release --example overhead_probe
//! valgrind --tool=callgrind target/release/examples/overhead_probe safe 1000
//! valgrind --tool=callgrind target/release/examples/overhead_probe safe 2000
//! ```
//!
//! Variants: `raw` (the C sequence over the `ascend-sys` table: create descriptors →
//! phase 1 → workspace (cached; 0 bytes here) → phase 2 → destroy), `safe`
//! ([`ascendcl::mish_backward`] on whole tensors: their cached descriptors),
//! `safe-view` (the same on views with a layout of their own, `reshape(&[1])`, made once
//! before the loop: descriptors built per call, like `raw`), `plan` ([`ascendcl::MishBackwardPlan::launch`] on the same
//! tensors every call: no address rebinding), `plan-alt` (the plan alternating between two
//! sets of tensors: all three addresses rebound every call). The same three ways for
//! `aclnnAdd` (alpha 1.0: an `aclScalar` per call) and `aclnnMatmul` ((1,1)·(1,1),
//! `KEEP_DTYPE`): `raw-add`, `safe-add`, `plan-add`, `raw-matmul`, `safe-matmul`,
//! `plan-matmul`; for `aclnnClamp` (min 0.0: an `aclScalar`, max absent) `safe-clamp`,
//! `plan-clamp`. With the device's executor cache: `cached`, `cached-add`,
//! `cached-matmul`, `cached-clamp` (every call alike: a hit), and `miss-add`,
//! `miss-matmul`, `miss-clamp` (a one-entry cache and two attribute values taking turns:
//! every call misses, runs phase 1 for a repeatable executor and evicts the other). Every
//! variant synchronises the stream every 64 calls and at the end,
//! after 100 warm-up calls.

use ascend_sys::{FnTable, aclOpExecutor, aclScalar, aclTensor};
use ascendcl::{
    AddPlan, ClampPlan, CubeMath, DeviceTensor, MatmulPlan, MishBackwardPlan, Runtime, add, clamp,
    matmul, mish_backward,
};
use std::ffi::c_void;

#[path = "../tests/common/raw_entry.rs"]
mod raw_entry;
use raw_entry::mish_backward_fns;

/// `aclnnAddGetWorkspaceSize`'s prototype.
type AddPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclScalar,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> ascend_sys::aclnnStatus;

/// `aclnnMatmulGetWorkspaceSize`'s prototype.
type MatmulPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *mut aclTensor,
    i8,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> ascend_sys::aclnnStatus;

/// The address of an operator entry point, looked up by name as a C program would.
fn symbol(api: &ascend_sys::Api, name: &str) -> *mut c_void {
    api.operator_symbol(name)
        .unwrap_or_else(|| panic!("no {name}"))
        .as_ptr()
}

fn main() -> ascendcl::Result<()> {
    let mut args = std::env::args().skip(1);
    let variant = args.next().unwrap_or_else(|| "safe".into());
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let rt = Runtime::simulator()?;
    let device = rt.device(0)?;
    // `cached-*`: the executor cache on, every call alike (a hit after the first);
    // `miss-*`: a cache of one entry and two keys taking turns, so every call misses,
    // runs phase 1 and evicts the other key's executor.
    let (capacity, alternate) = match variant.split('-').next() {
        Some("cached") => (64, false),
        Some("miss") => (1, true),
        _ => (0, false),
    };
    device.set_executor_cache_capacity(capacity);
    let turn = move |i: u64| alternate && i % 2 == 1;
    let stream = device.stream()?;
    let g = DeviceTensor::<f32>::zeros(&stream, [1])?;
    let x = DeviceTensor::<f32>::zeros(&stream, [1])?;
    let mut out = DeviceTensor::<f32>::zeros(&stream, [1])?;
    let g2 = DeviceTensor::<f32>::zeros(&stream, [1])?;
    let x2 = DeviceTensor::<f32>::zeros(&stream, [1])?;
    let mut out2 = DeviceTensor::<f32>::zeros(&stream, [1])?;
    let mut plan = MishBackwardPlan::new(&g, &x, &out, &stream)?;
    // Views with a layout of their own (not the whole tensor's), made once: per-call
    // descriptors.
    let g3 = DeviceTensor::<f32>::zeros(&stream, [1])?;
    let x3 = DeviceTensor::<f32>::zeros(&stream, [1])?;
    let mut out3 = DeviceTensor::<f32>::zeros(&stream, [1])?;
    let (gv, xv) = (g3.view().reshape([1])?, x3.view().reshape([1])?);
    let mut ov = out3.view_mut().reshape([1])?;

    let t: &'static FnTable = rt.api();
    let (phase1, phase2) = mish_backward_fns(rt.api());
    let mut bufs = [std::ptr::null_mut::<c_void>(); 3];
    for p in &mut bufs {
        // SAFETY: valid out-pointer; the device's context is current on this thread.
        unsafe {
            assert_eq!((t.aclrtMalloc)(p, 32, 0), 0);
            assert_eq!((t.aclrtMemset)(*p, 32, 0, 32), 0);
        }
    }
    let mut add_plan = AddPlan::new(&g, &x, 1.0, &out, &stream)?;
    let (a2, b2) = (
        DeviceTensor::<f32>::zeros(&stream, [1, 1])?,
        DeviceTensor::<f32>::zeros(&stream, [1, 1])?,
    );
    let mut c2 = DeviceTensor::<f32>::zeros(&stream, [1, 1])?;
    let keep = CubeMath::KeepDtype;
    let mut matmul_plan = MatmulPlan::new(&a2, &b2, &c2, keep, &stream)?;
    let mut clamp_plan = ClampPlan::new(&g, Some(0.0.into()), None, &out, &stream)?;
    let alpha = |i: u64| if turn(i) { 2.0 } else { 1.0 };
    let math = |i: u64| {
        if turn(i) {
            CubeMath::AllowFp32DownPrecision
        } else {
            keep
        }
    };
    // SAFETY: the symbols of these names have exactly these prototypes.
    let (add1, add2, mm1, mm2) = unsafe {
        (
            std::mem::transmute::<*mut c_void, AddPhase1>(symbol(
                rt.api(),
                "aclnnAddGetWorkspaceSize",
            )),
            std::mem::transmute::<*mut c_void, ascend_sys::OperatorLaunchFn>(symbol(
                rt.api(),
                "aclnnAdd",
            )),
            std::mem::transmute::<*mut c_void, MatmulPhase1>(symbol(
                rt.api(),
                "aclnnMatmulGetWorkspaceSize",
            )),
            std::mem::transmute::<*mut c_void, ascend_sys::OperatorLaunchFn>(symbol(
                rt.api(),
                "aclnnMatmul",
            )),
        )
    };
    let attrs = *rt.api().attrs();
    let (create_scalar, destroy_scalar) = (
        attrs.aclCreateScalar.expect("aclCreateScalar"),
        attrs.aclDestroyScalar.expect("aclDestroyScalar"),
    );
    let dims = [1i64];
    let dims2 = [1i64, 1];
    let raw_stream = stream.as_raw();
    // The three descriptors of a raw call, of `ndim` dims of size 1.
    let descriptors = |ndim: usize| {
        let mut d: [*mut aclTensor; 3] = [std::ptr::null_mut(); 3];
        for (slot, p) in d.iter_mut().zip(bufs) {
            // SAFETY: valid arrays of `ndim` elements, a live allocation of 1 f32.
            *slot = unsafe {
                (t.aclCreateTensor)(
                    dims2.as_ptr(),
                    ndim as u64,
                    ascend_sys::ACL_FLOAT,
                    dims2.as_ptr(),
                    0,
                    ascend_sys::ACL_FORMAT_ND,
                    dims.as_ptr(),
                    1,
                    p,
                )
            };
            assert!(!slot.is_null());
        }
        d
    };
    let destroy = |d: [*mut aclTensor; 3]| {
        for p in d {
            // SAFETY: descriptors made by `descriptors`, destroyed once.
            assert_eq!(unsafe { (t.aclDestroyTensor)(p) }, 0);
        }
    };
    let raw_add = || {
        let d = descriptors(1);
        let mut alpha = 1.0f64;
        // SAFETY: a live f64.
        let s = unsafe { create_scalar((&raw mut alpha).cast(), ascend_sys::ACL_DOUBLE) };
        assert!(!s.is_null());
        let mut ws = 0u64;
        let mut ex: *mut aclOpExecutor = std::ptr::null_mut();
        // SAFETY: live handles, valid out-pointers.
        let s1 = unsafe { add1(d[0], d[1], s, d[2], &mut ws, &mut ex) };
        assert_eq!((s1, ws), (0, 0));
        // SAFETY: fresh executor; no workspace is needed; live stream.
        assert_eq!(unsafe { add2(std::ptr::null_mut(), 0, ex, raw_stream) }, 0);
        // SAFETY: made above, destroyed once, after phase 2 returned.
        assert_eq!(unsafe { destroy_scalar(s) }, 0);
        destroy(d);
    };
    let raw_matmul = || {
        let d = descriptors(2);
        let mut ws = 0u64;
        let mut ex: *mut aclOpExecutor = std::ptr::null_mut();
        // SAFETY: live descriptors, valid out-pointers.
        let s1 = unsafe { mm1(d[0], d[1], d[2], 0, &mut ws, &mut ex) };
        assert_eq!((s1, ws), (0, 0));
        // SAFETY: fresh executor; no workspace is needed; live stream.
        assert_eq!(unsafe { mm2(std::ptr::null_mut(), 0, ex, raw_stream) }, 0);
        destroy(d);
    };
    let raw = || {
        let mut d: [*mut aclTensor; 3] = [std::ptr::null_mut(); 3];
        for (slot, p) in d.iter_mut().zip(bufs) {
            // SAFETY: valid 1-element arrays, a live allocation of 1 f32.
            *slot = unsafe {
                (t.aclCreateTensor)(
                    dims.as_ptr(),
                    1,
                    ascend_sys::ACL_FLOAT,
                    dims.as_ptr(),
                    0,
                    ascend_sys::ACL_FORMAT_ND,
                    dims.as_ptr(),
                    1,
                    p,
                )
            };
            assert!(!slot.is_null());
        }
        let mut ws = 0u64;
        let mut ex: *mut aclOpExecutor = std::ptr::null_mut();
        // SAFETY: live descriptors, valid out-pointers.
        let s1 = unsafe { phase1(d[0], d[1], d[2], &mut ws, &mut ex) };
        assert_eq!((s1, ws), (0, 0));
        // SAFETY: fresh executor; no workspace is needed; live stream.
        let s2 = unsafe { phase2(std::ptr::null_mut(), 0, ex, raw_stream) };
        assert_eq!(s2, 0);
        for p in d {
            // SAFETY: descriptors made above, destroyed once.
            assert_eq!(unsafe { (t.aclDestroyTensor)(p) }, 0);
        }
    };

    let mut call = |i: u64| -> ascendcl::Result<()> {
        match variant.as_str() {
            "raw" => raw(),
            "safe" => mish_backward(&g, &x, &mut out, &stream)?,
            "safe-view" => mish_backward(gv, xv, &mut ov, &stream)?,
            "plan" => plan.launch(&g, &x, &mut out, &stream)?,
            "plan-alt" if i.is_multiple_of(2) => plan.launch(&g, &x, &mut out, &stream)?,
            "plan-alt" => plan.launch(&g2, &x2, &mut out2, &stream)?,
            "raw-add" => raw_add(),
            "safe-add" => add(&g, &x, 1.0, &mut out, &stream)?,
            "plan-add" => add_plan.launch(&g, &x, &mut out, &stream)?,
            "raw-matmul" => raw_matmul(),
            "safe-matmul" => matmul(&a2, &b2, &mut c2, keep, &stream)?,
            "plan-matmul" => matmul_plan.launch(&a2, &b2, &mut c2, &stream)?,
            "safe-clamp" => clamp(&g, Some(0.0.into()), None, &mut out, &stream)?,
            "plan-clamp" => clamp_plan.launch(&g, &mut out, &stream)?,
            "cached" => mish_backward(&g, &x, &mut out, &stream)?,
            "cached-add" | "miss-add" => add(&g, &x, alpha(i), &mut out, &stream)?,
            "cached-matmul" | "miss-matmul" => matmul(&a2, &b2, &mut c2, math(i), &stream)?,
            "cached-clamp" | "miss-clamp" => {
                clamp(&g, Some((alpha(i) - 1.0).into()), None, &mut out, &stream)?
            }
            other => {
                return Err(ascendcl::Error::InvalidArgument(format!(
                    "unknown variant {other:?} (raw, safe, safe-view, plan, plan-alt, \
                     raw-add, safe-add, plan-add, raw-matmul, safe-matmul, plan-matmul, safe-clamp, \
                     plan-clamp, cached, cached-add, cached-matmul, cached-clamp, \
                     miss-add, miss-matmul, miss-clamp)"
                )));
            }
        }
        if (i + 1).is_multiple_of(64) {
            stream.synchronize()?;
        }
        Ok(())
    };
    for i in 0..100 {
        call(i)?;
    }
    stream.synchronize()?;
    for i in 0..n {
        call(i)?;
    }
    stream.synchronize()?;
    drop((plan, add_plan, matmul_plan, clamp_plan));
    for p in bufs {
        // SAFETY: allocated above; the stream is synchronised.
        unsafe { (t.aclrtFree)(p) };
    }
    println!("{variant}: {n} calls");
    Ok(())
}
