//! `RlCatalog`: a GPU's view of an installed per-architecture bundle tree
//! (`<root>/<arch>/*.json` + `.kpack`), handing out modules by toc key.
//! Every code object is verified (sha256, target, args_signature) before it
//! is loaded, and loaded once per catalog; see the facade's `Catalog`.

use std::ffi::c_char;
use std::sync::Arc;

use facade::{Catalog, Error};

use crate::gpu::{gpu_obj, GpuObj, RlGpu};
use crate::handles::{self, Handled};
use crate::module::{ModuleObj, RlModule};
use crate::status::status;
use crate::util::{clear, non_null, text};

/// An opened bundle tree for one GPU. Opaque; free with `rl_catalog_free`.
pub struct RlCatalog {
    _opaque: [u8; 0],
}

/// The object behind an `RlCatalog`; it keeps its GPU alive.
pub(crate) struct CatalogObj {
    catalog: Catalog,
    gpu: Arc<GpuObj>,
}

impl Handled for CatalogObj {
    type C = RlCatalog;
    const KIND: u8 = 8;
}

fn catalog_obj(catalog: *const RlCatalog) -> Result<Arc<CatalogObj>, Error> {
    handles::get::<CatalogObj>(catalog)
}

/// Opens the bundle tree at `root` (a NUL-terminated UTF-8 path) for
/// `gpu`: the directory of the GPU's exact processor, `<root>/<gfx…>/`
/// (no fallback to another processor). Its manifests and archive tables
/// are read and checked here; code objects when first asked for. Stores
/// the catalog in `*out` (NULL on failure; the message names the root, the
/// arch and what the tree has).
///
/// # Safety
/// `root` is NULL or NUL-terminated; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_catalog_open(
    gpu: *mut RlGpu,
    root: *const c_char,
    out: *mut *mut RlCatalog,
) -> i32 {
    // SAFETY: forwarded caller contract (out is NULL or writable).
    unsafe { clear(out) };
    status("rl_catalog_open", || {
        let gpu = gpu_obj(gpu)?;
        // SAFETY: forwarded caller contract.
        let root = unsafe { text(root, "root") }?;
        non_null(out, "out")?;
        let catalog = gpu.gpu.catalog(root)?;
        // SAFETY: forwarded caller contract.
        unsafe { handles::insert_into(out, CatalogObj { catalog, gpu }) }
    })
}

/// The module of `toc_key` (e.g. `"demo/decode"`), verified before it is
/// loaded and loaded once: every call for the same key returns a new
/// handle to the same module (free each with `rl_module_free`). A missing
/// key, a sha256 mismatch or an args_signature that disagrees with the
/// code object's metadata fails with `RL_ERR_RECORD` and a message naming
/// the root, arch and key; nothing is loaded then.
///
/// # Safety
/// `toc_key` is NULL or NUL-terminated; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rl_catalog_module(
    catalog: *const RlCatalog,
    toc_key: *const c_char,
    out: *mut *mut RlModule,
) -> i32 {
    // SAFETY: forwarded caller contract (out is NULL or writable).
    unsafe { clear(out) };
    status("rl_catalog_module", || {
        let cat = catalog_obj(catalog)?;
        // SAFETY: forwarded caller contract.
        let key = unsafe { text(toc_key, "toc_key") }?;
        non_null(out, "out")?;
        let module = cat.catalog.module(key)?;
        let obj = ModuleObj {
            module,
            _gpu: cat.gpu.clone(),
        };
        // SAFETY: forwarded caller contract.
        unsafe { handles::insert_into(out, obj) }
    })
}

