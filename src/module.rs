//! `Module`: a code object loaded on a GPU: the frozen executable (which
//! owns the code in device memory) plus what the reader learned about each
//! kernel (descriptor, kernarg layout, PM4 verdict).

use std::sync::Arc;

use relaunch_device::codeobj::{CodeObject, KernelInfo};
use relaunch_device::hsa::Executable;

use crate::error::{Error, ErrorClass, Result};
use crate::gpu::Gpu;

/// One kernel ready to encode: its descriptor and where it was loaded.
#[derive(Debug, Clone)]
pub struct LoadedKernel {
    pub info: KernelInfo,
    /// GPU virtual address of the loaded `.kd` descriptor.
    pub kd_address: u64,
}

pub(crate) struct ModuleInner {
    pub(crate) gpu: Gpu,
    pub(crate) code: CodeObject,
    pub(crate) executable: Executable,
    /// Id in graphs, assigned on first use (`Module::graph_id`).
    pub(crate) graph_id: std::sync::OnceLock<u64>,
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
    pub fn load_module(&self, bytes: &[u8]) -> Result<Module> {
        let target = self.target().to_string();
        let code = CodeObject::from_bundle_or_elf(bytes, Some(&target))
            .map_err(|e| Error::record(format!("loading module: {e}")))?;
        if code.target().processor() != self.target().processor() {
            return Err(Error::record(format!(
                "loading module: code object is for {}, this device is {}; build it for {} \
                 (or pass a bundle containing that target)",
                code.target(),
                self.target(),
                self.target().processor()
            )));
        }
        let executable = self
            .inner
            .runtime
            .load_executable(&self.inner.agent, code.bytes())
            .map_err(|e| Error::record(format!("loading module: {e}")))?;
        Ok(Module {
            inner: Arc::new(ModuleInner {
                gpu: self.clone(),
                code,
                executable,
                graph_id: std::sync::OnceLock::new(),
            }),
        })
    }

    /// `load_module` with a certification manifest. Certification (proof
    /// that a kernel reads mutable data only through vector memory) is not
    /// built yet, so every manifest is refused with that reason.
    pub fn load_module_certified(&self, _bytes: &[u8], manifest: &[u8]) -> Result<Module> {
        Err(Error::new(
            ErrorClass::Certification,
            format!(
                "module certification is not supported yet (got a {}-byte manifest); load the \
                 module without one: consumers then get the generic RMW boundary",
                manifest.len()
            ),
        ))
    }
}

impl Module {
    /// The GPU this module was loaded on.
    pub fn gpu(&self) -> &Gpu {
        &self.inner.gpu
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
        let info = self.kernel_info(symbol).ok_or_else(|| {
            let names: Vec<&str> = self.kernels().iter().map(|k| k.name.as_str()).collect();
            Error::record(format!(
                "module has no kernel {symbol:?}; it has: {}",
                names.join(", ")
            ))
        })?;
        if !info.verdict.accepted() {
            return Err(Error::record(format!(
                "kernel {} cannot run on the direct PM4 path: {}",
                info.name, info.verdict
            )));
        }
        let symbol = self
            .inner
            .executable
            .kernel(&info.name)
            .map_err(|e| Error::record(format!("kernel {}: {e}", info.name)))?;
        Ok(LoadedKernel {
            info: info.clone(),
            kd_address: symbol.kernel_object,
        })
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
            .ok_or_else(|| Error::record(format!("module has no kernel {symbol:?}")))?;
        crate::pack_kernargs(info, explicit, geometry).map_err(Error::record)
    }

    /// True when both handles are the same loaded module.
    pub fn same_as(&self, other: &Module) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
