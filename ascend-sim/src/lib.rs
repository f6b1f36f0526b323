//! A strict simulator of the CANN runtime (`libascendcl.so`), of `libnnopbase.so`'s
//! tensors, attribute objects and executors, and of `libopapi.so` operators (listed in
//! [`ops`]), for running the real FFI path of `ascendcl` without an NPU.
//!
//! It is faithful where CANN is documented and strict where CANN would silently
//! misbehave: a sanitizer, not a mock.
//!
//! # Two ways in
//!
//! * As a Rust library: [`fn_table`] returns an [`ascend_sys::FnTable`] whose pointers are
//!   the runtime and nnopbase functions of [`api`] (ordinary, mangled Rust names), and
//!   [`symbol`] finds any simulated function (operators included) by its C name, the
//!   resolver of [`ascend_sys::Api::from_table_with_resolver`]. Nothing with a C name is
//!   exported unless the `c-exports` feature is on, so a binary embedding the rlib never
//!   interposes CANN's symbols over a real CANN loaded later.
//! * As `libascend_sim.so` (`cargo build -p ascend-sim`, feature `c-exports`, on by
//!   default): every function of the table is exported under its exact C name and
//!   prototype, plus the introspection functions below, so a C program written against
//!   the CANN headers links and runs against it unchanged.
//!
//! # What is modeled
//!
//! * **Process state.** `aclInit` once per process (a second call gives 100002; any call
//!   after `aclFinalize` gives 100001). The simulated machine is configured at `aclInit`,
//!   from the [`SimConfig`] given to [`configure`] before it, or else from the
//!   environment:
//!   * `ASCEND_SIM_DEVICES`: comma-separated SoC names, one per device (default
//!     `Ascend910B4`), each one of Atlas A3 `Ascend910_9391`/`9392`/`9381`/`9382`/`9372`/
//!     `9362`, Atlas A2 `Ascend910B1`/`B2`/`B2C`/`B3`/`B4`/`B4-1`, the training series
//!     `Ascend910A`/`ProA`/`ProB`/`PremiumA`, the inference series `Ascend310P1`/`P3`/`P5`/
//!     `P7`, or Atlas 200I/500 A2 `Ascend310B1` to `B4`. `aclrtGetSocName` answers for the
//!     current device (device 0 when the thread has no context).
//!   * `ASCEND_SIM_MEM_BYTES`: device memory per device (default 1 GiB; suffixes `K`, `M`,
//!     `G` accepted). Exceeding it gives 207001.
//!   * `ASCEND_SIM_FAULT`: `symbol:n[,symbol:n...]`, the `n`-th call of `symbol` counted
//!     from process start fails (see [Fault injection](#fault-injection)).
//!   * `ASCEND_SIM_VERBOSE`: `1`/`true`/`yes`/`on` prints every sanitizer finding to
//!     stderr too (`0`/`false`/`no`/`off`/empty: not).
//!   * `ASCEND_SIM_HCCL_TIMEOUT_MS`: how long an HCCL rank waits for the others (default
//!     30000; see [HCCL](#hccl)).
//!   * `ASCEND_SIM_RACECHECK`: a switch (as `ASCEND_SIM_VERBOSE`), on when unset: whether
//!     the [`racecheck`] runs ([`racecheck::set_enabled`] changes it later).
//!
//!   A malformed value (an unknown SoC name, a byte count that is not one, a fault item
//!   that is not `symbol:n` with a simulated symbol, a switch that is not one) and any
//!   other `ASCEND_SIM_*` variable make `aclInit` fail with 100000
//!   (`ACL_ERROR_INVALID_PARAM`) and an `aclGetRecentErrMsg` text naming what is
//!   accepted; the process stays uninitialised, so a corrected `aclInit` may follow.
//! * **Error text.** Every failing call leaves exactly one `aclGetRecentErrMsg` text on its
//!   thread, `"<api> failed with <STATUS_NAME> (<status>): <reason>"` (an outer status
//!   that wraps an inner check quotes the inner text in the same line); a success leaves
//!   none. As in CANN, `aclGetRecentErrMsg` hands out the texts not fetched yet, newest
//!   first and one per line, and clears them (NULL when there are none), so a text never
//!   outlives the fetch after its failure.
//! * **Handles.** Contexts, streams, events, tensors and executors are fake pointers
//!   (`tag << 48 | id`, non-canonical addresses, never dereferenced); no handle is ever
//!   valid twice, so a stale or foreign handle is always recognised: 107017 for runtime
//!   handles, 161002 for tensors and executors. Tensors and executors live in
//!   generation-checked slabs (id = generation and slot; a freed slot comes back only with
//!   the next generation, first-in first-out, and is retired before its generation could
//!   wrap), so their steady state (create, use, destroy) does not touch the allocator.
//! * **Contexts.** The current context is per thread. `aclrtSetDevice` is reference
//!   counted and makes the device's default context current; when the count drops to 0,
//!   `aclrtResetDevice` releases the default context, its default stream and the streams
//!   created under it, draining them first, then the device's explicit contexts and
//!   their streams, and it invalidates the device's events and memory. What the caller
//!   should have released first stays counted as leaked ([`counters`]; `aclFinalize`
//!   reports it) and its address range is never handed out again, so later use of any of
//!   it fails as use after reset (a stale handle, 107017; memory "released by
//!   aclrtResetDevice", 100000 or 161002). `aclrtCreateContext` makes the new context
//!   current.
//!   Calls that need a context fail with 107002 on a thread without one (or whose context
//!   was destroyed); a stream of another device's context gives 107003.
//! * **Device memory.** Each device owns a reserved `PROT_NONE` address range; `aclrtMalloc`
//!   hands out 32-byte-aligned addresses inside it (padded to 32 bytes plus a 32-byte gap),
//!   so host code that dereferences device memory crashes as on hardware. The bytes live in
//!   host-side backing buffers. Every access is checked against the *requested* size.
//!   Size 0 gives 100000. Every documented `aclrtMemMallocPolicy` is accepted (a page
//!   policy 0 to 7, optionally ORed with a bandwidth type and the read-only flag), and
//!   `aclrtGetMemInfo` answers every `aclrtMemAttr` (0 to 17) with the device's memory.
//!   `aclrtMallocHost` returns real, tracked host memory.
//! * **Memory pools and callbacks.** `aclrtMemPoolCreate` checks its props (pinned, no
//!   handle type, a device location); a pool block is a device allocation tagged with its
//!   pool. `aclrtMemPoolFreeAsync` releases it when its stream reaches the free: work
//!   queued on it afterwards (any stream) fails loudly, and only then may
//!   `aclrtMemPoolMallocAsync` hand the range out again. `aclrtFree` of a pool block, a
//!   second free and a stream of another device are reported. `aclrtMemPoolTrimTo` and
//!   `aclrtMemPoolDestroy` return free ranges to the device. `aclrtLaunchCallback` runs
//!   the callback on the stream's worker in stream order, as if a thread had subscribed
//!   (`aclrtSubscribeReport` / `aclrtProcessReport` are not modelled); pools survive
//!   `aclrtResetDevice` unmodelled.
//! * **Copies.** `aclrtMemcpy`/`aclrtMemcpyAsync`/`aclrtMemset` check `count <= destMax`,
//!   the kind against the pointer classes (`ACL_MEMCPY_DEFAULT` infers them; CANN 8's
//!   kinds 5 to 7 are accepted, and an asynchronous `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`
//!   takes the host bytes at the call), and that
//!   every device range lies inside one live allocation; misuse gives 100000 with a precise
//!   text in `aclGetRecentErrMsg` and [`last_report`]. The synchronous copy does not wait
//!   for streams. A copy whose host side lies in an `aclrtMallocHost` buffer must stay
//!   inside it, and holds it until the copy has run: freeing the buffer under a queued copy
//!   makes that copy fail loudly (never touching the released memory). Other host memory
//!   (heap, stack) cannot be tracked: its lifetime is the caller's, and a pageable buffer
//!   freed before its queued copy runs is only caught by a sanitizer. A device-to-device
//!   copy between two devices needs the current device to have enabled access to the
//!   other one (`aclrtDeviceEnablePeerAccess(peer, 0)`; `aclrtDeviceCanAccessPeer` answers
//!   1 for any two different simulated devices); without it the copy fails with 100000.
//!   A device's reset forgets its peers.
//! * **Streams** are asynchronous: each one has its own worker thread (256 KiB stack,
//!   joined by `aclrtDestroyStream`, which drains the queue first) running copies, kernels,
//!   event records and event waits in order. The `NULL` stream is a per-context default
//!   stream started on first use. Events order streams: a wait enqueued before any record
//!   does not wait. An error inside queued work (a buffer freed while queued work uses it,
//!   an out-of-bounds view) is reported immediately through [`last_report`] and makes the
//!   next `aclrtSynchronizeStream` of that stream fail with 507000
//!   (`ACL_ERROR_RT_INTERNAL_ERROR`).
//! * **Devices.** Every allocation, stream and event belongs to the device it was made on.
//!   Recording or waiting an event on a stream of another device fails with 107003 (as
//!   CANN documents); synchronizing on another device's event from the host is allowed. A
//!   device-to-device copy between two devices, or an asynchronous copy touching memory of
//!   another device than its stream's, is carried out and reported (hardware needs
//!   `aclrtDeviceEnablePeerAccess`, which the simulator does not have);
//!   `ACL_MEMCPY_INNER_DEVICE_TO_DEVICE` between two devices fails with 100000.
//! * **Tensors.** `aclCreateTensor`, like CANN's, fails (NULL) only on a NULL array with a
//!   nonzero length, takes a NULL `stride` as contiguous, and records the rest unchecked:
//!   every `aclFormat` (elementwise operators treat it as a label) and every `aclDataType`
//!   of the vendor's enums. A value outside those enums, a negative dim or a negative
//!   offset is also reported through [`last_report`]. It needs no `aclInit`;
//!   `aclDestroyTensor(NULL)` succeeds. Operators refuse (161002, in phase 1) a tensor with
//!   a negative dim or more than `i64::MAX` elements; the data address is checked at phase
//!   2 (inside a live allocation and inside the storage dims, negative strides allowed)
//!   and again when the kernel runs.
//! * **Attribute objects.** `aclCreateScalar` copies its value at once by dtype size
//!   (NULL for a NULL value or a dtype without one, such as STRING); int, float and bool
//!   arrays and tensor and scalar lists with a NULL value or a size of 0 are valid, empty,
//!   non-NULL objects, as in nnopbase; a list holds its elements' handles and destroying
//!   it destroys them (destroying them again is reported as a double free). Every
//!   `aclDestroy*` takes NULL as a no-op; a stale or foreign handle gives 161002 and a
//!   finding. They live in slabs like tensors and are counted ([`Counters::attributes`]).
//! * **Operators.** Each is one module of [`ops`], whose documentation lists its products,
//!   its phase-1 checks in the vendor's order with the vendor's codes, its dtypes per
//!   product, its shape rule, its empty-tensor behaviour and its compute chain.
//! * **Phase 2** (the same for every operator) checks the executor (it must come from the
//!   same operator's phase 1; a non-repeatable executor is consumed by its one call, whether
//!   the call succeeds or fails, as nnopbase's common phase 2 deletes it after running it;
//!   a NULL workspace with a non-zero `workspaceSize` is refused first, with 161001, and
//!   releases even a repeatable executor, as nnopbase does; any later use of a released
//!   executor, `aclDestroyAclOpExecutor` included, gives 161002 and a finding naming how it
//!   was released), the stream under the current context (361001,
//!   or 161002 for a stale handle), that the tensors are still alive, that the workspace is
//!   a live device allocation holding `workspaceSize >=` the asked size (null: 161001, too
//!   small, host or freed: 161002), that every tensor's data lies in a live device
//!   allocation of the executor's device (host memory, another device's memory: 161002)
//!   and inside its storage dims, that the workspace is memory of that device too, and
//!   that the workspace
//!   the operator uses overlaps no tensor's bytes (161002, a finding: on hardware the
//!   temporaries would overwrite the operand), then enqueues the compute.
//! * **Executor reuse.** `aclSetAclOpExecutorRepeatable` is accepted only before the first
//!   phase 2 of the executor; a repeatable executor survives phase 2 and must be released
//!   with `aclDestroyAclOpExecutor` (which also releases a non-repeatable executor that was
//!   never launched); both answer a NULL executor with 561103, as nnopbase does.
//!   `aclSetInputTensorAddr` and `aclSetOutputTensorAddr` (NULL tensor or executor:
//!   561103; a NULL address is recorded, and phase 2 refuses it) rebind the
//!   device address of the tensor the executor was created with at that input or output
//!   index, in the order of the phase-1 parameters (an in-place argument is both an
//!   input and an output, rebound once); the address must be 32-byte aligned.
//!
//! # How it is organised
//!
//! The modules follow the vendor's libraries. The runtime (`runtime`, `mem`, `stream`)
//! knows devices, memory, streams and events. `nnopbase` knows tensors and executors of any
//! arity, each carrying its operator kind (an `OpDef`: argument names, which of them are
//! inputs and outputs, the product families that have it, its kernel); it runs phase 2 and
//! queues a kernel call that carries its kernel, so a stream knows no operator. `tables` holds
//! the vendor's dtype, format and SoC tables. Each operator is one module of `ops`: its
//! phase-1 checks in the vendor's order and its kernel, which reads each tensor in its own
//! shape (or broadcast to a shape it names) through the kernel call. Adding an operator is one
//! such module plus its line in the entry list of this file, which makes both phases.
//!
//! # HCCL
//!
//! `libhccl.so` is simulated in the module [`hccl`], with the ranks of a communicator as
//! simulated devices (one rank per device) of this process or of other processes of the
//! machine, which join through the process that made the root info. Its functions are exported
//! under their C names like the rest and found in-process by [`symbol`], but are not in
//! the [`FnTable`]: HCCL is a separate, optional library.
//!
//! * **Communicators.** `HcclCommInitAll` makes one communicator per listed device (rank =
//!   position; duplicates: `HCCL_E_PARA`, an unknown device: `HCCL_E_INTERNAL`).
//!   `HcclGetRootInfo` makes a root info naming a meeting in this process;
//!   `HcclCommInitRootInfo` on each rank's thread, or in another process, joins it and
//!   returns when all `nRanks` have joined. Handles are fake pointers never valid twice (stale or foreign:
//!   `HCCL_E_PARA`, a finding). Every call except the queries needs a current device on
//!   the calling thread (`HCCL_E_RUNTIME`), as HCCL asks the runtime for it first.
//! * **Collectives** (`HcclAllReduce`, `HcclBroadcast`, `HcclAllGather`,
//!   `HcclReduceScatter`, `HcclBarrier`) check their arguments in the vendor's order: a
//!   zero count succeeds at once without meeting anyone; NULL pointers give `HCCL_E_PTR`;
//!   a dtype outside the enum or not modeled (INT128, the 8-bit floats), an unknown
//!   reduction, and the pairs a product refuses (PROD on BFP16 or INT16 on Atlas A2/A3,
//!   INT16 on the training series, INT16 other than SUM on the inference series) give
//!   `HCCL_E_NOT_SUPPORT`; a root outside the group `HCCL_E_PARA`. The simulator also
//!   requires a live stream of the rank's device under a context of that device, and
//!   buffers inside one live allocation of the rank's device holding the elements the
//!   collective touches (`HCCL_E_PARA`, a finding).
//! * **Meetings.** A rank's `k`-th collective waits in the call until every rank has made
//!   its `k`-th call; the calls must agree (collective, count, dtype, reduction, root),
//!   else every rank fails with `HCCL_E_PARA` naming the difference. A rank that does not
//!   call within `ASCEND_SIM_HCCL_TIMEOUT_MS` fails the waiting ranks, and later itself,
//!   with `HCCL_E_TIMEOUT`. Then each rank's part is enqueued on its stream; the
//!   collective executes when every rank's stream has reached it (the last to arrive moves
//!   the data for all). A stream that does not arrive in time fails the others' work:
//!   their next `aclrtSynchronizeStream` gives 507000 and `HcclGetCommAsyncError`
//!   `HCCL_E_TIMEOUT`; memory freed under a queued collective gives 507000 and
//!   `HCCL_E_MEMORY` the same way. Waiting never holds the simulator's global lock.
//! * **Point to point** (`HcclSend`, `HcclRecv`): the same checks (then a peer outside
//!   the group or the rank itself: `HCCL_E_PARA`), no meeting in the call; the `k`-th send
//!   from rank `a` to `b` meets `b`'s `k`-th receive from `a` on the streams, where they
//!   must agree on count and dtype (else `HCCL_E_PARA` on both streams, a finding), and a
//!   side whose peer's stream does not come in time fails with `HCCL_E_TIMEOUT`.
//! * **Processes.** A rank of another process connects to the process that made the root
//!   info, over a Unix socket in the abstract namespace (named after that process and the
//!   root info; nothing on disk), which serves it while one of its own ranks waits to join.
//!   Its calls and its parts of every collective and transfer go there and are met as the
//!   in-process ranks' are, with the same checks and texts. A process that exits or is
//!   killed after joining closes its connections: the meetings its ranks have not reached
//!   fail at once with `HCCL_E_REMOTE` naming the rank and process; the death of the
//!   serving process fails the others' calls with `HCCL_E_REMOTE` as well.
//! * **Bounds.** Nothing is sized by a root info's `nRanks` before the ranks have joined,
//!   and messages name at most four ranks and count the rest.
//! * **Arithmetic.** Reductions combine rank 0 with rank 1, the result with rank 2, and
//!   so on, each step in the element type (f16 and bf16 through f32, rounded to nearest
//!   even; integers wrap; MAX/MIN of floats prefer the number to a NaN).
//! * `HcclCommDestroy` of a rank with queued collectives lets them run and reports it.
//!   [`hccl::counters`] / `ascendSimGetHcclCounters` count live communicators and queued
//!   collectives.
//!
//! # Racecheck
//!
//! Every kernel, copy, memset and collective declares the bytes it reads and writes, and
//! work whose access conflicts with another stream's (or the host's) without a
//! happens-before order between them (stream order, an event recorded and waited for, a
//! host synchronisation) fails loudly, naming both accesses. On by default;
//! `ASCEND_SIM_RACECHECK=0` or [`racecheck::set_enabled`] turns it off. See [`racecheck`]
//! for the model, the messages and what it cannot see.
//!
//! # Fault injection
//!
//! `ascendSimSetFault(symbol, n)` ([`set_fault`]) makes the `n`-th call of `symbol`,
//! counted from the moment it is set, fail (`n = 0` disarms); `ASCEND_SIM_FAULT` does the
//! same counted from process start. A fault fires once, before any validation, with an
//! `aclGetRecentErrMsg` text saying so, and without side effects except the one a failure
//! of that function has on CANN: an operator's phase 2 releases the live non-repeatable
//! executor it was given. The codes:
//!
//! | symbol | failure |
//! |---|---|
//! | `aclInit`, `aclFinalize` | 500000 `ACL_ERROR_INTERNAL_ERROR` |
//! | `aclrtSetDevice` | 507033 `ACL_ERROR_RT_DEV_SETUP_ERROR` |
//! | `aclrtGetDeviceCount` | 207004 `ACL_ERROR_RT_NO_DEVICE` |
//! | `aclrtGetDevice`, `aclrtGetCurrentContext` | 107002 `ACL_ERROR_RT_CONTEXT_NULL` |
//! | `aclrtMalloc`, `aclrtMallocHost`, `aclrtMemPoolMallocAsync` | 207001 `ACL_ERROR_RT_MEMORY_ALLOCATION` |
//! | `aclrtSynchronizeStream`, `aclrtSynchronizeEvent` | 507046 `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` |
//! | every other runtime function returning `aclError` | 507000 `ACL_ERROR_RT_INTERNAL_ERROR` |
//! | `aclrtGetSocName`, `aclGetRecentErrMsg` | NULL |
//! | `aclCreateTensor`, `aclCreateScalar`, `aclCreateIntArray` and the other `aclCreate*` | NULL |
//! | `aclDestroyScalar`, `aclDestroyIntArray` and the other `aclDestroy*` of attribute objects, `aclGet*Size` | 561000 `ACLNN_ERR_INNER` |
//! | `aclDestroyTensor`, `aclSetAclOpExecutorRepeatable`, `aclDestroyAclOpExecutor`, `aclSetInputTensorAddr`, `aclSetOutputTensorAddr` | 561000 `ACLNN_ERR_INNER` |
//! | every operator's phase 1 (`aclnn*GetWorkspaceSize`) | 561101 `ACLNN_ERR_INNER_CREATE_EXECUTOR` |
//! | every operator's phase 2 (`aclnnMishBackward` ...) | 361001 `ACLNN_ERR_RUNTIME_ERROR` |
//! | every HCCL function returning `HcclResult` | 4 `HCCL_E_INTERNAL` |
//! | `HcclGetErrorString` | NULL |
//!
//! # Introspection
//!
//! [`counters`] / `ascendSimGetCounters` count live objects: device allocations plus
//! `aclrtMallocHost` buffers (`allocations`, `allocated_bytes` = requested sizes), tensors,
//! executors (not yet consumed or destroyed), streams created with `aclrtCreateStream`
//! (default streams are not counted), events, contexts created with
//! `aclrtCreateContext` (default contexts of `aclrtSetDevice` are not counted), and
//! scalars, arrays and lists (`scalars`, `arrays`, `lists`; a list's elements count as
//! tensors or scalars too). `aclFinalize` reports any live object as a finding.
//! [`call_count`] / `ascendSimGetCallCount` count calls per symbol since process start.
//! [`last_report`] / `ascendSimLastReport` give the latest sanitizer finding.
//!
//! # Threads
//!
//! All state is process-global behind a mutex; every function may be called from any
//! thread. [`Counters`] is plain data (`Send + Sync`); [`testing::StreamHold`] is `Send +
//! Sync`. No entry point lets a panic cross the C boundary (each catches unwinding and
//! returns its failure value), and a poisoned lock is recovered, never turned into UB.

