//! The NT_AMDGPU_METADATA note: a MessagePack map with `amdhsa.version`,
//! `amdhsa.target` and `amdhsa.kernels` (AMDGPUUsage, "Code Object V3+
//! Metadata"). Decoding is bounded: nesting depth, kernel and argument counts
//! and string lengths are capped, and rmpv never preallocates from lengths
//! read out of the data.

use rmpv::Value;

use super::args::{KernelArg, ValueKind};
use super::error::CodeObjectError as E;

/// Note owner and type of the metadata note.
pub const NOTE_OWNER: &[u8] = b"AMDGPU";
pub const NT_AMDGPU_METADATA: u32 = 32;

/// rmpv counts two levels per container; real metadata needs about 14.
const MAX_DEPTH: usize = 32;
/// Caps on what one note may declare.
pub const MAX_KERNELS: usize = 4096;
pub const MAX_ARGS: usize = 1024;
const MAX_STRING: usize = 4096;
const MAX_NOTE_BYTES: usize = 16 << 20;

/// Elements a note of `bytes` may hold. Each element decodes to one
/// `rmpv::Value` (32 bytes) plus its string or binary bytes, so capping
/// elements at a quarter of the note (real metadata averages well over 4
/// bytes per element: keys are strings) keeps decoding within about 9x
/// the note's size; tiny notes get a fixed allowance.
fn element_budget(bytes: usize) -> usize {
    (bytes / 4).max(4096)
}

/// Count the MessagePack elements of the first value in `data` without
/// allocating (a crafted note of one-byte elements would otherwise decode
/// to 32 bytes of `Value` per byte). Stops early past `element_budget`.
fn count_elements(data: &[u8]) -> Result<usize, E> {
    let budget = element_budget(data.len());
    let bad = |why: &str| E::MetadataEncoding(format!("{why} in the metadata MessagePack"));
    let (mut at, mut pending, mut count) = (0usize, 1u64, 0usize);
    let take = |at: &mut usize, n: usize| -> Result<u64, E> {
        let end = at.checked_add(n).filter(|&e| e <= data.len());
        let Some(end) = end else {
            return Err(bad("truncated element"));
        };
        let v = data[*at..end]
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        *at = end;
        Ok(v)
    };
    while pending > 0 {
        if count > budget {
            break;
        }
        let tag = take(&mut at, 1)? as u8;
        pending -= 1;
        count += 1;
        // (payload bytes to skip, child elements that follow)
        let (skip, children): (u64, u64) = match tag {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0),
            0x80..=0x8f => (0, 2 * u64::from(tag & 0x0f)),
            0x90..=0x9f => (0, u64::from(tag & 0x0f)),
            0xa0..=0xbf => (u64::from(tag & 0x1f), 0),
            0xc4 | 0xd9 => (take(&mut at, 1)?, 0),
            0xc5 | 0xda => (take(&mut at, 2)?, 0),
            0xc6 | 0xdb => (take(&mut at, 4)?, 0),
            0xc7 => (take(&mut at, 1)? + 1, 0),
            0xc8 => (take(&mut at, 2)? + 1, 0),
            0xc9 => (take(&mut at, 4)? + 1, 0),
            0xca | 0xce | 0xd2 => (4, 0),
            0xcb | 0xcf | 0xd3 => (8, 0),
            0xcc | 0xd0 => (1, 0),
            0xcd | 0xd1 => (2, 0),
            0xd4 => (2, 0),
            0xd5 => (3, 0),
            0xd6 => (5, 0),
            0xd7 => (9, 0),
            0xd8 => (17, 0),
            0xdc => (0, take(&mut at, 2)?),
            0xdd => (0, take(&mut at, 4)?),
            0xde => (0, 2 * take(&mut at, 2)?),
            0xdf => (0, 2 * take(&mut at, 4)?),
            0xc1 => return Err(bad("reserved byte 0xc1")),
        };
        let skip = usize::try_from(skip).map_err(|_| bad("oversized element"))?;
        at = at
            .checked_add(skip)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| bad("truncated element"))?;
        pending = pending.saturating_add(children);
    }
    Ok(count)
}

