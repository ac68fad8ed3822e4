//! The entry points loading and unloading modules (`hipModuleLoad*`,
//! `hipModuleGetFunction`, `hipModuleGetGlobal`, `hipModuleUnload`): the
//! shadow of each module is its code object copied (a plain ELF, or the
//! offload bundle's entry for the relaunch device, `model/image.rs`,
//! `model/bundle.rs`), or why it cannot replay.

use std::ffi::{c_char, c_void, CStr};
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use relaunch::{CodeObject, CodeObjectError};

use crate::exports::forward;
use crate::hip::{c_name, key, Handle, HipError, HIP_SUCCESS};
use crate::model::bundle;
use crate::model::image::{copy_image, read_code_file};
use crate::model::reason::Reason;
use crate::model::shadow::{Function, ShadowModule};
use crate::state::{gpu, guarded, with_state};

/// # Safety
/// HIP's `hipModuleLoadData` contract.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(module: *mut Handle, image: *const c_void) -> HipError {
    let rc = forward!(hipModuleLoadData(module, image));
    // SAFETY: the real HIP took the same image.
    unsafe { shadow_loaded(rc, module, image, "hipModuleLoadData") };
    rc
}

/// # Safety
/// HIP's `hipModuleLoadDataEx(module, image, numOptions, options,
/// optionValues)` contract; the JIT options concern the real HIP only.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadDataEx(
    module: *mut Handle,
    image: *const c_void,
    num_options: u32,
    options: *mut c_void,
    values: *mut *mut c_void,
) -> HipError {
    let rc = forward!(hipModuleLoadDataEx(
        module,
        image,
        num_options,
        options,
        values
    ));
    // SAFETY: the real HIP took the same image.
    unsafe { shadow_loaded(rc, module, image, "hipModuleLoadDataEx") };
    rc
}

/// # Safety
/// HIP's `hipModuleLoad(module, fname)` contract: `fname` is a
/// NUL-terminated path.
#[no_mangle]
pub unsafe extern "C" fn hipModuleLoad(module: *mut Handle, path: *const c_char) -> HipError {
    let rc = forward!(hipModuleLoad(module, path));
    if rc == HIP_SUCCESS && !module.is_null() && !path.is_null() {
        // SAFETY: the real call succeeded, so `module` was written and
        // `path` is the C string it read.
        let (handle, path) = unsafe { (key(*module), CStr::from_ptr(path)) };
        let code = guarded("hipModuleLoad", || {
            let path = std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
            // The file is read again (the real HIP keeps its copy private),
            // once, bounded like an image read through a pointer.
            code_of_image(&read_code_file(path)?)
        });
        if let Some(code) = code {
            file_module(handle, code, "hipModuleLoad");
        }
    }
    rc
}

/// The shadow of a module the real HIP loaded from `image`.
///
/// # Safety
/// `rc` is the real call's result; on success `module` was written and
/// `image` is the image it read.
unsafe fn shadow_loaded(rc: HipError, module: *mut Handle, image: *const c_void, call: &str) {
    if rc != HIP_SUCCESS || module.is_null() {
        return;
    }
    // SAFETY: the real call succeeded, so `module` was written.
    let handle = key(unsafe { *module });
    let code = guarded(call, || {
        // SAFETY: the real HIP just read the same image (its first 24
        // bytes at least: every ELF header and bundle is longer).
        if !image.is_null()
            && bundle::looks_like_bundle(unsafe {
                std::slice::from_raw_parts(image as *const u8, 24)
            })
        {
            // SAFETY: as above.
            return unsafe { code_of_loaded_bundle(image as *const u8) };
        }
        // SAFETY: as above.
        let bytes = unsafe { copy_image(image as *const u8) }?;
        code_of_elf(&bytes)
    });
    if let Some(code) = code {
        file_module(handle, code, call);
    }
}

