//! Clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__`): a magic string, an
//! entry count, then per entry (offset u64, size u64, id length u64, id),
//! all little-endian. Ids look like `hipv4-amdgcn-amd-amdhsa--gfx1100:xnack-`
//! or `host-x86_64-unknown-linux-gnu-`. This reader walks plain bundles; a
//! compressed one (`CCOB`) is decompressed first by [`super::compressed`]
//! ([`super::compressed::plain_bundle`]).

use super::error::CodeObjectError as E;
use relaunch_facts::{FeatureSetting, GfxTarget};

pub const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
use super::compressed::COMPRESSED_MAGIC;
/// Most entries a bundle may list (real ones hold one per target).
pub const MAX_ENTRIES: u64 = 1024;
/// Longest entry id (real ones are under 64 bytes).
pub const MAX_ID_BYTES: u64 = 1024;

/// One entry of a bundle, borrowing the bundle bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundleEntry<'a> {
    /// Offload kind, triple and target id as written.
    pub id: &'a str,
    pub bytes: &'a [u8],
}

impl BundleEntry<'_> {
    /// The GPU target of an `amdgcn-amd-amdhsa` entry (`None` for host and
    /// other triples, or ids that do not parse).
    pub fn gpu_target(&self) -> Option<GfxTarget> {
        let (_kind, rest) = self.id.split_once('-')?;
        let (triple, target) = rest.split_once("--")?;
        if !triple.starts_with("amdgcn-amd-amdhsa") {
            return None;
        }
        GfxTarget::parse(target).ok()
    }
}

/// True when `bytes` starts like an offload bundle (plain or compressed).
pub fn is_bundle(bytes: &[u8]) -> bool {
    bytes.starts_with(BUNDLE_MAGIC) || bytes.starts_with(COMPRESSED_MAGIC)
}

fn read_u64(bytes: &[u8], at: u64, what: &'static str) -> Result<u64, E> {
    let end = at.checked_add(8).filter(|&e| e <= bytes.len() as u64);
    let Some(end) = end else {
        return Err(E::Truncated {
            what,
            offset: at,
            needed: 8,
            len: bytes.len() as u64,
        });
    };
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at as usize..end as usize]);
    Ok(u64::from_le_bytes(b))
}

/// Read every entry of a bundle.
pub fn entries(bytes: &[u8]) -> Result<Vec<BundleEntry<'_>>, E> {
    if bytes.starts_with(COMPRESSED_MAGIC) {
        return Err(E::Bundle(
            "this is a compressed offload bundle (CCOB): decompress it first \
             (codeobj::compressed::plain_bundle)"
                .into(),
        ));
    }
    if !bytes.starts_with(BUNDLE_MAGIC) {
        return Err(E::Bundle("missing __CLANG_OFFLOAD_BUNDLE__ magic".into()));
    }
    let len = bytes.len() as u64;
    let mut at = BUNDLE_MAGIC.len() as u64;
    let count = read_u64(bytes, at, "bundle entry count")?;
    at += 8;
    if count > MAX_ENTRIES {
        return Err(E::TooMany {
            what: "bundle entries",
            count,
            limit: MAX_ENTRIES,
        });
    }
    let mut out = Vec::new();
    for index in 0..count {
        let offset = read_u64(bytes, at, "bundle entry offset")?;
        let size = read_u64(bytes, at + 8, "bundle entry size")?;
        let id_len = read_u64(bytes, at + 16, "bundle entry id length")?;
        at += 24;
        if id_len > MAX_ID_BYTES {
            return Err(E::Bundle(format!(
                "entry {index} id is {id_len} bytes long (limit {MAX_ID_BYTES})"
            )));
        }
        let id_end = at + id_len; // at <= len and id_len <= 1024: no overflow
        if id_end > len {
            return Err(E::Truncated {
                what: "bundle entry id",
                offset: at,
                needed: id_len,
                len,
            });
        }
        let id = std::str::from_utf8(&bytes[at as usize..id_end as usize])
            .map_err(|_| E::Bundle(format!("entry {index} id is not UTF-8")))?;
        at = id_end;
        let end = offset.checked_add(size).filter(|&e| e <= len);
        let Some(end) = end else {
            return Err(E::OutOfBounds {
                what: format!("bundle entry {index} ({id})"),
                offset,
                size,
                len,
            });
        };
        out.push(BundleEntry {
            id,
            bytes: &bytes[offset as usize..end as usize],
        });
    }
    Ok(out)
}

/// True when an entry built for `have` runs on a request for `want`:
/// same processor, and every feature the request names is either set the
/// same way in the entry or left unspecified there ("any").
pub fn compatible(want: &GfxTarget, have: &GfxTarget) -> bool {
    want.processor() == have.processor()
        && want.features().iter().all(|(name, setting)| {
            have.features()
                .iter()
                .find(|(n, _)| n == name)
                .is_none_or(|(_, s): &(String, FeatureSetting)| s == setting)
        })
}