/// The decoded note, only the fields relaunch uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// `amdhsa.version` (major, minor).
    pub version: (u64, u64),
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx1100`.
    pub target: String,
    pub kernels: Vec<KernelMetadata>,
}

/// One entry of `amdhsa.kernels`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelMetadata {
    pub name: String,
    pub symbol: String,
    pub kernarg_segment_size: u32,
    pub kernarg_segment_align: u32,
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub wavefront_size: u32,
    pub uses_dynamic_stack: bool,
    pub max_flat_workgroup_size: Option<u32>,
    /// `.vgpr_count`, `.sgpr_count`, `.vgpr_spill_count`, `.sgpr_spill_count`
    /// (optional in the metadata; reported by `relaunch certify`).
    pub registers: RegisterUse,
    pub args: Vec<KernelArg>,
}

fn err(msg: impl Into<String>) -> E {
    E::Metadata(msg.into())
}

/// Look up `key` in a MessagePack map given as key/value pairs.
fn get<'v>(map: &'v [(Value, Value)], key: &str) -> Option<&'v Value> {
    map.iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

fn as_map<'v>(v: &'v Value, what: &str) -> Result<&'v [(Value, Value)], E> {
    v.as_map()
        .map(Vec::as_slice)
        .ok_or_else(|| err(format!("{what} is not a map")))
}

fn string(map: &[(Value, Value)], key: &str, ctx: &str) -> Result<Option<String>, E> {
    match get(map, key) {
        None => Ok(None),
        Some(v) => {
            let s = v
                .as_str()
                .ok_or_else(|| err(format!("{ctx}: {key} is not a UTF-8 string")))?;
            if s.len() > MAX_STRING {
                return Err(err(format!(
                    "{ctx}: {key} is {} bytes long (limit {MAX_STRING})",
                    s.len()
                )));
            }
            Ok(Some(s.to_string()))
        }
    }
}

fn required_string(map: &[(Value, Value)], key: &str, ctx: &str) -> Result<String, E> {
    string(map, key, ctx)?.ok_or_else(|| err(format!("{ctx}: missing {key}")))
}

fn number(map: &[(Value, Value)], key: &str, ctx: &str) -> Result<Option<u32>, E> {
    match get(map, key) {
        None => Ok(None),
        Some(v) => {
            let n = v
                .as_u64()
                .ok_or_else(|| err(format!("{ctx}: {key} is not an unsigned integer")))?;
            u32::try_from(n)
                .map(Some)
                .map_err(|_| err(format!("{ctx}: {key} = {n} does not fit in 32 bits")))
        }
    }
}

fn required_number(map: &[(Value, Value)], key: &str, ctx: &str) -> Result<u32, E> {
    number(map, key, ctx)?.ok_or_else(|| err(format!("{ctx}: missing {key}")))
}

fn array<'v>(v: &'v Value, what: &str, limit: usize) -> Result<&'v [Value], E> {
    let items = v
        .as_array()
        .ok_or_else(|| err(format!("{what} is not an array")))?;
    if items.len() > limit {
        return Err(E::TooMany {
            what: "metadata entries",
            count: items.len() as u64,
            limit: limit as u64,
        });
    }
    Ok(items)
}

/// One note decoded where `amdhsa.target` may be missing (Tensile's
/// linked notes leave it out; the ELF header names the target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteMetadata {
    pub version: (u64, u64),
    pub target: Option<String>,
    pub kernels: Vec<KernelMetadata>,
}

/// Decode the note's description bytes; `amdhsa.target` is required.
pub fn decode(desc: &[u8]) -> Result<Metadata, E> {
    let md = decode_note(desc)?;
    Ok(Metadata {
        version: md.version,
        target: md
            .target
            .ok_or_else(|| err("metadata: missing amdhsa.target"))?,
        kernels: md.kernels,
    })
}

/// Decode the note's description bytes, `amdhsa.target` optional.
pub fn decode_note(desc: &[u8]) -> Result<NoteMetadata, E> {
    if desc.len() > MAX_NOTE_BYTES {
        return Err(E::TooMany {
            what: "metadata note bytes",
            count: desc.len() as u64,
            limit: MAX_NOTE_BYTES as u64,
        });
    }
    let elements = count_elements(desc)?;
    let budget = element_budget(desc.len());
    if elements > budget {
        return Err(E::TooMany {
            what: "metadata elements",
            count: elements as u64,
            limit: budget as u64,
        });
    }
    let mut reader = desc;
    let root = rmpv::decode::read_value_with_max_depth(&mut reader, MAX_DEPTH)
        .map_err(|e| E::MetadataEncoding(e.to_string()))?;
    let root = as_map(&root, "the metadata root")?;

    let version = match get(root, "amdhsa.version") {
        Some(v) => {
            let parts = array(v, "amdhsa.version", 2)?;
            let major = parts.first().and_then(Value::as_u64);
            let minor = parts.get(1).and_then(Value::as_u64);
            match (major, minor) {
                (Some(a), Some(b)) => (a, b),
                _ => return Err(err("amdhsa.version is not [major, minor]")),
            }
        }
        None => return Err(err("missing amdhsa.version")),
    };
    let target = string(root, "amdhsa.target", "metadata")?;
    let kernels = match get(root, "amdhsa.kernels") {
        Some(v) => array(v, "amdhsa.kernels", MAX_KERNELS)?
            .iter()
            .enumerate()
            .map(|(i, k)| kernel(k, i))
            .collect::<Result<Vec<_>, E>>()?,
        None => Vec::new(),
    };
    Ok(NoteMetadata {
        version,
        target,
        kernels,
    })
}

/// Register use a kernel's metadata declares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegisterUse {
    pub vgpr_count: Option<u32>,
    pub sgpr_count: Option<u32>,
    pub vgpr_spill_count: Option<u32>,
    pub sgpr_spill_count: Option<u32>,
}

fn kernel(v: &Value, index: usize) -> Result<KernelMetadata, E> {
    let map = as_map(v, &format!("amdhsa.kernels[{index}]"))?;
    let name = required_string(map, ".name", &format!("amdhsa.kernels[{index}]"))?;
    let ctx = format!("kernel {name}");
    let symbol = required_string(map, ".symbol", &ctx)?;
    let args = match get(map, ".args") {
        Some(v) => array(v, &format!("{ctx}: .args"), MAX_ARGS)?
            .iter()
            .enumerate()
            .map(|(i, a)| arg(a, &ctx, i))
            .collect::<Result<Vec<_>, E>>()?,
        None => Vec::new(),
    };
    let uses_dynamic_stack = match get(map, ".uses_dynamic_stack") {
        None => false,
        Some(v) => v
            .as_bool()
            .ok_or_else(|| err(format!("{ctx}: .uses_dynamic_stack is not a boolean")))?,
    };
    Ok(KernelMetadata {
        kernarg_segment_size: required_number(map, ".kernarg_segment_size", &ctx)?,
        kernarg_segment_align: required_number(map, ".kernarg_segment_align", &ctx)?,
        group_segment_fixed_size: required_number(map, ".group_segment_fixed_size", &ctx)?,
        private_segment_fixed_size: required_number(map, ".private_segment_fixed_size", &ctx)?,
        wavefront_size: required_number(map, ".wavefront_size", &ctx)?,
        max_flat_workgroup_size: number(map, ".max_flat_workgroup_size", &ctx)?,
        registers: RegisterUse {
            vgpr_count: number(map, ".vgpr_count", &ctx)?,
            sgpr_count: number(map, ".sgpr_count", &ctx)?,
            vgpr_spill_count: number(map, ".vgpr_spill_count", &ctx)?,
            sgpr_spill_count: number(map, ".sgpr_spill_count", &ctx)?,
        },
        uses_dynamic_stack,
        args,
        name,
        symbol,
    })
}

fn arg(v: &Value, kernel: &str, index: usize) -> Result<KernelArg, E> {
    let ctx = format!("{kernel}: argument {index}");
    let map = as_map(v, &ctx)?;
    let kind = required_string(map, ".value_kind", &ctx)?;
    Ok(KernelArg {
        offset: required_number(map, ".offset", &ctx)?,
        size: required_number(map, ".size", &ctx)?,
        value_kind: ValueKind::parse(&kind),
        name: string(map, ".name", &ctx)?,
        type_name: string(map, ".type_name", &ctx)?,
        address_space: string(map, ".address_space", &ctx)?,
        pointee_align: number(map, ".pointee_align", &ctx)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        rmpv::encode::write_value(&mut out, v).unwrap();
        out
    }

    fn s(x: &str) -> Value {
        Value::from(x)
    }

    fn note(kernels: Vec<Value>) -> Value {
        Value::Map(vec![
            (s("amdhsa.version"), Value::Array(vec![1.into(), 2.into()])),
            (s("amdhsa.target"), s("amdgcn-amd-amdhsa--gfx1100")),
            (s("amdhsa.kernels"), Value::Array(kernels)),
        ])
    }

    fn counter_kernel() -> Vec<(Value, Value)> {
        vec![
            (s(".name"), s("counter")),
            (s(".symbol"), s("counter.kd")),
            (s(".kernarg_segment_size"), 8.into()),
            (s(".kernarg_segment_align"), 8.into()),
            (s(".group_segment_fixed_size"), 0.into()),
            (s(".private_segment_fixed_size"), 0.into()),
            (s(".wavefront_size"), 32.into()),
            (
                s(".args"),
                Value::Array(vec![Value::Map(vec![
                    (s(".offset"), 0.into()),
                    (s(".size"), 8.into()),
                    (s(".value_kind"), s("global_buffer")),
                    (s(".name"), s("counter")),
                ])]),
            ),
        ]
    }

    #[test]
    fn decodes_a_kernel() {
        let md = decode(&encode(&note(vec![Value::Map(counter_kernel())]))).unwrap();
        assert_eq!(md.version, (1, 2));
        assert_eq!(md.target, "amdgcn-amd-amdhsa--gfx1100");
        let k = &md.kernels[0];
        assert_eq!(
            (k.name.as_str(), k.symbol.as_str()),
            ("counter", "counter.kd")
        );
        assert_eq!(k.args[0].value_kind, ValueKind::GlobalBuffer);
        assert_eq!(k.args[0].name.as_deref(), Some("counter"));
    }

    #[test]
    fn names_the_missing_field() {
        let mut k = counter_kernel();
        k.retain(|(key, _)| key.as_str() != Some(".wavefront_size"));
        let e = decode(&encode(&note(vec![Value::Map(k)]))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "metadata: kernel counter: missing .wavefront_size"
        );
    }

    #[test]
    fn refuses_deep_nesting_and_garbage() {
        let mut v = Value::Nil;
        for _ in 0..64 {
            v = Value::Array(vec![v]);
        }
        assert!(matches!(decode(&encode(&v)), Err(E::MetadataEncoding(_))));
        // array32 claiming four billion entries, then nothing.
        let e = decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]).unwrap_err();
        assert!(matches!(e, E::MetadataEncoding(_)), "{e}");
        let e = decode(&encode(&s("just a string"))).unwrap_err();
        assert_eq!(e.to_string(), "metadata: the metadata root is not a map");
    }
}
