//! The table of typed function pointers through which every runtime and nnopbase call into
//! CANN goes. Operators (`libopapi.so`) are not in it: each is resolved by name when first
//! used ([`Api::operator_symbol`](crate::Api::operator_symbol)), so a toolkit lacking one
//! operator still loads.

use crate::bindings::*;
use std::os::raw::{c_char, c_void};

/// Declares [`FnTable`] from one list, so that the field types, the library each symbol
/// comes from and the compile-time check against the bindgen prototypes cannot drift
/// apart.
macro_rules! fn_table {
    (
        required { $( $lib:literal => [ $( $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty ;)* ] )* }
        optional { $( $olib:literal => [ $( $oname:ident ( $($oarg:ident : $oty:ty),* ) -> $oret:ty ;)* ] )* }
    ) => {
        /// Typed pointers to the runtime (`libascendcl.so`) and aclnn base
        /// (`libnnopbase.so`) functions.
        ///
        /// Field names are the C symbol names. Fields of type `Option` are functions a
        /// library may lack without making it unusable: executor reuse (absent before CANN
        /// 8.0), peer access (needed only for copies between devices), and functions the
        /// safe crate never calls. Everything else must be present
        /// for a table to exist.
        ///
        /// A table is plain data (`Copy`); calling through it is `unsafe` with the
        /// contract of the C function of the same name.
        #[derive(Clone, Copy)]
        pub struct FnTable {
            $( $(
                #[doc = concat!("`", stringify!($name), "`, from `", $lib, "`.")]
                pub $name: unsafe extern "C" fn($($arg: $ty),*) -> $ret,
            )* )*
            $( $(
                #[doc = concat!("`", stringify!($oname), "`, from `", $olib, "` (optional).")]
                pub $oname: Option<unsafe extern "C" fn($($oarg: $oty),*) -> $oret>,
            )* )*
        }

        impl FnTable {
            /// `(library, symbol)` of every required function, in declaration order.
            pub const REQUIRED_SYMBOLS: &'static [(&'static str, &'static str)] =
                &[ $( $( ($lib, stringify!($name)), )* )* ];
            /// `(library, symbol)` of every optional function.
            pub const OPTIONAL_SYMBOLS: &'static [(&'static str, &'static str)] =
                &[ $( $( ($olib, stringify!($oname)), )* )* ];

            /// Fills a table by looking every symbol up with `resolve(library, symbol)`.
            ///
            /// # Errors
            /// The `(library, symbol)` of the first required symbol `resolve` returns
            /// `None` for.
            ///
            /// # Safety
            /// Every non-null pointer `resolve` returns for a symbol must point to a
            /// function with exactly the C prototype of that name.
            pub unsafe fn resolve_with(
                mut resolve: impl FnMut(&'static str, &'static str) -> Option<*const c_void>,
            ) -> Result<Self, (&'static str, &'static str)> {
                Ok(Self {
                    $( $(
                        // SAFETY: the caller promises the pointer has this prototype.
                        $name: unsafe {
                            std::mem::transmute::<*const c_void, unsafe extern "C" fn($($ty),*) -> $ret>(
                                resolve($lib, stringify!($name))
                                    .filter(|p| !p.is_null())
                                    .ok_or(($lib, stringify!($name)))?,
                            )
                        },
                    )* )*
                    $( $(
                        // SAFETY: as above; a missing optional symbol stays `None`.
                        $oname: resolve($olib, stringify!($oname))
                            .filter(|p| !p.is_null())
                            .map(|p| unsafe {
                                std::mem::transmute::<*const c_void, unsafe extern "C" fn($($oty),*) -> $oret>(p)
                            }),
                    )* )*
                })
            }
        }

        /// Compile-time proof that every field has the prototype bindgen generated from
        /// the header. Generic and never instantiated, so the `extern` declarations are
        /// type-checked but never referenced by the linker.
        #[allow(dead_code, clippy::type_complexity, clippy::extra_unused_type_parameters)]
        fn _prototypes_match_header<T>() {
            $( $( let _: unsafe extern "C" fn($($ty),*) -> $ret = $name; )* )*
            $( $( let _: unsafe extern "C" fn($($oty),*) -> $oret = $oname; )* )*
        }
    };
}

