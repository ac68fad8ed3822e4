//! Reading `.kpack` archives (ROCm's kpack layout, format version 1).
//!
//! Layout: a 16-byte little-endian header (magic `KPAK`, u32 format version,
//! u64 offset of the table of contents), zero padding to byte 64, blob data,
//! and a MessagePack map at the TOC offset: `format_version`, `group_name`,
//! `gfx_arch_family`, `gfx_arches`, `compression_scheme` (`none` or
//! `zstd-per-kernel`) and `toc`: binary path (the key) -> gfx arch ->
//! `{type: "hsaco", ordinal, original_size}`. `none` adds `blobs`: a list of
//! `{offset, size}` (absolute, 64-byte aligned) indexed by ordinal;
//! `zstd-per-kernel` adds `zstd_offset`/`zstd_size` of one blob holding a u32
//! count, then per ordinal a u32 frame size and the zstd frame.
//!
//! Everything read from the file is checked before use: offsets and sizes
//! against the file, counts and lengths against [`limits`], ordinals
//! against the blob table, and each decompressed code object against its
//! `original_size` (the decoder stops one byte past it).

use std::io::Read;
use std::ops::Range;

use rmpv::Value;

use super::error::BundleError as E;

pub const MAGIC: &[u8; 4] = b"KPAK";
pub const FORMAT_VERSION: u32 = 1;
/// Where blob data may start (the header is padded to this).
pub const DATA_START: u64 = 64;
/// Alignment of `none` blobs.
pub const BLOB_ALIGN: u64 = 64;

/// Ceilings on what an archive may declare. An archive past one is refused
/// with [`E::TooMany`]; none of them is reached by real kernel packages.
pub mod limits {
    /// Whole archive.
    pub const MAX_ARCHIVE_BYTES: u64 = 1 << 30;
    /// The MessagePack table of contents.
    pub const MAX_TOC_BYTES: u64 = 16 << 20;
    /// TOC keys, (key, arch) entries, blobs and zstd frames each.
    pub const MAX_ENTRIES: usize = 65_536;
    /// Architectures per archive and per key.
    pub const MAX_ARCHES: usize = 256;
    /// One key, arch or name string.
    pub const MAX_STRING: usize = 4096;
    /// One code object, compressed or not (`original_size` ceiling).
    pub const MAX_CODE_OBJECT_BYTES: u64 = 64 << 20;
    /// `original_size` may be at most this many times its zstd frame (plus
    /// 4 KiB): a bomb is refused before it is decoded.
    pub const MAX_ZSTD_RATIO: u64 = 1024;
    /// rmpv counts two levels per container; a TOC needs about 8.
    pub const MAX_DEPTH: usize = 24;
}
use limits::*;

/// How blobs are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    ZstdPerKernel,
}

impl Compression {
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::ZstdPerKernel => "zstd-per-kernel",
        }
    }
}

/// One (key, arch) entry of the table of contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TocEntry {
    pub key: String,
    pub arch: String,
    /// `type` (`hsaco` for code objects).
    pub kind: String,
    pub ordinal: u32,
    pub original_size: u64,
}

/// An archive whose header and table of contents were read and checked.
/// Blobs are decoded on demand by [`Kpack::extract`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kpack {
    bytes: Vec<u8>,
    pub group_name: String,
    pub gfx_arch_family: String,
    pub gfx_arches: Vec<String>,
    pub compression: Compression,
    entries: Vec<TocEntry>,
    /// Byte range of each ordinal's blob (`none`) or zstd frame.
    blobs: Vec<Range<usize>>,
}

/// Parse `bytes` as an archive and decode every entry: what a fuzz target
/// calls. Returns each entry with its code-object bytes, or the first error.
pub fn read_kpack(bytes: &[u8]) -> Result<Vec<(TocEntry, Vec<u8>)>, E> {
    let kpack = Kpack::parse(bytes)?;
    kpack
        .entries()
        .iter()
        .map(|e| Ok((e.clone(), kpack.extract(e)?)))
        .collect()
}

fn toc_err(msg: impl Into<String>) -> E {
    E::Toc(msg.into())
}

fn span(what: &str, offset: u64, size: u64, len: usize) -> Result<Range<usize>, E> {
    let end = offset.checked_add(size).filter(|&end| end <= len as u64);
    match end {
        Some(end) => Ok(offset as usize..end as usize),
        None => Err(E::OutOfBounds {
            what: what.to_string(),
            offset,
            size,
            len: len as u64,
        }),
    }
}

fn u32_at(bytes: &[u8], at: usize, what: &str) -> Result<u32, E> {
    let r = span(what, at as u64, 4, bytes.len())?;
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[r]);
    Ok(u32::from_le_bytes(b))
}

fn get<'v>(map: &'v [(Value, Value)], key: &str) -> Option<&'v Value> {
    map.iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

