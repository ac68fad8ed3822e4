//! The relaunch device, opened once per GPU: the one the application's
//! current HIP device is (by PCI address), so replays run where its memory
//! lives.

use std::collections::HashMap;
use std::ffi::{c_char, CStr};
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;
use relaunch::{Bdf, Gpu};

use crate::hip::{real, HIP_SUCCESS};
use crate::model::reason::Reason;

/// The relaunch device for the application's current HIP device: the GPU
/// at the PCI address HIP reports for it (`hipGetDevice`,
/// `hipDeviceGetPCIBusId`), so a replay runs where the application's
/// memory lives. `RELAUNCH_DEVICE`, when set, must name that same GPU: a
/// mismatch is refused (graphs fall through) rather than replayed on
/// another board. Without those two HIP calls, `Gpu::open_default` (which
/// honours `RELAUNCH_DEVICE`). Opened once per PCI address.
pub fn gpu() -> Result<Gpu, Reason> {
    static GPUS: LazyLock<Mutex<HashMap<String, Result<Gpu, Reason>>>> =
        LazyLock::new(Default::default);
    let hip = hip_current_bdf();
    let key = hip.map_or_else(|| "default".to_string(), |b| b.to_string());
    let mut gpus = GPUS.lock();
    if let Some(known) = gpus.get(&key) {
        return known.clone();
    }
    let opened = open_for(hip).inspect_err(|why| {
        tracing::error!("{why}; every hipGraph on it falls through to the real HIP");
    });
    gpus.insert(key, opened.clone());
    opened
}

fn open_for(hip: Option<Bdf>) -> Result<Gpu, Reason> {
    let Some(hip) = hip else {
        tracing::warn!(
            "the real HIP does not say which GPU is current (hipGetDevice / \
             hipDeviceGetPCIBusId); using RELAUNCH_DEVICE or the first GPU"
        );
        return Gpu::open_default().map_err(opening);
    };
    let named = std::env::var(relaunch::DEVICE_ENV)
        .ok()
        .filter(|s| !s.trim().is_empty());
    let Some(selector) = named else {
        return Gpu::open(&format!("bdf:{hip}")).map_err(opening);
    };
    let gpu = Gpu::open(selector.trim()).map_err(opening)?;
    match gpu.pci_address() {
        Some(at) if at == hip => Ok(gpu),
        at => Err(Reason::DeviceMismatch { selector, at, hip }),
    }
}

fn opening(e: relaunch::Error) -> Reason {
    Reason::OpenDevice(Arc::new(e))
}

/// The PCI address of HIP's current device, if the real HIP says.
fn hip_current_bdf() -> Option<Bdf> {
    let (get, bus_id) = (real::hipGetDevice()?, real::hipDeviceGetPCIBusId()?);
    let mut ordinal = 0i32;
    // SAFETY: a valid out-pointer.
    if unsafe { get(&mut ordinal) } != HIP_SUCCESS {
        return None;
    }
    let mut text = [0 as c_char; 64];
    // SAFETY: a writable buffer of the length passed.
    if unsafe { bus_id(text.as_mut_ptr(), text.len() as i32, ordinal) } != HIP_SUCCESS {
        return None;
    }
    // SAFETY: NUL-terminated within the buffer (HIP writes a C string
    // shorter than `len`; the last byte is forced to NUL anyway).
    text[text.len() - 1] = 0;
    let text = unsafe { CStr::from_ptr(text.as_ptr()) }.to_string_lossy();
    Bdf::parse(text.trim()).ok().map(|(b, _)| b)
}