/// Drops this handle. Modules taken from the catalog stay loaded until
/// their own handles (and the IBs using them) are freed. NULL is a no-op.
#[no_mangle]
pub extern "C" fn rl_catalog_free(catalog: *mut RlCatalog) {
    handles::free::<CatalogObj>("rl_catalog_free", catalog);
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::ptr::{null, null_mut};

    use facade::bundle::pack::{self, Input};
    use facade::bundle::Compression;

    use crate::tests::{cstr, last_error, open_sim};
    use crate::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "relaunch-capi-catalog-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn pack_decode(root: &Path, scheme: Compression) {
        let arches = ["gfx1030", "gfx1100", "gfx1201"];
        let inputs: Vec<Input> = arches
            .iter()
            .map(|a| Input {
                name: "decode".to_string(),
                bytes: relaunch_testsupport::fixture(a, "decode"),
            })
            .collect();
        let arches: Vec<String> = arches.iter().map(|a| a.to_string()).collect();
        let packed = pack::pack("demo", &arches, &inputs, &BTreeMap::new(), scheme).unwrap();
        pack::write_tree(root, &packed).unwrap();
    }

    fn open(gpu: *mut RlGpu, root: &Path) -> (i32, *mut RlCatalog) {
        let root = cstr(root.to_str().unwrap());
        let mut cat = null_mut();
        // SAFETY: root is NUL-terminated; cat is writable.
        let rc = unsafe { rl_catalog_open(gpu, root.as_ptr(), &mut cat) };
        (rc, cat)
    }

    fn module(cat: *mut RlCatalog, key: &str) -> (i32, *mut RlModule) {
        let key = cstr(key);
        let mut m = null_mut();
        // SAFETY: key is NUL-terminated; m is writable.
        let rc = unsafe { rl_catalog_module(cat, key.as_ptr(), &mut m) };
        (rc, m)
    }

    #[test]
    fn loads_a_verified_module_by_key() {
        let root = scratch("ok");
        pack_decode(&root, Compression::ZstdPerKernel);
        let gpu = open_sim();
        let (rc, cat) = open(gpu, &root);
        assert_eq!(rc, RL_OK, "{}", last_error());
        let (rc, m) = module(cat, "demo/decode");
        assert_eq!(rc, RL_OK, "{}", last_error());
        let sym = cstr("rmsnorm");
        // SAFETY: a NUL-terminated symbol.
        assert!(unsafe { rl_module_kernarg_size(m, sym.as_ptr()) } > 0);
        let (rc, missing) = module(cat, "demo/nope");
        assert_eq!(rc, RL_ERR_RECORD);
        assert!(missing.is_null());
        let err = last_error();
        assert!(
            err.contains("demo/nope") && err.contains("gfx1201"),
            "{err}"
        );
        // The catalog can go first: the module handle stays valid.
        rl_catalog_free(cat);
        // SAFETY: a NUL-terminated symbol.
        assert!(unsafe { rl_module_kernarg_size(m, sym.as_ptr()) } > 0);
        rl_module_free(m);
        rl_gpu_free(gpu);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_flipped_byte_fails_naming_the_key() {
        let root = scratch("flip");
        pack_decode(&root, Compression::None);
        let path = root.join("gfx1201/relaunch_demo_gfx1201.kpack");
        let mut bytes = std::fs::read(&path).unwrap();
        let elf = bytes.windows(4).position(|w| w == b"\x7fELF").unwrap();
        bytes[elf + 6000] ^= 0x02;
        std::fs::write(&path, bytes).unwrap();
        let gpu = open_sim();
        let (rc, cat) = open(gpu, &root);
        assert_eq!(rc, RL_OK, "{}", last_error());
        let (rc, m) = module(cat, "demo/decode");
        assert_eq!(rc, RL_ERR_RECORD);
        assert!(m.is_null());
        let err = last_error();
        assert!(
            err.contains("demo/decode") && err.contains("sha256 mismatch"),
            "{err}"
        );
        assert!(err.contains(root.to_str().unwrap()), "{err}");
        rl_catalog_free(cat);
        rl_gpu_free(gpu);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn bad_arguments_are_refused() {
        let gpu = open_sim();
        let mut cat = null_mut();
        // SAFETY: NULL root is refused before use.
        let rc = unsafe { rl_catalog_open(gpu, null(), &mut cat) };
        assert_eq!(rc, RL_ERR_NULL);
        let (rc, cat) = open(gpu, Path::new("/nonexistent/relaunch-bundles"));
        assert_eq!(rc, RL_ERR_RECORD);
        assert!(cat.is_null());
        assert!(
            last_error().contains("no gfx1201 directory"),
            "{}",
            last_error()
        );
        // A module handle is not a catalog.
        let (rc, _) = module(gpu.cast(), "demo/decode");
        assert_eq!(rc, RL_ERR_HANDLE);
        rl_catalog_free(null_mut());
        rl_gpu_free(gpu);
    }
}
