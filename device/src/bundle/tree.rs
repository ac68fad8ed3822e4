//! One architecture directory of an installed bundle tree,
//! `<root>/<arch>/`: every `*.json` manifest in it (so several groups, and
//! trees copied together from roots packed separately, merge with no fusing
//! step) with the `.kpack` each one names. Opening reads and checks the
//! manifests and archive tables; [`ArchDir::verify`] decodes one code
//! object and checks it (sha256, that it reads, its target, its
//! `args_signature`) before anyone may use the bytes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::BundleError as E;
use super::kpack::{limits::MAX_ARCHIVE_BYTES, Kpack};
use super::manifest::{Manifest, ManifestEntry, MAX_MANIFEST_BYTES};
use super::sha256_hex;
use super::signature::{ArgsSignature, FORMAT};
use crate::codeobj::CodeObject;

/// Manifests read from one architecture directory.
pub const MAX_MANIFESTS: usize = 256;

/// Names an error message lists before "and N more": a directory given as
/// a bundle root may be any directory.
pub const LISTED_NAMES: usize = 16;

/// `names` joined with ", ", the first [`LISTED_NAMES`] of them and then
/// how many more there are.
pub fn name_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let mut shown = Vec::new();
    let mut more = 0usize;
    for name in names {
        if shown.len() < LISTED_NAMES {
            shown.push(name);
        } else {
            more += 1;
        }
    }
    let mut text = shown.join(", ");
    if more > 0 {
        text.push_str(&format!(", and {more} more"));
    }
    text
}

/// A code object that passed every check.
#[derive(Debug, Clone)]
pub struct Verified {
    pub key: String,
    pub sha256: String,
    pub code: CodeObject,
}

/// One bundle (manifest + archive) of the directory.
#[derive(Debug)]
struct Bundle {
    manifest_path: PathBuf,
    manifest: Manifest,
    kpack: Kpack,
}

/// An architecture directory whose manifests and archive tables are read.
#[derive(Debug)]
pub struct ArchDir {
    dir: PathBuf,
    arch: String,
    bundles: Vec<Bundle>,
    /// toc_key -> (bundle, manifest entry index).
    keys: BTreeMap<String, (usize, usize)>,
}

