//! `Module`: a code object loaded on a GPU: the frozen executable (which
//! owns the code in device memory) plus what the reader learned about each
//! kernel (descriptor, kernarg layout, PM4 verdict).

use std::sync::Arc;

use relaunch_device::codeobj::certify::{self, Certificate, ReadCache};
use relaunch_device::codeobj::{CodeObject, KernelInfo};
use relaunch_device::hsa::Executable;

use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::refusal::Refusal;

/// One kernel ready to encode: its descriptor and where it was loaded.
#[derive(Debug, Clone)]
pub struct LoadedKernel {
    pub info: KernelInfo,
    /// GPU virtual address of the loaded `.kd` descriptor.
    pub kd_address: u64,
}

pub(crate) struct ModuleInner {
    pub(crate) code: CodeObject,
    /// Where the code was loaded: the HSA runtime or HIP.
    pub(crate) loaded: Loaded,
    /// relaunch's own proof per kernel (same order as `code.kernels()`);
    /// empty when certification was turned off for this load.
    pub(crate) certs: Vec<Certificate>,
    /// Set when a manifest bound to these bytes was accepted.
    pub(crate) manifest: Option<crate::manifest::ManifestFacts>,
    /// Id in graphs, assigned on first use (`Module::graph_id`).
    pub(crate) graph_id: std::sync::OnceLock<u64>,
}

/// Who loaded a module's code.
pub(crate) enum Loaded {
    /// Frozen into an HSA executable on a GPU (the PM4 and AQL paths).
    Hsa { gpu: Gpu, executable: Executable },
    /// A HIP module (HIP multistream fallback only).
    Hip(crate::hip_streams::HipModule),
}

/// A loaded module. Cheap to clone; IBs that use it keep it alive, so
/// dropping the last user handle while an IB exists frees nothing early.
#[derive(Clone)]
pub struct Module {
    pub(crate) inner: Arc<ModuleInner>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("target", &self.inner.code.target().to_string())
            .field("kernels", &self.inner.code.kernels().len())
            .finish()
    }
}

impl Gpu {
    /// Loads a code object (ELF, or a clang offload bundle from which this
    /// GPU's entry is taken). A code object for another target is refused.
    /// Every kernel is certified (see [`LoadOptions`]).
    pub fn load_module(&self, bytes: &[u8]) -> Result<Module> {
        self.load_module_with(bytes, &LoadOptions::default())
    }

    /// `load_module` with explicit options.
    pub fn load_module_with(&self, bytes: &[u8], options: &LoadOptions) -> Result<Module> {
        self.load(bytes, options, None)
    }

    /// `load_module` with a certification manifest (relaunch's, from
    /// `relaunch certify`, or the reference system's shape). The manifest
    /// must bind to these exact bytes and this device's target, else the
    /// load is refused (`ErrorClass::Certification`, naming the field). It
    /// never widens what relaunch's own proof allows: a kernel is VMEM-only
    /// only when the proof says so.
    pub fn load_module_certified(&self, bytes: &[u8], manifest: &[u8]) -> Result<Module> {
        self.load(bytes, &LoadOptions::default(), Some(manifest))
    }

    fn load(&self, bytes: &[u8], options: &LoadOptions, manifest: Option<&[u8]>) -> Result<Module> {
        let target = self.target().to_string();
        let code = CodeObject::from_bundle_or_elf(bytes, Some(&target))
            .map_err(|e| Error::from(e).context("loading module"))?;
        if code.target().processor() != self.target().processor() {
            return Err(Error::from(Refusal::CodeObjectTarget {
                code: code.target().to_string(),
                device: self.target().to_string(),
                processor: self.target().processor().to_string(),
            })
            .context("loading module"));
        }
        let certs = if options.certify {
            certify::certify(&code)
        } else {
            Vec::new()
        };
        // The manifest binds to the bytes given (a bundle's hash is the
        // bundle's), and its claims are checked against the proof.
        let manifest = match manifest {
            Some(m) => Some(crate::manifest::verify(m, bytes, &code, &certs)?),
            None => None,
        };
        let executable = self
            .inner
            .runtime
            .load_executable(&self.inner.agent, code.bytes())
            .map_err(|e| Error::Load(e).context("loading module"))?;
        Ok(Module {
            inner: Arc::new(ModuleInner {
                code,
                loaded: Loaded::Hsa {
                    gpu: self.clone(),
                    executable,
                },
                certs,
                manifest,
                graph_id: std::sync::OnceLock::new(),
            }),
        })
    }
}

