//! Opening CANN's shared libraries at run time.

use crate::table::{AttrFns, FnTable};
use std::ffi::{OsStr, c_void};
use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

/// The three libraries, in the order they are opened (each may depend on the ones before).
pub const LIBRARIES: [&str; 3] = ["libascendcl.so", "libnnopbase.so", OPERATOR_LIBRARY];

/// The library holding the aclnn operators, whose symbols [`Api::operator_symbol`] looks up.
pub const OPERATOR_LIBRARY: &str = "libopapi.so";

/// Resolves a symbol name to the address of a function linked into this process (for
/// in-process backends, see [`Api::from_table_with_resolver`]).
pub type SymbolResolver = fn(&str) -> Option<*const c_void>;

/// Environment variables naming a toolkit root (whose `lib64/` holds the libraries),
/// in the order they are consulted. `source set_env.sh` exports both.
const TOOLKIT_VARS: [&str; 2] = ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"];
/// Standard install roots, consulted after the environment.
const TOOLKIT_DIRS: [&str; 2] = [
    "/usr/local/Ascend/ascend-toolkit/latest",
    "/usr/local/Ascend/cann",
];

/// Where to look for CANN's libraries.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// A directory holding the three libraries (or a toolkit root with them in `lib64/`).
    /// When set, nothing else is searched.
    pub dir: Option<PathBuf>,
    /// When no directory is given and no toolkit directory has the libraries, fall back to
    /// the dynamic linker's own search (`LD_LIBRARY_PATH`, `ld.so.cache`) unless this is set.
    pub skip_system_search: bool,
}

impl LoadOptions {
    /// Search only `dir` (or `dir/lib64`).
    pub fn from_dir(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: Some(dir.into()),
            skip_system_search: true,
        }
    }

    /// The directories that [`Api::load`] tries, in order. `None` stands for the dynamic
    /// linker's search path.
    pub fn candidate_dirs(&self) -> Vec<Option<PathBuf>> {
        if let Some(dir) = &self.dir {
            return vec![Some(dir.clone()), Some(dir.join("lib64"))];
        }
        let roots = TOOLKIT_VARS
            .iter()
            .filter_map(std::env::var_os)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .chain(TOOLKIT_DIRS.iter().map(PathBuf::from));
        let mut dirs: Vec<Option<PathBuf>> = Vec::new();
        for dir in roots.map(|root| Some(root.join("lib64"))) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        if !self.skip_system_search {
            dirs.push(None);
        }
        dirs
    }
}

/// Why CANN could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// No searched location had the libraries.
    NotFound {
        /// Every location tried, with what went wrong there.
        searched: Vec<(String, String)>,
    },
    /// CANN's runtime library was found in at least one place, but no place had a set of
    /// libraries that could be opened (a broken or incompatible install).
    Unusable {
        /// Every location tried, with what went wrong there (the library and the reason).
        searched: Vec<(String, String)>,
    },
    /// A library was found and opened, but lacks a required runtime or nnopbase function.
    MissingSymbol {
        /// The library file (`libopapi.so`, ...).
        library: &'static str,
        /// Where it was opened from.
        path: String,
        /// The missing function.
        symbol: &'static str,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotFound { searched } => {
                write!(
                    f,
                    "CANN libraries ({}) not found; searched:",
                    LIBRARIES.join(", ")
                )?;
                for (place, why) in searched {
                    write!(f, "\n  {place}: {why}")?;
                }
                write!(
                    f,
                    "\n(source set_env.sh of the toolkit, or set ASCEND_HOME_PATH to its root)"
                )
            }
            LoadError::Unusable { searched } => {
                write!(f, "CANN was found but could not be loaded; searched:")?;
                for (place, why) in searched {
                    write!(f, "\n  {place}: {why}")?;
                }
                Ok(())
            }
            LoadError::MissingSymbol {
                library,
                path,
                symbol,
            } => write!(
                f,
                "{library} at {path} has no symbol `{symbol}` (not a CANN runtime library, or an \
                 incomplete install)"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// Where an [`Api`]'s functions come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Shared libraries opened from this directory (`None`: the dynamic linker's search path).
    Loaded {
        /// The directory the three libraries were opened from.
        dir: Option<PathBuf>,
    },
    /// Functions linked into this process, e.g. the simulator.
    InProcess {
        /// A name for the provider, e.g. `"ascend-sim"`.
        name: &'static str,
    },
}

