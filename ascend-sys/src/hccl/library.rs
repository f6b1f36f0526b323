//! Finding HCCL's functions: `libhccl.so` beside CANN's libraries, or an in-process
//! backend's resolver.

use super::bindings::*;
use crate::bindings::aclrtStream;
use crate::{Api, Origin, SymbolResolver};
use std::ffi::c_void;
use std::fmt;
use std::ops::Deref;
use std::os::raw::c_char;
use std::path::{Path, PathBuf};

/// The file name of HCCL's library, looked up in the directory CANN's runtime was loaded
/// from.
pub const HCCL_LIBRARY: &str = "libhccl.so";

/// Declares [`HcclTable`] from one list, so that the field types and the compile-time check
/// against the bindgen prototypes cannot drift apart.
macro_rules! hccl_table {
    ( $( $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty ; )* ) => {
        /// Typed pointers to the HCCL functions (field names are the C symbol names).
        ///
        /// Plain data (`Copy`); calling through it is `unsafe` with the contract of the C
        /// function of the same name.
        #[derive(Clone, Copy)]
        pub struct HcclTable {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                pub $name: unsafe extern "C" fn($($arg: $ty),*) -> $ret,
            )*
        }

        impl HcclTable {
            /// Every symbol of the table, in declaration order.
            pub const SYMBOLS: &'static [&'static str] = &[ $( stringify!($name), )* ];

            /// Fills a table by looking every symbol up with `resolve`.
            ///
            /// # Errors
            /// The first symbol `resolve` returns `None` (or null) for.
            ///
            /// # Safety
            /// Every non-null pointer `resolve` returns for a symbol must point to a
            /// function with exactly the C prototype of that name.
            pub unsafe fn resolve_with(
                mut resolve: impl FnMut(&'static str) -> Option<*const c_void>,
            ) -> Result<Self, &'static str> {
                Ok(Self {
                    $(
                        // SAFETY: the caller promises the pointer has this prototype.
                        $name: unsafe {
                            std::mem::transmute::<*const c_void, unsafe extern "C" fn($($ty),*) -> $ret>(
                                resolve(stringify!($name))
                                    .filter(|p| !p.is_null())
                                    .ok_or(stringify!($name))?,
                            )
                        },
                    )*
                })
            }
        }

        /// Compile-time proof that every field has the prototype bindgen generated from
        /// the header (generic and never instantiated: nothing is linked).
        #[allow(dead_code, clippy::type_complexity, clippy::extra_unused_type_parameters)]
        fn _prototypes_match_header<T>() {
            $( let _: unsafe extern "C" fn($($ty),*) -> $ret = $name; )*
        }
    };
}

hccl_table! {
    HcclCommInitAll(ndev: u32, devices: *mut i32, comms: *mut HcclComm) -> HcclResult;
    HcclGetRootInfo(root_info: *mut HcclRootInfo) -> HcclResult;
    HcclCommInitRootInfo(n_ranks: u32, root_info: *const HcclRootInfo, rank: u32, comm: *mut HcclComm) -> HcclResult;
    HcclCommDestroy(comm: HcclComm) -> HcclResult;
    HcclGetRankSize(comm: HcclComm, rank_size: *mut u32) -> HcclResult;
    HcclGetRankId(comm: HcclComm, rank: *mut u32) -> HcclResult;
    HcclAllReduce(send_buf: *mut c_void, recv_buf: *mut c_void, count: u64, data_type: HcclDataType, op: HcclReduceOp, comm: HcclComm, stream: aclrtStream) -> HcclResult;
    HcclBroadcast(buf: *mut c_void, count: u64, data_type: HcclDataType, root: u32, comm: HcclComm, stream: aclrtStream) -> HcclResult;
    HcclAllGather(send_buf: *mut c_void, recv_buf: *mut c_void, send_count: u64, data_type: HcclDataType, comm: HcclComm, stream: aclrtStream) -> HcclResult;
    HcclReduceScatter(send_buf: *mut c_void, recv_buf: *mut c_void, recv_count: u64, data_type: HcclDataType, op: HcclReduceOp, comm: HcclComm, stream: aclrtStream) -> HcclResult;
    HcclBarrier(comm: HcclComm, stream: aclrtStream) -> HcclResult;
    HcclSend(send_buf: *mut c_void, count: u64, data_type: HcclDataType, dest_rank: u32, comm: HcclComm, stream: aclrtStream) -> HcclResult;
    HcclRecv(recv_buf: *mut c_void, count: u64, data_type: HcclDataType, src_rank: u32, comm: HcclComm, stream: aclrtStream) -> HcclResult;
    HcclGetCommAsyncError(comm: HcclComm, async_error: *mut HcclResult) -> HcclResult;
    HcclGetErrorString(code: HcclResult) -> *const c_char;
}

impl fmt::Debug for HcclTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HcclTable")
            .field("functions", &Self::SYMBOLS.len())
            .finish_non_exhaustive()
    }
}

/// Why HCCL is not available.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HcclLoadError {
    /// `libhccl.so` could not be opened where CANN's runtime was loaded from.
    NotFound {
        /// The path (or bare name, for the dynamic linker's search) tried.
        path: String,
        /// What `dlopen` said.
        reason: String,
    },
    /// `libhccl.so` was opened but lacks a function.
    MissingSymbol {
        /// Where it was opened from.
        path: String,
        /// The missing function.
        symbol: &'static str,
    },
    /// An in-process backend without HCCL functions (or one lacking `symbol`).
    NotProvided {
        /// The backend's name.
        backend: &'static str,
        /// The first function it does not provide.
        symbol: &'static str,
    },
}