/// Environment variable that turns certification off for every load
/// (`RELAUNCH_CERTIFY=0`): every consumer then gets the full RMW boundary.
pub const CERTIFY_ENV: &str = "RELAUNCH_CERTIFY";

/// How a module is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadOptions {
    /// Prove per kernel whether it reads mutable data only through vector
    /// memory, so boundaries before it may keep the scalar cache. Default:
    /// on, unless `RELAUNCH_CERTIFY=0`.
    pub certify: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        let off = std::env::var(CERTIFY_ENV)
            .map(|v| matches!(v.trim(), "0" | "off" | "no" | "false"))
            .unwrap_or(false);
        LoadOptions { certify: !off }
    }
}

impl Module {
    /// The GPU this module was loaded on (`None` for a HIP module).
    pub fn gpu(&self) -> Option<&Gpu> {
        match &self.inner.loaded {
            Loaded::Hsa { gpu, .. } => Some(gpu),
            Loaded::Hip(_) => None,
        }
    }

    /// The HIP device this module was loaded on through
    /// [`crate::HipDevice::load_module`] (`None` for an HSA module).
    pub fn hip_device(&self) -> Option<&crate::HipDevice> {
        match &self.inner.loaded {
            Loaded::Hip(m) => Some(m.device()),
            Loaded::Hsa { .. } => None,
        }
    }

    /// True for a module loaded through HIP.
    pub fn is_hip(&self) -> bool {
        matches!(self.inner.loaded, Loaded::Hip(_))
    }

    /// Every kernel the code object holds.
    pub fn kernels(&self) -> &[KernelInfo] {
        self.inner.code.kernels()
    }

    /// A kernel by name, with or without the `.kd` suffix.
    pub fn kernel_info(&self, symbol: &str) -> Option<&KernelInfo> {
        let name = symbol.strip_suffix(".kd").unwrap_or(symbol);
        self.inner.code.kernel(name)
    }

    /// Kernarg segment size of `symbol`, or `None` if the module lacks it.
    pub fn kernarg_size(&self, symbol: &str) -> Option<u32> {
        self.kernel_info(symbol).map(|k| k.kernarg_size)
    }

    /// The kernel ready to encode: refused when the PM4 verdict refuses it.
    pub fn kernel(&self, symbol: &str) -> Result<LoadedKernel> {
        let kernel = self.loaded_kernel(symbol)?;
        let verdict = relaunch_encoders::verdict::kernel_verdict(&kernel.info);
        if !verdict.accepted() {
            // The compile class, as the reference C ABI reports "PM4
            // compilation rejects the kernel".
            return Err(Error::kernel_refused(
                &kernel.info.name,
                relaunch_encoders::error::join(&verdict.refusals),
                format!(
                    "kernel {} cannot run on the direct PM4 path: {verdict}",
                    kernel.info.name
                ),
            ));
        }
        Ok(kernel)
    }

    /// The kernel as loaded, whatever the PM4 verdict says (a graph node
    /// whose kernel the PM4 path refuses runs as public AQL, see
    /// [`crate::Submission`]).
    pub fn loaded_kernel(&self, symbol: &str) -> Result<LoadedKernel> {
        let info = self
            .kernel_info(symbol)
            .ok_or_else(|| self.unknown_kernel(symbol))?;
        let executable = match &self.inner.loaded {
            Loaded::Hsa { executable, .. } => executable,
            Loaded::Hip(m) => {
                return Err(Refusal::HipOnlyKernel {
                    kernel: info.name.clone(),
                    device: m.device().describe(),
                }
                .into())
            }
        };
        let symbol = executable
            .kernel(&info.name)
            .map_err(|e| Error::Load(e).context(format!("kernel {}", info.name)))?;
        Ok(LoadedKernel {
            info: info.clone(),
            kd_address: symbol.kernel_object,
        })
    }