fn required<'v>(map: &'v [(Value, Value)], key: &str, ctx: &str) -> Result<&'v Value, E> {
    get(map, key).ok_or_else(|| toc_err(format!("{ctx}: missing {key}")))
}

fn as_map<'v>(v: &'v Value, ctx: &str) -> Result<&'v [(Value, Value)], E> {
    let map = v
        .as_map()
        .ok_or_else(|| toc_err(format!("{ctx} is not a map")))?;
    if map.len() > MAX_ENTRIES {
        return Err(E::TooMany {
            what: "map entries",
            count: map.len() as u64,
            limit: MAX_ENTRIES as u64,
        });
    }
    Ok(map)
}

fn as_str<'v>(v: &'v Value, ctx: &str) -> Result<&'v str, E> {
    let s = v
        .as_str()
        .ok_or_else(|| toc_err(format!("{ctx} is not a UTF-8 string")))?;
    if s.len() > MAX_STRING {
        return Err(toc_err(format!(
            "{ctx} is {} bytes long (limit {MAX_STRING})",
            s.len()
        )));
    }
    Ok(s)
}

fn as_u64(v: &Value, ctx: &str) -> Result<u64, E> {
    v.as_u64()
        .ok_or_else(|| toc_err(format!("{ctx} is not an unsigned integer")))
}

impl Kpack {
    /// Read and check an archive's header and table of contents.
    pub fn parse(bytes: &[u8]) -> Result<Kpack, E> {
        if bytes.len() as u64 > MAX_ARCHIVE_BYTES {
            return Err(E::TooMany {
                what: "archive bytes",
                count: bytes.len() as u64,
                limit: MAX_ARCHIVE_BYTES,
            });
        }
        if bytes.len() < 16 || &bytes[..4] != MAGIC {
            let head = &bytes[..bytes.len().min(4)];
            return Err(E::NotKpack(format!(
                "{} bytes, starts with {head:02x?} (want \"KPAK\" and a 16-byte header)",
                bytes.len()
            )));
        }
        let version = u32_at(bytes, 4, "header")?;
        if version != FORMAT_VERSION {
            return Err(E::Version(version.into()));
        }
        let mut off = [0u8; 8];
        off.copy_from_slice(&bytes[8..16]);
        let toc_offset = u64::from_le_bytes(off);
        if toc_offset < 16 {
            return Err(toc_err(format!(
                "offset {toc_offset} lies inside the 16-byte header"
            )));
        }
        let toc_len = (bytes.len() as u64).saturating_sub(toc_offset);
        let toc = span("table of contents", toc_offset, toc_len.max(1), bytes.len())?;
        if toc_len > MAX_TOC_BYTES {
            return Err(E::TooMany {
                what: "table-of-contents bytes",
                count: toc_len,
                limit: MAX_TOC_BYTES,
            });
        }
        let mut reader = &bytes[toc];
        let root = rmpv::decode::read_value_with_max_depth(&mut reader, MAX_DEPTH)
            .map_err(|e| toc_err(format!("not valid MessagePack: {e}")))?;
        Self::from_toc(bytes, &root, toc_offset)
    }

    fn from_toc(bytes: &[u8], root: &Value, toc_offset: u64) -> Result<Kpack, E> {
        let map = as_map(root, "the table of contents")?;
        let ctx = "table of contents";
        let fv = as_u64(required(map, "format_version", ctx)?, "format_version")?;
        if fv != u64::from(FORMAT_VERSION) {
            return Err(E::Version(fv));
        }
        let group_name = as_str(required(map, "group_name", ctx)?, "group_name")?.to_string();
        let gfx_arch_family =
            as_str(required(map, "gfx_arch_family", ctx)?, "gfx_arch_family")?.to_string();
        let arches = required(map, "gfx_arches", ctx)?
            .as_array()
            .ok_or_else(|| toc_err("gfx_arches is not a list"))?;
        if arches.len() > MAX_ARCHES {
            return Err(E::TooMany {
                what: "gfx_arches",
                count: arches.len() as u64,
                limit: MAX_ARCHES as u64,
            });
        }
        let gfx_arches = arches
            .iter()
            .map(|a| as_str(a, "a gfx_arches item").map(str::to_string))
            .collect::<Result<Vec<_>, E>>()?;
        let scheme = as_str(
            required(map, "compression_scheme", ctx)?,
            "compression_scheme",
        )?;
        let compression = match scheme {
            "none" => Compression::None,
            "zstd-per-kernel" => Compression::ZstdPerKernel,
            other => {
                return Err(toc_err(format!(
                    "compression_scheme {other:?} is not supported (none, zstd-per-kernel)"
                )))
            }
        };
        let data_end = usize::try_from(toc_offset).unwrap_or(usize::MAX);
        let blobs = match compression {
            Compression::None => Self::plain_blobs(bytes, map, data_end)?,
            Compression::ZstdPerKernel => Self::zstd_frames(bytes, map, data_end)?,
        };
        let entries = Self::entries_of(required(map, "toc", ctx)?, blobs.len())?;
        let kpack = Kpack {
            bytes: bytes.to_vec(),
            group_name,
            gfx_arch_family,
            gfx_arches,
            compression,
            entries,
            blobs,
        };
        for e in &kpack.entries {
            kpack.check_size(e)?;
        }
        Ok(kpack)
    }