impl fmt::Display for HcclLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HcclLoadError::NotFound { path, reason } => write!(
                f,
                "{HCCL_LIBRARY} could not be opened ({path}): {reason} (HCCL ships with the CANN \
                 toolkit, beside libascendcl.so)"
            ),
            HcclLoadError::MissingSymbol { path, symbol } => {
                write!(
                    f,
                    "{path} has no symbol `{symbol}` (an incomplete or too old HCCL)"
                )
            }
            HcclLoadError::NotProvided { backend, symbol } => {
                write!(
                    f,
                    "the in-process backend {backend} provides no HCCL (`{symbol}`)"
                )
            }
        }
    }
}

impl std::error::Error for HcclLoadError {}

/// Where an [`Hccl`]'s functions come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HcclOrigin {
    /// `libhccl.so` opened from this path.
    Loaded {
        /// The path (or bare name) it was opened with.
        path: PathBuf,
    },
    /// Functions linked into this process (the simulator's).
    InProcess {
        /// The provider's name.
        name: &'static str,
    },
}

/// A resolved [`HcclTable`], with the library that keeps its pointers valid.
///
/// `Hccl` dereferences to [`HcclTable`]: `(hccl.HcclAllReduce)(...)`. It is `Send + Sync`
/// (plain function pointers; the library stays open while the `Hccl` lives).
pub struct Hccl {
    table: HcclTable,
    origin: HcclOrigin,
    /// Dropped after `table` is no longer reachable; keeps every pointer valid.
    _library: Option<libloading::Library>,
}

impl fmt::Debug for Hccl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hccl")
            .field("origin", &self.origin)
            .field("table", &self.table)
            .finish()
    }
}

impl Deref for Hccl {
    type Target = HcclTable;
    fn deref(&self) -> &HcclTable {
        &self.table
    }
}

impl Hccl {
    /// HCCL for the runtime `api`: `libhccl.so` from the directory `api`'s libraries were
    /// loaded from (the dynamic linker's search when they came from there), or the
    /// functions of `api`'s in-process backend ([`Api::from_table_with_resolver`]).
    ///
    /// # Errors
    /// [`HcclLoadError`] saying what is missing.
    pub fn for_api(api: &Api) -> Result<Hccl, HcclLoadError> {
        match api.origin() {
            Origin::Loaded { dir } => Self::load_from(
                &dir.as_ref()
                    .map_or_else(|| PathBuf::from(HCCL_LIBRARY), |d| d.join(HCCL_LIBRARY)),
            ),
            Origin::InProcess { name } => match api.resolver() {
                Some(resolve) => Self::from_resolver(resolve, name),
                None => Err(HcclLoadError::NotProvided {
                    backend: name,
                    symbol: HcclTable::SYMBOLS[0],
                }),
            },
        }
    }

    /// Opens the library at `path` (a bare name: the dynamic linker's search) and resolves
    /// every function.
    ///
    /// # Errors
    /// [`HcclLoadError::NotFound`] or [`HcclLoadError::MissingSymbol`].
    pub fn load_from(path: &Path) -> Result<Hccl, HcclLoadError> {
        let shown = path.display().to_string();
        let library = open(path).map_err(|e| HcclLoadError::NotFound {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        let lookup = |symbol: &'static str| -> Option<*const c_void> {
            // SAFETY: the symbol is only read as an address here; its type is fixed by
            // `HcclTable::resolve_with`, whose contract the header's prototypes satisfy.
            unsafe {
                library
                    .get::<*const c_void>(symbol.as_bytes())
                    .ok()
                    .map(|s| *s)
            }
        };
        // SAFETY: every symbol is looked up by its C name in HCCL's library, so the
        // function behind it has the prototype of that name.
        let table = unsafe { HcclTable::resolve_with(lookup) }.map_err(|symbol| {
            HcclLoadError::MissingSymbol {
                path: shown,
                symbol,
            }
        })?;
        Ok(Hccl {
            table,
            origin: HcclOrigin::Loaded {
                path: path.to_path_buf(),
            },
            _library: Some(library),
        })
    }

    /// HCCL from functions linked into this process, found by C name with `resolve` (which
    /// must return, for a name, `None` or a function with exactly that name's prototype).
    ///
    /// # Errors
    /// [`HcclLoadError::NotProvided`] naming the first function `resolve` lacks.
    pub fn from_resolver(
        resolve: SymbolResolver,
        name: &'static str,
    ) -> Result<Hccl, HcclLoadError> {
        // SAFETY: `resolve`'s contract (above) is the one `resolve_with` needs.
        let table = unsafe { HcclTable::resolve_with(resolve) }.map_err(|symbol| {
            HcclLoadError::NotProvided {
                backend: name,
                symbol,
            }
        })?;
        Ok(Hccl {
            table,
            origin: HcclOrigin::InProcess { name },
            _library: None,
        })
    }

    /// Where the functions come from.
    pub fn origin(&self) -> &HcclOrigin {
        &self.origin
    }

    /// The function table.
    pub fn table(&self) -> &HcclTable {
        &self.table
    }
}

fn open(path: &Path) -> Result<libloading::Library, libloading::Error> {
    #[cfg(unix)]
    {
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: opening HCCL runs its initialisers, which have no preconditions; the
        // runtime it depends on is already loaded (globally) by `Api::load`. NOW, so that a
        // broken install fails here and not mid-call.
        unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map(Into::into)
    }
    #[cfg(not(unix))]
    {
        // SAFETY: as above.
        unsafe { libloading::Library::new(path) }
    }
}

// Compile-time statement of the thread-safety story above.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Hccl>();
    assert_send_sync::<HcclTable>();
};
