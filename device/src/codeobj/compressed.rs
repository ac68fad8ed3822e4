//! Compressed clang offload bundles (`clang-offload-bundler --compress`,
//! hipcc's `--offload-compress`): a header, then one zlib or zstd stream
//! whose content is an ordinary `__CLANG_OFFLOAD_BUNDLE__` bundle.
//!
//! Header (little-endian; clang's "Clang Offload Bundler" document and
//! `CompressedOffloadBundle` in OffloadBundler.h):
//!
//! | version | layout after `CCOB` |
//! |---|---|
//! | 1 | version u16, method u16, uncompressed size u32, hash u64 (20 bytes) |
//! | 2 | version u16, method u16, total file size u32, uncompressed size u32, hash u64 (24 bytes) |
//! | 3 | version u16, method u16, total file size u64, uncompressed size u64, hash u64 (32 bytes) |
//!
//! Method is `llvm::compression::Format`: 0 zlib, 1 zstd. The total file
//! size (v2, v3) counts the header; v1 has none (the stream runs to the
//! end of the input). The hash is the bundler's cache key over the
//! uncompressed bytes and is not checked here: the streams carry their own
//! integrity checks, the size must come out exactly as declared, and the
//! inner bundle is then parsed strictly.
//!
//! Bounded: the declared uncompressed size may be at most
//! [`MAX_UNCOMPRESSED_BYTES`], decompression stops one byte past the
//! declared size (a stream that expands further is refused, never
//! buffered), and memory grows with the bytes actually produced, not with
//! what the header claims.

use std::borrow::Cow;
use std::io::Read;

use super::error::CodeObjectError as E;

/// Magic of a compressed bundle.
pub const COMPRESSED_MAGIC: &[u8; 4] = b"CCOB";
/// Largest uncompressed bundle accepted (a whole ROCm library's fat binary
/// for one target is well below this).
pub const MAX_UNCOMPRESSED_BYTES: u64 = 512 << 20;
/// Bytes of the longest (v3) header.
pub const MAX_HEADER_BYTES: usize = 32;

/// The compression method of a compressed bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Zlib,
    Zstd,
}

/// A parsed compressed-bundle header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressedHeader {
    pub version: u16,
    pub method: Method,
    /// Total bytes of the compressed bundle, header included (v2, v3).
    pub file_size: Option<u64>,
    pub uncompressed_size: u64,
    pub hash: u64,
    /// Bytes of the header; the stream starts here.
    pub header_len: usize,
}

fn field(bytes: &[u8], at: usize, n: usize, what: &'static str) -> Result<u64, E> {
    let b = bytes.get(at..at + n).ok_or(E::Truncated {
        what,
        offset: at as u64,
        needed: n as u64,
        len: bytes.len() as u64,
    })?;
    let mut v = [0u8; 8];
    v[..n].copy_from_slice(b);
    Ok(u64::from_le_bytes(v))
}

/// True when `bytes` starts with the compressed-bundle magic.
pub fn is_compressed(bytes: &[u8]) -> bool {
    bytes.starts_with(COMPRESSED_MAGIC)
}

/// Read the header at the start of `bytes` (at least the header's bytes;
/// the stream need not follow, so a caller holding only a pointer can learn
/// the extent from the first [`MAX_HEADER_BYTES`]).
pub fn parse_header(bytes: &[u8]) -> Result<CompressedHeader, E> {
    if !is_compressed(bytes) {
        return Err(E::Bundle("missing CCOB compressed-bundle magic".into()));
    }
    let version = field(bytes, 4, 2, "compressed bundle version")? as u16;
    let method = match field(bytes, 6, 2, "compressed bundle method")? {
        0 => Method::Zlib,
        1 => Method::Zstd,
        m => {
            return Err(E::Bundle(format!(
                "compressed bundle method {m} is neither zlib (0) nor zstd (1)"
            )))
        }
    };
    let (file_size, uncompressed_size, hash, header_len) = match version {
        1 => (
            None,
            field(bytes, 8, 4, "compressed bundle uncompressed size")?,
            field(bytes, 12, 8, "compressed bundle hash")?,
            20,
        ),
        2 => (
            Some(field(bytes, 8, 4, "compressed bundle file size")?),
            field(bytes, 12, 4, "compressed bundle uncompressed size")?,
            field(bytes, 16, 8, "compressed bundle hash")?,
            24,
        ),
        3 => (
            Some(field(bytes, 8, 8, "compressed bundle file size")?),
            field(bytes, 16, 8, "compressed bundle uncompressed size")?,
            field(bytes, 24, 8, "compressed bundle hash")?,
            32,
        ),
        v => {
            return Err(E::Bundle(format!(
                "compressed bundle version {v} is not one relaunch reads (1, 2, 3)"
            )))
        }
    };
    if let Some(size) = file_size {
        if size < header_len as u64 {
            return Err(E::Bundle(format!(
                "compressed bundle says it is {size} bytes, shorter than its \
                 {header_len}-byte header"
            )));
        }
    }
    if uncompressed_size > MAX_UNCOMPRESSED_BYTES {
        return Err(E::TooMany {
            what: "uncompressed bundle bytes",
            count: uncompressed_size,
            limit: MAX_UNCOMPRESSED_BYTES,
        });
    }
    Ok(CompressedHeader {
        version,
        method,
        file_size,
        uncompressed_size,
        hash,
        header_len,
    })
}

