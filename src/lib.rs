//! Safe, idiomatic Rust for running Huawei Ascend NPU operators through CANN's aclnn API.
//!
//! # Quick start
//! ```
//! use ascendcl::{DeviceTensor, Runtime, mish, mish_backward};
//! use ndarray::{Array, Array2, array};
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
//! let y: Array2<f32> = y.to_array(&stream)?; // waits for the copy
//! assert!((y[[0, 0]] - 0.865098).abs() < 1e-5);
//! let dx: Array2<f32> = dx.to_array(&stream)?;
//! assert!((dx[[0, 1]] - 1.049036).abs() < 1e-5);
//! # Ok(()) }
//! ```
//!
//! # Training loops: tensors you keep
//!
//! A training step reuses its device tensors: they are allocated once, filled from host
//! arrays of any layout with [`DeviceTensor::copy_from_array`] and read back with
//! [`DeviceTensor::copy_to_array`]; a [`Plan`] per layout runs phase 1 once. Page-locked
//! [`HostTensor`]s make the copies asynchronous: their accessors wait for the copies they
//! would race with.
//!
//! ```
//! use ascendcl::{DeviceTensor, HostTensor, MishBackwardPlan, MishPlan, Runtime};
//! use ndarray::{Array2, Ix2};
//!
//! # fn main() -> ascendcl::Result<()> {
//! let device = Runtime::auto()?.device(0)?;
//! let stream = device.stream()?;
//! let zeros = || DeviceTensor::<f32>::zeros(&stream, (64, 32));
//! let (mut x, mut y, mut g, mut dx) = (zeros()?, zeros()?, zeros()?, zeros()?);
//! let mut forward = MishPlan::new(&x, &y, &stream)?;
//! let mut backward = MishBackwardPlan::new(&g, &x, &dx, &stream)?;
//! let mut host_y = HostTensor::<f32>::zeros(&device, (64, 32))?; // pinned
//! let mut host_dx = Array2::<f32>::zeros((64, 32)); // pageable
//! for step in 0..3 {
//!     let batch = Array2::from_elem((64, 32), step as f32 * 0.1);
//!     x.copy_from_array(&stream, &batch)?; // the array is free again at once
//!     forward.launch(&x, &mut y, &stream)?;
//!     y.copy_to_host(&stream, &mut host_y)?; // queued, no wait
//!     let loss_grad = host_y.view::<Ix2>()?.mapv(|v| 2.0 * v); // waits for that copy
//!     g.copy_from_array(&stream, &loss_grad)?;
//!     backward.launch(&g, &x, &mut dx, &stream)?;
//!     dx.copy_to_array(&stream, &mut host_dx)?; // waits for the result
//! }
//! assert!(host_dx.iter().all(|v| v.is_finite()));
//! # Ok(()) }
//! ```
//!
//! # Backends and the simulator
//!
//! [`Runtime::auto`] picks CANN when its libraries are found and the simulator otherwise,
//! saying so once on stderr; `ASCENDCL_BACKEND=cann` (or [`Runtime::cann`]) makes CANN
//! required, `ASCENDCL_BACKEND=simulator` chooses the simulator. The simulated machine is
//! described by the `ASCEND_SIM_*` environment variables (listed, with their formats, at
//! [`Runtime::simulator`]) or from code, before the simulator starts:
//!
//! ```
//! # fn main() -> ascendcl::Result<()> {
//! use ascendcl::{Runtime, SimConfig, SimDevice};
//! let config = SimConfig::new()
//!     .devices([SimDevice::new("Ascend910B4"), SimDevice::new("Ascend910A").mem_bytes(512 << 20)])
//!     .hccl_timeout_ms(5_000);
//! Runtime::configure_simulator(&config)?; // used if auto() falls back to the simulator
//! let rt = Runtime::auto()?;
//! println!("{} device(s) on {}", rt.device_count()?, rt.backend());
//! # Ok(()) }
//! ```
//!
//! One process has one simulated machine, as it has one CANN runtime
//! ([`Runtime::simulator_with`] explains why, and what a second configuration gives).
//!
//! # Examples
//!
//! In `examples/` of the repository, each run with `cargo run --example <name>` (on CANN
//! when installed, else on the simulator):
//! * `mish_backward` — the operator on a small tensor, beside the CPU reference;
//! * `mixed_precision` — bf16 activations with f32 gradients, a broadcast and a
//!   transposed view, checked with CANN's precision standard;
//! * `mlp_training` — a two-layer Mish network whose whole training step (forward, MSE
//!   loss, backward, SGD) runs on the device through plans, checked against the CPU;
//! * `mish_layer_training` — Mish on the device, the linear layers on the CPU, with
//!   transfers every step;
//! * `data_parallel` — data-parallel steps over every device with HCCL `all_reduce`
//!   (four simulated devices by default);
//! * `overhead_probe` and `caching_probe` — launches and allocate-launch-drop steps for
//!   instruction counting under callgrind (simulator only).
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
//!   storage. Shapes are taken in ndarray's forms ([`shape::IntoDims`]: `&[2, 3]`,
//!   `(2, 3)`, `Ix2(2, 3)`, ...), downloads return the array type the caller names
//!   (`let a: Array2<f32> = t.to_array(&stream)?`), [`DeviceTensor::try_clone`] copies a
//!   tensor on its device and [`DeviceTensor::copy_from_peer`] from another device.
//! * [`Tensor`] — what frameworks hold: a device tensor whose dtype is a run-time value,
//!   over reference-counted storage, so clones and views (permute, slice with steps,
//!   broadcast, squeeze, reshape) share it without a copy; it moves to and from a
//!   [`DeviceTensor`] without a copy, and every operator takes it ([`operand`]: typed and
//!   run-time dtypes, allocating forms returning either). [`DeviceTensor::empty`] and
//!   [`Tensor::empty`] allocate without a fill.
//! * The operators ([`ops`]), one declaration each: the activation [`mish`] with
//!   [`mish_inplace`] and [`mish_backward`]; [`add`], [`add_inplace`], [`mul`],
//!   [`mul_inplace`] (broadcasting, with dtype promotion); [`matmul`], [`addmm`];
//!   [`reduce_sum`]; [`mse_loss`] and [`mse_loss_backward`]; [`fill_inplace`],
//!   [`zero_inplace`], [`one_inplace`]; [`inplace_copy`] (with [`copy`](fn@copy), a
//!   device-to-device copy that converts dtypes and broadcasts); [`cast`] (with
//!   [`cast_to`] for a dtype known at run time). A call is validated in Rust with typed errors,
//!   then runs the two-phase aclnn protocol (descriptors cached on whole tensors, workspace
//!   from a per-stream cache, no allocation in steady state). Each has a [`Plan`] for
//!   repeated launches named after its C name ([`MishPlan`], [`InplaceAddPlan`],
//!   [`AddmmPlan`], ...).
//! * [`reference`](mod@reference) — the CPU reference of the operators, used to check results.
//!
//! Under the operators are the protocol layer (the two-phase call, descriptors, plans) and
//! a checked layer (each C function wrapped once into a `Result` naming it), with the
//! `ascend-sys` declarations and loader below them. `unsafe` code sits in those layers, in
//! the safe types that call the checked wrappers under the guarantees those require, in the
//! device-to-device [`copy`](fn@copy) and in the reference's SIMD intrinsics:
//! `docs/unsafe-map.md` lists each file and why, and CI checks that list against the tree.
//!
//! # Lifetimes
//! Work is asynchronous. Each stream numbers its submissions (tickets) and remembers the
//! last ticket known complete (advanced by [`Stream::synchronize`]); every device buffer
//! and event records the `(stream, ticket)` of its last use on each stream (inline for up
//! to four streams, no allocation in a steady state). A record keeps the stream's
//! completion state alive, so a stream that is being dropped, even on another thread,
//! counts as busy until its drain has finished. Dropping a tensor, a plan or a stream's
//! replaced workspace never waits: the memory returns to the device's caching allocator
//! ([`Device::memory_stats`]) with its use records, so whoever takes it next is ordered
//! after the queued work (on the device for another stream, on the host for a host
//! access), and it reaches `aclrtFree` only after that work has finished. Dropping an
//! event or stream synchronises each stream still behind its recorded ticket; a device is
//! reset only after its last stream, event and tensor are gone (they hold it). Uploads
//! (`from_array`, `copy_from_array`) either copy at once, when no queued work could
//! observe it, or copy the caller's data into the stream's pinned staging buffer, which
//! is not written again before that copy has run; downloads return after the copy has
//! finished. If a synchronisation fails, the memory is leaked (and counted) rather than
//! freed.
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
pub mod operand;
pub mod reference;
pub mod shape;

