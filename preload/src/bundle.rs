//! Clang offload bundles ("fat binaries") from a bare pointer: the entry
//! table read from the bundle's own header, every range bounded by
//! [`MAX_IMAGE_BYTES`], and the entry for a device's target picked by its
//! processor. Refuses compressed bundles (`CCOB`) and anything that is not
//! an uncompressed bundle, with the reason.
//!
//! Layout (public LLVM documentation, "Clang Offload Bundler", section
//! "Bundled Code Object Layout", https://clang.llvm.org/docs/ClangOffloadBundler.html):
//! the 24-byte magic `__CLANG_OFFLOAD_BUNDLE__`, a little-endian u64 entry
//! count, then per entry: u64 offset of the code object from the start of
//! the bundle, u64 its size, u64 the length of the entry id, the id bytes
//! (no terminator). An id is `<kind>-<triple>[-<target id>]`, the triple
//! `<arch>-<vendor>-<os>-<env>` (so `hipv4-amdgcn-amd-amdhsa--gfx1201:xnack-`
//! has an empty env; the host entry is `host-x86_64-unknown-linux-gnu-`).
//! Compressed bundles start with `CCOB` (same document, "Compression and
//! Decompression"; llvm/include/llvm/Object/OffloadBundle.h).

use relaunch::device::target::GfxTarget;

use crate::image::MAX_IMAGE_BYTES;

pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
pub const COMPRESSED_MAGIC: &[u8; 4] = b"CCOB";
/// More entries than any real bundle holds (one per target): a garbage
/// count is refused before anything is read for it.
pub const MAX_ENTRIES: u64 = 4096;
/// Longest entry id accepted (real ones are under 64 bytes).
pub const MAX_ID_BYTES: u64 = 1024;

/// Reads `len` bytes at `offset` of the image, or says why it cannot.
pub type Read<'a> = &'a dyn Fn(u64, u64) -> Result<Vec<u8>, String>;

/// Why a bundle was not read or has no entry for the device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    #[error(
        "the fat binary is a compressed offload bundle (CCOB); only uncompressed \
         bundles are replayed (build without --offload-compress)"
    )]
    Compressed,
    #[error("the fat binary is not a clang offload bundle (no __CLANG_OFFLOAD_BUNDLE__ magic)")]
    NotABundle,
    #[error("reading the offload bundle: {0}")]
    Read(String),
    #[error(
        "the offload bundle claims {0} entries (0 or more than {MAX_ENTRIES}): not a real bundle"
    )]
    EntryCount(u64),
    #[error("offload bundle entry {index}: {what}")]
    Entry { index: u64, what: String },
    #[error(
        "the offload bundle holds no code object for {wanted} (it holds: {held}); \
         rebuild with --offload-arch={wanted}"
    )]
    NoEntryFor { wanted: String, held: String },
}

/// One entry of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: String,
    pub offset: u64,
    pub size: u64,
}

/// The entry table of a bundle and the bundle's byte length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleIndex {
    pub entries: Vec<Entry>,
    /// Furthest byte the header, the table or an entry reaches.
    pub extent: u64,
}

fn u64_le(b: &[u8]) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[..8]);
    u64::from_le_bytes(x)
}

/// True when `head` (an image's first 24 bytes or more) starts like a
/// bundle, compressed or not.
pub fn looks_like_bundle(head: &[u8]) -> bool {
    head.starts_with(BUNDLE_MAGIC) || head.starts_with(COMPRESSED_MAGIC)
}

