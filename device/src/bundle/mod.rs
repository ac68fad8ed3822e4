//! Per-architecture kernel bundles: `.kpack` archives (code objects packed
//! once per GPU target, ROCm's kpack layout) and the JSON bundle manifest
//! beside each one, installed as `<root>/<arch>/<name>_<arch>.{kpack,json}`.
//!
//! Owns: reading and writing `.kpack` archives ([`kpack`], [`write`]), the
//! manifest ([`manifest`]), packing a tree ([`pack`]), relaunch's `args_signature` ([`signature`]),
//! one architecture directory of an installed tree with its verification
//! (sha256, signature) ([`tree`]), and which directory a device uses
//! ([`fallback`]). Refuses: damaged or oversized archives and manifests,
//! code objects whose sha256 or signature disagrees with the manifest, each
//! with a [`BundleError`] naming what failed. Bad input never panics and
//! never allocates past the documented ceilings ([`kpack::limits`]). Must
//! not load anything on a device: the facade's catalog does that, and only
//! with bytes this module verified.

pub mod error;
pub mod fallback;
pub mod kpack;
pub mod manifest;
pub mod pack;
pub mod signature;
pub mod tree;
pub mod write;

pub use error::BundleError;
pub use kpack::{read_kpack, Compression, Kpack, TocEntry};
pub use manifest::{Manifest, ManifestEntry, SCHEMA};
pub use signature::{ArgsSignature, KernelSignature};
pub use tree::{ArchDir, Verified};
pub use write::KpackWriter;

/// Lower-case hex of the SHA-256 of `bytes` (the manifest's `hsaco_sha256`).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}