mod alloc;
mod attrs;
mod clock;
mod clone;
mod device;
mod event;
mod host;
mod ledger;
pub mod ops;
mod peer;
mod pinned;
pub mod precision;
pub mod protocol;
mod raw;
mod runtime;
mod stream;
mod sync;
mod sys;
mod tensor;
mod transfer;
mod uses;

pub use alloc::MemoryStats;
#[cfg(feature = "sim")]
pub use ascend_sim::{SimConfig, SimDevice};
pub use ascend_sys::{LoadError, LoadOptions};

/// What the code `operator!` generates in other crates refers to.
#[doc(hidden)]
pub mod __private {
    pub use ascend_sys;
}
pub use attrs::{CubeMath, Reduction};
pub use device::{DEFAULT_SEED, PHILOX_OFFSET_STEP, Philox};
pub use device::{Device, Leaks, MemoryInfo, SocFamily};
pub use element::{DType, Element, FloatElement};
pub use error::{Error, Result};
pub use event::Event;
pub use host::HostTensor;
pub use operand::{Allocated, Dyn, Operand};
pub use ops::exports::*;
pub use protocol::{ExecutorCacheStats, Plan};
pub use raw::RawAccess;
pub use runtime::{Backend, Runtime};
pub use stream::Stream;
pub use tensor::{
    AsTensorView, AsTensorViewMut, DeviceTensor, IntoTypedError, Tensor, TensorView, TensorViewMut,
};

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
    send_sync::<CubeMath>();
    send_sync::<Reduction>();
    send_sync::<hccl::Communicator>();
    send_sync::<hccl::RootInfo>();
    send_sync::<ops::mish_backward::MishBackwardPlan<f32, half::f16, half::bf16>>();
    send_sync::<AddmmPlan<f32, f32, f32, f32>>();
    send_sync::<ReduceSumPlan<half::f16, f32>>();
    send_sync::<protocol::Scalar>();
    send_sync::<protocol::IntList>();
};

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The guides' Rust examples in `docs/`, compiled and run as doc tests.
#[cfg(doctest)]
mod guide_doctests {
    #[doc = include_str!("../docs/allocator.md")]
    struct Allocator;
    #[doc = include_str!("../docs/cann.md")]
    struct Cann;
    #[doc = include_str!("../docs/simulator.md")]
    struct Simulator;
    #[doc = include_str!("../docs/hccl.md")]
    struct Hccl;
    #[doc = include_str!("../docs/accuracy.md")]
    struct Accuracy;
    #[doc = include_str!("../docs/adding-an-operator.md")]
    struct AddingAnOperator;
    #[doc = include_str!("../docs/performance.md")]
    struct Performance;
}
