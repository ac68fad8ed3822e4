//! When the default device may fall back to the simulator.
//!
//! Only when there is no ROCm runtime to use at all: no HSA library, or
//! no `/dev/kfd` (no amdgpu driver, or a container started without the
//! device) while the library was found by the default search. On a host
//! with ROCr and a GPU that cannot be used (`/dev/kfd` not accessible, a
//! failing or hanging `hsa_init`, a first GPU that is not RDNA) the
//! default fails with the reason: running on the simulator there would
//! hide a real problem behind plausible results.

use std::path::Path;

use relaunch_device::hsa::Runtime;
use relaunch_hsa_sys::{LoadedHsa, HSA_LIB_ENV};

use crate::error::{Error, Result};
use crate::refusal::Refusal;

/// The kernel driver's device node.
const KFD: &str = "/dev/kfd";

/// `Ok(None)`: fall back to the simulator (the reason is logged).
/// `Ok(Some(rt))`: the system runtime, opened. `Err`: ROCr is here but
/// unusable, with the reason.
pub(crate) fn system_runtime() -> Result<Option<Runtime>> {
    let named = std::env::var_os(HSA_LIB_ENV).is_some_and(|v| !v.is_empty());
    let lib = match LoadedHsa::load_shared(None) {
        Ok(lib) => lib,
        Err(e) if !named => {
            tracing::info!("no ROCm runtime library ({e}); using the simulator");
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    // A library named in RELAUNCH_HSA_LIB is the user's choice: no fallback.
    if !named {
        match kfd_state(Path::new(KFD)) {
            KfdState::Missing => {
                tracing::info!("{KFD} does not exist (no amdgpu driver); using the simulator");
                return Ok(None);
            }
            KfdState::Denied(reason) => {
                return Err(Refusal::KfdDenied {
                    path: KFD.into(),
                    reason,
                }
                .into())
            }
            KfdState::Usable => {}
        }
    }
    Runtime::open(lib).map(Some).map_err(|e| {
        Error::from(e)
            .hint(
                "pass --device sim:<target> (or RELAUNCH_DEVICE=sim:<target>) to use the \
                 simulator instead",
            )
            .context("ROCm is installed but no GPU can be used")
    })
}

enum KfdState {
    Missing,
    Denied(String),
    Usable,
}

fn kfd_state(path: &Path) -> KfdState {
    if !path.exists() {
        return KfdState::Missing;
    }
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
    {
        Ok(_) => KfdState::Usable,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            KfdState::Denied(e.to_string())
        }
        // Anything else: let hsa_init say what is wrong.
        Err(_) => KfdState::Usable,
    }
}