/// Decompress a compressed bundle into the plain bundle it holds. `bytes`
/// may run past the bundle's end when the header gives its size (v2, v3).
pub fn decompress(bytes: &[u8]) -> Result<Vec<u8>, E> {
    let h = parse_header(bytes)?;
    let len = bytes.len() as u64;
    let end = match h.file_size {
        Some(size) if size > len => {
            return Err(E::OutOfBounds {
                what: "compressed bundle".into(),
                offset: 0,
                size,
                len,
            })
        }
        Some(size) => size as usize,
        None => bytes.len(),
    };
    let stream = &bytes[h.header_len..end];
    let limit = h.uncompressed_size + 1;
    // Grow with what the stream produces; start from a small multiple of
    // the input so a lying header cannot make us allocate up front.
    let mut out = Vec::with_capacity((h.uncompressed_size as usize).min(stream.len() * 8 + 64));
    let result = match h.method {
        Method::Zlib => flate2::read::ZlibDecoder::new(stream)
            .take(limit)
            .read_to_end(&mut out),
        Method::Zstd => zstd::stream::read::Decoder::with_buffer(stream)
            .and_then(|d| d.take(limit).read_to_end(&mut out)),
    };
    let method = match h.method {
        Method::Zlib => "zlib",
        Method::Zstd => "zstd",
    };
    result.map_err(|e| {
        E::Bundle(format!(
            "compressed bundle (v{}, {method}) does not decompress: {e}",
            h.version
        ))
    })?;
    if out.len() as u64 != h.uncompressed_size {
        let got = if out.len() as u64 == limit {
            format!("more than {}", h.uncompressed_size)
        } else {
            out.len().to_string()
        };
        return Err(E::Bundle(format!(
            "compressed bundle (v{}, {method}) declares {} uncompressed bytes but holds {got}",
            h.version, h.uncompressed_size
        )));
    }
    Ok(out)
}

/// The plain bundle in `bytes`: borrowed when it is not compressed,
/// decompressed when it is.
pub fn plain_bundle(bytes: &[u8]) -> Result<Cow<'_, [u8]>, E> {
    if is_compressed(bytes) {
        decompress(bytes).map(Cow::Owned)
    } else {
        Ok(Cow::Borrowed(bytes))
    }
}