fn_table! {
    required {
        "libascendcl.so" => [
            aclInit(config_path: *const c_char) -> aclError;
            aclrtSetDevice(device_id: i32) -> aclError;
            aclrtResetDevice(device_id: i32) -> aclError;
            aclrtGetDeviceCount(count: *mut u32) -> aclError;
            aclrtSetCurrentContext(context: aclrtContext) -> aclError;
            aclrtGetCurrentContext(context: *mut aclrtContext) -> aclError;
            aclrtCreateStream(stream: *mut aclrtStream) -> aclError;
            aclrtDestroyStream(stream: aclrtStream) -> aclError;
            aclrtSynchronizeStream(stream: aclrtStream) -> aclError;
            aclrtCreateEvent(event: *mut aclrtEvent) -> aclError;
            aclrtDestroyEvent(event: aclrtEvent) -> aclError;
            aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) -> aclError;
            aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) -> aclError;
            aclrtSynchronizeEvent(event: aclrtEvent) -> aclError;
            aclrtMalloc(dev_ptr: *mut *mut c_void, size: usize, policy: aclrtMemMallocPolicy) -> aclError;
            aclrtFree(dev_ptr: *mut c_void) -> aclError;
            aclrtMallocHost(host_ptr: *mut *mut c_void, size: usize) -> aclError;
            aclrtFreeHost(host_ptr: *mut c_void) -> aclError;
            aclrtMemcpy(dst: *mut c_void, dest_max: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind) -> aclError;
            aclrtMemcpyAsync(dst: *mut c_void, dest_max: usize, src: *const c_void, count: usize, kind: aclrtMemcpyKind, stream: aclrtStream) -> aclError;
            aclrtMemset(dev_ptr: *mut c_void, max_count: usize, value: i32, count: usize) -> aclError;
            aclrtGetMemInfo(attr: aclrtMemAttr, free: *mut usize, total: *mut usize) -> aclError;
            aclrtGetSocName() -> *const c_char;
            aclGetRecentErrMsg() -> *const c_char;
        ]
        "libnnopbase.so" => [
            aclCreateTensor(view_dims: *const i64, view_dims_num: u64, data_type: aclDataType, stride: *const i64, offset: i64, format: aclFormat, storage_dims: *const i64, storage_dims_num: u64, tensor_data: *mut c_void) -> *mut aclTensor;
            aclDestroyTensor(tensor: *const aclTensor) -> aclnnStatus;
        ]
    }
    optional {
        // Not called by the safe crate; kept for raw users of the table.
        "libascendcl.so" => [
            aclFinalize() -> aclError;
            aclrtGetDevice(device_id: *mut i32) -> aclError;
            aclrtCreateContext(context: *mut aclrtContext, device_id: i32) -> aclError;
            aclrtDestroyContext(context: aclrtContext) -> aclError;
            // Stream-ordered memory pools (CANN 8.x) and host callbacks in stream order.
            aclrtMemPoolCreate(mem_pool: *mut aclrtMemPool, props: *const aclrtMemPoolProps) -> aclError;
            aclrtMemPoolDestroy(mem_pool: aclrtMemPool) -> aclError;
            aclrtMemPoolMallocAsync(ptr: *mut *mut c_void, size: usize, mem_pool: aclrtMemPool, stream: aclrtStream) -> aclError;
            aclrtMemPoolFreeAsync(ptr: *mut c_void, stream: aclrtStream) -> aclError;
            aclrtMemPoolTrimTo(mem_pool: aclrtMemPool, min_bytes_to_keep: usize) -> aclError;
            aclrtLaunchCallback(f: aclrtCallback, user_data: *mut c_void, block_type: aclrtCallbackBlockType, stream: aclrtStream) -> aclError;
        ]
        // Peer access between devices (copies from another device's memory).
        "libascendcl.so" => [
            aclrtDeviceCanAccessPeer(can_access_peer: *mut i32, device_id: i32, peer_device_id: i32) -> aclError;
            aclrtDeviceEnablePeerAccess(peer_device_id: i32, flags: u32) -> aclError;
            aclrtDeviceDisablePeerAccess(peer_device_id: i32) -> aclError;
        ]
        // Executor reuse, CANN 8.0 and later.
        "libnnopbase.so" => [
            aclSetAclOpExecutorRepeatable(executor: *mut aclOpExecutor) -> aclnnStatus;
            aclDestroyAclOpExecutor(executor: *mut aclOpExecutor) -> aclnnStatus;
            aclSetInputTensorAddr(executor: *mut aclOpExecutor, index: usize, tensor: *mut aclTensor, addr: *mut c_void) -> aclnnStatus;
            aclSetOutputTensorAddr(executor: *mut aclOpExecutor, index: usize, tensor: *mut aclTensor, addr: *mut c_void) -> aclnnStatus;
        ]
    }
}

