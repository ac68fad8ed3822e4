//! The JSON bundle manifest beside each `.kpack`: the schema id, the arch,
//! the archive's file name and per code object its `toc_key`, the
//! `hsaco_sha256` of its uncompressed bytes, relaunch's `args_signature`
//! ([`super::signature`]) and the engine's `launch` / `selection` data,
//! carried through untouched. Parsing is bounded (file size, entry count,
//! string lengths; serde_json caps nesting at 128) and checks every field's
//! form, so later code never sees a malformed hash or a path-like name.

use serde::{Deserialize, Serialize};

use super::error::BundleError as E;
use super::kpack::limits::{MAX_ENTRIES, MAX_STRING};

/// The schema id relaunch writes and reads.
pub const SCHEMA: &str = "relaunch.bundle/v1";
/// Largest manifest file read.
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// One bundle manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Schema id, [`SCHEMA`].
    pub schema: String,
    /// The GPU processor every code object is for (`gfx1100`).
    pub arch: String,
    /// The kpack group name (`demo`).
    pub group: String,
    /// File name of the archive, in the same directory.
    pub kpack: String,
    pub kernels: Vec<ManifestEntry>,
}

/// One code object of the archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestEntry {
    pub toc_key: String,
    /// Lower-case hex SHA-256 of the uncompressed code object.
    pub hsaco_sha256: String,
    /// relaunch's signature (kept as JSON so a foreign form is reported,
    /// not a parse failure of the whole manifest).
    pub args_signature: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<serde_json::Value>,
}

fn bad(msg: impl Into<String>) -> E {
    E::Manifest(msg.into())
}

fn check_string(what: &str, text: &str) -> Result<(), E> {
    if text.is_empty() || text.len() > MAX_STRING {
        return Err(bad(format!(
            "{what} is {} bytes long (1..={MAX_STRING})",
            text.len()
        )));
    }
    Ok(())
}

/// True for a 64-digit lower-case hex string.
pub fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl Manifest {
    /// Parse and check a manifest.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, E> {
        if bytes.len() as u64 > MAX_MANIFEST_BYTES {
            return Err(E::TooMany {
                what: "manifest bytes",
                count: bytes.len() as u64,
                limit: MAX_MANIFEST_BYTES,
            });
        }
        let m: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| bad(format!("not a bundle manifest: {e}")))?;
        if m.schema != SCHEMA {
            return Err(bad(format!("schema {:?} is not {SCHEMA:?}", m.schema)));
        }
        check_string("arch", &m.arch)?;
        check_string("group", &m.group)?;
        check_string("kpack", &m.kpack)?;
        if m.kpack.contains(['/', '\\']) || m.kpack.starts_with('.') {
            return Err(bad(format!(
                "kpack {:?} must be a plain file name in the manifest's directory",
                m.kpack
            )));
        }
        if m.kernels.len() > MAX_ENTRIES {
            return Err(E::TooMany {
                what: "manifest kernels",
                count: m.kernels.len() as u64,
                limit: MAX_ENTRIES as u64,
            });
        }
        let mut keys = std::collections::HashSet::new();
        for e in &m.kernels {
            check_string("toc_key", &e.toc_key)?;
            if !is_sha256_hex(&e.hsaco_sha256) {
                return Err(bad(format!(
                    "{}: hsaco_sha256 {:?} is not 64 lower-case hex digits",
                    e.toc_key, e.hsaco_sha256
                )));
            }
            if !keys.insert(e.toc_key.as_str()) {
                return Err(bad(format!("toc_key {} appears twice", e.toc_key)));
            }
        }
        Ok(m)
    }

    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The entry for `key`.
    pub fn entry(&self, key: &str) -> Option<&ManifestEntry> {
        self.kernels.iter().find(|e| e.toc_key == key)
    }
}