    fn plain_blobs(
        bytes: &[u8],
        map: &[(Value, Value)],
        data_end: usize,
    ) -> Result<Vec<Range<usize>>, E> {
        let list = required(map, "blobs", "table of contents (none)")?
            .as_array()
            .ok_or_else(|| toc_err("blobs is not a list"))?;
        if list.len() > MAX_ENTRIES {
            return Err(E::TooMany {
                what: "blobs",
                count: list.len() as u64,
                limit: MAX_ENTRIES as u64,
            });
        }
        let data = &bytes[..data_end.min(bytes.len())];
        list.iter()
            .enumerate()
            .map(|(i, blob)| {
                let ctx = format!("blobs[{i}]");
                let m = as_map(blob, &ctx)?;
                let offset = as_u64(required(m, "offset", &ctx)?, &format!("{ctx}.offset"))?;
                let size = as_u64(required(m, "size", &ctx)?, &format!("{ctx}.size"))?;
                if offset < DATA_START || offset % BLOB_ALIGN != 0 {
                    return Err(toc_err(format!(
                        "{ctx}.offset {offset} is not a {BLOB_ALIGN}-byte aligned offset at or \
                         past {DATA_START}"
                    )));
                }
                span(&ctx, offset, size, data.len())
            })
            .collect()
    }

    fn zstd_frames(
        bytes: &[u8],
        map: &[(Value, Value)],
        data_end: usize,
    ) -> Result<Vec<Range<usize>>, E> {
        let ctx = "table of contents (zstd-per-kernel)";
        let offset = as_u64(required(map, "zstd_offset", ctx)?, "zstd_offset")?;
        let size = as_u64(required(map, "zstd_size", ctx)?, "zstd_size")?;
        if offset < DATA_START {
            return Err(toc_err(format!(
                "zstd_offset {offset} lies inside the {DATA_START}-byte header"
            )));
        }
        let blob = span("zstd blob", offset, size, data_end.min(bytes.len()))?;
        let base = blob.start;
        let blob = &bytes[blob];
        let count = u32_at(blob, 0, "zstd blob kernel count")? as usize;
        if count > MAX_ENTRIES {
            return Err(E::TooMany {
                what: "zstd frames",
                count: count as u64,
                limit: MAX_ENTRIES as u64,
            });
        }
        let mut at = 4usize;
        let mut frames = Vec::new();
        for i in 0..count {
            let len = u32_at(blob, at, &format!("zstd frame {i} size"))? as u64;
            let r = span(&format!("zstd frame {i}"), at as u64 + 4, len, blob.len())?;
            at = r.end;
            frames.push(base + r.start..base + r.end);
        }
        Ok(frames)
    }

    fn entries_of(toc: &Value, blobs: usize) -> Result<Vec<TocEntry>, E> {
        let mut entries = Vec::new();
        for (key, per_arch) in as_map(toc, "toc")? {
            let key = as_str(key, "a toc key")?;
            if key.is_empty() {
                return Err(toc_err("a toc key is empty"));
            }
            let per_arch = as_map(per_arch, &format!("toc[{key:?}]"))?;
            if per_arch.len() > MAX_ARCHES {
                return Err(E::TooMany {
                    what: "arches of one toc key",
                    count: per_arch.len() as u64,
                    limit: MAX_ARCHES as u64,
                });
            }
            for (arch, info) in per_arch {
                let arch = as_str(arch, &format!("an arch of toc[{key:?}]"))?;
                let ctx = format!("toc[{key:?}][{arch:?}]");
                let m = as_map(info, &ctx)?;
                let kind = as_str(required(m, "type", &ctx)?, &format!("{ctx}.type"))?;
                let ordinal = as_u64(required(m, "ordinal", &ctx)?, &format!("{ctx}.ordinal"))?;
                let original_size = as_u64(
                    required(m, "original_size", &ctx)?,
                    &format!("{ctx}.original_size"),
                )?;
                if ordinal >= blobs as u64 {
                    return Err(toc_err(format!(
                        "{ctx}.ordinal {ordinal} is past the {blobs} blobs"
                    )));
                }
                if entries.len() >= MAX_ENTRIES {
                    return Err(E::TooMany {
                        what: "toc entries",
                        count: entries.len() as u64 + 1,
                        limit: MAX_ENTRIES as u64,
                    });
                }
                if entries
                    .iter()
                    .any(|e: &TocEntry| e.key == key && e.arch == arch)
                {
                    return Err(toc_err(format!("{ctx} appears twice")));
                }
                entries.push(TocEntry {
                    key: key.to_string(),
                    arch: arch.to_string(),
                    kind: kind.to_string(),
                    ordinal: ordinal as u32,
                    original_size,
                });
            }
        }
        Ok(entries)
    }