impl std::fmt::Debug for FnTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let reuse = self.aclSetAclOpExecutorRepeatable.is_some()
            && self.aclDestroyAclOpExecutor.is_some()
            && self.aclSetInputTensorAddr.is_some()
            && self.aclSetOutputTensorAddr.is_some();
        f.debug_struct("FnTable")
            .field("required", &Self::REQUIRED_SYMBOLS.len())
            .field("executor_reuse", &reuse)
            .finish_non_exhaustive()
    }
}

/// Typed pointers to nnopbase's attribute-object functions (`aclCreateScalar`,
/// `aclCreateIntArray`, `aclCreateBoolArray` and their destructors), which operators with
/// scalar, int-list or bool-list arguments need. Each may be absent (a table over an in-process backend without them):
/// the call that needs one reports it. Resolved with the [`FnTable`], from
/// `libnnopbase.so`.
#[derive(Clone, Copy, Default)]
pub struct AttrFns {
    /// `aclCreateScalar`.
    pub aclCreateScalar:
        Option<unsafe extern "C" fn(value: *mut c_void, data_type: aclDataType) -> *mut aclScalar>,
    /// `aclDestroyScalar`.
    pub aclDestroyScalar: Option<unsafe extern "C" fn(scalar: *const aclScalar) -> aclnnStatus>,
    /// `aclCreateIntArray`.
    pub aclCreateIntArray:
        Option<unsafe extern "C" fn(value: *const i64, size: u64) -> *mut aclIntArray>,
    /// `aclDestroyIntArray`.
    pub aclDestroyIntArray: Option<unsafe extern "C" fn(array: *const aclIntArray) -> aclnnStatus>,
    /// `aclCreateBoolArray`.
    pub aclCreateBoolArray:
        Option<unsafe extern "C" fn(value: *const bool, size: u64) -> *mut aclBoolArray>,
    /// `aclDestroyBoolArray`.
    pub aclDestroyBoolArray:
        Option<unsafe extern "C" fn(array: *const aclBoolArray) -> aclnnStatus>,
    /// `aclCreateTensorList`.
    pub aclCreateTensorList: Option<
        unsafe extern "C" fn(value: *const *const aclTensor, size: u64) -> *mut aclTensorList,
    >,
    /// `aclDestroyTensorList` (which destroys the list's tensors too).
    pub aclDestroyTensorList:
        Option<unsafe extern "C" fn(array: *const aclTensorList) -> aclnnStatus>,
}

