//! Static registration, as hipcc-built programs do it: a constructor
//! calls `__hipRegisterFatBinary(wrapper)` once per translation unit and
//! `__hipRegisterFunction(modules, hostStub, deviceFunction, deviceName,
//! ...)` once per kernel; graph kernel nodes then carry the host stub in
//! `hipKernelNodeParams.func`. This module owns the exported registration
//! entry points, the fat binaries (keyed by the real `void **` handle) and
//! the host stub -> (fat binary, kernel name) map.
//!
//! Facts (public sources, no code taken): the wrapper is `{ u32 magic =
//! 0x48495046 "HIPF", u32 version, const void *binary, void *dummy }`
//! (clang's CGCUDANV.cpp emits it for HIP; `__hipFatBinaryWrapper` in
//! HIP's hip_runtime headers) and the registration signatures are
//! `void **__hipRegisterFatBinary(const void *)`, `void
//! __hipRegisterFunction(void **modules, const void *hostFunction, char
//! *deviceFunction, const char *deviceName, unsigned threadLimit, uint3
//! *tid, uint3 *bid, dim3 *blockDim, dim3 *gridDim, int *wSize)` and `void
//! __hipUnregisterFatBinary(void **)` (ROCm HIP/CLR `hip_platform`
//! declarations). Only the entry table is read at registration (it runs
//! before `main`); the code object for the device is picked and copied at
//! the first kernel node that names one of the fat binary's stubs, which
//! opens the relaunch device then. Refuses version 1 compressed bundles and a
//! wrapper without the HIPF magic (the kernels stay unsupported). Imports
//! only `bundle`, `image`, `shadow`, `state` and the facade.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::{Arc, LazyLock, OnceLock};

use parking_lot::Mutex;
use relaunch::extent::ExtentError;
use relaunch::CodeObject;
use relaunch::GfxTarget;

use crate::bundle::{self, pointer_reader};
use crate::hip::{key, Dim3, Handle};
use crate::reason::Reason;
use crate::shadow::{Function, ShadowModule};
use crate::state::{gpu, guarded};

/// `__hipFatBinaryWrapper.magic`: "HIPF" read as a little-endian u32.
pub const HIPF_MAGIC: u32 = 0x4849_5046;

/// `__hipFatBinaryWrapper`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct FatBinaryWrapper {
    pub magic: u32,
    pub version: u32,
    pub binary: *const c_void,
    pub dummy: *mut c_void,
}

/// A registered fat binary: where its bundle lives (the program's own
/// `.hip_fatbin` data, valid until `__hipUnregisterFatBinary`), its
/// extent (read from its table at registration), and the module picked
/// for the device, once.
pub struct FatBinary {
    base: usize,
    extent: Result<u64, Reason>,
    module: OnceLock<Arc<ShadowModule>>,
    /// Why its kernels may not replay although the code is fine: it
    /// registers device variables (`__hipRegisterVar`), which the
    /// application reaches in HIP's copy of the module, not relaunch's.
    variable: Mutex<Option<Reason>>,
}

impl FatBinary {
    /// Reads the wrapper and the bundle's table.
    ///
    /// # Safety
    /// `wrapper` is null or points to a `__hipFatBinaryWrapper` whose
    /// `binary` stays readable while this value lives.
    pub unsafe fn from_wrapper(wrapper: *const FatBinaryWrapper) -> FatBinary {
        // SAFETY: null or valid per the caller.
        let w = unsafe { wrapper.as_ref() };
        let base = w.map_or(0, |w| w.binary as usize);
        let extent = match w {
            None => Err(Reason::NullWrapper),
            Some(w) if w.magic != HIPF_MAGIC => Err(Reason::WrapperMagic { magic: w.magic }),
            Some(_) => {
                // SAFETY: the bundle is readable per the caller.
                let read = unsafe { pointer_reader(base as *const u8) };
                relaunch::extent::bundle_extent(&read).map_err(Reason::from)
            }
        };
        FatBinary {
            base,
            extent,
            module: OnceLock::new(),
            variable: Mutex::new(None),
        }
    }