    /// Sizes known before decoding: ceiling, ratio, and for `none` the blob.
    fn check_size(&self, e: &TocEntry) -> Result<(), E> {
        let fail = |reason: String| E::Entry {
            key: e.key.clone(),
            arch: e.arch.clone(),
            reason,
        };
        if e.original_size > MAX_CODE_OBJECT_BYTES {
            return Err(fail(format!(
                "original_size {} is past the {MAX_CODE_OBJECT_BYTES}-byte ceiling",
                e.original_size
            )));
        }
        let stored = self.blobs[e.ordinal as usize].len() as u64;
        match self.compression {
            Compression::None if stored != e.original_size => Err(fail(format!(
                "blob {} holds {stored} bytes but original_size is {}",
                e.ordinal, e.original_size
            ))),
            Compression::ZstdPerKernel
                if e.original_size > stored.saturating_mul(MAX_ZSTD_RATIO) + 4096 =>
            {
                Err(fail(format!(
                    "original_size {} is more than {MAX_ZSTD_RATIO}x its {stored}-byte zstd frame",
                    e.original_size
                )))
            }
            _ => Ok(()),
        }
    }

    /// Every (key, arch) entry, in table order.
    pub fn entries(&self) -> &[TocEntry] {
        &self.entries
    }

    /// The entry for `key` on `arch`.
    pub fn entry(&self, key: &str, arch: &str) -> Option<&TocEntry> {
        self.entries.iter().find(|e| e.key == key && e.arch == arch)
    }

    /// The code-object bytes of `entry`: exactly `original_size` bytes, or
    /// an error (a zstd frame that decodes to more or fewer is refused).
    pub fn extract(&self, entry: &TocEntry) -> Result<Vec<u8>, E> {
        let fail = |reason: String| E::Entry {
            key: entry.key.clone(),
            arch: entry.arch.clone(),
            reason,
        };
        let range = self
            .blobs
            .get(entry.ordinal as usize)
            .ok_or_else(|| fail(format!("ordinal {} has no blob", entry.ordinal)))?;
        let stored = &self.bytes[range.clone()];
        match self.compression {
            Compression::None => Ok(stored.to_vec()),
            Compression::ZstdPerKernel => {
                // The slot holds exactly one frame: trailing bytes would be
                // data no size or hash covers.
                match zstd::zstd_safe::find_frame_compressed_size(stored) {
                    Ok(n) if n == stored.len() => {}
                    Ok(n) => {
                        return Err(fail(format!(
                            "zstd frame {} is {n} bytes but its slot holds {}",
                            entry.ordinal,
                            stored.len()
                        )))
                    }
                    Err(code) => {
                        return Err(fail(format!(
                            "zstd frame {} is not a zstd frame: {}",
                            entry.ordinal,
                            zstd::zstd_safe::get_error_name(code)
                        )))
                    }
                }
                let mut decoder = zstd::stream::read::Decoder::with_buffer(stored)
                    .map_err(|e| fail(format!("zstd: {e}")))?;
                // A frame may declare a window of up to 2 GiB; none needs
                // more than its own output (at least 1 MiB), so cap the window there.
                let window_log = (64 - entry.original_size.leading_zeros()).clamp(20, 27);
                decoder
                    .window_log_max(window_log)
                    .map_err(|e| fail(format!("zstd: {e}")))?;
                // One frame only: a second would be data the size does not cover.
                let mut decoder = decoder.single_frame();
                let mut out = Vec::new();
                // Read one byte past original_size so "more" is detected
                // without decoding (or allocating) the rest.
                (&mut decoder)
                    .take(entry.original_size + 1)
                    .read_to_end(&mut out)
                    .map_err(|e| {
                        fail(format!("zstd frame {} does not decode: {e}", entry.ordinal))
                    })?;
                if out.len() as u64 != entry.original_size {
                    return Err(fail(format!(
                        "zstd frame {} decodes to {}{} bytes, original_size is {}",
                        entry.ordinal,
                        if out.len() as u64 > entry.original_size {
                            "more than "
                        } else {
                            ""
                        },
                        out.len().min(entry.original_size as usize),
                        entry.original_size
                    )));
                }
                Ok(out)
            }
        }
    }

    /// Archive bytes (as read).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}
