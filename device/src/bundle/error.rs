//! Why a bundle archive, manifest or code object in it was refused.

/// A refusal from the bundle reader, writer or verifier. Messages name the
/// file, key or field that failed and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    #[error("not a .kpack archive: {0}")]
    NotKpack(String),
    #[error(".kpack format version {0} is not supported (relaunch reads version 1)")]
    Version(u64),
    #[error("{what} spans bytes {offset}..{offset}+{size}, beyond the archive's {len} bytes")]
    OutOfBounds {
        what: String,
        offset: u64,
        size: u64,
        len: u64,
    },
    #[error("too many {what}: {count} (limit {limit})")]
    TooMany {
        what: &'static str,
        count: u64,
        limit: u64,
    },
    #[error("table of contents: {0}")]
    Toc(String),
    #[error("{key} ({arch}): {reason}")]
    Entry {
        key: String,
        arch: String,
        reason: String,
    },
    #[error("manifest: {0}")]
    Manifest(String),
    #[error("{key}: sha256 mismatch: manifest says {expected}, the code object in the archive hashes to {found}")]
    Sha256 {
        key: String,
        expected: String,
        found: String,
    },
    #[error("{key}: args_signature disagrees with the code object's metadata: {reason}")]
    Signature { key: String, reason: String },
    #[error("{key}: code object does not read: {reason}")]
    CodeObject { key: String, reason: String },
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
    #[error(transparent)]
    File(#[from] crate::file::FileError),
    #[error("pack: {0}")]
    Pack(String),
}
