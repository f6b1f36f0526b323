//! Opening CANN's shared libraries at run time.

use crate::table::FnTable;
use std::ffi::{OsStr, c_void};
use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};

/// The three libraries, in the order they are opened (each may depend on the ones before).
pub const LIBRARIES: [&str; 3] = ["libascendcl.so", "libnnopbase.so", "libopapi.so"];

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
    /// A library was found and opened, but lacks a required function.
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
            } => {
                write!(f, "{library} at {path} has no symbol `{symbol}`")?;
                if *library == "libopapi.so" {
                    write!(
                        f,
                        " (this CANN release does not ship the operator; a newer toolkit is needed)"
                    )?;
                }
                Ok(())
            }
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

/// A resolved [`FnTable`], together with the libraries that keep its pointers valid.
///
/// `Api` dereferences to [`FnTable`]: `(api.aclrtMalloc)(...)`.
///
/// `Api` is `Send + Sync`: the table is plain function pointers, and the libraries stay
/// open until the `Api` is dropped. Any thread-affinity the C functions have (the current
/// context) is the caller's concern.
pub struct Api {
    table: FnTable,
    origin: Origin,
    // Dropped after `table` is no longer reachable; keeps the pointers valid.
    _libraries: Vec<libloading::Library>,
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
    /// resolves every function up front.
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

    /// An `Api` over functions that live in this process (no `dlopen`), such as the
    /// simulator's table.
    pub fn from_table(table: FnTable, name: &'static str) -> Api {
        Api {
            table,
            origin: Origin::InProcess { name },
            _libraries: Vec::new(),
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
        Ok(Api {
            table,
            origin: Origin::Loaded { dir },
            _libraries: libraries.into_iter().map(|(l, _)| l).collect(),
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