    /// The code object for `target`, from a copy of the bundle.
    pub fn code_for(&self, target: &GfxTarget) -> Result<CodeObject, Reason> {
        let extent = *self.extent.as_ref().map_err(Clone::clone)?;
        // SAFETY: `base` holds a bundle of `extent` bytes (its table said
        // so at registration) and stays valid until the fat binary is
        // unregistered, which drops this value from the map (nodes built
        // earlier keep only the copied module).
        let read = unsafe { pointer_reader(self.base as *const u8) };
        let bytes = read(0, extent).map_err(|reason| ExtentError::Read {
            what: "offload bundle",
            reason,
        })?;
        Ok(bundle::code_for(&bytes, target)?)
    }

    /// The module for the relaunch device (opened here if it was not
    /// yet); an unsupported module carries the reason.
    pub fn module(&self) -> Arc<ShadowModule> {
        Arc::clone(self.module.get_or_init(|| {
            if let Some(why) = self.variable.lock().clone() {
                return Arc::new(ShadowModule::new(Err(why)));
            }
            let code = gpu().and_then(|g| self.code_for(g.target()));
            if let Err(why) = &code {
                tracing::info!(reason = %why, "fat binary not replayable; its kernels fall through");
            }
            Arc::new(ShadowModule::new(code))
        }))
    }
}

impl FatBinary {
    /// Nothing of this fat binary replays any more (see `variable`).
    pub fn taint(&self, why: Reason) {
        if let Some(module) = self.module.get() {
            module.taint(why.clone());
        }
        self.variable.lock().get_or_insert(why);
    }
}

/// Fat binaries by their real handle, and host stubs by address.
#[derive(Default)]
struct Registry {
    fatbins: HashMap<usize, Arc<FatBinary>>,
    stubs: HashMap<usize, (Arc<FatBinary>, String)>,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Default::default);

/// The kernel a registered host stub launches, `None` when `func` is not
/// a registered stub. Called with the shadow state locked (lock order:
/// state, then registry).
pub fn function_of_stub(func: *const c_void) -> Option<Function> {
    let (fatbin, symbol) = REGISTRY.lock().stubs.get(&key(func)).cloned()?;
    Some(Function {
        module: fatbin.module(),
        symbol,
    })
}

/// The module `hipModuleLoadData` gets for an offload bundle: the entry
/// for the relaunch device is picked and copied now (the device is opened
/// here), since the application may free the image after the call.
///
/// # Safety
/// `image` points to a readable offload bundle.
pub unsafe fn code_of_loaded_bundle(image: *const u8) -> Result<CodeObject, Reason> {
    // SAFETY: per the caller.
    let bytes = unsafe { bundle::copy(image) }?;
    Ok(bundle::code_for(&bytes, gpu()?.target())?)
}

/// [`code_of_loaded_bundle`] for a bundle already in memory (read from a
/// file by `hipModuleLoad`); the reader bounds every entry by the slice.
pub fn code_of_bundle_bytes(bytes: &[u8]) -> Result<CodeObject, Reason> {
    Ok(bundle::code_for(bytes, gpu()?.target())?)
}

/// The real function, or return (with `$missing`) when it is not loaded.
macro_rules! real_or {
    ($name:ident $(, $missing:expr)?) => {
        match crate::real::$name() {
            Some(f) => f,
            None => return $($missing)?,
        }
    };
}

/// # Safety
/// The HIP runtime's `__hipRegisterFatBinary` contract.
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterFatBinary(data: *const c_void) -> *mut Handle {
    let real = real_or!(__hipRegisterFatBinary, std::ptr::null_mut());
    // SAFETY: forwarded unchanged.
    let modules = unsafe { real(data) };
    if !modules.is_null() {
        guarded("__hipRegisterFatBinary", || {
            // SAFETY: the real HIP accepted the same wrapper.
            let fatbin = unsafe { FatBinary::from_wrapper(data as *const FatBinaryWrapper) };
            if let Err(why) = &fatbin.extent {
                tracing::info!(reason = %why, "fat binary not replayable; its kernels fall through");
            }
            REGISTRY
                .lock()
                .fatbins
                .insert(key(modules as *const c_void), Arc::new(fatbin));
        });
    }
    modules
}