#![warn(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

use ascend_sys::hccl::{HcclComm, HcclDataType, HcclReduceOp, HcclResult, HcclRootInfo};
use ascend_sys::*;
use std::ffi::{CStr, c_char, c_void};

#[macro_use]
mod registry;

mod cast;
mod cdylib;
mod config;
mod copy;
mod cube;
mod errmsg;
pub mod hccl;
mod mem;
mod nnopbase;
pub mod ops;
mod peer;
mod pool;
pub mod racecheck;
mod runtime;
mod slab;
mod state;
mod stream;
mod strided;
mod tables;

pub use ops::kernel;

pub use config::{
    DEFAULT_DEVICES, DEFAULT_MEM_BYTES, SimConfig, SimDevice, active_config, configure,
};

/// Live-object counters (`ascendSimCounters` in C).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    /// Live device allocations plus live `aclrtMallocHost` buffers.
    pub allocations: u64,
    /// Requested bytes of those allocations.
    pub allocated_bytes: u64,
    /// Live `aclTensor`s.
    pub tensors: u64,
    /// Live executors (not consumed, not destroyed).
    pub executors: u64,
    /// Live streams created with `aclrtCreateStream`.
    pub streams: u64,
    /// Live events.
    pub events: u64,
    /// Live contexts created with `aclrtCreateContext`.
    pub contexts: u64,
    /// Live `aclScalar`s.
    pub scalars: u64,
    /// Live `aclIntArray`s, `aclFloatArray`s and `aclBoolArray`s.
    pub arrays: u64,
    /// Live `aclTensorList`s and `aclScalarList`s (their elements count as tensors and
    /// scalars too).
    pub lists: u64,
}

