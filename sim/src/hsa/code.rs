//! Code-object readers, executables and symbols of the simulated HSA table.
//! Loading copies the PT_LOAD segments into device memory (through the
//! device crate's code-object reader) and registers each kernel's
//! descriptor and code entry with the simulated GPU.

use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use relaunch_hsa_sys::{
    self as sys, Agent, CodeObjectReader, Executable, ExecutableSymbol, LoadedCodeObject, Status,
};

use super::{
    fail, guard, initialized, system, with_system, with_system_mut, write_out, Executable as Exec,
    Symbol, GPU_AGENT_BASE,
};
use crate::device::SimError;

/// Largest code object the simulated reader accepts.
const MAX_CODE_OBJECT_BYTES: usize = 256 << 20;

pub(super) extern "C" fn reader_create(
    code: *const c_void,
    size: usize,
    reader: *mut CodeObjectReader,
) -> Status {
    with_system_mut(|s| {
        if code.is_null() || size == 0 || size > MAX_CODE_OBJECT_BYTES || reader.is_null() {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                format!(
                    "hsa_code_object_reader_create_from_memory: need non-null code of 1..={MAX_CODE_OBJECT_BYTES} \
                     bytes and a reader out-pointer (got {size} bytes)"
                ),
            );
        }
        // SAFETY: the caller passes `size` readable bytes at `code`.
        let bytes = unsafe { std::slice::from_raw_parts(code.cast::<u8>(), size) }.to_vec();
        let handle = s.handle();
        s.readers.insert(handle, Arc::new(bytes));
        // SAFETY: non-null out-pointer.
        unsafe { write_out(reader, CodeObjectReader { handle }, "reader") }
    })
}

pub(super) extern "C" fn reader_destroy(reader: CodeObjectReader) -> Status {
    with_system_mut(|s| match s.readers.remove(&reader.handle) {
        Some(_) => sys::HSA_STATUS_SUCCESS,
        None => fail(
            sys::HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER,
            format!("code object reader {} is not live", reader.handle),
        ),
    })
}

pub(super) extern "C" fn executable_create(
    _profile: u32,
    _rounding: u32,
    _options: *const c_char,
    executable: *mut Executable,
) -> Status {
    with_system_mut(|s| {
        if executable.is_null() {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                "hsa_executable_create_alt: out-pointer is null",
            );
        }
        let handle = s.handle();
        s.executables.insert(
            handle,
            Exec {
                frozen: false,
                images: Vec::new(),
            },
        );
        // SAFETY: non-null out-pointer.
        unsafe { write_out(executable, Executable { handle }, "executable") }
    })
}

pub(super) extern "C" fn executable_load(
    executable: Executable,
    agent: Agent,
    reader: CodeObjectReader,
    _options: *const c_char,
    loaded: *mut LoadedCodeObject,
) -> Status {
    guard(|| {
        let (device, gpu, bytes) = {
            let s = system().read();
            if let Err(st) = initialized(&s) {
                return st;
            }
            match s.executables.get(&executable.handle) {
                None => {
                    return fail(
                        sys::HSA_STATUS_ERROR_INVALID_EXECUTABLE,
                        format!("executable {} is not live", executable.handle),
                    )
                }
                Some(e) if e.frozen => {
                    return fail(
                        sys::HSA_STATUS_ERROR_FROZEN_EXECUTABLE,
                        "hsa_executable_load_agent_code_object: the executable is frozen",
                    )
                }
                Some(_) => {}
            }
            let Some(gpu) = s.gpu_index(agent) else {
                return fail(
                    sys::HSA_STATUS_ERROR_INVALID_AGENT,
                    format!("agent {:#x} is not a simulated GPU", agent.handle),
                );
            };
            let Some(bytes) = s.readers.get(&reader.handle).cloned() else {
                return fail(
                    sys::HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER,
                    format!("code object reader {} is not live", reader.handle),
                );
            };
            (Arc::clone(&s.gpus[gpu]), gpu, bytes)
        };
        let image = match device.load_code_object(&bytes) {
            Ok(i) => i,
            Err(e @ SimError::WrongTarget { .. }) => {
                return fail(sys::HSA_STATUS_ERROR_INVALID_ISA, e.to_string())
            }
            Err(e @ SimError::Memory(_)) => {
                return fail(sys::HSA_STATUS_ERROR_OUT_OF_RESOURCES, e.to_string())
            }
            Err(e) => return fail(sys::HSA_STATUS_ERROR_INVALID_CODE_OBJECT, e.to_string()),
        };
        let mut s = system().write();
        let mut handles = Vec::new();
        for k in &image.kernels {
            let h = s.handle();
            s.symbols.insert(
                h,
                Symbol {
                    executable: executable.handle,
                    gpu,
                    kernel: Arc::clone(k),
                },
            );
            handles.push(h);
        }
        let loaded_handle = s.handle();
        match s.executables.get_mut(&executable.handle) {
            Some(e) => e.images.push((gpu, image)),
            None => {
                // Destroyed while we loaded: undo.
                for h in handles {
                    s.symbols.remove(&h);
                }
                drop(s);
                let _ = device.unload(&image);
                return fail(
                    sys::HSA_STATUS_ERROR_INVALID_EXECUTABLE,
                    "executable destroyed during load",
                );
            }
        }
        if !loaded.is_null() {
            // SAFETY: non-null out-pointer.
            unsafe {
                write_out(
                    loaded,
                    LoadedCodeObject {
                        handle: loaded_handle,
                    },
                    "loaded",
                )
            };
        }
        sys::HSA_STATUS_SUCCESS
    })
}

