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
//!   prototype, plus the simulator's own `ascendSim*` functions, so a C program written against
//!   the CANN headers links and runs against it unchanged.
//!
//! # Operators it lacks
//!
//! A user's crate simulates an operator the simulator does not ship with
//! [`simulated_operator!`] (its checks, its output's checks and its kernel) and
//! [`register`]: its two entry points then run like a shipped operator's, found by
//! [`symbol`], counted and faultable. See [`custom`].
//!
//! # Where the model is documented
//!
//! [`model`] describes the runtime, nnopbase and the phase 2 every operator shares; each
//! module of [`ops`] lists its operator's products, phase-1 checks (in the vendor's order,
//! with the vendor's codes), dtypes, shape rule and compute chain; [`hccl`] models
//! `libhccl.so`; [`racecheck`] the cross-stream race detector; [`set_fault`] the fault
//! injection and its failure values; [`Counters`] the introspection.
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
//! # Racecheck
//!
//! Every kernel, copy, memset and collective declares the bytes it reads and writes, and
//! work whose access conflicts with another stream's (or the host's) without a
//! happens-before order between them (stream order, an event recorded and waited for, a
//! host synchronisation) fails loudly, naming both accesses. On by default;
//! `ASCEND_SIM_RACECHECK=0` or [`racecheck::set_enabled`] turns it off. See [`racecheck`]
//! for the model, the messages and what it cannot see.
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
use std::ffi::{c_char, c_void};

#[macro_use]
mod registry;

mod cast;
mod catalog;
mod cdylib;
mod config;
mod copy;
mod cube;
pub mod custom;
mod errmsg;
pub mod hccl;
mod introspect;
mod mem;
pub mod model;
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

/// The C types and constants of CANN, as [`simulated_operator!`] declarations and their
/// checks name them (`sys::ACL_FLOAT`, `sys::aclTensor`).
pub use ascend_sys as sys;
pub use custom::register;

use introspect::ext;
pub use introspect::{
    Counters, UnknownSymbol, call_count, clear_last_report, counters, last_report, set_fault,
};

pub use config::{
    DEFAULT_DEVICES, DEFAULT_MEM_BYTES, SimConfig, SimDevice, active_config, configure,
};

pub mod testing;

/// Every simulated symbol: [`SYMBOLS`], then the entry points of the operator families
/// (`aclnnExp`, ...), which the simulator builds from `ascend-ops`' tables, then those of
/// the operators users [`register`]ed.
pub fn simulated_symbols() -> Vec<&'static str> {
    SYMBOLS.iter().copied().chain(catalog::names()).collect()
}

