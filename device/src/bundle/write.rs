//! Writing `.kpack` archives (the layout [`super::kpack`] reads): each
//! added code object gets its own ordinal; `none` stores blobs 64-byte
//! aligned after the header, `zstd-per-kernel` stores one blob of frames.

use rmpv::Value;

use super::error::BundleError as E;
use super::kpack::{limits, Compression, BLOB_ALIGN, DATA_START, FORMAT_VERSION, MAGIC};

/// zstd level for packed code objects (ROCm's tooling default is 3 too).
const ZSTD_LEVEL: i32 = 3;

/// Collects code objects and writes one archive.
#[derive(Debug, Clone)]
pub struct KpackWriter {
    group: String,
    family: String,
    arches: Vec<String>,
    compression: Compression,
    /// (key, arch, bytes), in the order added.
    items: Vec<(String, String, Vec<u8>)>,
}

fn s(text: &str) -> Value {
    Value::from(text)
}

impl KpackWriter {
    pub fn new(group: &str, family: &str, arches: &[&str], compression: Compression) -> Self {
        KpackWriter {
            group: group.to_string(),
            family: family.to_string(),
            arches: arches.iter().map(|a| a.to_string()).collect(),
            compression,
            items: Vec::new(),
        }
    }

    /// Add the code object for `key` on `arch`; a (key, arch) added twice,
    /// an arch not declared, or a code object past the ceiling is refused.
    pub fn add(&mut self, key: &str, arch: &str, bytes: Vec<u8>) -> Result<(), E> {
        if !self.arches.iter().any(|a| a == arch) {
            return Err(E::Pack(format!(
                "{key}: arch {arch} is not one of the archive's ({})",
                self.arches.join(", ")
            )));
        }
        if self.items.iter().any(|(k, a, _)| k == key && a == arch) {
            return Err(E::Pack(format!("{key} ({arch}) is added twice")));
        }
        if bytes.len() as u64 > limits::MAX_CODE_OBJECT_BYTES {
            return Err(E::Pack(format!(
                "{key}: {} bytes is past the {}-byte code object ceiling",
                bytes.len(),
                limits::MAX_CODE_OBJECT_BYTES
            )));
        }
        if self.items.len() >= limits::MAX_ENTRIES {
            return Err(E::Pack(format!(
                "more than {} code objects in one archive",
                limits::MAX_ENTRIES
            )));
        }
        self.items.push((key.to_string(), arch.to_string(), bytes));
        Ok(())
    }

    /// The archive bytes.
    pub fn finish(&self) -> Result<Vec<u8>, E> {
        let mut out = vec![0u8; DATA_START as usize];
        let mut extra: Vec<(Value, Value)> = Vec::new();
        match self.compression {
            Compression::None => {
                let mut blobs = Vec::new();
                for (_, _, bytes) in &self.items {
                    pad_to(&mut out, BLOB_ALIGN);
                    blobs.push(Value::Map(vec![
                        (s("offset"), Value::from(out.len() as u64)),
                        (s("size"), Value::from(bytes.len() as u64)),
                    ]));
                    out.extend_from_slice(bytes);
                }
                extra.push((s("blobs"), Value::Array(blobs)));
            }
            Compression::ZstdPerKernel => {
                let start = out.len() as u64;
                out.extend_from_slice(&(self.items.len() as u32).to_le_bytes());
                for (key, _, bytes) in &self.items {
                    let frame = zstd::bulk::compress(bytes, ZSTD_LEVEL)
                        .map_err(|e| E::Pack(format!("{key}: zstd: {e}")))?;
                    out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
                    out.extend_from_slice(&frame);
                }
                extra.push((s("zstd_offset"), Value::from(start)));
                extra.push((s("zstd_size"), Value::from(out.len() as u64 - start)));
            }
        }
        // Keys in first-added order, each with its arches.
        let mut toc: Vec<(Value, Value)> = Vec::new();
        for (ordinal, (key, arch, bytes)) in self.items.iter().enumerate() {
            let info = Value::Map(vec![
                (s("type"), s("hsaco")),
                (s("ordinal"), Value::from(ordinal as u64)),
                (s("original_size"), Value::from(bytes.len() as u64)),
            ]);
            match toc.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
                Some((_, Value::Map(per_arch))) => per_arch.push((s(arch), info)),
                _ => toc.push((s(key), Value::Map(vec![(s(arch), info)]))),
            }
        }
        let mut root = vec![
            (s("format_version"), Value::from(FORMAT_VERSION)),
            (s("group_name"), s(&self.group)),
            (s("gfx_arch_family"), s(&self.family)),
            (
                s("gfx_arches"),
                Value::Array(self.arches.iter().map(|a| s(a)).collect()),
            ),
            (s("compression_scheme"), s(self.compression.name())),
        ];
        root.extend(extra);
        root.push((s("toc"), Value::Map(toc)));
        let toc_offset = out.len() as u64;
        rmpv::encode::write_value(&mut out, &Value::Map(root))
            .map_err(|e| E::Pack(format!("encoding the table of contents: {e}")))?;
        out[..4].copy_from_slice(MAGIC);
        out[4..8].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        out[8..16].copy_from_slice(&toc_offset.to_le_bytes());
        Ok(out)
    }
}

fn pad_to(out: &mut Vec<u8>, align: u64) {
    let len = out.len() as u64;
    let padded = len.div_ceil(align) * align;
    out.resize(padded as usize, 0);
}
