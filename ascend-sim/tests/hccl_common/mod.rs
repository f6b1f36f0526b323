//! Helpers of the simulator's HCCL tests: the environment (five devices, a 400 ms
//! timeout), raw handles that cross threads, one thread per rank, and thin wrappers of the
//! C entry points.
#![allow(dead_code)]

use crate::common::*;
use ascend_sim::api;
use ascend_sim::hccl::HcclCounters;
use ascend_sys::hccl::*;
use ascend_sys::*;
use std::ffi::c_void;

pub const TIMEOUT_MS: u64 = 400;

/// The binary's [`serial`] guard, with the runtime initialised for HCCL: five devices
/// (four of one SoC, then a training-series one) and a [`TIMEOUT_MS`] rank timeout.
pub fn hccl_serial() -> Gate {
    let g = serial();
    init_with(&[
        (
            "ASCEND_SIM_DEVICES",
            "Ascend910B4,Ascend910B4,Ascend910B4,Ascend910B4,Ascend910A",
        ),
        ("ASCEND_SIM_HCCL_TIMEOUT_MS", "400"),
    ]);
    g
}

/// A raw handle that may cross threads (the simulator's handles are thread-agnostic).
#[derive(Clone, Copy)]
pub struct H(pub usize);
impl H {
    pub fn p<T>(self) -> *mut T {
        self.0 as *mut T
    }
}
pub fn h<T>(p: *mut T) -> H {
    H(p as usize)
}

/// `HcclCommInitAll` (which, like HCCL, needs a current device on the calling thread).
pub fn init_all(devices: &[i32]) -> Vec<H> {
    set_device(devices[0]);
    let mut ids = devices.to_vec();
    let mut comms = vec![std::ptr::null_mut(); devices.len()];
    // SAFETY: `ids` and `comms` hold `devices.len()` elements each.
    let rc =
        unsafe { api::HcclCommInitAll(ids.len() as u32, ids.as_mut_ptr(), comms.as_mut_ptr()) };
    assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
    reset_device(devices[0]);
    comms.into_iter().map(h).collect()
}

/// `HcclCommDestroy` (from a thread with a current device, as HCCL needs).
pub fn destroy(comm: H) {
    set_device(0);
    // SAFETY: a communicator handle.
    let rc = unsafe { api::HcclCommDestroy(comm.p()) };
    assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
    reset_device(0);
}

pub fn hccl_counters() -> HcclCounters {
    ascend_sim::hccl::counters()
}

/// Runs `f(rank, device)` on one thread per device (each with its device set, reset
/// afterwards), returning the results in rank order.
pub fn per_rank<R: Send>(devices: &[i32], f: impl Fn(usize, i32) -> R + Sync) -> Vec<R> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = devices
            .iter()
            .enumerate()
            .map(|(rank, &d)| {
                s.spawn(move || {
                    set_device(d);
                    let out = f(rank, d);
                    reset_device(d);
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread"))
            .collect()
    })
}

pub fn upload<T: Copy>(values: &[T]) -> *mut c_void {
    let p = malloc(std::mem::size_of_val(values).max(1));
    h2d(p, values);
    p
}

#[allow(clippy::too_many_arguments)]
pub fn all_reduce(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: HcclDataType,
    op: HcclReduceOp,
    comm: H,
    s: aclrtStream,
) -> HcclResult {
    // SAFETY: simulator handles and device pointers (or deliberately bad ones).
    unsafe { api::HcclAllReduce(send, recv, count, dt, op, comm.p(), s) }
}

/// Every rank's values: rank r, element i.
pub fn value(rank: usize, i: usize) -> f32 {
    ((rank * 7 + i * 3) % 11) as f32 * 0.25 - 1.0
}
