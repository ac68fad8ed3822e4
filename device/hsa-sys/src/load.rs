//! Finding and opening the HSA runtime library, and keeping it loaded for as
//! long as its function table is in use.

use std::path::{Path, PathBuf};

use libloading::Library;

use crate::api::HsaApi;

/// Environment variable naming the HSA runtime library to load.
pub const HSA_LIB_ENV: &str = "RELAUNCH_HSA_LIB";

/// Library names tried, in order, when neither a path nor `RELAUNCH_HSA_LIB`
/// is given.
pub const DEFAULT_CANDIDATES: &[&str] = &[
    "libhsa-runtime64.so.1",
    "libhsa-runtime64.so",
    "/opt/rocm/lib/libhsa-runtime64.so.1",
    "/opt/rocm/lib/libhsa-runtime64.so",
];

/// Why the runtime library could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// An explicitly named library (argument or `RELAUNCH_HSA_LIB`) failed to open.
    Open {
        path: PathBuf,
        from_env: bool,
        reason: String,
    },
    /// None of the default names could be opened.
    NotFound { tried: Vec<(String, String)> },
    /// The library opened but lacks an entry point relaunch needs.
    MissingSymbol {
        symbol: &'static str,
        library: String,
        reason: String,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Open {
                path,
                from_env,
                reason,
            } => {
                let origin = if *from_env {
                    format!(" (from {HSA_LIB_ENV})")
                } else {
                    String::new()
                };
                write!(
                    f,
                    "cannot open HSA runtime library {}{origin}: {reason}; \
                     point {HSA_LIB_ENV} at libhsa-runtime64.so.1 or unset it",
                    path.display()
                )
            }
            LoadError::NotFound { tried } => {
                write!(f, "no HSA runtime library found (tried ")?;
                for (i, (name, reason)) in tried.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "; " };
                    write!(f, "{sep}{name}: {reason}")?;
                }
                write!(f, "); install ROCm's libhsa-runtime64 or set {HSA_LIB_ENV}")
            }
            LoadError::MissingSymbol {
                symbol,
                library,
                reason,
            } => write!(
                f,
                "missing symbol {symbol} in {library}: {reason}; \
                 this is not an HSA runtime (or too old a one)"
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// The symbol relaunch's simulator exports when built as an HSA library
/// (`sim/examples/hsa_runtime64.rs`): its agents are simulated boards, which
/// `sim:` deny entries name whichever way the simulator is loaded.
pub const SIMULATED_MARKER: &[u8] = b"relaunch_simulated_hsa_runtime\0";

/// A function table together with whatever keeps its functions alive.
///
/// Dropping it unloads the library, so every object created through
/// `api` must be gone first; holders keep it in an `Arc` for that reason.
#[derive(Debug)]
pub struct LoadedHsa {
    /// The entry points.
    pub api: HsaApi,
    /// Where the table came from (library path or a description).
    pub origin: String,
    /// The table is relaunch's simulated device (set by the simulator).
    pub simulated: bool,
    // Declared after `api` so the table is dropped before the library.
    _library: Option<Library>,
}

impl LoadedHsa {
    /// Wraps a table whose functions live in this process (the simulated
    /// device): nothing to unload.
    pub fn from_table(api: HsaApi, origin: impl Into<String>) -> Self {
        Self {
            api,
            origin: origin.into(),
            simulated: false,
            _library: None,
        }
    }

    /// Marks the table as relaunch's simulated device (callers report and
    /// time it differently from hardware).
    pub fn simulated(mut self) -> Self {
        self.simulated = true;
        self
    }

    /// Loads the HSA runtime: from `path` if given, else from
    /// `RELAUNCH_HSA_LIB` if set, else from [`DEFAULT_CANDIDATES`] in order.
    pub fn load(path: Option<&Path>) -> Result<Self, LoadError> {
        if let Some(path) = path {
            return Self::load_path(path, false);
        }
        if let Some(env) = std::env::var_os(HSA_LIB_ENV).filter(|v| !v.is_empty()) {
            return Self::load_path(Path::new(&env), true);
        }
        let mut tried = Vec::new();
        for name in DEFAULT_CANDIDATES {
            match open_library(Path::new(name)) {
                Ok(lib) => return Self::with_library(lib, name),
                Err(reason) => tried.push((name.to_string(), reason)),
            }
        }
        Err(LoadError::NotFound { tried })
    }

    fn load_path(path: &Path, from_env: bool) -> Result<Self, LoadError> {
        let lib = open_library(path).map_err(|reason| LoadError::Open {
            path: path.to_path_buf(),
            from_env,
            reason,
        })?;
        Self::with_library(lib, &path.display().to_string())
    }

    fn with_library(lib: Library, name: &str) -> Result<Self, LoadError> {
        // SAFETY: the symbols are looked up by their `hsa.h` names and typed
        // with the header's signatures; the library is stored next to the
        // table and outlives it (field order).
        let api = unsafe { HsaApi::resolve(&lib, name) }?;
        // SAFETY: only the marker's presence is asked; it is never read.
        let simulated = unsafe { lib.get::<*const u8>(SIMULATED_MARKER) }.is_ok();
        tracing::debug!(library = name, simulated, "loaded HSA runtime");
        Ok(Self {
            api,
            origin: name.to_string(),
            simulated,
            _library: Some(lib),
        })
    }
}

/// Libraries loaded for the life of the process, by the name they were
/// asked for (see [`LoadedHsa::load_shared`]).
static SHARED: std::sync::Mutex<Vec<(String, std::sync::Arc<LoadedHsa>)>> =
    std::sync::Mutex::new(Vec::new());
/// How many times a library was actually opened by `load_shared`.
static SHARED_LOADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl LoadedHsa {
    /// [`LoadedHsa::load`] once per process: the first call for a name opens
    /// the library, later calls (same path, or same `RELAUNCH_HSA_LIB`, or
    /// the default search) return the same table, and the library is never
    /// unloaded. ROCr does not support being unloaded and loaded again in
    /// one process (its globals are torn down at unload, and a later
    /// `hsa_init` may fail); `hsa_init`/`hsa_shut_down` are reference
    /// counted, so one load serves every runtime opened after it. A failed
    /// load is not cached: the next call tries again.
    pub fn load_shared(path: Option<&Path>) -> Result<std::sync::Arc<LoadedHsa>, LoadError> {
        let key = match path {
            Some(p) => format!("path:{}", p.display()),
            None => match std::env::var_os(HSA_LIB_ENV).filter(|v| !v.is_empty()) {
                Some(env) => format!("path:{}", Path::new(&env).display()),
                None => "default".to_string(),
            },
        };
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, loaded)) = shared.iter().find(|(k, _)| *k == key) {
            return Ok(std::sync::Arc::clone(loaded));
        }
        let loaded = std::sync::Arc::new(LoadedHsa::load(path)?);
        SHARED_LOADS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        shared.push((key, std::sync::Arc::clone(&loaded)));
        Ok(loaded)
    }

    /// How many libraries [`LoadedHsa::load_shared`] has opened in this
    /// process (each at most once per name): for tests and diagnostics.
    pub fn shared_loads() -> usize {
        SHARED_LOADS.load(std::sync::atomic::Ordering::Relaxed)
    }
}

fn open_library(path: &Path) -> Result<Library, String> {
    // SAFETY: loading a shared library runs its initialisers; we only load
    // libraries the user or the ROCm install names as the HSA runtime.
    unsafe { Library::new(path) }.map_err(|err| err.to_string())
}

impl HsaApi {
    /// Same as [`LoadedHsa::load`].
    pub fn load(path: Option<&Path>) -> Result<LoadedHsa, LoadError> {
        LoadedHsa::load(path)
    }
}