impl Counters {
    /// The counts a leak check compares: `[allocations, tensors, executors, streams,
    /// events]` (byte totals and explicitly created contexts left out; attribute objects
    /// are in [`Counters::attributes`]).
    pub fn objects(&self) -> [u64; 5] {
        [
            self.allocations,
            self.tensors,
            self.executors,
            self.streams,
            self.events,
        ]
    }

    /// The attribute objects a leak check compares: `[scalars, arrays, lists]`.
    pub fn attributes(&self) -> [u64; 3] {
        [self.scalars, self.arrays, self.lists]
    }
}

/// Error of [`set_fault`]: the name is not a simulated symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownSymbol(pub String);

impl std::fmt::Display for UnknownSymbol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} is not a simulated CANN symbol", self.0)
    }
}

impl std::error::Error for UnknownSymbol {}

/// The live-object counters now.
pub fn counters() -> Counters {
    state::state().counters()
}

/// Arms a fault: the `nth` call of `symbol` from now fails with its documented failure
/// value (`nth == 0` disarms). See the [crate docs](crate#fault-injection).
pub fn set_fault(symbol: &str, nth: u64) -> Result<(), UnknownSymbol> {
    if state::set_fault(symbol, nth) {
        Ok(())
    } else {
        Err(UnknownSymbol(symbol.to_string()))
    }
}

