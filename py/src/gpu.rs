//! `Gpu`, `Buffer` and `Module`: thin wrappers over the facade's device,
//! memory and module handles. Calls that can block, or that run kernel
//! twins (which take the GIL on a simulator thread), release the GIL first.

use std::sync::Arc;

use facade::{Geometry, QueuePolicy};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crate::args::{bytes_like, dims, opt_uint, type_name, uint};
use crate::errors::call;
use crate::pm4::{build_ib, Pm4Ib};

/// An opened GPU (real, or simulated with a `sim:` selector).
#[pyclass(module = "relaunch", frozen)]
pub struct Gpu {
    pub(crate) gpu: facade::Gpu,
}

#[pymethods]
impl Gpu {
    #[new]
    #[pyo3(signature = (selector_or_ordinal = None))]
    fn new(py: Python<'_>, selector_or_ordinal: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        enum Pick {
            Default,
            Selector(String),
            Ordinal(i32),
        }
        let pick = match selector_or_ordinal {
            None => Pick::Default,
            Some(obj) if obj.is_none() => Pick::Default,
            Some(obj) if obj.is_instance_of::<PyString>() => {
                Pick::Selector(obj.extract::<String>()?)
            }
            Some(obj)
                if obj.is_instance_of::<pyo3::types::PyInt>()
                    && !obj.is_instance_of::<pyo3::types::PyBool>() =>
            {
                let ordinal: i64 = obj.extract()?;
                let ordinal = i32::try_from(ordinal).map_err(|_| {
                    PyValueError::new_err(format!("device ordinal {ordinal} is out of range"))
                })?;
                Pick::Ordinal(ordinal)
            }
            Some(obj) => {
                return Err(PyTypeError::new_err(format!(
                    "Gpu() takes a selector str (e.g. 'sim:gfx1201', 'uuid:GPU-...'), an int \
                     ordinal or None, not {}",
                    type_name(obj)
                )))
            }
        };
        let gpu = py.detach(|| {
            call("Gpu()", || match pick {
                Pick::Default => facade::Gpu::open_default(),
                Pick::Selector(s) => facade::Gpu::open(&s),
                Pick::Ordinal(i) => facade::Gpu::open_index(i),
            })
        })?;
        Ok(Gpu { gpu })
    }

    /// One line naming the device by its stable anchors.
    fn describe(&self) -> String {
        self.gpu.describe().to_string()
    }

    /// The GPU target, e.g. `gfx1201`.
    #[getter]
    fn target(&self) -> String {
        self.gpu.target().to_string()
    }

    /// True on the simulated device.
    #[getter]
    fn simulated(&self) -> bool {
        self.gpu.is_simulated()
    }

    #[pyo3(signature = (code, manifest = None))]
    fn load_module(
        &self,
        py: Python<'_>,
        code: &Bound<'_, PyAny>,
        manifest: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Module> {
        let code = bytes_like(code, "code")?;
        let manifest = match manifest {
            // The reference module takes the JSON manifest as text too.
            Some(m) if m.is_instance_of::<PyString>() => Some(m.extract::<String>()?.into_bytes()),
            Some(m) if !m.is_none() => Some(bytes_like(m, "manifest")?),
            _ => None,
        };
        let gpu = &self.gpu;
        let module = py.detach(|| {
            call("Gpu.load_module", || match &manifest {
                None => gpu.load_module(&code),
                Some(m) => gpu.load_module_certified(&code, m),
            })
        })?;
        Ok(Module { module })
    }

    /// The bundle tree at `root` for this GPU (see `Catalog`).
    fn catalog(
        &self,
        py: Python<'_>,
        root: std::path::PathBuf,
    ) -> PyResult<crate::catalog::Catalog> {
        crate::catalog::open(py, &self.gpu, &root)
    }

    #[pyo3(signature = (size, host_visible = true))]
    fn alloc(
        &self,
        py: Python<'_>,
        size: &Bound<'_, PyAny>,
        host_visible: bool,
    ) -> PyResult<Buffer> {
        let size = uint(size, "size", isize::MAX as u64)? as usize;
        let gpu = &self.gpu;
        let buffer = py.detach(|| call("Gpu.alloc", || gpu.alloc(size, host_visible)))?;
        Ok(Buffer {
            buffer: Arc::new(buffer),
            host_visible,
        })
    }

    /// Device-local memory (`alloc(size, host_visible=False)`), as the
    /// reference module spells it.
    fn alloc_device(&self, py: Python<'_>, size: &Bound<'_, PyAny>) -> PyResult<Buffer> {
        self.alloc(py, size, false)
    }

    /// Records `dispatches` into one retained IB and installs it
    /// (`profile`: None, "span" or "dispatches", see `Pm4Ib.replay_profiled`).
    #[pyo3(signature = (module, dispatches, profile = None))]
    fn build(
        &self,
        py: Python<'_>,
        module: &Bound<'_, Module>,
        dispatches: &Bound<'_, PyAny>,
        profile: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Pm4Ib> {
        build_ib(py, &self.gpu, &module.get().module, dispatches, profile)
    }

    #[pyo3(signature = (width, policy = None))]
    fn pm4_queue_count(
        &self,
        width: &Bound<'_, PyAny>,
        policy: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        let width = uint(width, "width", 1 << 20)? as usize;
        let policy = queue_policy(policy)?;
        Ok(self.gpu.pm4_queue_count(policy, width))
    }

    fn __repr__(&self) -> String {
        format!("<relaunch.Gpu {}>", self.gpu.describe())
    }
}

/// `"auto"` (or None) or a fixed queue count 1-4.
fn queue_policy(policy: Option<&Bound<'_, PyAny>>) -> PyResult<QueuePolicy> {
    let Some(policy) = policy.filter(|p| !p.is_none()) else {
        return Ok(QueuePolicy::Auto);
    };
    if let Ok(s) = policy.cast::<PyString>() {
        let s: String = s.extract()?;
        if s.eq_ignore_ascii_case("auto") {
            return Ok(QueuePolicy::Auto);
        }
        return Err(PyValueError::new_err(format!(
            "policy {s:?} is not known; use \"auto\" or a queue count 1-4"
        )));
    }
    let n = uint(policy, "policy", 4)?;
    if n == 0 {
        return Err(PyValueError::new_err(
            "policy 0 is not a queue count; use \"auto\" or 1-4",
        ));
    }
    Ok(QueuePolicy::Fixed(n as u8))
}

/// Memory allocated on a GPU; freed when the last reference goes.
#[pyclass(module = "relaunch", frozen)]
pub struct Buffer {
    pub(crate) buffer: Arc<facade::DeviceBuffer>,
    host_visible: bool,
}

#[pymethods]
impl Buffer {
    /// The GPU virtual address (put it in kernargs).
    fn address(&self) -> u64 {
        self.buffer.address()
    }

    fn __len__(&self) -> usize {
        self.buffer.len()
    }

    /// True for host-visible (fine-grained) memory.
    #[getter]
    fn host_visible(&self) -> bool {
        self.host_visible
    }

    fn read_u32(&self, py: Python<'_>, offset: &Bound<'_, PyAny>) -> PyResult<u32> {
        let offset = uint(offset, "offset", isize::MAX as u64)? as usize;
        let b = &self.buffer;
        py.detach(|| call("Buffer.read_u32", || b.read_u32(offset)))
    }

    /// `count` consecutive u32 values from byte `offset`.
    fn read_u32s(
        &self,
        py: Python<'_>,
        offset: &Bound<'_, PyAny>,
        count: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<u32>> {
        let len = self.buffer.len();
        let offset = uint(offset, "offset", len as u64)? as usize;
        let count = uint(count, "count", ((len - offset) / 4) as u64)? as usize;
        let b = &self.buffer;
        py.detach(|| {
            call("Buffer.read_u32s", || {
                let mut out = vec![0u8; count * 4];
                b.read(offset, &mut out)?;
                Ok(out
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect())
            })
        })
    }

    #[pyo3(signature = (offset = None, size = None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        offset: Option<&Bound<'_, PyAny>>,
        size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let len = self.buffer.len();
        let offset = match offset {
            Some(o) if !o.is_none() => uint(o, "offset", len as u64)? as usize,
            _ => 0,
        };
        let size = match size {
            Some(s) if !s.is_none() => uint(s, "size", (len - offset) as u64)? as usize,
            _ => len - offset,
        };
        let b = &self.buffer;
        let data = py.detach(|| {
            call("Buffer.read", || {
                let mut out = vec![0u8; size];
                b.read(offset, &mut out)?;
                Ok(out)
            })
        })?;
        Ok(PyBytes::new(py, &data))
    }

    #[pyo3(signature = (offset, data))]
    fn write(
        &self,
        py: Python<'_>,
        offset: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let offset = uint(offset, "offset", isize::MAX as u64)? as usize;
        let data = bytes_like(data, "data")?;
        let b = &self.buffer;
        py.detach(|| call("Buffer.write", || b.write(offset, &data)))
    }

    /// The buffer protocol (`memoryview(buf)`): a writable view of
    /// host-visible memory, no copy. Device-local memory has no host view.
    ///
    /// # Safety
    /// Called by Python with a `view` to fill (CPython's contract).
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut pyo3::ffi::Py_buffer,
        flags: std::os::raw::c_int,
    ) -> PyResult<()> {
        let buffer = &slf.get().buffer;
        let ptr = buffer.host_ptr().ok_or_else(|| {
            PyBufferError::new_err(
                "device-local memory has no host view; use read()/write(), or alloc(..., host_visible=True)",
            )
        })?;
        let len = isize::try_from(buffer.len())
            .map_err(|_| PyBufferError::new_err("buffer too large for a memoryview"))?;
        // SAFETY: `view` is CPython's to fill; `ptr..ptr+len` is the live
        // host allocation, kept alive by the reference to `slf` that
        // PyBuffer_FillInfo stores in `view.obj`; the view is writable, and
        // overlapping a replay is the caller's to avoid, as for `write`.
        let rc =
            unsafe { pyo3::ffi::PyBuffer_FillInfo(view, slf.as_ptr(), ptr.cast(), len, 0, flags) };
        if rc != 0 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    /// Nothing to release: `view.obj` holds the reference that kept the
    /// memory alive, and CPython drops it.
    ///
    /// # Safety
    /// CPython's contract.
    unsafe fn __releasebuffer__(&self, _view: *mut pyo3::ffi::Py_buffer) {}

    fn __bytes__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.read(py, None, None)
    }

    fn __repr__(&self) -> String {
        format!(
            "<relaunch.Buffer {} bytes at {:#x}{}>",
            self.buffer.len(),
            self.buffer.address(),
            if self.host_visible {
                ", host-visible"
            } else {
                ""
            }
        )
    }
}

