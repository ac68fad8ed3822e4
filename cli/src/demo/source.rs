//! Where the demo's decode kernels come from: a bundle tree through the
//! catalog (`--bundle ROOT`, else the tree embedded in the binary, built by
//! `tests/kernels/build.sh` into `tests/kernels/bundles/`), or one code
//! object by hand (`--code-object FILE`). Either way the module is checked
//! against the demo's kernarg layouts afterwards (`kernels::check`).

use std::path::{Path, PathBuf};

use relaunch::bundle::{ArchDir, BundleError};
use relaunch::{Catalog, Gpu, Module};

use super::super::output::{read_capped, MAX_CODE_OBJECT_FILE_BYTES};
use super::super::{bundled, Failure};

/// The toc key of the decode code object in the demo's bundle.
pub const TOC_KEY: &str = "demo/decode";

/// Load the decode module and say where it came from.
pub fn load(
    gpu: &Gpu,
    code_object: Option<&Path>,
    bundle: Option<&Path>,
) -> Result<Module, Failure> {
    if let Some(path) = code_object {
        let bytes = read_capped("demo", path, MAX_CODE_OBJECT_FILE_BYTES)?;
        say!("kernels: {} (code object)", path.display());
        return gpu.load_module(&bytes).map_err(Failure::from);
    }
    let catalog = match bundle {
        Some(root) => gpu.catalog(root).map_err(Failure::from)?,
        None => embedded(gpu)?,
    };
    let module = catalog.module(TOC_KEY).map_err(Failure::from)?;
    say!(
        "kernels: catalog {} (arch {}), {TOC_KEY}, sha256 and args_signature verified",
        catalog.root().display(),
        catalog.arch()
    );
    Ok(module)
}

/// The catalog over the bundle tree embedded in the binary.
fn embedded(gpu: &Gpu) -> Result<Catalog, Failure> {
    let arch = gpu.target().processor().to_string();
    let root = PathBuf::from(format!("<built-in {}>", bundled::DEMO_BUNDLE));
    let Some((json, kpack)) = bundled::demo_bundle(&arch) else {
        return Err(Failure::input(format!(
            "demo: the built-in bundle has no {arch} kernels (it has {}); build them with \
             tests/kernels/decode/build.sh OUT_DIR {arch}, then pass --code-object \
             OUT_DIR/{arch}/decode.co, or pack a tree with relaunch bundle pack --group demo \
             --arch {arch} -o ROOT OUT_DIR/{arch}/decode.co and pass --bundle ROOT",
            bundled::TARGETS.join(", ")
        )));
    };
    let dir = root.join(&arch);
    let manifest = dir.join(format!("relaunch_demo_{arch}.json"));
    let read_kpack = |name: &str| {
        if *name == format!("relaunch_demo_{arch}.kpack") {
            Ok(kpack.to_vec())
        } else {
            Err(BundleError::Io {
                path: dir.join(name).display().to_string(),
                reason: "not in the built-in bundle".to_string(),
            })
        }
    };
    let arch_dir = ArchDir::from_files(&dir, &arch, vec![(json.to_vec(), manifest)], &read_kpack)
        .map_err(|e| Failure::input(format!("demo: built-in bundle: {e}")))?;
    Catalog::from_dir(gpu, &root, arch_dir).map_err(Failure::from)
}
