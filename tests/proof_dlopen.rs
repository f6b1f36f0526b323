//! The real loading path: a toolkit directory whose `lib64/` links `libascendcl.so`,
//! `libnnopbase.so` and `libopapi.so` to the simulator's cdylib, found through
//! `ASCEND_HOME_PATH`, then `Runtime::cann()` — and the end-to-end suite that way: a
//! property run (all 27 dtype triples), a fault-injection sweep on the operator's path and
//! leak accounting read from the *loaded* library (`ascendSimGetCounters` via dlsym; the
//! cdylib's state is separate from any in-process simulator). One `#[test]`: it sets
//! environment variables and injects process-global faults.

mod common;

use ascendcl::{Backend, DeviceTensor, Error, Runtime, mish_backward};
use std::ffi::{CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};

unsafe extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}
const RTLD_NOW: c_int = 2;

/// `libascend_sim.so` with its C exports (found next to this executable, or built).
fn simulator_cdylib() -> PathBuf {
    ascend_sim::testing::cdylib_path().expect("the simulator's cdylib")
}

struct Loaded {
    counters: unsafe extern "C" fn(*mut ascend_sim::Counters) -> i32,
    set_fault: unsafe extern "C" fn(*const c_char, u64) -> i32,
    call_count: unsafe extern "C" fn(*const c_char) -> u64,
}

impl Loaded {
    fn open(path: &Path) -> Loaded {
        let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; the library is already loaded by the runtime, so
        // this only takes another reference to the same object.
        let h = unsafe { dlopen(c.as_ptr(), RTLD_NOW) };
        assert!(!h.is_null(), "dlopen {}", path.display());
        let sym = |name: &str| {
            let n = CString::new(name).unwrap();
            // SAFETY: valid handle and NUL-terminated name.
            let p = unsafe { dlsym(h, n.as_ptr()) };
            assert!(!p.is_null(), "{name} not exported");
            p
        };
        // SAFETY: the simulator exports these with exactly these C prototypes.
        unsafe {
            Loaded {
                counters: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(*mut ascend_sim::Counters) -> i32,
                >(sym("ascendSimGetCounters")),
                set_fault: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(*const c_char, u64) -> i32,
                >(sym("ascendSimSetFault")),
                call_count: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(*const c_char) -> u64,
                >(sym("ascendSimGetCallCount")),
            }
        }
    }
    fn live(&self) -> [u64; 5] {
        let mut c = ascend_sim::Counters::default();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { (self.counters)(&mut c) }, 0);
        [c.allocations, c.tensors, c.executors, c.streams, c.events]
    }
    fn fault(&self, symbol: &str, n: u64) {
        let s = CString::new(symbol).unwrap();
        // SAFETY: NUL-terminated name.
        assert_eq!(unsafe { (self.set_fault)(s.as_ptr(), n) }, 0);
    }
    fn calls(&self, symbol: &str) -> u64 {
        let s = CString::new(symbol).unwrap();
        // SAFETY: NUL-terminated name.
        unsafe { (self.call_count)(s.as_ptr()) }
    }
}