    /// The metadata of `symbol` for a graph node, checked against where
    /// the module was loaded (the executable's symbol, or HIP's function).
    pub(crate) fn graph_kernel(&self, symbol: &str) -> Result<KernelInfo> {
        match &self.inner.loaded {
            Loaded::Hsa { .. } => Ok(self.loaded_kernel(symbol)?.info),
            Loaded::Hip(_) => {
                self.hip_function(symbol)?;
                Ok(self
                    .kernel_info(symbol)
                    .expect("found by hip_function")
                    .clone())
            }
        }
    }

    /// HIP's function for `symbol` of a HIP module.
    pub(crate) fn hip_function(&self, symbol: &str) -> Result<*mut std::ffi::c_void> {
        let Loaded::Hip(m) = &self.inner.loaded else {
            return Err(Refusal::NotAHipModule {
                symbol: symbol.to_string(),
            }
            .into());
        };
        let name = symbol.strip_suffix(".kd").unwrap_or(symbol);
        self.kernels()
            .iter()
            .position(|k| k.name == name)
            .and_then(|i| m.function(i))
            .ok_or_else(|| self.unknown_kernel(symbol).into())
    }

    /// The refusal of a symbol this module does not hold, listing those it
    /// does (front ends asking for a kernel by name refuse with it too).
    pub fn unknown_kernel(&self, symbol: &str) -> Refusal {
        Refusal::UnknownKernel {
            symbol: symbol.to_string(),
            known: self.kernels().iter().map(|k| k.name.clone()).collect(),
        }
    }

    /// The kernarg segment of `symbol` for one launch: `explicit` arguments
    /// as packed by the caller, hidden ones filled from `geometry`.
    pub fn pack_kernargs(
        &self,
        symbol: &str,
        explicit: &[u8],
        geometry: &crate::Geometry,
    ) -> Result<Vec<u8>> {
        let info = self
            .kernel_info(symbol)
            .ok_or_else(|| self.unknown_kernel(symbol))?;
        Ok(crate::pack_kernargs(info, explicit, geometry)?)
    }

    /// relaunch's certificate for a kernel (None: unknown kernel, or
    /// certification was off for this load).
    pub fn certificate(&self, symbol: &str) -> Option<&Certificate> {
        let name = symbol.strip_suffix(".kd").unwrap_or(symbol);
        let pos = self.kernels().iter().position(|k| k.name == name)?;
        self.inner.certs.get(pos)
    }

    /// Every certificate (empty when certification was off).
    pub fn certificates(&self) -> &[Certificate] {
        &self.inner.certs
    }

    /// What `symbol` may read through the scalar cache, per relaunch's own
    /// proof. Unknown kernels and loads without certification are
    /// `ScalarOrUnknown` (fail closed).
    pub fn read_cache(&self, symbol: &str) -> ReadCache {
        self.certificate(symbol)
            .map_or(ReadCache::ScalarOrUnknown, |c| c.read_cache)
    }

    /// True when the module was loaded with an accepted manifest.
    pub fn radiowave_certified(&self) -> bool {
        self.inner.manifest.is_some()
    }

    /// The manifest's scheduler profile (Unknown without one).
    pub fn scheduler_profile(&self) -> crate::manifest::SchedulerProfile {
        self.inner
            .manifest
            .as_ref()
            .map_or(Default::default(), |m| m.scheduler_profile)
    }

    /// Kernels whose manifest claim of vmem_only the proof overrode.
    pub fn overridden_claims(&self) -> &[String] {
        self.inner.manifest.as_ref().map_or(&[], |m| &m.overridden)
    }

    /// The module's wavefront size (its kernels', which a code object built
    /// for one target shares; the first kernel's if they differ), 0 for a
    /// module without kernels.
    pub fn wavefront_size(&self) -> u32 {
        self.kernels().first().map_or(0, |k| k.wavefront_size)
    }

    /// True when both handles are the same loaded module.
    pub fn same_as(&self, other: &Module) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
