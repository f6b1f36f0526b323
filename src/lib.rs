//! Safe, idiomatic Rust for running Huawei Ascend NPU operators through CANN's aclnn API.
//!
//! # Quick start
//! ```
//! use ascendcl::{DeviceTensor, Runtime, mish, mish_backward};
//! use ndarray::{Array, array};
//!
//! # fn main() -> ascendcl::Result<()> {
//! let rt = Runtime::auto()?; // CANN when installed, else the simulator
//! println!("backend: {}", rt.backend());
//! let device = rt.device(0)?;
//! let stream = device.stream()?;
//!
//! let x = array![[1.0f32, 1.0], [1.0, 2.0], [2.0, 2.0], [3.0, 3.0]];
//! let x = DeviceTensor::from_array(&stream, &x)?;
//! let mut y = DeviceTensor::<f32>::zeros(&stream, &[4, 2])?;
//! mish(&x, &mut y, &stream)?; // the activation, queued on the stream
//!
//! let grad = Array::from_shape_vec((4, 2), (0..8).map(|v| v as f32).collect()).unwrap();
//! let grad = DeviceTensor::from_array(&stream, &grad)?;
//! let mut dx = DeviceTensor::<f32>::zeros(&stream, &[4, 2])?;
//! mish_backward(&grad, &x, &mut dx, &stream)?; // its gradient
//!
//! assert!((y.to_array(&stream)?[[0, 0]] - 0.865098).abs() < 1e-5); // waits for the copy
//! assert!((dx.to_array(&stream)?[[0, 1]] - 1.049036).abs() < 1e-5);
//! # Ok(()) }
//! ```
//!
//! # Structure
//! * [`Runtime`] — the process-wide CANN (or simulator) instance: `aclInit` once, never
//!   finalised automatically (CANN forbids re-initialisation after `aclFinalize`).
//! * [`Device`] — RAII over `aclrtSetDevice`/`aclrtResetDevice`; the crate binds the
//!   device's context on whichever thread calls. Its [`SocFamily`] decides which
//!   operators and dtypes are available.
//! * [`Stream`], [`Event`] — ordered asynchronous work, ordering between streams.
//! * [`DeviceTensor`], [`TensorView`], [`TensorViewMut`] — device memory and views over it
//!   (permuted, sliced with steps, broadcast, reshaped), bounds-checked against the
//!   storage.
//! * The operators ([`ops`]), one declaration each: [`mish`], [`mish_inplace`],
//!   [`mish_backward`]. A call is validated in Rust with typed errors, then runs the
//!   two-phase aclnn protocol (descriptors cached on whole tensors, workspace from a
//!   per-stream cache, no allocation in steady state). Each has a [`Plan`] for repeated
//!   launches ([`MishPlan`], [`InplaceMishPlan`], [`MishBackwardPlan`]).
//! * [`reference`](mod@reference) — the CPU reference of the operators, used to check results.
//!
//! Under the operators, the protocol layer (the two-phase call, descriptors, plans) and a
//! checked layer (each C function wrapped once into a `Result` naming it) are the only
//! places with `unsafe` code, with the `ascend-sys` declarations and loader below them.
//!
//! # Lifetimes
//! Work is asynchronous. Each stream numbers its submissions (tickets) and remembers the
//! last ticket known complete (advanced by [`Stream::synchronize`]); every device buffer
//! and event records the `(stream, ticket)` of its last use on each stream (inline for up
//! to four streams, no allocation in a steady state). A record keeps the stream's
//! completion state alive, so a stream that is being dropped, even on another thread,
//! counts as busy until its drain has finished. Dropping a tensor, event or stream first synchronises each stream still
//! behind its recorded ticket, so memory is never freed under queued work; a device is
//! reset only after its last stream, event and tensor are gone (they hold it). Uploads
//! copy the caller's data into pinned staging memory owned by the stream until the copy
//! has run; downloads return after the copy has finished. Replaced workspaces are freed
//! only after a synchronisation that covers the work using them. If a synchronisation
//! fails, the memory is leaked rather than freed.
//!
//! Data is ordered between streams too: before an operation on one stream reads a tensor,
//! the stream waits (through an event the crate records) for writes to it queued on other
//! streams and not known to be complete; before it writes, for every other stream's queued
//! use. Work that stays on one stream creates no events, and a stream that already waited
//! for another's work does not wait again. Failure travels with that ordering: when the
//! other stream's work failed, the waiting stream's next synchronisation or download (or
//! an enqueue ordered after work already known to have failed) returns
//! [`Error::DependencyFailed`] naming it, never values that were not computed. Failed
//! releases inside `Drop` are counted by [`Device::release_errors`]. [`Event`]s remain available for ordering work
//! that the crate cannot see (raw calls). There is deliberately no switch to turn this
//! ordering off: it costs nothing for work that stays on one stream, and an expert who
//! orders streams by hand can issue the copies and launches through the raw handles
//! ([`Stream::as_raw`], the `ascend-sys` table) instead.
//!
//! Page-locked host memory ([`HostTensor`]) is tracked the same way: a queued copy into or
//! out of it is recorded, and the host's own reads, writes and the release of the memory
//! wait for the copies they would race with.
//!
//! # Threads
//! All public types are `Send + Sync` (asserted at compile time below): device handles are
//! only used through CANN calls made after binding the right context on the calling
//! thread; enqueues on one stream are serialised by a lock; views are borrows, so a
//! writable output view can never alias an input.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

pub mod element;
pub mod error;
pub mod hccl;
pub mod reference;
pub mod shape;
pub mod testing;

mod alloc;
mod clock;
mod device;
mod event;
mod host;
mod ledger;
mod op;
pub mod ops;
mod reshape;
mod runtime;
mod stream;
mod sync;
mod sys;
mod tensor;
mod transfer;
mod uses;

pub use alloc::MemoryStats;
pub use ascend_sys::{LoadError, LoadOptions};
pub use device::{Device, Leaks, MemoryInfo, SocFamily};
pub use element::{DType, Element};
pub use error::{Error, Result};
pub use event::Event;
pub use host::HostTensor;
pub use op::Plan;
pub use ops::{copy::*, mish::*, mish_backward::*};
pub use runtime::{Backend, Runtime};
pub use stream::Stream;
pub use tensor::{AsTensorView, AsTensorViewMut, DeviceTensor, TensorView, TensorViewMut};

/// Compile-time statement of the thread-safety story in the crate docs.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Runtime>();
    send_sync::<Device>();
    send_sync::<Stream>();
    send_sync::<Event>();
    send_sync::<DeviceTensor<f32>>();
    send_sync::<DeviceTensor<half::f16>>();
    send_sync::<DeviceTensor<half::bf16>>();
    send_sync::<HostTensor<f32>>();
    send_sync::<HostTensor<half::f16>>();
    send_sync::<HostTensor<half::bf16>>();
    send_sync::<TensorView<'static, f32>>();
    send_sync::<TensorViewMut<'static, f32>>();
    send_sync::<Error>();
    send_sync::<hccl::Communicator>();
    send_sync::<hccl::RootInfo>();
    send_sync::<ops::mish_backward::MishBackwardPlan<f32, half::f16, half::bf16>>();
};

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
