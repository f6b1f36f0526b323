//! Runs `N` steps of one of the caching allocator benchmark's loops (`benches/caching.rs`)
//! on the simulator, for instruction counting under callgrind (setup cancels out in the
//! difference of two runs with different `N`):
//!
//! ```sh
//! cargo build --release --example caching_probe
//! valgrind --tool=callgrind --separate-threads=yes \
//!     target/release/examples/caching_probe cached 1000 16
//! ```
//!
//! Variants: `pre` (`mish` into a preallocated output), `cached` (`mish_new`: the output
//! from the device's cache, dropped after the step), `raw` (`pre` plus an `aclrtMalloc`
//! and `aclrtFree` of the output's size; raw memory is freed after the synchronisation
//! that ends its work). The third argument is the number of steps queued per
//! synchronisation (1 unless given); 100 warm-up steps come first.

use ascendcl::{DeviceTensor, Runtime, mish, mish_new};
use ndarray::Array2;
use std::ffi::c_void;

fn main() -> ascendcl::Result<()> {
    let mut args = std::env::args().skip(1);
    let variant = args.next().unwrap_or_else(|| "cached".into());
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let per_sync: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1).max(1);
    let rt = Runtime::simulator()?;
    let dev = rt.device(0)?;
    let s = dev.stream()?;
    let x = DeviceTensor::from_array(&s, &Array2::<f32>::ones((16, 64)))?;
    let mut pre = DeviceTensor::<f32>::zeros(&s, [16, 64])?;
    let t = rt.api();
    let bytes = 16 * 64 * 4;
    let mut held: Vec<*mut c_void> = Vec::with_capacity(per_sync);
    let mut step = |held: &mut Vec<*mut c_void>| -> ascendcl::Result<()> {
        match variant.as_str() {
            "pre" => mish(&x, &mut pre, &s),
            "cached" => mish_new::<f32, DeviceTensor<f32>>(&x, &s).map(drop),
            "raw" => {
                let mut p: *mut c_void = std::ptr::null_mut();
                // SAFETY: a valid out-pointer; the device's context is current.
                assert_eq!(unsafe { (t.aclrtMalloc)(&mut p, bytes, 0) }, 0);
                held.push(p);
                mish(&x, &mut pre, &s)
            }
            other => panic!("unknown variant {other}: pre, cached or raw"),
        }
    };
    let sync = |held: &mut Vec<*mut c_void>| -> ascendcl::Result<()> {
        s.synchronize()?;
        for p in held.drain(..) {
            // SAFETY: allocated in `step`, unused by queued work (synchronised), freed once.
            assert_eq!(unsafe { (t.aclrtFree)(p) }, 0);
        }
        Ok(())
    };
    for i in 1..=100 + n {
        step(&mut held)?;
        if i % per_sync == 0 {
            sync(&mut held)?;
        }
    }
    sync(&mut held)
}