/// A resolved [`FnTable`], together with the libraries that keep its pointers valid, and a
/// way to resolve operator symbols by name ([`Api::operator_symbol`]).
///
/// `Api` dereferences to [`FnTable`]: `(api.aclrtMalloc)(...)`.
///
/// `Api` is `Send + Sync`: the table is plain function pointers, and the libraries stay
/// open until the `Api` is dropped. Any thread-affinity the C functions have (the current
/// context) is the caller's concern.
pub struct Api {
    table: FnTable,
    attrs: AttrFns,
    origin: Origin,
    symbols: Symbols,
}

/// Where [`Api::operator_symbol`] looks.
enum Symbols {
    /// The opened libraries, in [`LIBRARIES`] order. Dropped with the `Api`, after
    /// `table` is no longer reachable; keeps every resolved pointer valid.
    Libraries(Vec<libloading::Library>),
    /// An in-process backend's resolver.
    Resolver(SymbolResolver),
    /// No operators at all.
    None,
}

impl fmt::Debug for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Api")
            .field("origin", &self.origin)
            .field("table", &self.table)
            .finish()
    }
}

impl Deref for Api {
    type Target = FnTable;
    fn deref(&self) -> &FnTable {
        &self.table
    }
}

impl Api {
    /// Opens the three libraries from the first candidate location that has them and
    /// resolves every runtime and nnopbase function up front (operators are resolved on
    /// demand, by [`Api::operator_symbol`]).
    ///
    /// # Errors
    /// [`LoadError::NotFound`] listing each place searched when no place has CANN's runtime
    /// library, [`LoadError::Unusable`] when one has it but the libraries fail to open, or
    /// [`LoadError::MissingSymbol`] when a library lacks a required function.
    pub fn load(options: &LoadOptions) -> Result<Api, LoadError> {
        let mut searched = Vec::new();
        let mut found_somewhere = false;
        for dir in options.candidate_dirs() {
            let place = dir.as_ref().map_or_else(
                || "dynamic linker search path".to_owned(),
                |d| d.display().to_string(),
            );
            if let Some(d) = &dir
                && !d.join(LIBRARIES[0]).exists()
            {
                searched.push((place, format!("no {}", LIBRARIES[0])));
                continue;
            }
            match open_all(dir.as_deref()) {
                Ok(libraries) => return Self::from_libraries(libraries, dir),
                Err(why) => {
                    // A named directory has the runtime library (checked above); on the
                    // linker's path, anything but "no such file" means a library was found.
                    found_somewhere |= dir.is_some() || !why.contains("No such file");
                    searched.push((place, why));
                }
            }
        }
        if found_somewhere {
            Err(LoadError::Unusable { searched })
        } else {
            Err(LoadError::NotFound { searched })
        }
    }

    /// An `Api` over functions that live in this process (no `dlopen`), without any
    /// operator: [`Api::operator_symbol`] always answers `None`.
    pub fn from_table(table: FnTable, name: &'static str) -> Api {
        Api {
            table,
            attrs: AttrFns::default(),
            origin: Origin::InProcess { name },
            symbols: Symbols::None,
        }
    }

    /// An `Api` over functions that live in this process (no `dlopen`), such as the
    /// simulator's, whose operators `resolve` finds by C name.
    ///
    /// `resolve` must return, for a name, null/`None` or the address of a function with
    /// exactly the C prototype of that name; callers of [`Api::operator_symbol`] rely on it.
    pub fn from_table_with_resolver(
        table: FnTable,
        name: &'static str,
        resolve: SymbolResolver,
    ) -> Api {
        // SAFETY: the resolver's contract: each address has the prototype of its name.
        let attrs = unsafe { AttrFns::resolve_with(|_, symbol| resolve(symbol)) };
        Api {
            table,
            attrs,
            origin: Origin::InProcess { name },
            symbols: Symbols::Resolver(resolve),
        }
    }