/// A code object loaded on a GPU.
#[pyclass(module = "relaunch", frozen)]
pub struct Module {
    pub(crate) module: facade::Module,
}

#[pymethods]
impl Module {
    /// Kernarg segment size of `symbol` (with or without `.kd`).
    fn kernarg_size(&self, symbol: &str) -> PyResult<u32> {
        self.module
            .kernarg_size(symbol)
            .ok_or_else(|| crate::errors::to_py(self.module.unknown_kernel(symbol).into()))
    }

    /// Names of the kernels in the module.
    #[getter]
    fn kernels(&self) -> Vec<String> {
        self.kernel_names()
    }

    /// True when the module was loaded with an accepted manifest.
    #[getter]
    fn radiowave_certified(&self) -> bool {
        self.module.radiowave_certified()
    }

    /// The manifest's scheduler profile (snake_case, "unknown" without one).
    #[getter]
    fn scheduler_profile(&self) -> &'static str {
        use facade::SchedulerProfile as P;
        match self.module.scheduler_profile() {
            P::Unknown => "unknown",
            P::Default => "default",
            P::MaxIlp => "max_ilp",
            P::IterativeIlp => "iterative_ilp",
            P::MemoryClause => "memory_clause",
            P::PipelineIlp => "pipeline_ilp",
        }
    }

    /// The module's real wavefront size (32 or 64).
    #[getter]
    fn wavefront_size(&self) -> u32 {
        self.module.wavefront_size()
    }

    /// relaunch's proof for `symbol`: "vmem_only" or "scalar_or_unknown"
    /// (also for an unknown symbol: fail closed).
    fn mutable_read_cache(&self, symbol: &str) -> &'static str {
        self.module.read_cache(symbol).as_str()
    }

    /// The full kernarg segment of `symbol` for one launch.
    #[pyo3(signature = (symbol, explicit, grid, block, dynamic_group_bytes = None))]
    fn pack_kernargs<'py>(
        &self,
        py: Python<'py>,
        symbol: &str,
        explicit: &Bound<'_, PyAny>,
        grid: &Bound<'_, PyAny>,
        block: &Bound<'_, PyAny>,
        dynamic_group_bytes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let explicit = bytes_like(explicit, "explicit")?;
        let geometry = Geometry {
            grid: dims(grid, "grid")?,
            block: dims(block, "block")?,
            dynamic_group_bytes: opt_uint(
                dynamic_group_bytes,
                "dynamic_group_bytes",
                u32::MAX.into(),
                0,
            )? as u32,
        };
        let packed = call("Module.pack_kernargs", || {
            self.module.pack_kernargs(symbol, &explicit, &geometry)
        })?;
        Ok(PyBytes::new(py, &packed))
    }

    /// Every kernel's facts: name, kernarg size, PM4 verdict.
    fn describe<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.module
            .kernels()
            .iter()
            .map(|k| {
                let d = PyDict::new(py);
                d.set_item("name", &k.name)?;
                d.set_item("kernarg_size", k.kernarg_size)?;
                let verdict = facade::kernel_verdict(k);
                d.set_item("accepted", verdict.accepted())?;
                d.set_item("verdict", verdict.to_string())?;
                Ok(d)
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        format!("<relaunch.Module kernels={:?}>", self.kernel_names())
    }
}

impl Module {
    fn kernel_names(&self) -> Vec<String> {
        self.module
            .kernels()
            .iter()
            .map(|k| k.name.clone())
            .collect()
    }
}