// ---------------------------------------------------------------------------------------
// The one list of entry points.

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
    // One line per operator: its phase 1 (the C prototype without the `workspaceSize` and
    // `executor` that end every phase 1) and its phase 2 with its kind.
    operators {
        aclnnMishBackwardGetWorkspaceSize(grad_output: *const aclTensor, self_: *const aclTensor, grad_input: *mut aclTensor) = ops::mish_backward::get_workspace_size, aclnnMishBackward = ops::mish_backward::OP;
        aclnnMishGetWorkspaceSize(self_: *const aclTensor, out: *mut aclTensor) = ops::mish::get_workspace_size, aclnnMish = ops::mish::OP;
        aclnnInplaceMishGetWorkspaceSize(self_ref: *mut aclTensor) = ops::mish::inplace_get_workspace_size, aclnnInplaceMish = ops::mish::INPLACE_OP;
        aclnnInplaceCopyGetWorkspaceSize(self_ref: *mut aclTensor, src: *const aclTensor) = ops::inplace_copy::get_workspace_size, aclnnInplaceCopy = ops::inplace_copy::OP;
        aclnnInplaceZeroGetWorkspaceSize(self_ref: *mut aclTensor) = ops::inplace_zero::get_workspace_size, aclnnInplaceZero = ops::inplace_zero::OP;
        aclnnInplaceFillScalarGetWorkspaceSize(self_ref: *mut aclTensor, value: *const aclScalar) = ops::inplace_fill_scalar::get_workspace_size, aclnnInplaceFillScalar = ops::inplace_fill_scalar::OP;
        aclnnAddGetWorkspaceSize(self_: *const aclTensor, other: *const aclTensor, alpha: *const aclScalar, out: *mut aclTensor) = ops::alpha_chain::get_workspace_size [&ops::add::OP], aclnnAdd = ops::add::OP;
        aclnnInplaceAddGetWorkspaceSize(self_ref: *const aclTensor, other: *const aclTensor, alpha: *const aclScalar) = ops::alpha_chain::inplace_alpha_chain [&ops::add::INPLACE], aclnnInplaceAdd = ops::add::INPLACE_OP;
        aclnnMulGetWorkspaceSize(self_: *const aclTensor, other: *const aclTensor, out: *mut aclTensor) = ops::mul::get_workspace_size, aclnnMul = ops::mul::OP;
        aclnnInplaceMulGetWorkspaceSize(self_ref: *mut aclTensor, other: *const aclTensor) = ops::mul::inplace_get_workspace_size, aclnnInplaceMul = ops::mul::INPLACE_OP;
        aclnnMatmulGetWorkspaceSize(self_: *const aclTensor, mat2: *const aclTensor, out: *mut aclTensor, cube_math_type: i8) = ops::matmul::get_workspace_size, aclnnMatmul = ops::matmul::OP;
        aclnnAddmmGetWorkspaceSize(self_: *const aclTensor, mat1: *const aclTensor, mat2: *const aclTensor, beta: *const aclScalar, alpha: *const aclScalar, out: *mut aclTensor, cube_math_type: i8) = ops::addmm::get_workspace_size, aclnnAddmm = ops::addmm::OP;
        aclnnReduceSumGetWorkspaceSize(self_: *const aclTensor, dims: *const aclIntArray, keep_dims: bool, dtype: aclDataType, out: *mut aclTensor) = ops::reduce_sum::get_workspace_size, aclnnReduceSum = ops::reduce_sum::OP;
        aclnnMseLossGetWorkspaceSize(self_: *const aclTensor, target: *const aclTensor, reduction: i64, out: *mut aclTensor) = ops::mse_loss::get_workspace_size, aclnnMseLoss = ops::mse_loss::OP;
        aclnnMseLossBackwardGetWorkspaceSize(grad_output: *const aclTensor, self_: *const aclTensor, target: *const aclTensor, reduction: i64, out: *mut aclTensor) = ops::mse_loss_backward::get_workspace_size, aclnnMseLossBackward = ops::mse_loss_backward::OP;
    }
    // HCCL (libhccl.so): counted and faultable (HCCL_E_INTERNAL), not in the FnTable.
    hccl {
        hccl HcclCommInitAll(ndev: u32, devices: *mut i32, comms: *mut HcclComm) -> HcclResult = hccl::comm_init_all;
        hccl HcclGetRootInfo(root_info: *mut HcclRootInfo) -> HcclResult = hccl::get_root_info;
        hccl HcclCommInitRootInfo(n_ranks: u32, root_info: *const HcclRootInfo, rank: u32, comm: *mut HcclComm) -> HcclResult = hccl::comm_init_root_info;
        hccl HcclCommDestroy(comm: HcclComm) -> HcclResult = hccl::comm_destroy;
        hccl HcclGetRankSize(comm: HcclComm, rank_size: *mut u32) -> HcclResult = hccl::get_rank_size;
        hccl HcclGetRankId(comm: HcclComm, rank: *mut u32) -> HcclResult = hccl::get_rank_id;
        hccl HcclAllReduce(send_buf: *mut c_void, recv_buf: *mut c_void, count: u64, data_type: HcclDataType, op: HcclReduceOp, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::reducing [hccl::Kind::AllReduce];
        hccl HcclBroadcast(buf: *mut c_void, count: u64, data_type: HcclDataType, root: u32, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::broadcast;
        hccl HcclAllGather(send_buf: *mut c_void, recv_buf: *mut c_void, send_count: u64, data_type: HcclDataType, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::all_gather;
        hccl HcclReduceScatter(send_buf: *mut c_void, recv_buf: *mut c_void, recv_count: u64, data_type: HcclDataType, op: HcclReduceOp, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::reducing [hccl::Kind::ReduceScatter];
        hccl HcclBarrier(comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::barrier;
        hccl HcclSend(send_buf: *mut c_void, count: u64, data_type: HcclDataType, dest_rank: u32, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::post [hccl::Role::Send];
        hccl HcclRecv(recv_buf: *mut c_void, count: u64, data_type: HcclDataType, src_rank: u32, comm: HcclComm, stream: aclrtStream) -> HcclResult = hccl::post [hccl::Role::Recv];
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