/// Calls of `symbol` so far in this process (0 for an unknown name).
pub fn call_count(symbol: &str) -> u64 {
    state::call_count(symbol)
}

/// The latest sanitizer finding, if any.
pub fn last_report() -> Option<String> {
    state::last_report()
}

/// Forgets the latest sanitizer finding.
pub fn clear_last_report() {
    state::clear_last_report()
}

pub mod testing;

// ---------------------------------------------------------------------------------------
// The one list of entry points.

/// The failure value of an injected fault (an `aclError`/`aclnnStatus`; pointer-returning
/// functions return NULL instead).
pub(crate) fn fault_code(sym: Sym) -> i32 {
    use Sym::*;
    let index = sym as usize;
    if index >= FIRST_HCCL {
        return ascend_sys::hccl::HCCL_E_INTERNAL as i32;
    }
    if (FIRST_NNOPBASE..FIRST_OPERATOR).contains(&index) {
        return ACLNN_ERR_INNER;
    }
    if index >= FIRST_OPERATOR {
        return if SYMBOLS[index].ends_with("GetWorkspaceSize") {
            ACLNN_ERR_INNER_CREATE_EXECUTOR
        } else {
            ACLNN_ERR_RUNTIME_ERROR
        };
    }
    match sym {
        aclInit | aclFinalize => ACL_ERROR_INTERNAL_ERROR,
        aclrtSetDevice => ACL_ERROR_RT_DEV_SETUP_ERROR,
        aclrtGetDeviceCount => ACL_ERROR_RT_NO_DEVICE,
        aclrtGetDevice | aclrtGetCurrentContext => ACL_ERROR_RT_CONTEXT_NULL,
        aclrtMalloc | aclrtMallocHost | aclrtMemPoolMallocAsync => ACL_ERROR_RT_MEMORY_ALLOCATION,
        aclrtSynchronizeStream | aclrtSynchronizeEvent => ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
        aclDestroyTensor
        | aclSetAclOpExecutorRepeatable
        | aclDestroyAclOpExecutor
        | aclSetInputTensorAddr
        | aclSetOutputTensorAddr
        | aclCreateTensor => ACLNN_ERR_INNER,
        _ => ACL_ERROR_RT_INTERNAL_ERROR,
    }
}