#[test]
fn the_suite_through_dlopen_and_ascend_home_path() {
    let sim = simulator_cdylib();
    let root = std::env::temp_dir().join(format!("ascendcl-proof-toolkit-{}", std::process::id()));
    let lib64 = root.join("lib64");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&lib64).unwrap();
    for name in ascend_sys::LIBRARIES {
        std::os::unix::fs::symlink(&sim, lib64.join(name)).unwrap();
    }
    // SAFETY: single test in this binary; set before anything reads them.
    unsafe {
        std::env::set_var("ASCEND_HOME_PATH", &root);
        std::env::remove_var("ASCEND_TOOLKIT_HOME");
        std::env::set_var("ASCEND_SIM_DEVICES", "Ascend910B4");
    }
    let rt = Runtime::cann().expect("CANN through ASCEND_HOME_PATH");
    assert_eq!(rt.backend(), Backend::Cann);
    let lib = Loaded::open(&lib64.join("libascendcl.so"));
    let base = lib.live();
    assert_eq!(base, [0; 5]);

    // Property run (representative subset) through the loaded library.
    {
        let device = rt.device(0).unwrap();
        assert_eq!(device.soc_name(), "Ascend910B4");
        let stream = device.stream().unwrap();
        let sizes = common::props::Sizes {
            cases: 256,
            max_out: 20_000,
            max_storage: None,
        };
        let tally = common::props::property_suite::<common::props_mish::MishBackwardOp>(
            &stream,
            device.soc_name(),
            sizes,
            "tests/proof_dlopen.proptest-regressions",
            "dlopen properties",
        )
        .unwrap();
        assert_eq!(tally.per_dtypes.len(), 27, "{:?}", tally.per_dtypes);
    }
    assert_eq!(lib.live(), base, "leak after the property run");

    // Fault sweep on the operator's own calls, counted in the loaded library.
    let workload = || -> ascendcl::Result<()> {
        let device = rt.device(0)?;
        let stream = device.stream()?;
        let g = DeviceTensor::from_array(
            &stream,
            &ndarray::ArrayD::<half::f16>::from_elem(ndarray::IxDyn(&[8, 1]), half::f16::ONE),
        )?;
        // Every second element: not a dense slice, so the upload is staged in pinned
        // memory and queued (`aclrtMallocHost`, `aclrtMemcpyAsync`).
        let x_host = ndarray::Array1::<f32>::from_elem(10, 0.5);
        let x = DeviceTensor::from_array(&stream, &x_host.slice(ndarray::s![..;2]))?;
        let mut out = DeviceTensor::<f32>::zeros(&stream, [8, 5])?;
        mish_backward(&g, &x, &mut out, &stream)?;
        let r = out.to_array::<ndarray::IxDyn>(&stream)?;
        let want: ndarray::ArrayD<f32> = ascendcl::reference::mish_backward(
            ndarray::ArrayD::<f32>::ones(ndarray::IxDyn(&[1])).view(),
            ndarray::ArrayD::<f32>::from_elem(ndarray::IxDyn(&[1]), 0.5).view(),
        )?;
        assert!(r.iter().all(|v| (v - want[[0]]).abs() <= 1e-6));
        Ok(())
    };
    let symbols: Vec<&str> = common::MISH_BACKWARD_CALLS
        .into_iter()
        .chain([
            "aclrtSynchronizeStream",
            "aclrtCreateStream",
            "aclrtSetDevice",
        ])
        .collect();
    let before: Vec<u64> = symbols.iter().map(|s| lib.calls(s)).collect();
    workload().unwrap();
    let (mut injected, mut survived) = (0, 0);
    for (s, b) in symbols.iter().zip(before) {
        let n_calls = lib.calls(s) - b;
        println!("dlopen: {s} called {n_calls} times by the workload");
        assert!(n_calls > 0, "{s} not called");
        for n in 1..=n_calls {
            let snapshot = lib.live();
            lib.fault(s, n);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(workload));
            lib.fault(s, 0);
            if matches!(r, Ok(Ok(()))) {
                if lib.live() == snapshot {
                    // The workload made fewer than n calls of `s`: the fault never fired.
                    break;
                }
                // A synchronisation failing inside a drop: documented leak of allocations only.
                injected += 1;
                if *s == "aclrtSynchronizeStream" && lib.live()[1..] == snapshot[1..] {
                    survived += 1;
                } else {
                    println!(
                        "dlopen fault {s}#{n}: Ok but live {:?} vs {:?}",
                        lib.live(),
                        snapshot
                    );
                }
                continue;
            }
            injected += 1;
            let named = match &r {
                Ok(Err(Error::Acl { api, .. })) | Ok(Err(Error::Aclnn { api, .. })) => api == s,
                _ => false,
            };
            // A failed synchronisation may leak what waited on it (documented); nothing else.
            let leak_ok = lib.live() == snapshot
                || (*s == "aclrtSynchronizeStream" && lib.live()[1..] == snapshot[1..]);
            if named && leak_ok {
                survived += 1;
            } else {
                println!(
                    "dlopen fault {s}#{n}: {r:?}, live {:?} vs {:?}",
                    lib.live(),
                    snapshot
                );
            }
        }
    }
    println!("dlopen fault injection: {injected} injected, {survived} survived");
    assert_eq!(injected, survived);
    let _ = std::fs::remove_dir_all(&root);
}