impl BundleIndex {
    /// Reads the header and entry table through `read`.
    pub fn read(read: Read<'_>) -> Result<BundleIndex, BundleError> {
        let r = |off: u64, len: u64| {
            let bytes = read(off, len).map_err(BundleError::Read)?;
            if bytes.len() as u64 != len {
                return Err(BundleError::Read(format!(
                    "{len} bytes at {off} came back as {}",
                    bytes.len()
                )));
            }
            Ok(bytes)
        };
        let head = r(0, 4)?;
        if head == COMPRESSED_MAGIC {
            return Err(BundleError::Compressed);
        }
        let head = r(0, 32).map_err(|_| BundleError::NotABundle)?;
        if !head.starts_with(BUNDLE_MAGIC) {
            return Err(BundleError::NotABundle);
        }
        let count = u64_le(&head[24..]);
        if count == 0 || count > MAX_ENTRIES {
            return Err(BundleError::EntryCount(count));
        }
        let mut at = 32u64;
        let mut extent = at;
        let mut entries = Vec::with_capacity(count as usize);
        for index in 0..count {
            let bad = |what: String| BundleError::Entry { index, what };
            let fixed = r(at, 24)?;
            let (offset, size, id_len) = (
                u64_le(&fixed[0..]),
                u64_le(&fixed[8..]),
                u64_le(&fixed[16..]),
            );
            if id_len == 0 || id_len > MAX_ID_BYTES {
                return Err(bad(format!(
                    "id of {id_len} bytes (want 1..={MAX_ID_BYTES})"
                )));
            }
            let id = r(at + 24, id_len)?;
            let id = String::from_utf8(id).map_err(|_| bad("the id is not UTF-8".into()))?;
            at += 24 + id_len;
            let end = offset
                .checked_add(size)
                .filter(|e| *e <= MAX_IMAGE_BYTES)
                .ok_or_else(|| {
                    bad(format!(
                        "{id}: {size} bytes at {offset} reach past {MAX_IMAGE_BYTES} bytes"
                    ))
                })?;
            extent = extent.max(at).max(end);
            entries.push(Entry { id, offset, size });
        }
        Ok(BundleIndex { entries, extent })
    }

