//! HCCL through the real loading path: a toolkit directory whose `lib64/` links CANN's
//! three libraries and `libhccl.so` to the simulator's cdylib, `Runtime::cann_with` on it,
//! then communicators and collectives of four ranks through `dlopen`ed HCCL, with the live
//! communicators read from the *loaded* library (`ascendSimGetHcclCounters` via dlsym).
//! One `#[test]`: it sets environment variables before the loaded simulator reads them.

mod hccl_common;

use ascend_sim::hccl::HcclCounters;
use ascend_sys::hccl::{HCCL_LIBRARY, HcclOrigin};
use ascendcl::hccl::{Communicator, ReduceOp};
use ascendcl::{Backend, DeviceTensor, Runtime};
use hccl_common::on_ranks;
use ndarray::Array1;
use std::ffi::{CString, c_char, c_int, c_void};

unsafe extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}
const RTLD_NOW: c_int = 2;

#[test]
fn collectives_through_a_dlopened_libhccl() {
    let sim = ascend_sim::testing::cdylib_path().expect("the simulator's cdylib");
    let root = std::env::temp_dir().join(format!("ascendcl-hccl-toolkit-{}", std::process::id()));
    let lib64 = root.join("lib64");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&lib64).unwrap();
    for name in ascend_sys::LIBRARIES.iter().chain([&HCCL_LIBRARY]) {
        std::os::unix::fs::symlink(&sim, lib64.join(name)).unwrap();
    }
    // SAFETY: the single test of this binary, before anything reads the variable.
    unsafe { std::env::set_var("ASCEND_SIM_DEVICES", hccl_common::FOUR_A2) };
    let rt = Runtime::cann_with(&ascend_sys::LoadOptions::from_dir(&root)).expect("CANN");
    assert_eq!(rt.backend(), Backend::Cann);
    let hccl = rt.hccl().expect("libhccl.so beside the runtime");
    assert_eq!(
        hccl.origin(),
        &HcclOrigin::Loaded {
            path: lib64.join(HCCL_LIBRARY)
        }
    );

    let path = CString::new(lib64.join(HCCL_LIBRARY).as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path of a library already loaded (another reference to it)
    // and a NUL-terminated symbol name; the simulator exports the function with this
    // prototype.
    let counters = unsafe {
        let handle = dlopen(path.as_ptr(), RTLD_NOW);
        assert!(!handle.is_null());
        let f = dlsym(handle, c"ascendSimGetHcclCounters".as_ptr());
        assert!(!f.is_null());
        std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut HcclCounters) -> i32>(f)
    };
    let live = || {
        let mut c = HcclCounters::default();
        // SAFETY: a valid out-pointer.
        assert_eq!(unsafe { counters(&mut c) }, 0);
        c
    };

    let devices: Vec<_> = (0..4).map(|i| rt.device(i).unwrap()).collect();
    let comms = Communicator::init_all(&devices).unwrap();
    assert_eq!(live().communicators, 4);
    let sums = on_ranks(&comms, |comm, stream| {
        let send =
            DeviceTensor::from_array(stream, &Array1::from_elem(1000, comm.rank() as f32)).unwrap();
        let mut recv = DeviceTensor::<f32>::zeros(stream, [1000]).unwrap();
        comm.all_reduce(&send, &mut recv, ReduceOp::Sum, stream)
            .unwrap();
        recv.to_array::<ndarray::IxDyn>(stream).unwrap()
    });
    for s in sums {
        assert!(s.iter().all(|&v| v == 6.0));
    }
    drop(comms);
    assert_eq!(live(), HcclCounters::default());
    let _ = std::fs::remove_dir_all(&root);
}
