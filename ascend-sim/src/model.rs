//! What the simulator models of the runtime and of nnopbase, and the phase 2 every
//! operator shares: process state, error text, handles, contexts, memory, copies,
//! streams, devices, tensors, attribute objects, executors. The operators' own checks
//! are documented in their modules of [`ops`](crate::ops), HCCL in [`hccl`](crate::hccl).
//!
//! * **Process state.** `aclInit` once per process (a second call gives 100002; any call
//!   after `aclFinalize` gives 100001). The simulated machine is configured at `aclInit`,
//!   from the [`SimConfig`](crate::SimConfig) given to [`configure`](crate::configure) before it, or else from the
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
//!     from process start fails (see [fault injection](crate::set_fault)).
//!   * `ASCEND_SIM_VERBOSE`: `1`/`true`/`yes`/`on` prints every sanitizer finding to
//!     stderr too (`0`/`false`/`no`/`off`/empty: not).
//!   * `ASCEND_SIM_HCCL_TIMEOUT_MS`: how long an HCCL rank waits for the others (default
//!     30000; see [`hccl`](crate::hccl)).
//!   * `ASCEND_SIM_RACECHECK`: a switch (as `ASCEND_SIM_VERBOSE`), on when unset: whether
//!     the [`racecheck`](crate::racecheck) runs ([`racecheck::set_enabled`](crate::racecheck::set_enabled) changes it later).
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
//!   should have released first stays counted as leaked ([`counters`](crate::counters); `aclFinalize`
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
//!   text in `aclGetRecentErrMsg` and [`last_report`](crate::last_report). The synchronous copy does not wait
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
//!   an out-of-bounds view) is reported immediately through [`last_report`](crate::last_report) and makes the
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
//!   offset is also reported through [`last_report`](crate::last_report). It needs no `aclInit`;
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
//!   finding. They live in slabs like tensors and are counted ([`Counters::attributes`](crate::Counters::attributes)).
//! * **Operators.** Each is one module of [`ops`](crate::ops), whose documentation lists its products,
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