/// Build a compressed bundle around `plain` (tests and fixtures; the real
/// ones come from clang-offload-bundler).
pub fn compress(plain: &[u8], version: u16, method: Method) -> Result<Vec<u8>, E> {
    let io = |e: std::io::Error| E::Bundle(format!("compression failed: {e}"));
    let stream = match method {
        Method::Zlib => {
            use std::io::Write;
            let mut enc =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(plain).map_err(io)?;
            enc.finish().map_err(io)?
        }
        Method::Zstd => zstd::stream::encode_all(plain, 3).map_err(io)?,
    };
    let m: u16 = match method {
        Method::Zlib => 0,
        Method::Zstd => 1,
    };
    let mut out = COMPRESSED_MAGIC.to_vec();
    out.extend(version.to_le_bytes());
    out.extend(m.to_le_bytes());
    let hash = 0u64;
    match version {
        1 => {
            out.extend((plain.len() as u32).to_le_bytes());
            out.extend(hash.to_le_bytes());
        }
        2 => {
            let total = 24 + stream.len();
            let total = u32::try_from(total)
                .map_err(|_| E::Bundle("too large for a v2 compressed bundle".into()))?;
            out.extend(total.to_le_bytes());
            out.extend((plain.len() as u32).to_le_bytes());
            out.extend(hash.to_le_bytes());
        }
        3 => {
            out.extend(((32 + stream.len()) as u64).to_le_bytes());
            out.extend((plain.len() as u64).to_le_bytes());
            out.extend(hash.to_le_bytes());
        }
        v => return Err(E::Bundle(format!("no compressed bundle version {v}"))),
    }
    out.extend(stream);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plain() -> Vec<u8> {
        let mut b = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
        b.extend(std::iter::repeat_n(0xA5u8, 4000));
        b
    }

    #[test]
    fn every_version_and_method_round_trips() {
        for version in [1, 2, 3] {
            for method in [Method::Zlib, Method::Zstd] {
                let c = compress(&plain(), version, method).unwrap();
                let h = parse_header(&c).unwrap();
                assert_eq!((h.version, h.method), (version, method));
                assert_eq!(h.uncompressed_size, 4024);
                if version > 1 {
                    assert_eq!(h.file_size, Some(c.len() as u64));
                }
                assert_eq!(decompress(&c).unwrap(), plain());
                // Trailing bytes after a sized bundle are not part of it.
                if version > 1 {
                    let mut padded = c.clone();
                    padded.extend([0u8; 100]);
                    assert_eq!(decompress(&padded).unwrap(), plain());
                }
            }
        }
    }

    #[test]
    fn lying_headers_are_refused_by_name() {
        let c = compress(&plain(), 3, Method::Zstd).unwrap();
        let mut more = c.clone();
        more[16..24].copy_from_slice(&5000u64.to_le_bytes());
        let e = decompress(&more).unwrap_err().to_string();
        assert!(
            e.contains("declares 5000 uncompressed bytes but holds 4024"),
            "{e}"
        );
        let mut less = c.clone();
        less[16..24].copy_from_slice(&100u64.to_le_bytes());
        let e = decompress(&less).unwrap_err().to_string();
        assert!(e.contains("holds more than 100"), "{e}");
        let mut huge = c.clone();
        huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(decompress(&huge), Err(E::TooMany { .. })));
        let mut long = c.clone();
        long[8..16].copy_from_slice(&(c.len() as u64 + 1).to_le_bytes());
        assert!(matches!(decompress(&long), Err(E::OutOfBounds { .. })));
        let mut method = c.clone();
        method[6] = 7;
        assert!(decompress(&method)
            .unwrap_err()
            .to_string()
            .contains("method 7"));
        let mut version = c;
        version[4] = 9;
        assert!(decompress(&version)
            .unwrap_err()
            .to_string()
            .contains("version 9"));
        assert!(matches!(
            parse_header(b"CCOB\x02"),
            Err(E::Truncated { .. })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Hostile headers and damaged streams: never a panic, never more
        /// output than declared, and a success is exactly the declared size.
        #[test]
        fn hostile_input_never_panics_or_overruns(
            version in 0u16..5,
            method in 0u16..3,
            file_size in any::<u64>(),
            uncompressed in prop_oneof![0u64..10_000, any::<u64>()],
            flips in proptest::collection::vec((0usize..400, any::<u8>()), 0..8),
            zstd in any::<bool>(),
        ) {
            let m = if zstd { Method::Zstd } else { Method::Zlib };
            let mut c = compress(&plain(), 3, m).unwrap();
            c[4..6].copy_from_slice(&version.to_le_bytes());
            c[6..8].copy_from_slice(&method.to_le_bytes());
            match version {
                2 => {
                    c[8..12].copy_from_slice(&(file_size as u32).to_le_bytes());
                    c[12..16].copy_from_slice(&(uncompressed as u32).to_le_bytes());
                }
                _ => {
                    c[8..16].copy_from_slice(&file_size.to_le_bytes());
                    c[16..24].copy_from_slice(&uncompressed.to_le_bytes());
                }
            }
            for (at, v) in flips {
                let n = c.len();
                c[at % n] ^= v;
            }
            if let Ok(out) = decompress(&c) {
                let h = parse_header(&c).unwrap();
                prop_assert_eq!(out.len() as u64, h.uncompressed_size);
                prop_assert!(h.uncompressed_size <= MAX_UNCOMPRESSED_BYTES);
            }
        }
    }
}
