//! Static registration, as hipcc-built programs do it: a constructor
//! calls `__hipRegisterFatBinary(wrapper)` once per translation unit and
//! `__hipRegisterFunction(modules, hostStub, deviceFunction, deviceName,
//! ...)` once per kernel; graph kernel nodes then carry the host stub in
//! `hipKernelNodeParams.func`. This module owns the exported registration
//! entry points; the fat binaries (keyed by the real `void **` handle) and
//! the host stub -> (fat binary, kernel name) map are the state's
//! (`state/registry.rs`), a fat binary itself the model's
//! (`model/fatbin.rs`).
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
//! opens the relaunch device then.

use std::ffi::{c_char, c_void, CStr};

use crate::hip::{c_name, key, Dim3, Handle};
use crate::model::fatbin::{FatBinary, FatBinaryWrapper};
use crate::model::reason::Reason;
use crate::state::{guarded, registry};

/// The real function, or return (with `$missing`) when it is not loaded.
macro_rules! real_or {
    ($name:ident $(, $missing:expr)?) => {
        match crate::hip::real::$name() {
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
            registry::register_fatbin(key(modules as *const c_void), fatbin);
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
        registry::register_stub(key(modules as *const c_void), key(host_function), name);
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
        let name = unsafe { c_name(name) };
        let fatbin = registry::fatbin(key(modules));
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
        registry::unregister_fatbin(key(modules as *const c_void));
    });
}
