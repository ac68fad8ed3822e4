//! Certification manifests: what `relaunch certify` writes and what
//! `Gpu::load_module_certified` checks against the bytes it loads.
//!
//! One shape serves relaunch and the reference system's manifests: top-level
//! `schema_version`, `arch`, `output_sha256`, `wavefront`, optional
//! `scheduler_profile` (snake_case), and `inspection.kernels[]` with
//! `name`, `wavefront_size`, `vgpr_count`, `sgpr_count`,
//! `vgpr_spill_count`, `sgpr_spill_count`, `private_segment_fixed_size`,
//! `mutable_read_cache`. relaunch adds `format`, `target` and per-kernel
//! `evidence`. A manifest binds to the exact bytes (sha256) and the device's
//! target; its `vmem_only` claims are never trusted: relaunch's own proof
//! decides, and a claim the proof rejects is logged and overridden.

use relaunch_device::codeobj::certify::{Certificate, ReadCache};
use relaunch_device::codeobj::CodeObject;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::refusal::Refusal;

/// The schema version relaunch writes.
pub const SCHEMA_VERSION: u64 = 1;
/// relaunch's `format` marker.
pub const FORMAT: &str = "relaunch.certify";

/// The reference system's scheduler profiles (C enum `RlSchedulerProfile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SchedulerProfile {
    #[default]
    Unknown,
    Default,
    MaxIlp,
    IterativeIlp,
    MemoryClause,
    PipelineIlp,
}

impl SchedulerProfile {
    /// From the manifest's snake_case spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "default" => SchedulerProfile::Default,
            "max_ilp" => SchedulerProfile::MaxIlp,
            "iterative_ilp" => SchedulerProfile::IterativeIlp,
            "memory_clause" => SchedulerProfile::MemoryClause,
            "pipeline_ilp" => SchedulerProfile::PipelineIlp,
            _ => return None,
        })
    }
}

/// What an accepted manifest contributes to a module.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestFacts {
    pub scheduler_profile: SchedulerProfile,
    /// Kernels whose manifest claim (vmem_only) the proof rejected.
    pub overridden: Vec<String>,
}

/// Hex SHA-256 of the bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// relaunch's manifest for a code object and its certificates.
pub fn write(bytes: &[u8], code: &CodeObject, certs: &[Certificate]) -> Value {
    let kernels: Vec<Value> = code
        .kernels()
        .iter()
        .zip(certs)
        .map(|(k, c)| {
            let r = &k.registers;
            json!({
                "name": k.name,
                "symbol": k.symbol,
                "wavefront_size": k.wavefront_size,
                "vgpr_count": r.vgpr_count,
                "sgpr_count": r.sgpr_count,
                "vgpr_spill_count": r.vgpr_spill_count,
                "sgpr_spill_count": r.sgpr_spill_count,
                "private_segment_fixed_size": k.private_segment_size,
                "mutable_read_cache": c.read_cache.as_str(),
                "evidence": {
                    "reason": c.reason.as_ref().map(|r| r.to_string()),
                    "kernarg_sgpr": c.kernarg_sgpr,
                    "code_range": [format!("0x{:x}", c.code_range.0), format!("0x{:x}", c.code_range.1)],
                    "instructions": c.counts.instructions,
                    "scalar_memory": c.counts.scalar,
                    "vector_memory": c.counts.vector,
                    "lds": c.counts.lds,
                    "kernarg_loads": c.kernarg_loads.iter()
                        .map(|(a, o)| json!({"address": format!("0x{a:x}"), "offset": o}))
                        .collect::<Vec<_>>(),
                    "dispatch_sgpr": c.dispatch_sgpr,
                    "packet_loads": c.packet_loads.iter()
                        .map(|(a, o)| json!({"address": format!("0x{a:x}"), "offset": o}))
                        .collect::<Vec<_>>(),
                    "read_only_loads": c.read_only_loads.iter()
                        .map(|(a, r)| json!({"address": format!("0x{a:x}"), "reads": format!("0x{r:x}")}))
                        .collect::<Vec<_>>(),
                },
            })
        })
        .collect();
    let wavefront = code.kernels().first().map(|k| k.wavefront_size);
    json!({
        "schema_version": SCHEMA_VERSION,
        "format": FORMAT,
        "target": code.target().to_string(),
        "arch": code.target().processor(),
        "output_sha256": sha256_hex(bytes),
        "wavefront": wavefront,
        "inspection": { "tool": "relaunch certify", "kernels": kernels },
    })
}

fn refuse(field: &str, why: impl std::fmt::Display) -> Error {
    Refusal::ManifestField {
        field: field.to_string(),
        why: why.to_string(),
    }
    .into()
}

fn field<'a>(m: &'a Map<String, Value>, name: &str) -> Result<&'a Value> {
    m.get(name).ok_or_else(|| refuse(name, "is missing"))
}

