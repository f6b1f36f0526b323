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
//! sets of tensors: all three addresses rebound every call). Every variant synchronises
//! the stream every 64 calls and at the end, after 100 warm-up calls.

use ascend_sys::{FnTable, aclOpExecutor, aclTensor};
use ascendcl::{DeviceTensor, MishBackwardPlan, Runtime, mish_backward};
use std::ffi::c_void;

#[path = "../tests/common/raw_entry.rs"]
mod raw_entry;
use raw_entry::mish_backward_fns;

fn main() -> ascendcl::Result<()> {
    let mut args = std::env::args().skip(1);
    let variant = args.next().unwrap_or_else(|| "safe".into());
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let rt = Runtime::simulator()?;
    let stream = rt.device(0)?.stream()?;
    let g = DeviceTensor::<f32>::zeros(&stream, &[1])?;
    let x = DeviceTensor::<f32>::zeros(&stream, &[1])?;
    let mut out = DeviceTensor::<f32>::zeros(&stream, &[1])?;
    let g2 = DeviceTensor::<f32>::zeros(&stream, &[1])?;
    let x2 = DeviceTensor::<f32>::zeros(&stream, &[1])?;
    let mut out2 = DeviceTensor::<f32>::zeros(&stream, &[1])?;
    let mut plan = MishBackwardPlan::new(&g, &x, &out, &stream)?;
    // Views with a layout of their own (not the whole tensor's), made once: per-call
    // descriptors.
    let g3 = DeviceTensor::<f32>::zeros(&stream, &[1])?;
    let x3 = DeviceTensor::<f32>::zeros(&stream, &[1])?;
    let mut out3 = DeviceTensor::<f32>::zeros(&stream, &[1])?;
    let (gv, xv) = (g3.view().reshape(&[1])?, x3.view().reshape(&[1])?);
    let mut ov = out3.view_mut().reshape(&[1])?;

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
    let dims = [1i64];
    let raw_stream = stream.as_raw();
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
            other => {
                return Err(ascendcl::Error::InvalidArgument(format!(
                    "unknown variant {other:?} (raw, safe, safe-view, plan, plan-alt)"
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
    drop(plan);
    for p in bufs {
        // SAFETY: allocated above; the stream is synchronised.
        unsafe { (t.aclrtFree)(p) };
    }
    println!("{variant}: {n} calls");
    Ok(())
}