impl AttrFns {
    /// `(library, symbol)` of every function.
    pub const SYMBOLS: &'static [(&'static str, &'static str)] = &[
        ("libnnopbase.so", "aclCreateScalar"),
        ("libnnopbase.so", "aclDestroyScalar"),
        ("libnnopbase.so", "aclCreateIntArray"),
        ("libnnopbase.so", "aclDestroyIntArray"),
        ("libnnopbase.so", "aclCreateBoolArray"),
        ("libnnopbase.so", "aclDestroyBoolArray"),
        ("libnnopbase.so", "aclCreateTensorList"),
        ("libnnopbase.so", "aclDestroyTensorList"),
    ];

    /// Looks every function up with `resolve(library, symbol)`; a null or absent one stays
    /// `None`.
    ///
    /// # Safety
    /// Every non-null pointer `resolve` returns for a symbol must point to a function with
    /// exactly the C prototype of that name.
    pub unsafe fn resolve_with(
        mut resolve: impl FnMut(&'static str, &'static str) -> Option<*const c_void>,
    ) -> Self {
        let mut find =
            |symbol: &'static str| resolve("libnnopbase.so", symbol).filter(|p| !p.is_null());
        // SAFETY (each transmute): the caller promises the pointer has the prototype of
        // the name it was looked up by, which is the field's type.
        unsafe {
            AttrFns {
                aclCreateScalar: find("aclCreateScalar").map(|p| std::mem::transmute(p)),
                aclDestroyScalar: find("aclDestroyScalar").map(|p| std::mem::transmute(p)),
                aclCreateIntArray: find("aclCreateIntArray").map(|p| std::mem::transmute(p)),
                aclDestroyIntArray: find("aclDestroyIntArray").map(|p| std::mem::transmute(p)),
                aclCreateBoolArray: find("aclCreateBoolArray").map(|p| std::mem::transmute(p)),
                aclDestroyBoolArray: find("aclDestroyBoolArray").map(|p| std::mem::transmute(p)),
                aclCreateTensorList: find("aclCreateTensorList").map(|p| std::mem::transmute(p)),
                aclDestroyTensorList: find("aclDestroyTensorList").map(|p| std::mem::transmute(p)),
            }
        }
    }

    /// Compile-time proof that every field has the prototype bindgen generated from the
    /// header (generic and never instantiated, as for [`FnTable`]).
    #[allow(dead_code, clippy::extra_unused_type_parameters)]
    fn _prototypes_match_header<T>() {
        let _: Option<unsafe extern "C" fn(*mut c_void, aclDataType) -> *mut aclScalar> =
            Some(aclCreateScalar);
        let _: Option<unsafe extern "C" fn(*const aclScalar) -> aclnnStatus> =
            Some(aclDestroyScalar);
        let _: Option<unsafe extern "C" fn(*const i64, u64) -> *mut aclIntArray> =
            Some(aclCreateIntArray);
        let _: Option<unsafe extern "C" fn(*const aclIntArray) -> aclnnStatus> =
            Some(aclDestroyIntArray);
        let _: Option<unsafe extern "C" fn(*const bool, u64) -> *mut aclBoolArray> =
            Some(aclCreateBoolArray);
        let _: Option<unsafe extern "C" fn(*const aclBoolArray) -> aclnnStatus> =
            Some(aclDestroyBoolArray);
        let _: Option<unsafe extern "C" fn(*const *const aclTensor, u64) -> *mut aclTensorList> =
            Some(aclCreateTensorList);
        let _: Option<unsafe extern "C" fn(*const aclTensorList) -> aclnnStatus> =
            Some(aclDestroyTensorList);
    }
}

impl std::fmt::Debug for AttrFns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttrFns")
            .field(
                "scalars",
                &(self.aclCreateScalar.is_some() && self.aclDestroyScalar.is_some()),
            )
            .field(
                "int_arrays",
                &(self.aclCreateIntArray.is_some() && self.aclDestroyIntArray.is_some()),
            )
            .field(
                "bool_arrays",
                &(self.aclCreateBoolArray.is_some() && self.aclDestroyBoolArray.is_some()),
            )
            .finish()
    }
}
