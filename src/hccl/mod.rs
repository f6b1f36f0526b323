//! Collectives between devices over HCCL (`libhccl.so`), CANN's counterpart of NCCL.
//!
//! HCCL is a separate, optional library: a toolkit without it still gives a working
//! [`Runtime`](crate::Runtime), and only the calls here report
//! [`Error::HcclUnavailable`]. The layers mirror the rest of the crate: `ascend_sys::hccl`
//! holds the declarations and the function table, a checked layer wraps each HCCL
//! function once, and [`Communicator`], [`ReduceOp`] and [`RootInfo`] are the safe types.
//!
//! * A [`Communicator`] is one rank of a group of devices: [`Communicator::init_all`] makes
//!   one per device in one call (`HcclCommInitAll`), [`Communicator::from_root_info`] joins
//!   a group whose [`RootInfo`] rank 0 created and sent to the others over the user's own
//!   transport ([`RootInfo::as_bytes`] / [`RootInfo::from_bytes`]), and
//!   [`Communicator::from_env`] does that exchange for a job whose launcher sets `RANK`,
//!   `WORLD_SIZE`, `MASTER_ADDR` and `MASTER_PORT`, one process per device.
//! * Collectives are enqueued on a [`Stream`](crate::Stream) of the rank's device. On
//!   CANN, each rank's call meets the other ranks' calls, so **each rank is driven from its
//!   own thread** (one thread calling the ranks in turn waits for itself until HCCL's
//!   timeout). The collective completes once every rank's stream has reached it.
//! * Lengths, element types and devices are checked before any C call, with typed errors.
//!   Every rank must make the same calls in the same order, with the same counts,
//!   reductions and roots; HCCL reports a mismatch (`HCCL_E_PARA`) or a rank that never
//!   comes (`HCCL_E_TIMEOUT`) as [`Error::Hccl`].
//! * Besides the collectives, [`Communicator::all_reduce_inplace`] reduces one buffer in
//!   place, and [`Communicator::send`] / [`Communicator::recv`] move a buffer between two
//!   ranks (pipeline parallelism).
//! * A communicator whose collective timed out, or that reports an asynchronous error,
//!   refuses every later call at once with [`Error::CommunicatorFailed`] quoting the first
//!   failure: destroy it (drop) and make a new one (see
//!   [Failures](Communicator#failures)).
//! * Lifetimes: the buffers of a queued collective stay allocated until it has run (the
//!   crate's stream-ordered use tracking), and a dropped `Communicator` is destroyed with
//!   `HcclCommDestroy` after its queued collectives.
//!
//! ```
//! use ascendcl::hccl::{Communicator, ReduceOp};
//! use ascendcl::{DeviceTensor, Runtime};
//! use ndarray::Array1;
//!
//! # fn main() -> ascendcl::Result<()> {
//! let rt = Runtime::auto()?;
//! let devices = (0..rt.device_count()? as i32)
//!     .map(|id| rt.device(id))
//!     .collect::<ascendcl::Result<Vec<_>>>()?;
//! let comms = Communicator::init_all(&devices)?;
//! let n = comms.len() as f32;
//! // One thread per rank: each sums everyone's gradient shard.
//! std::thread::scope(|s| {
//!     let ranks: Vec<_> = comms
//!         .iter()
//!         .map(|comm| {
//!             s.spawn(move || -> ascendcl::Result<Vec<f32>> {
//!                 let stream = comm.device().stream()?;
//!                 let grad = Array1::from_elem(4, comm.rank() as f32 + 1.0);
//!                 let send = DeviceTensor::from_array(&stream, &grad)?;
//!                 let mut sum = DeviceTensor::<f32>::zeros(&stream, &[4])?;
//!                 comm.all_reduce(&send, &mut sum, ReduceOp::Sum, &stream)?;
//!                 Ok(sum.to_array::<ndarray::Ix1>(&stream)?.into_iter().collect())
//!             })
//!         })
//!         .collect();
//!     for rank in ranks {
//!         let sum = rank.join().expect("rank thread")?;
//!         assert!(sum.iter().all(|&v| v == n * (n + 1.0) / 2.0));
//!     }
//!     Ok::<(), ascendcl::Error>(())
//! })?;
//! # Ok(()) }
//! ```

mod collectives;
mod comm;
mod env;
mod result;

pub use comm::Communicator;
pub use env::RendezvousError;

use crate::device::Device;
use crate::error::{Error, Result};
use crate::runtime::RuntimeInner;
use ascend_sys::hccl::{
    HCCL_REDUCE_MAX, HCCL_REDUCE_MIN, HCCL_REDUCE_PROD, HCCL_REDUCE_SUM, HCCL_ROOT_INFO_BYTES,
    Hccl, HcclLoadError, HcclReduceOp, HcclRootInfo,
};
use std::fmt;
use std::sync::{Mutex, PoisonError};

/// Each runtime's HCCL, loaded on first use (runtimes live for the process, so do these).
type Loaded = (usize, Result<&'static Hccl, HcclLoadError>);
static LIBRARIES: Mutex<Vec<Loaded>> = Mutex::new(Vec::new());

/// The HCCL of the runtime `rt` (see [`Runtime::hccl`](crate::Runtime::hccl)).
pub(crate) fn library(rt: &'static RuntimeInner) -> Result<&'static Hccl> {
    let key = std::ptr::from_ref(rt) as usize;
    let mut libraries = LIBRARIES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, loaded)) = libraries.iter().find(|(k, _)| *k == key) {
        return loaded.clone().map_err(Error::HcclUnavailable);
    }
    let loaded = Hccl::for_api(&rt.api).map(|h| &*Box::leak(Box::new(h)));
    libraries.push((key, loaded.clone()));
    loaded.map_err(Error::HcclUnavailable)
}

