//! The scripted table's code objects and executables (part of
//! `scripted/mod.rs`): readers keep a copy of the caller's bytes,
//! loading accepts any ELF for a GPU agent, and every executable holds one
//! kernel, `counter.kd` (8-byte kernarg), whose object is `KERNEL_OBJECT`.

use super::*;

pub(super) unsafe extern "C" fn reader_create(
    p: *const c_void,
    n: usize,
    out: *mut sys::CodeObjectReader,
) -> sys::Status {
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) }.to_vec();
    let handle = with(|s| {
        s.next += 1;
        s.readers.insert(s.next, bytes);
        s.next
    });
    unsafe { *out = sys::CodeObjectReader { handle } };
    sys::HSA_STATUS_SUCCESS
}
pub(super) extern "C" fn reader_destroy(r: sys::CodeObjectReader) -> sys::Status {
    with(|s| s.readers.remove(&r.handle))
        .map_or(sys::HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER, |_| 0)
}
pub(super) unsafe extern "C" fn executable_create(
    _: u32,
    _: u32,
    _: *const c_char,
    out: *mut sys::Executable,
) -> sys::Status {
    let handle = with(|s| {
        s.next += 1;
        s.executables.insert(s.next, false);
        s.next
    });
    unsafe { *out = sys::Executable { handle } };
    sys::HSA_STATUS_SUCCESS
}
pub(super) unsafe extern "C" fn executable_load(
    _: sys::Executable,
    agent: sys::Agent,
    r: sys::CodeObjectReader,
    _: *const c_char,
    _: *mut sys::LoadedCodeObject,
) -> sys::Status {
    assert!(
        agent == GPU || agent == GPU2,
        "code loaded for a non-GPU agent"
    );
    if with(|s| s.readers[&r.handle].starts_with(b"\x7fELF")) {
        0
    } else {
        sys::HSA_STATUS_ERROR_INVALID_CODE_OBJECT
    }
}
pub(super) extern "C" fn executable_freeze(e: sys::Executable, _: *const c_char) -> sys::Status {
    with(|s| s.executables.insert(e.handle, true));
    sys::HSA_STATUS_SUCCESS
}
pub(super) unsafe extern "C" fn get_symbol(
    _: sys::Executable,
    name: *const c_char,
    _: *const sys::Agent,
    out: *mut sys::ExecutableSymbol,
) -> sys::Status {
    if unsafe { CStr::from_ptr(name) } != c"counter.kd" {
        return sys::HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
    }
    unsafe { *out = sys::ExecutableSymbol { handle: 77 } };
    sys::HSA_STATUS_SUCCESS
}
pub(super) unsafe extern "C" fn symbol_info(
    _: sys::ExecutableSymbol,
    attr: u32,
    value: *mut c_void,
) -> sys::Status {
    unsafe {
        match attr {
            sys::HSA_EXECUTABLE_SYMBOL_INFO_TYPE => put(value, sys::HSA_SYMBOL_KIND_KERNEL),
            sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT => put(value, KERNEL_OBJECT),
            sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE => put(value, 8u32),
            sys::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT => put(value, 8u32),
            _ => put(value, 0u32),
        }
    }
    sys::HSA_STATUS_SUCCESS
}
pub(super) extern "C" fn executable_destroy(e: sys::Executable) -> sys::Status {
    with(|s| s.executables.remove(&e.handle))
        .map_or(sys::HSA_STATUS_ERROR_INVALID_EXECUTABLE, |_| 0)
}