/// A code object from bytes in memory: a plain ELF, or an offload bundle
/// whose entry for the device is picked.
fn code_of_image(bytes: &[u8]) -> Result<CodeObject, Reason> {
    if bundle::looks_like_bundle(bytes) {
        // The reader bounds every entry by the slice.
        return Ok(bundle::code_for(bytes, gpu()?.target())?);
    }
    code_of_elf(bytes)
}

/// A plain ELF code object; a generic one (`gfx11-generic`) is read as the
/// device's processor's code, as HIP loads it.
fn code_of_elf(bytes: &[u8]) -> Result<CodeObject, Reason> {
    match CodeObject::parse(bytes) {
        Err(CodeObjectError::GenericNeedsProcessor { .. }) => {
            Ok(CodeObject::parse_for(bytes, Some(gpu()?.target()))?)
        }
        other => Ok(other?),
    }
}

/// The module `hipModuleLoadData` gets for an offload bundle: the entry
/// for the relaunch device is picked and copied now (the device is opened
/// here), since the application may free the image after the call.
///
/// # Safety
/// `image` points to a readable offload bundle.
unsafe fn code_of_loaded_bundle(image: *const u8) -> Result<CodeObject, Reason> {
    // SAFETY: per the caller.
    let bytes = unsafe { bundle::copy(image) }?;
    Ok(bundle::code_for(&bytes, gpu()?.target())?)
}

/// Files the shadow of module `handle`.
fn file_module(handle: usize, code: Result<CodeObject, Reason>, call: &str) {
    if let Err(why) = &code {
        tracing::info!(reason = %why, "module is not replayable; its graphs fall through");
    }
    with_state(call, |s| {
        s.modules.insert(handle, Arc::new(ShadowModule::new(code)));
    });
}

/// # Safety
/// HIP's `hipModuleGetGlobal(hipDeviceptr_t *dptr, size_t *bytes,
/// hipModule_t, const char *name)` contract. The application now reaches
/// a device variable in HIP's copy of the module, which relaunch's copy
/// would not see: nothing of the module replays from then on (execs made
/// earlier fall through at their next launch).
#[no_mangle]
pub unsafe extern "C" fn hipModuleGetGlobal(
    dptr: *mut *mut c_void,
    bytes: *mut usize,
    module: Handle,
    name: *const c_char,
) -> HipError {
    let rc = forward!(hipModuleGetGlobal(dptr, bytes, module, name));
    if rc == HIP_SUCCESS {
        // SAFETY: the NUL-terminated name the real call read.
        let name = unsafe { c_name(name) };
        with_state("hipModuleGetGlobal", |s| {
            if let Some(m) = s.modules.get(&key(module)) {
                m.taint(Reason::ModuleGlobal { name });
            }
        });
    }
    rc
}

/// # Safety
/// HIP's `hipModuleGetFunction` contract.
#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut Handle,
    module: Handle,
    name: *const c_char,
) -> HipError {
    let rc = forward!(hipModuleGetFunction(function, module, name));
    if rc == HIP_SUCCESS && !function.is_null() && !name.is_null() {
        // SAFETY: written by the successful real call / NUL-terminated name.
        let (f, symbol) = unsafe { (key(*function), CStr::from_ptr(name)) };
        let symbol = symbol.to_string_lossy().into_owned();
        with_state("hipModuleGetFunction", |s| {
            if let Some(m) = s.modules.get(&key(module)) {
                let module = Arc::clone(m);
                s.functions.insert(f, Function { module, symbol });
            }
        });
    }
    rc
}

/// # Safety
/// HIP's `hipModuleUnload` contract.
#[no_mangle]
pub unsafe extern "C" fn hipModuleUnload(module: Handle) -> HipError {
    let rc = forward!(hipModuleUnload(module));
    with_state("hipModuleUnload", |s| {
        if let Some(m) = s.modules.remove(&key(module)) {
            s.functions.retain(|_, f| !Arc::ptr_eq(&f.module, &m));
        }
    });
    rc
}