/// Pick the GPU entry for `target` (`gfx1100`, `gfx1100:xnack-`, or a full
/// bundle id): the processor's own entry, else a generic one covering it
/// (`gfx11-generic` for `gfx1100`). Without a target the bundle must hold
/// exactly one GPU entry.
pub fn select<'a>(bytes: &'a [u8], target: Option<&str>) -> Result<BundleEntry<'a>, E> {
    let all = entries(bytes)?;
    let gpu: Vec<(BundleEntry<'a>, GfxTarget)> = all
        .iter()
        .filter_map(|e| e.gpu_target().map(|t| (*e, t)))
        .collect();
    let available = || {
        let ids: Vec<&str> = all.iter().map(|e| e.id).collect();
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(", ")
        }
    };
    let Some(wanted) = target else {
        return match gpu.as_slice() {
            [(only, _)] => Ok(*only),
            _ => Err(E::AmbiguousBundle {
                available: available(),
            }),
        };
    };
    if let Some(exact) = all.iter().find(|e| e.id == wanted) {
        return Ok(*exact);
    }
    let no_match = || E::NoBundleEntry {
        wanted: wanted.to_string(),
        available: available(),
    };
    let want = GfxTarget::parse(wanted).map_err(|_| no_match())?;
    // The processor's own code first; a generic entry covering it (ROCr
    // and HIP load those) only when there is none.
    gpu.iter()
        .find(|(_, have)| have.to_string() == want.to_string())
        .or_else(|| gpu.iter().find(|(_, have)| compatible(&want, have)))
        .or_else(|| {
            gpu.iter().find(|(_, have)| {
                have.runs_on(&want) && compatible(&want, &have.with_processor(want.processor()))
            })
        })
        .map(|(e, _)| *e)
        .ok_or_else(no_match)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bundle with the given (id, payload) entries, payloads after the table.
    pub(crate) fn make(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut header = BUNDLE_MAGIC.to_vec();
        header.extend((entries.len() as u64).to_le_bytes());
        let table: usize = entries.iter().map(|(id, _)| 24 + id.len()).sum();
        let mut offset = (header.len() + table) as u64;
        let mut payload = Vec::new();
        for (id, data) in entries {
            header.extend(offset.to_le_bytes());
            header.extend((data.len() as u64).to_le_bytes());
            header.extend((id.len() as u64).to_le_bytes());
            header.extend(id.as_bytes());
            payload.extend_from_slice(data);
            offset += data.len() as u64;
        }
        header.extend(payload);
        header
    }

    #[test]
    fn picks_by_processor_and_features() {
        let b = make(&[
            ("host-x86_64-unknown-linux-gnu-", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx1030", b"A"),
            ("hipv4-amdgcn-amd-amdhsa--gfx1100:xnack-", b"B"),
        ]);
        assert_eq!(select(&b, Some("gfx1030")).unwrap().bytes, b"A");
        assert_eq!(select(&b, Some("gfx1100")).unwrap().bytes, b"B");
        assert_eq!(select(&b, Some("gfx1100:xnack-")).unwrap().bytes, b"B");
        assert_eq!(
            select(&b, Some("hipv4-amdgcn-amd-amdhsa--gfx1030"))
                .unwrap()
                .bytes,
            b"A"
        );
        let e = select(&b, Some("gfx1100:xnack+")).unwrap_err();
        assert!(e.to_string().contains("gfx1030"), "{e}");
        let e = select(&b, Some("gfx1201")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "offload bundle has no entry for target gfx1201; available: \
             host-x86_64-unknown-linux-gnu-, hipv4-amdgcn-amd-amdhsa--gfx1030, \
             hipv4-amdgcn-amd-amdhsa--gfx1100:xnack-"
        );
        assert!(matches!(select(&b, None), Err(E::AmbiguousBundle { .. })));
    }

    #[test]
    fn a_generic_entry_serves_the_processors_it_covers_when_none_is_exact() {
        let b = make(&[
            ("hipv4-amdgcn-amd-amdhsa--gfx1100", b"A"),
            ("hipv4-amdgcn-amd-amdhsa--gfx11-generic:xnack-", b"G"),
            ("hipv4-amdgcn-amd-amdhsa--gfx10-3-generic", b"T"),
        ]);
        // The processor's own entry wins over the generic one.
        assert_eq!(select(&b, Some("gfx1100")).unwrap().bytes, b"A");
        assert_eq!(select(&b, Some("gfx1101")).unwrap().bytes, b"G");
        assert_eq!(select(&b, Some("gfx1151:xnack-")).unwrap().bytes, b"G");
        assert_eq!(select(&b, Some("gfx1035")).unwrap().bytes, b"T");
        // A feature the generic entry sets the other way, or a processor
        // no entry covers: no entry.
        assert!(select(&b, Some("gfx1102:xnack+")).is_err());
        assert!(select(&b, Some("gfx1201")).is_err());
        assert!(select(&b, Some("gfx1010")).is_err());
    }

    #[test]
    fn refuses_bad_tables() {
        let mut b = make(&[("hipv4-amdgcn-amd-amdhsa--gfx1030", b"A")]);
        let n = b.len();
        b.truncate(n - 1);
        assert!(matches!(entries(&b), Err(E::OutOfBounds { .. })));
        let mut huge = BUNDLE_MAGIC.to_vec();
        huge.extend(u64::MAX.to_le_bytes());
        assert!(matches!(entries(&huge), Err(E::TooMany { .. })));
        assert!(matches!(
            entries(b"CCOB\x01\x00"),
            Err(E::Bundle(m)) if m.contains("compressed")
        ));
    }
}