/// # Safety
/// The HIP runtime's `__hipRegisterFunction` contract.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __hipRegisterFunction(
    modules: *mut Handle,
    host_function: *const c_void,
    device_function: *mut c_char,
    device_name: *const c_char,
    thread_limit: u32,
    tid: *mut c_void,
    bid: *mut c_void,
    block_dim: *mut Dim3,
    grid_dim: *mut Dim3,
    w_size: *mut i32,
) {
    let real = real_or!(__hipRegisterFunction);
    // SAFETY: forwarded unchanged.
    unsafe {
        real(
            modules,
            host_function,
            device_function,
            device_name,
            thread_limit,
            tid,
            bid,
            block_dim,
            grid_dim,
            w_size,
        )
    };
    let name = if device_name.is_null() {
        device_function as *const c_char
    } else {
        device_name
    };
    if name.is_null() || host_function.is_null() {
        return;
    }
    // SAFETY: a NUL-terminated kernel name (the real HIP read it too).
    let name = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    guarded("__hipRegisterFunction", || {
        let mut r = REGISTRY.lock();
        if let Some(fatbin) = r.fatbins.get(&key(modules as *const c_void)).cloned() {
            r.stubs.insert(key(host_function), (fatbin, name));
        }
    });
}

/// # Safety
/// The HIP runtime's `__hipRegisterVar(modules, var, hostVar, deviceVar,
/// ext, size, constant, global)` contract (as a hipcc constructor calls
/// it, once per `__device__` / `__constant__` variable). A fat binary with
/// device variables is not replayed: the application reaches them
/// (`hipMemcpyToSymbol`, `hipGetSymbolAddress`) in HIP's copy of the
/// code, which relaunch's copy would not see.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // HIP's signature
pub unsafe extern "C" fn __hipRegisterVar(
    modules: *mut Handle,
    var: *mut c_void,
    host_var: *mut c_char,
    device_var: *mut c_char,
    ext: i32,
    size: usize,
    constant: i32,
    global: i32,
) {
    let real = real_or!(__hipRegisterVar);
    // SAFETY: forwarded unchanged.
    unsafe {
        real(
            modules, var, host_var, device_var, ext, size, constant, global,
        )
    };
    // SAFETY: as the real call took them.
    unsafe {
        taint_fatbin(
            modules.cast(),
            device_var,
            "device variable",
            "__hipRegisterVar",
        )
    };
}

/// # Safety
/// The HIP runtime's `__hipRegisterManagedVar(hipModule, pointer,
/// init_value, name, size, align)` contract. A managed variable is a
/// device variable too (see `__hipRegisterVar`).
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterManagedVar(
    module: *mut c_void,
    pointer: *mut *mut c_void,
    init_value: *mut c_void,
    name: *const c_char,
    size: usize,
    align: u32,
) {
    let real = real_or!(__hipRegisterManagedVar);
    // SAFETY: forwarded unchanged.
    unsafe { real(module, pointer, init_value, name, size, align) };
    // SAFETY: as the real call took them.
    unsafe { taint_fatbin(module, name, "managed variable", "__hipRegisterManagedVar") };
}

/// # Safety
/// The HIP runtime's `__hipRegisterSurface(modules, var, hostVar,
/// deviceVar, type, ext)` contract (a surface reference is a module
/// global too).
#[no_mangle]
pub unsafe extern "C" fn __hipRegisterSurface(
    modules: *mut Handle,
    var: *mut c_void,
    host_var: *mut c_char,
    device_var: *mut c_char,
    kind: i32,
    ext: i32,
) {
    let real = real_or!(__hipRegisterSurface);
    // SAFETY: forwarded unchanged.
    unsafe { real(modules, var, host_var, device_var, kind, ext) };
    // SAFETY: as the real call took them.
    unsafe {
        taint_fatbin(
            modules.cast(),
            device_var,
            "surface",
            "__hipRegisterSurface",
        )
    };
}

/// # Safety
/// The HIP runtime's `__hipRegisterTexture(modules, var, hostVar,
/// deviceVar, type, norm, ext)` contract (a texture reference is a module
/// global too).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // HIP's signature
pub unsafe extern "C" fn __hipRegisterTexture(
    modules: *mut Handle,
    var: *mut c_void,
    host_var: *mut c_char,
    device_var: *mut c_char,
    kind: i32,
    norm: i32,
    ext: i32,
) {
    let real = real_or!(__hipRegisterTexture);
    // SAFETY: forwarded unchanged.
    unsafe { real(modules, var, host_var, device_var, kind, norm, ext) };
    // SAFETY: as the real call took them.
    unsafe {
        taint_fatbin(
            modules.cast(),
            device_var,
            "texture",
            "__hipRegisterTexture",
        )
    };
}