/// Check `manifest` against the code object relaunch is loading and the
/// certificates its own proof produced. Refuses (ErrorClass::Certification,
/// naming the field) a manifest that is malformed, for other bytes, for
/// another target, or whose checkable facts disagree with the code object.
pub fn verify(
    manifest: &[u8],
    bytes: &[u8],
    code: &CodeObject,
    certs: &[Certificate],
) -> Result<ManifestFacts> {
    let v: Value = serde_json::from_slice(manifest)
        .map_err(|e| refuse("(document)", format!("is not JSON: {e}")))?;
    let top = v
        .as_object()
        .ok_or_else(|| refuse("(document)", "is not a JSON object"))?;
    field(top, "schema_version")?
        .as_u64()
        .filter(|&n| n >= 1)
        .ok_or_else(|| refuse("schema_version", "is not a positive integer"))?;
    let sha = field(top, "output_sha256")?
        .as_str()
        .ok_or_else(|| refuse("output_sha256", "is not a string"))?;
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(refuse("output_sha256", "is not 64 hex digits"));
    }
    let actual = sha256_hex(bytes);
    if !sha.eq_ignore_ascii_case(&actual) {
        return Err(refuse(
            "output_sha256",
            format!("is {sha}, but the code object's bytes hash to {actual}"),
        ));
    }
    let arch = field(top, "arch")?
        .as_str()
        .ok_or_else(|| refuse("arch", "is not a string"))?;
    let processor = code.target().processor();
    let arch_proc = arch.rsplit("--").next().unwrap_or(arch);
    let arch_proc = arch_proc.split(':').next().unwrap_or(arch_proc);
    if arch_proc != processor {
        return Err(refuse(
            "arch",
            format!("is {arch}, but the code object and device are {processor}"),
        ));
    }
    if let Some(t) = top.get("target") {
        let t = t
            .as_str()
            .ok_or_else(|| refuse("target", "is not a string"))?;
        if t != code.target().to_string() {
            return Err(refuse(
                "target",
                format!("is {t}, the code object is {}", code.target()),
            ));
        }
    }
    if let Some(w) = top.get("wavefront").filter(|w| !w.is_null()) {
        let w = w
            .as_u64()
            .filter(|w| *w == 32 || *w == 64)
            .ok_or_else(|| refuse("wavefront", "is not 32 or 64"))?;
        if let Some(k) = code
            .kernels()
            .iter()
            .find(|k| u64::from(k.wavefront_size) != w)
        {
            return Err(refuse(
                "wavefront",
                format!("is {w}, kernel {} runs wave{}", k.name, k.wavefront_size),
            ));
        }
    }
    let scheduler_profile = match top.get("scheduler_profile") {
        None | Some(Value::Null) => SchedulerProfile::Unknown,
        Some(Value::String(s)) => SchedulerProfile::parse(s).ok_or_else(|| {
            refuse(
                "scheduler_profile",
                format!(
                    "is {s:?}; expected default, max_ilp, iterative_ilp, memory_clause or \
                     pipeline_ilp"
                ),
            )
        })?,
        Some(_) => return Err(refuse("scheduler_profile", "is not a string")),
    };
    let inspection = field(top, "inspection")?
        .as_object()
        .ok_or_else(|| refuse("inspection", "is not an object"))?;
    let kernels = field(inspection, "kernels")
        .map_err(|_| refuse("inspection.kernels", "is missing"))?
        .as_array()
        .ok_or_else(|| refuse("inspection.kernels", "is not an array"))?;
    let mut overridden = Vec::new();
    for (i, k) in kernels.iter().enumerate() {
        let at = |f: &str| format!("inspection.kernels[{i}].{f}");
        let k = k
            .as_object()
            .ok_or_else(|| refuse(&format!("inspection.kernels[{i}]"), "is not an object"))?;
        let name = k
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| refuse(&at("name"), "is missing or not a string"))?;
        let bare = name.strip_suffix(".kd").unwrap_or(name);
        let Some((pos, info)) = code
            .kernels()
            .iter()
            .enumerate()
            .find(|(_, c)| c.name == bare)
        else {
            return Err(refuse(
                &at("name"),
                format!("{name:?} is not a kernel of this code object"),
            ));
        };
        let num = |f: &str| -> Result<Option<u64>> {
            match k.get(f) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| refuse(&at(f), "is not an unsigned integer")),
            }
        };
        let checks = [
            ("wavefront_size", Some(info.wavefront_size)),
            (
                "private_segment_fixed_size",
                Some(info.private_segment_size),
            ),
            ("vgpr_count", info.registers.vgpr_count),
            ("sgpr_count", info.registers.sgpr_count),
            ("vgpr_spill_count", info.registers.vgpr_spill_count),
            ("sgpr_spill_count", info.registers.sgpr_spill_count),
        ];
        for (f, actual) in checks {
            if let (Some(claim), Some(actual)) = (num(f)?, actual) {
                if claim != u64::from(actual) {
                    return Err(refuse(
                        &at(f),
                        format!("is {claim}, kernel {bare} has {actual}"),
                    ));
                }
            }
        }
        let claim = match k.get("mutable_read_cache") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s == "vmem_only" => Some(ReadCache::VmemOnly),
            Some(Value::String(s)) if s == "scalar_or_unknown" => Some(ReadCache::ScalarOrUnknown),
            Some(_) => {
                return Err(refuse(
                    &at("mutable_read_cache"),
                    "is not \"vmem_only\" or \"scalar_or_unknown\"",
                ))
            }
        };
        let proof = certs
            .get(pos)
            .map_or(ReadCache::ScalarOrUnknown, |c| c.read_cache);
        if claim == Some(ReadCache::VmemOnly) && proof != ReadCache::VmemOnly {
            let reason = certs
                .get(pos)
                .and_then(|c| c.reason.as_ref())
                .map_or_else(|| "certification is off".to_string(), |r| r.to_string());
            tracing::warn!(
                kernel = bare,
                %reason,
                "manifest claims vmem_only, relaunch's proof does not: using scalar_or_unknown"
            );
            overridden.push(bare.to_string());
        }
    }
    Ok(ManifestFacts {
        scheduler_profile,
        overridden,
    })
}
