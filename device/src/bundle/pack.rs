//! Packing code objects into a bundle tree: one `.kpack` and manifest per
//! arch, `<root>/<arch>/relaunch_<group>_<arch>.{kpack,json}`, toc keys
//! `<group>/<name>` (the name is the input's file stem), each entry with
//! the sha256 of its bytes, its `args_signature` and its launch geometry
//! when one is given for a kernel it holds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::BundleError as E;
use super::kpack::Compression;
use super::manifest::{Manifest, ManifestEntry, SCHEMA};
use super::sha256_hex;
use super::signature::ArgsSignature;
use super::write::KpackWriter;
use crate::codeobj::{bundle as offload, CodeObject};
use relaunch_facts::GfxTarget;

/// Launch geometry of one kernel: grid and workgroup size in work-items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
}

/// One input: a name (its toc key is `<group>/<name>`) and the bytes of a
/// code object or of a clang offload bundle holding some of the arches.
#[derive(Debug, Clone)]
pub struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// One arch's packed output.
#[derive(Debug, Clone)]
pub struct Packed {
    pub arch: String,
    pub kpack: Vec<u8>,
    pub manifest: Manifest,
}

/// The file stem used for `group` on `arch`.
pub fn file_stem(group: &str, arch: &str) -> String {
    format!("relaunch_{group}_{arch}")
}

fn check_name(what: &str, text: &str) -> Result<(), E> {
    let ok = !text.is_empty()
        && text.len() <= 128
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !text.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(E::Pack(format!(
            "{what} {text:?} must be 1-128 characters of [A-Za-z0-9_.-], not starting with '.'"
        )))
    }
}

/// The code objects of `input` for `arches`: a plain code object is for
/// the one arch its metadata names; an offload bundle gives each of its
/// entries that is for a requested arch.
fn split(input: &Input, arches: &[String]) -> Result<Vec<(String, CodeObject)>, E> {
    let fail = |reason: String| E::Pack(format!("{}: {reason}", input.name));
    if offload::is_bundle(&input.bytes) {
        let entries = offload::entries(&input.bytes).map_err(|e| fail(e.to_string()))?;
        let mut out = Vec::new();
        for entry in entries {
            let Some(target) = entry.gpu_target() else {
                continue;
            };
            if arches.iter().any(|a| a == target.processor()) {
                let code = CodeObject::parse(entry.bytes).map_err(|e| fail(e.to_string()))?;
                out.push((target.processor().to_string(), code));
            }
        }
        if out.is_empty() {
            return Err(fail(format!(
                "the offload bundle holds none of the arches {}",
                arches.join(", ")
            )));
        }
        return Ok(out);
    }
    let code = CodeObject::parse(&input.bytes).map_err(|e| fail(e.to_string()))?;
    let arch = code.target().processor().to_string();
    if !arches.contains(&arch) {
        return Err(fail(format!(
            "it is a code object for {}, which is not among --arch {}",
            code.target(),
            arches.join(", ")
        )));
    }
    Ok(vec![(arch, code)])
}

/// Pack `inputs` for `arches`. Every arch must receive at least one code
/// object, every launch entry must name a kernel some input holds.
pub fn pack(
    group: &str,
    arches: &[String],
    inputs: &[Input],
    launch: &BTreeMap<String, Launch>,
    compression: Compression,
) -> Result<Vec<Packed>, E> {
    check_name("group", group)?;
    if arches.is_empty() {
        return Err(E::Pack("no --arch given".to_string()));
    }
    for arch in arches {
        let target = GfxTarget::parse(arch).map_err(|e| E::Pack(e.to_string()))?;
        if target.processor() != arch {
            return Err(E::Pack(format!(
                "--arch {arch}: give the processor only (e.g. {})",
                target.processor()
            )));
        }
    }
    let mut per_arch: BTreeMap<&str, (KpackWriter, Vec<ManifestEntry>)> = BTreeMap::new();
    for arch in arches {
        per_arch.insert(
            arch,
            (
                KpackWriter::new(group, arch, &[arch.as_str()], compression),
                Vec::new(),
            ),
        );
    }
    let mut used_launch = std::collections::BTreeSet::new();
    for input in inputs {
        check_name("code object name", &input.name)?;
        let key = format!("{group}/{}", input.name);
        for (arch, code) in split(input, arches)? {
            let Some((writer, entries)) = per_arch.get_mut(arch.as_str()) else {
                continue;
            };
            let mut geometry = serde_json::Map::new();
            for k in code.kernels() {
                if let Some(l) = launch.get(&k.name) {
                    used_launch.insert(k.name.clone());
                    geometry.insert(
                        k.name.clone(),
                        serde_json::json!({"grid": l.grid, "workgroup": l.workgroup}),
                    );
                }
            }
            let signature = serde_json::to_value(ArgsSignature::of(&code))
                .map_err(|e| E::Pack(format!("{key}: {e}")))?;
            entries.push(ManifestEntry {
                toc_key: key.clone(),
                hsaco_sha256: sha256_hex(code.bytes()),
                args_signature: signature,
                launch: (!geometry.is_empty()).then_some(serde_json::Value::Object(geometry)),
                selection: None,
            });
            writer.add(&key, &arch, code.bytes().to_vec())?;
        }
    }
    if let Some(unused) = launch.keys().find(|k| !used_launch.contains(*k)) {
        return Err(E::Pack(format!(
            "--launch {unused}: no code object holds a kernel of that name"
        )));
    }
    per_arch
        .into_iter()
        .map(|(arch, (writer, kernels))| {
            if kernels.is_empty() {
                return Err(E::Pack(format!("--arch {arch}: no code object for it")));
            }
            let stem = file_stem(group, arch);
            Ok(Packed {
                arch: arch.to_string(),
                kpack: writer.finish()?,
                manifest: Manifest {
                    schema: SCHEMA.to_string(),
                    arch: arch.to_string(),
                    group: group.to_string(),
                    kpack: format!("{stem}.kpack"),
                    kernels,
                },
            })
        })
        .collect()
}

/// Write packed output under `root`; returns the files written.
pub fn write_tree(root: &Path, packed: &[Packed]) -> Result<Vec<PathBuf>, E> {
    let mut written = Vec::new();
    for p in packed {
        let dir = root.join(&p.arch);
        let io = |path: &Path, e: std::io::Error| E::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        };
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        let kpack = dir.join(&p.manifest.kpack);
        std::fs::write(&kpack, &p.kpack).map_err(|e| io(&kpack, e))?;
        let json = dir.join(format!("{}.json", file_stem(&p.manifest.group, &p.arch)));
        std::fs::write(&json, p.manifest.to_json()).map_err(|e| io(&json, e))?;
        written.push(kpack);
        written.push(json);
    }
    Ok(written)
}