pub(super) extern "C" fn executable_freeze(
    executable: Executable,
    _options: *const c_char,
) -> Status {
    with_system_mut(|s| match s.executables.get_mut(&executable.handle) {
        Some(e) if e.frozen => fail(
            sys::HSA_STATUS_ERROR_FROZEN_EXECUTABLE,
            "executable already frozen",
        ),
        Some(e) => {
            e.frozen = true;
            sys::HSA_STATUS_SUCCESS
        }
        None => fail(
            sys::HSA_STATUS_ERROR_INVALID_EXECUTABLE,
            format!("executable {} is not live", executable.handle),
        ),
    })
}

pub(super) extern "C" fn symbol_by_name(
    executable: Executable,
    name: *const c_char,
    agent: *const Agent,
    symbol: *mut ExecutableSymbol,
) -> Status {
    with_system(|s| {
        if name.is_null() || symbol.is_null() {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                "hsa_executable_get_symbol_by_name: null argument",
            );
        }
        // SAFETY: non-null NUL-terminated string from the caller.
        let Ok(text) = unsafe { CStr::from_ptr(name) }.to_str() else {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
                "symbol name is not UTF-8",
            );
        };
        let wanted = text.strip_suffix(".kd").unwrap_or(text);
        // SAFETY: null or a valid agent per the HSA contract.
        let agent = unsafe { agent.as_ref() }.copied();
        let found = s.symbols.iter().find(|(_, sym)| {
            sym.executable == executable.handle
                && sym.kernel.symbol == wanted
                && agent.is_none_or(|a| a.handle == GPU_AGENT_BASE + sym.gpu as u64)
        });
        match found {
            // SAFETY: non-null out-pointer.
            Some((&h, _)) => unsafe { write_out(symbol, ExecutableSymbol { handle: h }, "symbol") },
            None => fail(
                sys::HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
                format!("executable {} has no kernel {text:?}", executable.handle),
            ),
        }
    })
}

pub(super) extern "C" fn symbol_get_info(
    symbol: ExecutableSymbol,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    with_system(|s| {
        let Some(sym) = s.symbols.get(&symbol.handle) else {
            return fail(
                sys::HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
                format!("symbol {} is not live", symbol.handle),
            );
        };
        let k = &sym.kernel;
        let kd = &k.descriptor;
        let name = format!("{}.kd", k.symbol);
        let u32_out = |v: u32| {
            // SAFETY: u32 attributes get u32 storage.
            unsafe { write_out(value.cast::<u32>(), v, "symbol info") }
        };
        match attribute {
            sys::HSA_EXECUTABLE_SYMBOL_INFO_TYPE => u32_out(sys::HSA_SYMBOL_KIND_KERNEL),
            sys::HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH => u32_out(name.len() as u32),
            sys::HSA_EXECUTABLE_SYMBOL_INFO_NAME => {
                if value.is_null() {
                    return fail(sys::HSA_STATUS_ERROR_INVALID_ARGUMENT, "NAME: out-pointer is null");
                }
                // SAFETY: the caller provides NAME_LENGTH bytes (the HSA contract).
                unsafe { std::ptr::copy_nonoverlapping(name.as_ptr(), value.cast::<u8>(), name.len()) };
                sys::HSA_STATUS_SUCCESS
            }
            // SAFETY: hsa_agent_t storage.
            sys::HSA_EXECUTABLE_SYMBOL_INFO_AGENT => unsafe {
                write_out(
                    value.cast::<Agent>(),
                    Agent {
                        handle: GPU_AGENT_BASE + sym.gpu as u64,
                    },
                    "AGENT",
                )
            },
            // SAFETY: u64 storage.
            sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT => unsafe {
                write_out(value.cast::<u64>(), k.kd_addr, "KERNEL_OBJECT")
            },
            sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE => u32_out(kd.kernarg_size),
            sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT => u32_out(k.kernarg_align),
            sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE => u32_out(kd.group_segment_fixed_size),
            sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE => u32_out(kd.private_segment_fixed_size),
            // SAFETY: bool storage.
            sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK => unsafe {
                write_out(value.cast::<bool>(), kd.uses_dynamic_stack(), "DYNAMIC_CALLSTACK")
            },
            other => fail(
                sys::HSA_STATUS_ERROR_INVALID_ARGUMENT,
                format!("hsa_executable_symbol_get_info: attribute {other} is not supported by the simulator"),
            ),
        }
    })
}

pub(super) extern "C" fn executable_destroy(executable: Executable) -> Status {
    guard(|| {
        let (exec, gpus) = {
            let mut s = system().write();
            if let Err(st) = initialized(&s) {
                return st;
            }
            let Some(exec) = s.executables.remove(&executable.handle) else {
                return fail(
                    sys::HSA_STATUS_ERROR_INVALID_EXECUTABLE,
                    format!("executable {} is not live", executable.handle),
                );
            };
            s.symbols
                .retain(|_, sym| sym.executable != executable.handle);
            (exec, s.gpus.clone())
        };
        for (gpu, image) in exec.images {
            if let Err(e) = gpus[gpu].unload(&image) {
                return fail(sys::HSA_STATUS_ERROR, e.to_string());
            }
        }
        sys::HSA_STATUS_SUCCESS
    })
}