    /// The address of the operator function `name` (e.g. `"aclnnMishBackward"`): looked up
    /// in `libopapi.so` for loaded libraries, through the resolver for an in-process
    /// backend. `None` when this toolkit lacks it. A lookup is a `dlsym` (and allocates the
    /// C string of the name): callers cache the result.
    ///
    /// The pointer is a function with exactly the C prototype of `name`, valid as long as
    /// this `Api`; casting it to that prototype is the caller's (unsafe) business.
    pub fn operator_symbol(&self, name: &str) -> Option<NonNull<c_void>> {
        let found = match &self.symbols {
            Symbols::Libraries(libraries) => {
                let index = LIBRARIES.iter().position(|l| *l == OPERATOR_LIBRARY)?;
                let library = libraries.get(index)?;
                // SAFETY: the symbol is only read as an address here; what it points to is
                // the caller's concern (see the contract above).
                unsafe {
                    library
                        .get::<*const c_void>(name.as_bytes())
                        .ok()
                        .map(|s| *s)
                }
            }
            Symbols::Resolver(resolve) => resolve(name),
            Symbols::None => None,
        };
        NonNull::new(found?.cast_mut())
    }

    /// The in-process backend's resolver ([`Api::from_table_with_resolver`]), which also
    /// finds the backend's optional libraries (HCCL).
    pub fn resolver(&self) -> Option<SymbolResolver> {
        match self.symbols {
            Symbols::Resolver(resolve) => Some(resolve),
            _ => None,
        }
    }

    /// Where the functions come from.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The function table.
    pub fn table(&self) -> &FnTable {
        &self.table
    }

    /// nnopbase's attribute-object functions (each `None` where the backend lacks it).
    pub fn attrs(&self) -> &AttrFns {
        &self.attrs
    }

    /// Whether the executor-reuse functions (`aclSetAclOpExecutorRepeatable`,
    /// `aclDestroyAclOpExecutor`, `aclSet{Input,Output}TensorAddr`) are all present.
    pub fn supports_executor_reuse(&self) -> bool {
        self.table.aclSetAclOpExecutorRepeatable.is_some()
            && self.table.aclDestroyAclOpExecutor.is_some()
            && self.table.aclSetInputTensorAddr.is_some()
            && self.table.aclSetOutputTensorAddr.is_some()
    }

    fn from_libraries(
        libraries: Vec<(libloading::Library, String)>,
        dir: Option<PathBuf>,
    ) -> Result<Api, LoadError> {
        let find = |library: &str| {
            let index = LIBRARIES.iter().position(|l| *l == library);
            index.map(|i| &libraries[i])
        };
        let lookup = |library: &'static str, symbol: &'static str| -> Option<*const c_void> {
            let (lib, _) = find(library)?;
            // SAFETY: the symbol is only read as an address here; its type is fixed by
            // `FnTable::resolve_with`, whose contract the prototypes in the header satisfy.
            unsafe { lib.get::<*const c_void>(symbol.as_bytes()).ok().map(|s| *s) }
        };
        // SAFETY: every symbol is looked up by its C name in the library CANN documents it
        // in, so the function behind it has the prototype of that name.
        let table = unsafe { FnTable::resolve_with(lookup) }.map_err(|(library, symbol)| {
            LoadError::MissingSymbol {
                library,
                path: find(library).map(|(_, p)| p.clone()).unwrap_or_default(),
                symbol,
            }
        })?;
        // SAFETY: as for the table, looked up by C name in the library that documents them.
        let attrs = unsafe { AttrFns::resolve_with(lookup) };
        Ok(Api {
            table,
            attrs,
            origin: Origin::Loaded { dir },
            symbols: Symbols::Libraries(libraries.into_iter().map(|(l, _)| l).collect()),
        })
    }
}

/// Opens the three libraries from `dir` (or by bare name), returning each with the path
/// it was opened from, or a description of the first failure.
fn open_all(dir: Option<&Path>) -> Result<Vec<(libloading::Library, String)>, String> {
    LIBRARIES
        .iter()
        .map(|name| {
            let path = dir.map_or_else(|| PathBuf::from(name), |d| d.join(name));
            open_one(path.as_os_str())
                .map(|lib| (lib, path.display().to_string()))
                .map_err(|e| format!("cannot open {name}: {e}"))
        })
        .collect()
}

fn open_one(path: &OsStr) -> Result<libloading::Library, libloading::Error> {
    #[cfg(unix)]
    {
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        // SAFETY: opening CANN runs its initialisers, which have no preconditions. GLOBAL,
        // because libopapi resolves symbols of libnnopbase and libascendcl through the
        // global scope; NOW, so that a broken install fails here and not mid-call.
        unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }.map(Into::into)
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
    assert_send_sync::<Api>();
    assert_send_sync::<FnTable>();
};