    /// The entry holding the code object for `target`: an offload kind of
    /// `hip` or `hipv4`, an `amdgcn-*-amdhsa` triple, the same processor,
    /// and no feature setting opposite to one the device states. Among
    /// several, one whose features equal the device's wins.
    pub fn select(&self, target: &GfxTarget) -> Result<&Entry, BundleError> {
        let mut compatible = None;
        for e in &self.entries {
            let Some(id) = device_target(&e.id) else {
                continue;
            };
            if id.processor() != target.processor() || e.size == 0 {
                continue;
            }
            if id.features() == target.features() {
                return Ok(e);
            }
            let clash = id.features().iter().any(|(name, setting)| {
                target
                    .features()
                    .iter()
                    .any(|(n, s)| n == name && s != setting)
            });
            if !clash && compatible.is_none() {
                compatible = Some(e);
            }
        }
        compatible.ok_or_else(|| BundleError::NoEntryFor {
            wanted: target.to_string(),
            held: self
                .entries
                .iter()
                .map(|e| e.id.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

/// The AMDGPU target id of a HIP device entry id, or `None` for host and
/// other entries.
pub fn device_target(id: &str) -> Option<GfxTarget> {
    let (kind, rest) = id.split_once('-')?;
    if kind != "hip" && kind != "hipv4" {
        return None;
    }
    // <arch>-<vendor>-<os>-<env>-<target id>; env is empty for amdhsa.
    let mut parts = rest.splitn(5, '-');
    let (arch, _vendor, os, _env) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if arch != "amdgcn" || os != "amdhsa" {
        return None;
    }
    GfxTarget::parse(parts.next()?).ok()
}

/// Copies `entry`'s bytes through `read`.
pub fn entry_bytes(read: Read<'_>, entry: &Entry) -> Result<Vec<u8>, BundleError> {
    let bytes = read(entry.offset, entry.size).map_err(BundleError::Read)?;
    if bytes.len() as u64 != entry.size {
        return Err(BundleError::Read(format!(
            "entry {} came back short",
            entry.id
        )));
    }
    Ok(bytes)
}

/// A reader over a bundle at `base` whose size is unknown: offsets are
/// trusted only after [`BundleIndex::read`] bounded them.
///
/// # Safety
/// `base` must point to a readable offload bundle (the one the real HIP
/// was given) for as long as the reader is used.
pub unsafe fn pointer_reader(base: *const u8) -> impl Fn(u64, u64) -> Result<Vec<u8>, String> {
    let base = base as usize;
    move |off: u64, len: u64| {
        if base == 0 {
            return Err("null fat binary".into());
        }
        if off.checked_add(len).is_none_or(|e| e > MAX_IMAGE_BYTES) {
            return Err(format!("{len} bytes at {off} exceed {MAX_IMAGE_BYTES}"));
        }
        // SAFETY: the caller vouches for a readable bundle; every range
        // comes from its own header and is bounded by MAX_IMAGE_BYTES.
        let bytes = unsafe {
            std::slice::from_raw_parts((base as *const u8).add(off as usize), len as usize)
        };
        Ok(bytes.to_vec())
    }
}

/// Test support: a bundle assembled from `(id, bytes)` entries, each code
/// object at a 16-byte aligned offset after the table.
#[cfg(test)]
pub(crate) fn assemble(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let table: usize = entries.iter().map(|(id, _)| 24 + id.len()).sum();
    let mut at = (32 + table).next_multiple_of(16);
    let mut out = BUNDLE_MAGIC.to_vec();
    out.extend((entries.len() as u64).to_le_bytes());
    let mut body = Vec::new();
    for (id, bytes) in entries {
        out.extend((at as u64).to_le_bytes());
        out.extend((bytes.len() as u64).to_le_bytes());
        out.extend((id.len() as u64).to_le_bytes());
        out.extend(id.as_bytes());
        body.push((at, *bytes));
        at = (at + bytes.len()).next_multiple_of(16);
    }
    for (at, bytes) in body {
        out.resize(at, 0);
        out.extend(bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reader(bytes: &[u8]) -> impl Fn(u64, u64) -> Result<Vec<u8>, String> + '_ {
        move |off, len| {
            let end = off.checked_add(len).ok_or("overflow")?;
            bytes
                .get(off as usize..end as usize)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| format!("{len} bytes at {off} are outside the {}", bytes.len()))
        }
    }

    fn target(t: &str) -> GfxTarget {
        GfxTarget::parse(t).unwrap()
    }

    const HOST: &str = "host-x86_64-unknown-linux-gnu-";
    const G1100: &str = "hipv4-amdgcn-amd-amdhsa--gfx1100";
    const G1201: &str = "hipv4-amdgcn-amd-amdhsa--gfx1201";

    #[test]
    fn lists_entries_and_picks_the_devices_processor() {
        let bundle = assemble(&[(HOST, b""), (G1100, b"eleven"), (G1201, b"twelve!")]);
        let index = BundleIndex::read(&reader(&bundle)).unwrap();
        let ids: Vec<_> = index.entries.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, [HOST, G1100, G1201]);
        assert_eq!(index.extent, bundle.len() as u64);
        let e = index.select(&target("gfx1201")).unwrap();
        assert_eq!(entry_bytes(&reader(&bundle), e).unwrap(), b"twelve!");
        let e = index.select(&target("gfx1100")).unwrap();
        assert_eq!(entry_bytes(&reader(&bundle), e).unwrap(), b"eleven");
    }

    #[test]
    fn a_missing_target_names_what_the_bundle_holds() {
        let bundle = assemble(&[(HOST, b""), (G1100, b"eleven")]);
        let index = BundleIndex::read(&reader(&bundle)).unwrap();
        let err = index.select(&target("gfx1201")).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("no code object for gfx1201") && msg.contains(G1100),
            "{msg}"
        );
        // Processors match exactly: gfx120 is not a prefix match of gfx1201.
        let bundle = assemble(&[("hipv4-amdgcn-amd-amdhsa--gfx120", b"x")]);
        let index = BundleIndex::read(&reader(&bundle)).unwrap();
        assert!(index.select(&target("gfx1201")).is_err());
    }

    #[test]
    fn feature_suffixes_match_unless_they_clash() {
        let off = "hipv4-amdgcn-amd-amdhsa--gfx1030:xnack-";
        let on = "hipv4-amdgcn-amd-amdhsa--gfx1030:xnack+";
        let bundle = assemble(&[(on, b"on"), (off, b"off")]);
        let index = BundleIndex::read(&reader(&bundle)).unwrap();
        let read = reader(&bundle);
        let pick = |t: &str| entry_bytes(&read, index.select(&target(t)).unwrap()).unwrap();
        assert_eq!(pick("gfx1030:xnack-"), b"off");
        assert_eq!(pick("gfx1030:xnack+"), b"on");
        // A device stating nothing takes the first compatible entry.
        assert_eq!(pick("gfx1030"), b"on");
        let bundle = assemble(&[(on, b"on")]);
        let index = BundleIndex::read(&reader(&bundle)).unwrap();
        assert!(index.select(&target("gfx1030:xnack-")).is_err());
        assert_eq!(
            device_target("hip-amdgcn-amd-amdhsa--gfx1100").map(|t| t.to_string()),
            Some("gfx1100".into())
        );
        assert_eq!(device_target(HOST), None);
        assert_eq!(device_target("openmp-amdgcn-amd-amdhsa--gfx1100"), None);
    }

    #[test]
    fn compressed_and_garbage_are_refused_with_the_reason() {
        let mut ccob = b"CCOB".to_vec();
        ccob.resize(64, 1);
        assert_eq!(
            BundleIndex::read(&reader(&ccob)),
            Err(BundleError::Compressed)
        );
        assert!(BundleError::Compressed.to_string().contains("compressed"));
        assert!(looks_like_bundle(&ccob[..24]) && looks_like_bundle(&assemble(&[])[..24]));
        assert!(!looks_like_bundle(
            b"\x7fELF\x02\x01\x01\x40\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
        ));
        assert_eq!(
            BundleIndex::read(&reader(&[0u8; 64])),
            Err(BundleError::NotABundle)
        );
        assert_eq!(
            BundleIndex::read(&reader(b"__CLANG")),
            Err(BundleError::NotABundle)
        );
        let mut huge = BUNDLE_MAGIC.to_vec();
        huge.extend(u64::MAX.to_le_bytes());
        assert_eq!(
            BundleIndex::read(&reader(&huge)),
            Err(BundleError::EntryCount(u64::MAX))
        );
        // An entry reaching past the bound is refused, not read.
        let mut far = assemble(&[(G1201, b"x")]);
        far[32..40].copy_from_slice(&MAX_IMAGE_BYTES.to_le_bytes());
        let err = BundleIndex::read(&reader(&far)).unwrap_err().to_string();
        assert!(err.contains("reach past"), "{err}");
        // A truncated table is a read error.
        let short = &assemble(&[(G1201, b"x")])[..40];
        assert!(matches!(
            BundleIndex::read(&reader(short)),
            Err(BundleError::Read(_))
        ));
    }

    fn survives(b: &[u8]) {
        let read = reader(b);
        if let Ok(index) = BundleIndex::read(&read) {
            assert!(index.extent <= MAX_IMAGE_BYTES);
            let _ = index.select(&target("gfx1201"));
            for e in &index.entries {
                let _ = entry_bytes(&read, e);
            }
        }
    }

    proptest! {
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512),
                                count in 0u64..8, magic in any::<bool>()) {
            let mut b = bytes;
            if magic {
                let mut m = BUNDLE_MAGIC.to_vec();
                m.extend(count.to_le_bytes());
                m.extend(b);
                b = m;
            }
            survives(&b);
        }

        #[test]
        fn corrupted_bundles_never_panic(flips in proptest::collection::vec((0usize..400, any::<u8>()), 1..8),
                                         cut in 0usize..400) {
            let mut b = assemble(&[(HOST, b""), (G1100, &[7u8; 100]), (G1201, &[9u8; 100])]);
            for (at, v) in flips {
                let at = at % b.len();
                b[at] = v;
            }
            survives(&b);
            survives(&b[..cut.min(b.len())]);
        }
    }
}
