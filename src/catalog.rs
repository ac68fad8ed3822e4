//! `Catalog`: a GPU's view of an installed bundle tree
//! (`<root>/<arch>/*.json` + `.kpack`, see `relaunch_device::bundle`),
//! handing out loaded modules by toc key.
//!
//! Which directory: the device's exact processor (`gfx1151` reads
//! `<root>/gfx1151/`); no sibling fallback (`gfx1151` never takes
//! `gfx1150` code); a generic-target directory (`gfx11-generic`) is named in
//! the error when it is all the tree has, and not searched: packing and
//! verifying a tree read each code object for the directory's processor,
//! which a generic one does not name (`relaunch_device::bundle::fallback`;
//! `Gpu::load_module` itself loads generic objects on the processors they
//! cover). Every code object is verified
//! (sha256 against the manifest, then its target and args_signature
//! against its own metadata) before it is loaded, and loaded once: later
//! lookups of the key return the same module. Errors name the root, the
//! arch, the key and what failed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use relaunch_device::bundle::{fallback, ArchDir};

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::module::Module;
use crate::refusal::Refusal;

struct Inner {
    gpu: Gpu,
    root: PathBuf,
    dir: ArchDir,
    /// Loaded modules by toc key. The lock is held while a key loads, so a
    /// key is verified and loaded once even when asked for concurrently.
    modules: Mutex<HashMap<String, Module>>,
}

/// An opened bundle tree for one GPU. Cheap to clone.
#[derive(Clone)]
pub struct Catalog {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("root", &self.inner.root)
            .field("arch", &self.inner.dir.arch())
            .field("keys", &self.inner.dir.keys().count())
            .finish()
    }
}

impl Catalog {
    /// Open `root` for `gpu`: reads and checks the manifests and archive
    /// tables of the device's arch directory (code objects are verified
    /// when first asked for).
    pub fn open(gpu: &Gpu, root: impl AsRef<Path>) -> Result<Catalog> {
        let root = root.as_ref().to_path_buf();
        let processor = gpu.target().processor().to_string();
        let mut last = None;
        for arch in fallback::candidates(&processor) {
            if !root.join(&arch).is_dir() {
                continue;
            }
            match ArchDir::open(&root, &arch) {
                Ok(dir) => return Catalog::from_dir(gpu, root, dir),
                Err(e) => last = Some(e),
            }
        }
        if let Some(e) = last {
            return Err(
                Error::from(e).context(format!("catalog {} (arch {processor})", root.display()))
            );
        }
        Err(missing_arch(root, processor).into())
    }

    /// A catalog over an architecture directory read some other way (a
    /// tree embedded in a binary: `ArchDir::from_files`); `root` names it
    /// in messages. The directory must be for `gpu`'s processor.
    pub fn from_dir(gpu: &Gpu, root: impl AsRef<Path>, dir: ArchDir) -> Result<Catalog> {
        let root = root.as_ref().to_path_buf();
        let processor = gpu.target().processor();
        if !fallback::candidates(processor)
            .iter()
            .any(|a| a == dir.arch())
        {
            return Err(Refusal::ArchDirectoryMismatch {
                root,
                dir: dir.dir().to_path_buf(),
                arch: dir.arch().to_string(),
                processor: processor.to_string(),
            }
            .into());
        }
        Ok(Catalog {
            inner: Arc::new(Inner {
                gpu: gpu.clone(),
                root,
                dir,
                modules: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The module of `toc_key`, verified and loaded on first use.
    pub fn module(&self, toc_key: &str) -> Result<Module> {
        let mut modules = self.inner.modules.lock();
        if let Some(m) = modules.get(toc_key) {
            return Ok(m.clone());
        }
        let verified = self.inner.dir.verify(toc_key).map_err(|e| self.fail(e))?;
        let module = self
            .inner
            .gpu
            .load_module(verified.code.bytes())
            .map_err(|e| e.context(self.context(toc_key)))?;
        tracing::debug!(key = toc_key, sha256 = %verified.sha256, "catalog loaded");
        modules.insert(toc_key.to_string(), module.clone());
        Ok(module)
    }

    /// The verified code-object bytes of `toc_key` (not loaded).
    pub fn code_object(&self, toc_key: &str) -> Result<Vec<u8>> {
        let verified = self.inner.dir.verify(toc_key).map_err(|e| self.fail(e))?;
        Ok(verified.code.bytes().to_vec())
    }

    /// Every toc key of the device's arch directory, sorted.
    pub fn keys(&self) -> Vec<String> {
        self.inner.dir.keys().map(str::to_string).collect()
    }

    /// The arch directory in use (`gfx1100`).
    pub fn arch(&self) -> &str {
        self.inner.dir.arch()
    }

    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// `<root>/<arch>`.
    pub fn dir(&self) -> &Path {
        self.inner.dir.dir()
    }

    /// The manifest's `launch` data of `toc_key`, carried through as JSON.
    pub fn launch_json(&self, toc_key: &str) -> Option<String> {
        let entry = self.inner.dir.entry(toc_key)?;
        entry.launch.as_ref().map(|v| v.to_string())
    }

    fn context(&self, key: &str) -> String {
        format!(
            "catalog {} (arch {}): key {key}",
            self.inner.root.display(),
            self.arch()
        )
    }

    fn fail(&self, e: relaunch_device::bundle::BundleError) -> Error {
        Error::from(e).hint("nothing was loaded").context(format!(
            "catalog {} (arch {})",
            self.inner.root.display(),
            self.arch()
        ))
    }
}

/// The message for a tree without the device's arch.
fn missing_arch(root: PathBuf, processor: String) -> Refusal {
    // The message lists a few of the root's names, not all (it may be
    // any directory).
    let tree = ArchDir::arches(&root).map_err(|e| e.to_string());
    let unused_generic = fallback::generic_of(&processor)
        .filter(|generic| root.join(generic).is_dir())
        .map(str::to_string);
    Refusal::NoArchDirectory {
        root,
        processor,
        tree,
        unused_generic,
    }
}

impl Gpu {
    /// `Catalog::open(self, root)`.
    pub fn catalog(&self, root: impl AsRef<Path>) -> Result<Catalog> {
        Catalog::open(self, root)
    }
}
