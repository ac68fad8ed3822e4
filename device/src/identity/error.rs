//! The one error type of device identity. Messages say what was wrong and
//! what to do next.

use std::path::PathBuf;

use super::selector::SelectorError;

/// Where a manifest entry was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub path: PathBuf,
    /// 1-based line number.
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)
    }
}

/// Why a device could not be enumerated, selected or opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    #[error(transparent)]
    Selector(#[from] SelectorError),

    #[error("no device matches `{selector}`{via}; available: {available}")]
    NoMatch {
        selector: String,
        /// ` (via @a -> @b)` when reached through aliases, else empty.
        via: String,
        /// One line per device, or a note that there are none.
        available: String,
    },

    #[error(
        "`{selector}`{via} is ambiguous: {count} devices match ({matches}); \
         select one by its anchor (uuid:… or bdf:…)"
    )]
    Ambiguous {
        selector: String,
        via: String,
        count: usize,
        matches: String,
    },

    #[error(
        "`{selector}`{via} names a PCI slot, but this host has no slot labels \
         (/sys/bus/pci/slots is empty or absent); select by uuid:… or bdf:… instead"
    )]
    NoSlotLabels { selector: String, via: String },

    #[error("{0}")]
    Denied(Box<Denial>),

    #[error("alias @{alias} is not defined for host {host}{defined}; define it in a devices.toml under [host.{host}]")]
    UnknownAlias {
        alias: String,
        host: String,
        /// ` (defined: @a, @b)` or ` (no manifest defines aliases)`.
        defined: String,
    },

    #[error("aliases form a loop: {chain}; make one of them name a device (uuid:… or bdf:…)")]
    AliasLoop { chain: String },

    #[error(
        "alias chain {chain} is longer than {limit} steps; point the alias at a device directly"
    )]
    AliasTooDeep { chain: String, limit: usize },

    #[error("host manifest {origin}: {message}")]
    Manifest { origin: Origin, message: String },

    #[error("cannot read {path}: {message}")]
    Io { path: PathBuf, message: String },

    #[error("sysfs {path}: {message}")]
    Sysfs { path: PathBuf, message: String },

    #[error(
        "cannot tell which host this is ({reason}); set RELAUNCH_HOST to the name used in \
         [host.NAME] of devices.toml"
    )]
    Hostname { reason: String },

    #[error("runtime agent facts are inconsistent: {0}")]
    Agents(String),
}

/// A resolved device that a deny entry refuses (boxed inside the error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// The device's describe line (or `sim:<target>`).
    pub device: String,
    pub host: String,
    /// The deny entry's selector as written.
    pub entry: String,
    pub origin: Origin,
    /// The entry's comment, when it has one.
    pub reason: Option<String>,
    /// The selector the caller used.
    pub selector: String,
    /// ` (via @a -> @b)` when reached through aliases, else empty.
    pub via: String,
}

impl std::fmt::Display for Denial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "device {} is denied on host {} by deny entry `{}` ({})",
            self.device, self.host, self.entry, self.origin
        )?;
        if let Some(reason) = &self.reason {
            write!(f, ": {reason}")?;
        }
        write!(
            f,
            "; it was selected by `{}`{}. Pick another device (`relaunch devices` lists them) \
             or remove the entry from the manifest",
            self.selector, self.via
        )
    }
}