/// How a reducing collective combines the ranks' elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum.
    Sum,
    /// The product.
    Prod,
    /// The maximum.
    Max,
    /// The minimum.
    Min,
}

impl ReduceOp {
    /// HCCL's value of the reduction.
    pub const fn raw(self) -> HcclReduceOp {
        match self {
            ReduceOp::Sum => HCCL_REDUCE_SUM,
            ReduceOp::Prod => HCCL_REDUCE_PROD,
            ReduceOp::Max => HCCL_REDUCE_MAX,
            ReduceOp::Min => HCCL_REDUCE_MIN,
        }
    }
}

impl fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Size of a [`RootInfo`] in bytes (`HCCL_ROOT_INFO_BYTES`).
pub const ROOT_INFO_BYTES: usize = HCCL_ROOT_INFO_BYTES as usize;

/// The opaque rendezvous information (`HcclRootInfo`, [`ROOT_INFO_BYTES`] bytes) that rank 0
/// creates and every rank passes to [`Communicator::from_root_info`].
///
/// It crosses process boundaries as plain bytes ([`RootInfo::as_bytes`],
/// [`RootInfo::from_bytes`]) over whatever transport the application has.
#[derive(Clone)]
pub struct RootInfo {
    raw: Box<HcclRootInfo>,
}

impl fmt::Debug for RootInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RootInfo").finish_non_exhaustive()
    }
}

impl RootInfo {
    /// Creates the root information of a new group, on its rank 0's `device`
    /// (`HcclGetRootInfo`).
    ///
    /// # Errors
    /// [`Error::HcclUnavailable`], [`Error::Acl`] binding the device, [`Error::Hccl`].
    pub fn new(device: &Device) -> Result<RootInfo> {
        let d = &device.inner;
        let hccl = library(d.rt)?;
        d.bind()?;
        // SAFETY: the device's context is current on this thread.
        let raw = unsafe { result::root_info(hccl, d.table()) }?;
        Ok(RootInfo { raw: Box::new(raw) })
    }

    /// The bytes to send to the other ranks.
    pub fn as_bytes(&self) -> &[u8] {
        let internal = &self.raw.internal;
        // SAFETY: `c_char` and `u8` have the same size and alignment, and every bit
        // pattern is valid for both; the slice borrows `self`.
        unsafe { std::slice::from_raw_parts(internal.as_ptr().cast::<u8>(), internal.len()) }
    }

    /// Root information received from rank 0 ([`RootInfo::as_bytes`] there).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `bytes` holds exactly [`ROOT_INFO_BYTES`] bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<RootInfo> {
        if bytes.len() != ROOT_INFO_BYTES {
            return Err(Error::LengthMismatch {
                argument: "root info bytes",
                expected: ROOT_INFO_BYTES,
                actual: bytes.len(),
            });
        }
        let mut raw = Box::new(HcclRootInfo {
            internal: [0; ROOT_INFO_BYTES],
        });
        for (dst, src) in raw.internal.iter_mut().zip(bytes) {
            *dst = *src as std::ffi::c_char;
        }
        Ok(RootInfo { raw })
    }

    pub(crate) fn raw(&self) -> &HcclRootInfo {
        &self.raw
    }
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use super::*;
    use crate::Runtime;

    #[test]
    fn a_runtime_without_hccl_reports_it_and_still_works() {
        let rt = Runtime::simulator_without_operators().unwrap();
        let device = rt.device(0).unwrap();
        let err = Communicator::init_all(std::slice::from_ref(&device)).unwrap_err();
        assert!(
            matches!(&err, Error::HcclUnavailable(HcclLoadError::NotProvided { symbol, .. }) if *symbol == "HcclCommInitAll"),
            "{err:?}"
        );
        assert!(
            err.to_string().starts_with("HCCL is not available"),
            "{err}"
        );
        assert!(matches!(
            RootInfo::new(&device),
            Err(Error::HcclUnavailable(_))
        ));
        assert!(matches!(rt.hccl(), Err(Error::HcclUnavailable(_))));
        // The runtime itself is unaffected, and the simulator's own runtime has HCCL.
        device.stream().unwrap().synchronize().unwrap();
        assert!(Runtime::simulator().unwrap().hccl().is_ok());
    }

    #[test]
    fn root_info_bytes_round_trip_and_lengths_are_checked() {
        let mut bytes = vec![0u8; ROOT_INFO_BYTES];
        bytes[7] = 0xA5;
        bytes[ROOT_INFO_BYTES - 1] = 3;
        let info = RootInfo::from_bytes(&bytes).unwrap();
        assert_eq!(info.as_bytes(), &bytes[..]);
        assert_eq!(
            RootInfo::from_bytes(&bytes[1..]).unwrap_err(),
            Error::LengthMismatch {
                argument: "root info bytes",
                expected: ROOT_INFO_BYTES,
                actual: ROOT_INFO_BYTES - 1,
            }
        );
        assert_eq!(ReduceOp::Max.raw(), HCCL_REDUCE_MAX);
        assert_eq!(ReduceOp::Prod.to_string(), "Prod");
    }
}