/// The fat binary registered under `modules` stops replaying: it has a
/// module global (`what` named `name`) that the application reaches in
/// HIP's copy of the code, which relaunch's copy would not see.
///
/// # Safety
/// `name` is null or NUL-terminated.
unsafe fn taint_fatbin(modules: *mut c_void, name: *const c_char, what: &'static str, call: &str) {
    guarded(call, || {
        // SAFETY: NUL-terminated per the caller.
        let name = unsafe { crate::hip::c_name(name) };
        let fatbin = REGISTRY.lock().fatbins.get(&key(modules)).cloned();
        if let Some(fatbin) = fatbin {
            fatbin.taint(Reason::FatBinaryGlobal { what, name });
        }
    });
}

/// # Safety
/// The HIP runtime's `__hipUnregisterFatBinary` contract.
#[no_mangle]
pub unsafe extern "C" fn __hipUnregisterFatBinary(modules: *mut Handle) {
    let real = real_or!(__hipUnregisterFatBinary);
    // SAFETY: forwarded unchanged.
    unsafe { real(modules) };
    guarded("__hipUnregisterFatBinary", || {
        let mut r = REGISTRY.lock();
        if let Some(gone) = r.fatbins.remove(&key(modules as *const c_void)) {
            r.stubs.retain(|_, (f, _)| !Arc::ptr_eq(f, &gone));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::assemble;

    fn fixture(target: &str) -> Vec<u8> {
        relaunch_testsupport::fixture(target, "counter")
    }

    fn wrapped(bundle: &[u8], magic: u32) -> FatBinaryWrapper {
        FatBinaryWrapper {
            magic,
            version: 1,
            binary: bundle.as_ptr() as *const c_void,
            dummy: std::ptr::null_mut(),
        }
    }

    #[test]
    fn a_wrapped_bundle_yields_the_devices_code_object() {
        let (g1100, g1201) = (fixture("gfx1100"), fixture("gfx1201"));
        let bundle = assemble(&[
            ("host-x86_64-unknown-linux-gnu-", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx1100", &g1100),
            ("hipv4-amdgcn-amd-amdhsa--gfx1201", &g1201),
        ]);
        let w = wrapped(&bundle, HIPF_MAGIC);
        // SAFETY: `w` and `bundle` outlive `fatbin`.
        let fatbin = unsafe { FatBinary::from_wrapper(&w) };
        let code = fatbin
            .code_for(&GfxTarget::parse("gfx1201").unwrap())
            .unwrap();
        assert_eq!(code.target().processor(), "gfx1201");
        assert_eq!(code.bytes(), &g1201[..]);
        assert!(code.kernel("counter").is_some());
        let err = fatbin
            .code_for(&GfxTarget::parse("gfx1030").unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("gfx1030") && err.contains("gfx1100"), "{err}");
    }

    #[test]
    fn a_bad_wrapper_or_bundle_is_unsupported_with_the_reason() {
        let bundle = assemble(&[("hipv4-amdgcn-amd-amdhsa--gfx1201", b"x")]);
        let w = wrapped(&bundle, 0x1234);
        // SAFETY: as above.
        let fatbin = unsafe { FatBinary::from_wrapper(&w) };
        let err = fatbin.extent.err().unwrap();
        assert!(
            matches!(err, Reason::WrapperMagic { magic: 0x1234 }),
            "{err}"
        );
        // SAFETY: null is allowed.
        let fatbin = unsafe { FatBinary::from_wrapper(std::ptr::null()) };
        assert!(matches!(fatbin.extent, Err(Reason::NullWrapper)));
        let mut ccob = b"CCOB".to_vec();
        ccob.resize(64, 0);
        let w = wrapped(&ccob, HIPF_MAGIC);
        // SAFETY: as above.
        let fatbin = unsafe { FatBinary::from_wrapper(&w) };
        assert!(fatbin
            .extent
            .err()
            .unwrap()
            .to_string()
            .contains("compressed offload bundle"));
        // An entry that is not a code object: refused when picked.
        let w = wrapped(&bundle, HIPF_MAGIC);
        // SAFETY: as above.
        let fatbin = unsafe { FatBinary::from_wrapper(&w) };
        let err = fatbin
            .code_for(&GfxTarget::parse("gfx1201").unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("not an ELF file"), "{err}");
    }

    #[test]
    fn the_wrapper_has_the_c_layout() {
        assert_eq!(std::mem::offset_of!(FatBinaryWrapper, binary), 8);
        assert_eq!(std::mem::size_of::<FatBinaryWrapper>(), 24);
    }
}