sim_api! {
    table {
        req code aclInit(config_path: *const c_char) -> aclError = runtime::init;
        opt code aclFinalize() -> aclError = runtime::finalize;
        req code aclrtSetDevice(device_id: i32) -> aclError = runtime::set_device;
        req code aclrtResetDevice(device_id: i32) -> aclError = runtime::reset_device;
        opt code aclrtGetDevice(device_id: *mut i32) -> aclError = runtime::get_device;
        req code aclrtGetDeviceCount(count: *mut u32) -> aclError = runtime::get_device_count;
        opt code aclrtCreateContext(context: *mut aclrtContext, device_id: i32) -> aclError = runtime::create_context;
        opt code aclrtDestroyContext(context: aclrtContext) -> aclError = runtime::destroy_context;
        opt code aclrtMemPoolCreate(mem_pool: *mut aclrtMemPool, props: *const aclrtMemPoolProps) -> aclError = pool::pool_create;
        opt code aclrtMemPoolDestroy(mem_pool: aclrtMemPool) -> aclError = pool::pool_destroy;
        opt code aclrtMemPoolMallocAsync(ptr: *mut *mut c_void, size: usize, mem_pool: aclrtMemPool, stream: aclrtStream) -> aclError = pool::pool_malloc_async;
        opt code aclrtMemPoolFreeAsync(ptr: *mut c_void, stream: aclrtStream) -> aclError = pool::pool_free_async;
        opt code aclrtMemPoolTrimTo(mem_pool: aclrtMemPool, min_bytes_to_keep: usize) -> aclError = pool::pool_trim_to;
        opt code aclrtLaunchCallback(f: aclrtCallback, user_data: *mut c_void, block_type: aclrtCallbackBlockType, stream: aclrtStream) -> aclError = pool::launch_callback;
        req code aclrtSetCurrentContext(context: aclrtContext) -> aclError = runtime::set_current_context;
        req code aclrtGetCurrentContext(context: *mut aclrtContext) -> aclError = runtime::get_current_context;
        req code aclrtCreateStream(stream: *mut aclrtStream) -> aclError = runtime::create_stream;
        req code aclrtDestroyStream(stream: aclrtStream) -> aclError = runtime::destroy_stream;
        req code aclrtSynchronizeStream(stream: aclrtStream) -> aclError = runtime::synchronize_stream;
        req code aclrtCreateEvent(event: *mut aclrtEvent) -> aclError = runtime::create_event;
        req code aclrtDestroyEvent(event: aclrtEvent) -> aclError = runtime::destroy_event;
        req code aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) -> aclError = runtime::record_event;
        req code aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) -> aclError = runtime::stream_wait_event;
        req code aclrtSynchronizeEvent(event: aclrtEvent) -> aclError = runtime::synchronize_event;
        req code aclrtMalloc(dev_ptr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) -> aclError = mem::malloc;
        req code aclrtFree(dev_ptr: *mut c_void) -> aclError = mem::free;
        req code aclrtMallocHost(host_ptr: *mut *mut c_void, size: usize) -> aclError = mem::malloc_host;
        req code aclrtFreeHost(host_ptr: *mut c_void) -> aclError = mem::free_host;
        req code aclrtMemcpy(dst: *mut c_void, dest_max: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind) -> aclError = copy::memcpy;
        req code aclrtMemcpyAsync(dst: *mut c_void, dest_max: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind, stream: aclrtStream) -> aclError = runtime::memcpy_async;
        req code aclrtMemset(dev_ptr: *mut c_void, max_count: usize, value: i32, count: usize) -> aclError = copy::memset;
        opt code aclrtDeviceCanAccessPeer(can_access_peer: *mut i32, device_id: i32, peer_device_id: i32) -> aclError = peer::can_access_peer;
        opt code aclrtDeviceEnablePeerAccess(peer_device_id: i32, flags: u32) -> aclError = peer::enable_peer_access;
        opt code aclrtDeviceDisablePeerAccess(peer_device_id: i32) -> aclError = peer::disable_peer_access;
        req code aclrtGetMemInfo(attr: aclrtMemAttr, free: *mut usize, total: *mut usize) -> aclError = mem::get_mem_info;
        req cnull aclrtGetSocName() -> *const c_char = runtime::get_soc_name;
        req cnull aclGetRecentErrMsg() -> *const c_char = runtime::get_recent_err_msg;
        req null aclCreateTensor(view_dims: *const i64, view_dims_num: u64, data_type: aclDataType, stride: *const i64, offset: i64, format: aclFormat, storage_dims: *const i64, storage_dims_num: u64, tensor_data: *mut c_void) -> *mut aclTensor = nnopbase::create_tensor;
        req code aclDestroyTensor(tensor: *const aclTensor) -> aclnnStatus = nnopbase::destroy_tensor;
        opt code aclSetAclOpExecutorRepeatable(executor: *mut aclOpExecutor) -> aclnnStatus = nnopbase::set_repeatable;
        opt code aclDestroyAclOpExecutor(executor: *mut aclOpExecutor) -> aclnnStatus = nnopbase::destroy_executor;
        opt code aclSetInputTensorAddr(executor: *mut aclOpExecutor, index: usize, tensor: *mut aclTensor, addr: *mut c_void) -> aclnnStatus = nnopbase::set_input_addr;
        opt code aclSetOutputTensorAddr(executor: *mut aclOpExecutor, index: usize, tensor: *mut aclTensor, addr: *mut c_void) -> aclnnStatus = nnopbase::set_output_addr;
    }
    // nnopbase's attribute objects: counted and faultable, found by `symbol`, not in the
    // FnTable.
    nnopbase {
        null aclCreateScalar(value: *mut c_void, data_type: aclDataType) -> *mut aclScalar = nnopbase::create_scalar;
        null aclCreateIntArray(value: *const i64, size: u64) -> *mut aclIntArray = nnopbase::create_int_array;
        null aclCreateFloatArray(value: *const f32, size: u64) -> *mut aclFloatArray = nnopbase::create_float_array;
        null aclCreateBoolArray(value: *const bool, size: u64) -> *mut aclBoolArray = nnopbase::create_bool_array;
        null aclCreateTensorList(value: *const *const aclTensor, size: u64) -> *mut aclTensorList = nnopbase::create_tensor_list;
        null aclCreateScalarList(value: *const *const aclScalar, size: u64) -> *mut aclScalarList = nnopbase::create_scalar_list;
        code aclDestroyScalar(scalar: *const aclScalar) -> aclnnStatus = nnopbase::destroy_scalar;
        code aclDestroyIntArray(array: *const aclIntArray) -> aclnnStatus = nnopbase::destroy_int_array;
        code aclDestroyFloatArray(array: *const aclFloatArray) -> aclnnStatus = nnopbase::destroy_float_array;
        code aclDestroyBoolArray(array: *const aclBoolArray) -> aclnnStatus = nnopbase::destroy_bool_array;
        code aclDestroyTensorList(array: *const aclTensorList) -> aclnnStatus = nnopbase::destroy_tensor_list;
        code aclDestroyScalarList(array: *const aclScalarList) -> aclnnStatus = nnopbase::destroy_scalar_list;
        code aclGetIntArraySize(array: *const aclIntArray, size: *mut u64) -> aclnnStatus = nnopbase::get_int_array_size;
        code aclGetFloatArraySize(array: *const aclFloatArray, size: *mut u64) -> aclnnStatus = nnopbase::get_float_array_size;
        code aclGetBoolArraySize(array: *const aclBoolArray, size: *mut u64) -> aclnnStatus = nnopbase::get_bool_array_size;
        code aclGetTensorListSize(tensor_list: *const aclTensorList, size: *mut u64) -> aclnnStatus = nnopbase::get_tensor_list_size;
        code aclGetScalarListSize(scalar_list: *const aclScalarList, size: *mut u64) -> aclnnStatus = nnopbase::get_scalar_list_size;
    }
    // One line per operator: its phase 1 (the C prototype) and its phase 2 with its kind.
    operators {
        aclnnMishBackwardGetWorkspaceSize(grad_output: *const aclTensor, self_: *const aclTensor, grad_input: *mut aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::mish_backward::get_workspace_size, aclnnMishBackward = ops::mish_backward::OP;
        aclnnMishGetWorkspaceSize(self_: *const aclTensor, out: *mut aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::mish::get_workspace_size, aclnnMish = ops::mish::OP;
        aclnnInplaceMishGetWorkspaceSize(self_ref: *mut aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::mish::inplace_get_workspace_size, aclnnInplaceMish = ops::mish::INPLACE_OP;
        aclnnInplaceCopyGetWorkspaceSize(self_ref: *mut aclTensor, src: *const aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::inplace_copy::get_workspace_size, aclnnInplaceCopy = ops::inplace_copy::OP;
        aclnnInplaceZeroGetWorkspaceSize(self_ref: *mut aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::inplace_zero::get_workspace_size, aclnnInplaceZero = ops::inplace_zero::OP;
        aclnnInplaceFillScalarGetWorkspaceSize(self_ref: *mut aclTensor, value: *const aclScalar, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::inplace_fill_scalar::get_workspace_size, aclnnInplaceFillScalar = ops::inplace_fill_scalar::OP;
        aclnnAddGetWorkspaceSize(self_: *const aclTensor, other: *const aclTensor, alpha: *const aclScalar, out: *mut aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::add::get_workspace_size, aclnnAdd = ops::add::OP;
        aclnnInplaceAddGetWorkspaceSize(self_ref: *const aclTensor, other: *const aclTensor, alpha: *const aclScalar, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::add::inplace_get_workspace_size, aclnnInplaceAdd = ops::add::INPLACE_OP;
        aclnnSubGetWorkspaceSize(self_: *const aclTensor, other: *const aclTensor, alpha: *const aclScalar, out: *mut aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::sub::get_workspace_size, aclnnSub = ops::sub::OP;
        aclnnInplaceSubGetWorkspaceSize(self_ref: *mut aclTensor, other: *const aclTensor, alpha: *const aclScalar, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::sub::inplace_get_workspace_size, aclnnInplaceSub = ops::sub::INPLACE_OP;
        aclnnMulGetWorkspaceSize(self_: *const aclTensor, other: *const aclTensor, out: *mut aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::mul::get_workspace_size, aclnnMul = ops::mul::OP;
        aclnnInplaceMulGetWorkspaceSize(self_ref: *mut aclTensor, other: *const aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::mul::inplace_get_workspace_size, aclnnInplaceMul = ops::mul::INPLACE_OP;
        aclnnMatmulGetWorkspaceSize(self_: *const aclTensor, mat2: *const aclTensor, out: *mut aclTensor, cube_math_type: i8, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::matmul::get_workspace_size, aclnnMatmul = ops::matmul::OP;
        aclnnAddmmGetWorkspaceSize(self_: *const aclTensor, mat1: *const aclTensor, mat2: *const aclTensor, beta: *const aclScalar, alpha: *const aclScalar, out: *mut aclTensor, cube_math_type: i8, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::addmm::get_workspace_size, aclnnAddmm = ops::addmm::OP;
        aclnnReduceSumGetWorkspaceSize(self_: *const aclTensor, dims: *const aclIntArray, keep_dims: bool, dtype: aclDataType, out: *mut aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::reduce_sum::get_workspace_size, aclnnReduceSum = ops::reduce_sum::OP;
        aclnnMseLossGetWorkspaceSize(self_: *const aclTensor, target: *const aclTensor, reduction: i64, out: *mut aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::mse_loss::get_workspace_size, aclnnMseLoss = ops::mse_loss::OP;
        aclnnMseLossBackwardGetWorkspaceSize(grad_output: *const aclTensor, self_: *const aclTensor, target: *const aclTensor, reduction: i64, out: *mut aclTensor, workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) = ops::mse_loss_backward::get_workspace_size, aclnnMseLossBackward = ops::mse_loss_backward::OP;
    }
    // HCCL (libhccl.so): counted and faultable (HCCL_E_INTERNAL), not in the FnTable.
    hccl {
        hccl HcclCommInitAll(ndev: u32, devices: *mut i32, comms: *mut HcclComm) -> HcclResult = hccl::comm_init_all;
        hccl HcclGetRootInfo(root_info: *mut HcclRootInfo) -> HcclResult = hccl::get_root_info;
        hccl HcclCommInitRootInfo(n_ranks: u32, root_info: *const HcclRootInfo, rank: u32, comm: *mut HcclComm) -> HcclResult = hccl::comm_init_root_info;
        hccl HcclCommDestroy(comm: HcclComm) -> HcclResult = hccl::comm_destroy;
        hccl HcclGetRankSize(comm: HcclComm, rank_size: *mut u32) -> HcclResult = hccl::get_rank_size;
        hccl HcclGetRankId(comm: HcclComm, rank: *mut u32) -> HcclResult = hccl::get_rank_id;
        hccl HcclAllReduce(send_buf: *mut c_void, recv_buf: *mut c_void, count: u64, data_type: HcclDataType, op: HcclReduceOp, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::all_reduce;
        hccl HcclBroadcast(buf: *mut c_void, count: u64, data_type: HcclDataType, root: u32, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::broadcast;
        hccl HcclAllGather(send_buf: *mut c_void, recv_buf: *mut c_void, send_count: u64, data_type: HcclDataType, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::all_gather;
        hccl HcclReduceScatter(send_buf: *mut c_void, recv_buf: *mut c_void, recv_count: u64, data_type: HcclDataType, op: HcclReduceOp, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::reduce_scatter;
        hccl HcclBarrier(comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::barrier;
        hccl HcclSend(send_buf: *mut c_void, count: u64, data_type: HcclDataType, dest_rank: u32, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::send;
        hccl HcclRecv(recv_buf: *mut c_void, count: u64, data_type: HcclDataType, src_rank: u32, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::recv;
        hccl HcclGetCommAsyncError(comm: HcclComm, async_error: *mut HcclResult) -> HcclResult = hccl::get_comm_async_error;
        cnull HcclGetErrorString(code: HcclResult) -> *const c_char = hccl::get_error_string;
    }
    extra {
        ascendSimGetHcclCounters(out: *mut hccl::HcclCounters) -> i32 = ext::get_hccl_counters, ACL_ERROR_INTERNAL_ERROR;
        ascendSimSetFault(symbol: *const c_char, nth: u64) -> i32 = ext::set_fault, ACL_ERROR_INTERNAL_ERROR;
        ascendSimGetCounters(out: *mut Counters) -> i32 = ext::get_counters, ACL_ERROR_INTERNAL_ERROR;
        ascendSimLastReport() -> *const c_char = ext::last_report, c"".as_ptr();
        ascendSimGetCallCount(symbol: *const c_char) -> u64 = ext::get_call_count, 0;
    }
}

/// The extra C API.
mod ext {
    use super::*;

    /// # Safety
    /// `symbol` is null or a NUL-terminated string.
    unsafe fn name<'a>(symbol: *const c_char) -> Option<&'a str> {
        if symbol.is_null() {
            return None;
        }
        // SAFETY: non-null and NUL-terminated by the caller's contract.
        unsafe { CStr::from_ptr(symbol) }.to_str().ok()
    }

    pub(super) unsafe fn set_fault(symbol: *const c_char, nth: u64) -> i32 {
        // SAFETY: forwarded contract.
        match unsafe { name(symbol) } {
            Some(s) if crate::state::set_fault(s, nth) => ACL_SUCCESS,
            _ => ACL_ERROR_INVALID_PARAM,
        }
    }

    pub(super) unsafe fn get_counters(out: *mut Counters) -> i32 {
        if out.is_null() {
            return ACL_ERROR_INVALID_PARAM;
        }
        // SAFETY: non-null and writable by the caller's contract.
        unsafe { out.write(counters()) };
        ACL_SUCCESS
    }

    pub(super) unsafe fn get_hccl_counters(out: *mut hccl::HcclCounters) -> i32 {
        if out.is_null() {
            return ACL_ERROR_INVALID_PARAM;
        }
        // SAFETY: non-null and writable by the caller's contract.
        unsafe { out.write(hccl::counters()) };
        ACL_SUCCESS
    }

    pub(super) unsafe fn last_report() -> *const c_char {
        crate::state::last_report_ptr()
    }

    pub(super) unsafe fn get_call_count(symbol: *const c_char) -> u64 {
        // SAFETY: forwarded contract.
        unsafe { name(symbol) }.map_or(0, crate::state::call_count)
    }
}