/// Read a whole regular file through `limit` (`what` names the limit).
pub fn read_bounded(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, E> {
    Ok(crate::file::read_regular(path, limit, what)?)
}

/// `path` with links resolved, refused when that leaves `root` (already
/// resolved): a link in a tree is followed only within it, as a `../`
/// name is refused.
fn inside(root: &Path, path: &Path) -> Result<PathBuf, E> {
    let io = |reason: String| E::Io {
        path: path.display().to_string(),
        reason,
    };
    let resolved = path.canonicalize().map_err(|e| io(e.to_string()))?;
    if resolved.starts_with(root) {
        Ok(resolved)
    } else {
        Err(io(format!(
            "leads to {}, outside the bundle root {}; a bundle's files and directories must              be inside its root (copy them in instead of linking)",
            resolved.display(),
            root.display()
        )))
    }
}

impl ArchDir {
    /// Read `<root>/<arch>/`: a missing directory or one without any
    /// manifest is an error naming the path.
    pub fn open(root: &Path, arch: &str) -> Result<ArchDir, E> {
        let dir = root.join(arch);
        let io = |reason: String| E::Io {
            path: dir.display().to_string(),
            reason,
        };
        let real_root = root.canonicalize().map_err(|e| E::Io {
            path: root.display().to_string(),
            reason: e.to_string(),
        })?;
        inside(&real_root, &dir)?;
        let listing = std::fs::read_dir(&dir).map_err(|e| io(e.to_string()))?;
        let mut manifests = Vec::new();
        for item in listing {
            let path = item.map_err(|e| io(e.to_string()))?.path();
            // Anything named *.json but a directory is read, so a FIFO or
            // device posing as a manifest is refused, not skipped.
            if path.extension().is_some_and(|x| x == "json") && !path.is_dir() {
                manifests.push(path);
            }
            if manifests.len() > MAX_MANIFESTS {
                return Err(E::TooMany {
                    what: "manifests in one arch directory",
                    count: manifests.len() as u64,
                    limit: MAX_MANIFESTS as u64,
                });
            }
        }
        manifests.sort();
        let manifests = manifests
            .into_iter()
            .map(|p| {
                inside(&real_root, &p)?;
                Ok((
                    read_bounded(&p, MAX_MANIFEST_BYTES, "a bundle manifest")?,
                    p,
                ))
            })
            .collect::<Result<Vec<_>, E>>()?;
        let read_kpack = |name: &str| {
            let path = dir.join(name);
            inside(&real_root, &path)?;
            read_bounded(&path, MAX_ARCHIVE_BYTES, "a .kpack archive")
        };
        ArchDir::from_files(&dir, arch, manifests, &read_kpack)
    }

    /// The same checks over files already in memory (a tree embedded in a
    /// binary): `dir` names the directory in messages, `manifests` are
    /// (bytes, path) pairs, `read_kpack` gives an archive by file name.
    pub fn from_files(
        dir: &Path,
        arch: &str,
        manifests: Vec<(Vec<u8>, PathBuf)>,
        read_kpack: &dyn Fn(&str) -> Result<Vec<u8>, E>,
    ) -> Result<ArchDir, E> {
        if manifests.is_empty() {
            return Err(E::Io {
                path: dir.display().to_string(),
                reason: "holds no bundle manifest (*.json)".to_string(),
            });
        }
        let mut out = ArchDir {
            dir: dir.to_path_buf(),
            arch: arch.to_string(),
            bundles: Vec::new(),
            keys: BTreeMap::new(),
        };
        for (bytes, path) in manifests {
            out.add(path, &bytes, read_kpack)?;
        }
        Ok(out)
    }

    fn add(
        &mut self,
        manifest_path: PathBuf,
        bytes: &[u8],
        read_kpack: &dyn Fn(&str) -> Result<Vec<u8>, E>,
    ) -> Result<(), E> {
        let at = |e: E| E::Io {
            path: manifest_path.display().to_string(),
            reason: e.to_string(),
        };
        let manifest = Manifest::parse(bytes).map_err(at)?;
        if manifest.arch != self.arch {
            return Err(at(E::Manifest(format!(
                "arch is {}, but the manifest sits in the {} directory",
                manifest.arch, self.arch
            ))));
        }
        let kpack_path = self.dir.join(&manifest.kpack);
        let kpack = Kpack::parse(&read_kpack(&manifest.kpack)?).map_err(|e| E::Io {
            path: kpack_path.display().to_string(),
            reason: e.to_string(),
        })?;
        if !kpack.gfx_arches.contains(&self.arch) {
            return Err(at(E::Manifest(format!(
                "its archive {} is for [{}], not {}",
                manifest.kpack,
                kpack.gfx_arches.join(", "),
                self.arch
            ))));
        }
        let index = self.bundles.len();
        for (i, entry) in manifest.kernels.iter().enumerate() {
            if kpack.entry(&entry.toc_key, &self.arch).is_none() {
                return Err(at(E::Manifest(format!(
                    "{}: not in the table of contents of {} for {}",
                    entry.toc_key, manifest.kpack, self.arch
                ))));
            }
            if let Some(&(other, _)) = self.keys.get(&entry.toc_key) {
                return Err(at(E::Manifest(format!(
                    "{}: also listed by {}",
                    entry.toc_key,
                    self.bundles[other].manifest_path.display()
                ))));
            }
            self.keys.insert(entry.toc_key.clone(), (index, i));
        }
        self.bundles.push(Bundle {
            manifest_path,
            manifest,
            kpack,
        });
        Ok(())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// Every toc key, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.keys().map(String::as_str)
    }

    /// The manifest entry of `key`.
    pub fn entry(&self, key: &str) -> Option<&ManifestEntry> {
        let &(b, i) = self.keys.get(key)?;
        Some(&self.bundles[b].manifest.kernels[i])
    }

    /// Original (uncompressed) size of `key`'s code object.
    pub fn original_size(&self, key: &str) -> Option<u64> {
        let &(b, _) = self.keys.get(key)?;
        let entry = self.bundles[b].kpack.entry(key, &self.arch)?;
        Some(entry.original_size)
    }

    /// Decode `key`'s code object and check it: sha256 against the
    /// manifest first (nothing else reads unverified bytes), then that it
    /// reads as a code object for this arch, then its `args_signature`.
    pub fn verify(&self, key: &str) -> Result<Verified, E> {
        let &(b, i) = self.keys.get(key).ok_or_else(|| E::Entry {
            key: key.to_string(),
            arch: self.arch.clone(),
            reason: format!(
                "no such toc key in {}; it has: {}",
                self.dir.display(),
                name_list(self.keys())
            ),
        })?;
        let bundle = &self.bundles[b];
        let entry = &bundle.manifest.kernels[i];
        let toc = bundle
            .kpack
            .entry(key, &self.arch)
            .ok_or_else(|| E::Manifest(format!("{key}: vanished from the archive")))?;
        let bytes = bundle.kpack.extract(toc)?;
        let found = sha256_hex(&bytes);
        if found != entry.hsaco_sha256 {
            return Err(E::Sha256 {
                key: key.to_string(),
                expected: entry.hsaco_sha256.clone(),
                found,
            });
        }
        let code = CodeObject::parse(&bytes).map_err(|e| E::CodeObject {
            key: key.to_string(),
            reason: e.to_string(),
        })?;
        if code.target().processor() != self.arch {
            return Err(E::CodeObject {
                key: key.to_string(),
                reason: format!(
                    "it is for {}, but sits in the {} directory",
                    code.target(),
                    self.arch
                ),
            });
        }
        let signature: ArgsSignature = serde_json::from_value(entry.args_signature.clone())
            .map_err(|e| E::Signature {
                key: key.to_string(),
                reason: format!("the manifest's args_signature is not a {FORMAT} signature: {e}"),
            })?;
        signature.check(&code).map_err(|reason| E::Signature {
            key: key.to_string(),
            reason,
        })?;
        Ok(Verified {
            key: key.to_string(),
            sha256: found,
            code,
        })
    }

    /// Every arch directory under `root` (sorted names of subdirectories).
    pub fn arches(root: &Path) -> Result<Vec<String>, E> {
        let io = |reason: String| E::Io {
            path: root.display().to_string(),
            reason,
        };
        let mut out = Vec::new();
        for item in std::fs::read_dir(root).map_err(|e| io(e.to_string()))? {
            let item = item.map_err(|e| io(e.to_string()))?;
            if item.path().is_dir() {
                out.push(item.file_name().to_string_lossy().into_owned());
            }
        }
        out.sort();
        Ok(out)
    }
}
