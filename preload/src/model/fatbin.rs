//! A statically registered fat binary, as hipcc-built programs register
//! them (`__hipRegisterFatBinary(wrapper)` once per translation unit, from
//! a constructor): the wrapper read, the bundle's extent taken from its
//! table, and the code object for the device picked and copied once, at
//! the first kernel node that names one of its stubs. The registry of fat
//! binaries and stubs is the state's (`state/registry.rs`), the
//! registration entry points the exports' (`exports/registry.rs`).
//!
//! Facts (public sources, no code taken): the wrapper is `{ u32 magic =
//! 0x48495046 "HIPF", u32 version, const void *binary, void *dummy }`
//! (clang's CGCUDANV.cpp emits it for HIP; `__hipFatBinaryWrapper` in
//! HIP's hip_runtime headers). Refuses version 1 compressed bundles and a
//! wrapper without the HIPF magic (the kernels stay unsupported).

use std::ffi::c_void;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use relaunch::extent::ExtentError;
use relaunch::{CodeObject, GfxTarget, Gpu};

use crate::model::bundle::{self, pointer_reader};
use crate::model::reason::Reason;
use crate::model::shadow::ShadowModule;

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
    pub(crate) extent: Result<u64, Reason>,
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
            Some(w) if w.magic != HIPF_MAGIC => Err(Reason::WrapperMagic {
                magic: w.magic,
                expected: HIPF_MAGIC,
            }),
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

    /// The module for the relaunch device `gpu` gives (called, opening
    /// the device, only the first time); an unsupported module carries the
    /// reason.
    pub fn module(&self, gpu: impl FnOnce() -> Result<Gpu, Reason>) -> Arc<ShadowModule> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use relaunch_testsupport::bundle::assemble;

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
            matches!(err, Reason::WrapperMagic { magic: 0x1234, .. }),
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

    #[test]
    fn the_module_is_picked_once_for_the_device_given() {
        let g1201 = fixture("gfx1201");
        let bundle = assemble(&[("hipv4-amdgcn-amd-amdhsa--gfx1201", &g1201)]);
        let w = wrapped(&bundle, HIPF_MAGIC);
        // SAFETY: `w` and `bundle` outlive `fatbin`.
        let fatbin = unsafe { FatBinary::from_wrapper(&w) };
        let gpu = Gpu::open("sim:gfx1201").unwrap();
        let m = fatbin.module(|| Ok(gpu.clone()));
        assert!(m.code().unwrap().kernel("counter").is_some());
        // Picked once: the device is not asked again.
        let again = fatbin.module(|| panic!("the device is opened once"));
        assert!(Arc::ptr_eq(&m, &again));
        // A device variable registered later stops it from replaying.
        fatbin.taint(Reason::FatBinaryGlobal {
            what: "device variable",
            name: "v".into(),
        });
        assert!(matches!(m.code(), Err(Reason::FatBinaryGlobal { .. })));

        // Without a device, the module carries why.
        // SAFETY: as above.
        let fatbin = unsafe { FatBinary::from_wrapper(&w) };
        let m = fatbin.module(|| Err(Reason::Internal("no device")));
        assert!(matches!(m.code(), Err(Reason::Internal("no device"))));
        // A variable registered before the first node: never picked.
        // SAFETY: as above.
        let fatbin = unsafe { FatBinary::from_wrapper(&w) };
        fatbin.taint(Reason::FatBinaryGlobal {
            what: "texture",
            name: "t".into(),
        });
        let m = fatbin.module(|| panic!("a tainted fat binary opens no device"));
        assert!(m.code().unwrap_err().to_string().contains("texture \"t\""));
    }
}
