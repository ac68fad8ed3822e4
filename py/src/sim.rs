//! `relaunch.sim`: kernel twins written in Python for the simulated device.
//!
//! The simulator runs twins on its queue threads, so the registered closure
//! takes the GIL (`Python::attach`) for each workgroup. Callers that wait on
//! a replay release the GIL first (see `gpu.rs`, `pm4.rs`), so the two never
//! wait on each other. The `Workgroup` object handed to the Python function
//! points at the simulator's workgroup only while that call runs: afterwards
//! every accessor raises HandleError. A memory fault seen by an accessor
//! fails the kernel even if the Python code catches the exception, as the
//! hardware would; a Python exception out of the function is a kernel fault
//! naming it, which the replay reports as ReplayError.

use std::ffi::c_void;
use std::sync::Arc;

use facade::twins::{register_twin, KernelFault, Workgroup as SimWorkgroup};
use parking_lot::Mutex;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::args::{bytes_like, type_name, uint};
use crate::errors::{HandleError, ReplayError};

/// The simulator's workgroup while a Python twin runs (else `None`), and
/// the first fault an accessor saw.
struct Slot {
    wg: Option<WgPtr>,
    fault: Option<KernelFault>,
}

/// `*mut Workgroup<'_>` with its lifetime erased; only dereferenced while
/// the twin call that created it is running (see `with_wg`).
#[derive(Clone, Copy)]
struct WgPtr(*mut c_void);
// SAFETY: the pointer is only dereferenced under the slot's mutex while the
// twin that owns the workgroup is blocked in the Python call; which thread
// does so does not matter to the simulator's `Workgroup` (plain data and a
// reference to thread-safe device memory).
unsafe impl Send for WgPtr {}

/// What one workgroup of a simulated dispatch sees (valid only inside the
/// registered function's call).
#[pyclass(module = "relaunch.sim", frozen)]
pub struct Workgroup {
    slot: Arc<Mutex<Slot>>,
}

impl Workgroup {
    fn with_wg<T>(
        &self,
        f: impl FnOnce(&mut SimWorkgroup<'_>) -> Result<T, KernelFault>,
    ) -> PyResult<T> {
        let mut slot = self.slot.lock();
        let Some(ptr) = slot.wg else {
            return Err(HandleError::new_err(
                "this Workgroup is no longer valid: use it only inside the kernel function it was \
                 passed to, while that call runs",
            ));
        };
        // SAFETY: `ptr` came from the live `&mut Workgroup` of the twin call
        // that is blocked in the Python function right now (the slot is
        // cleared before that call returns); the mutex makes this the only
        // reference in use.
        let wg = unsafe { &mut *ptr.0.cast::<SimWorkgroup<'_>>() };
        f(wg).map_err(|fault| {
            let message = fault.to_string();
            slot.fault.get_or_insert(fault);
            ReplayError::new_err(format!("kernel fault: {message}"))
        })
    }
}

#[pymethods]
impl Workgroup {
    /// The kernarg segment as the dispatch delivered it.
    fn kernarg<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with_wg(|w| w.kernarg().map(<[u8]>::to_vec))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The little-endian u32 kernel argument at byte `offset`.
    fn arg_u32(&self, offset: &Bound<'_, PyAny>) -> PyResult<u32> {
        let offset = uint(offset, "offset", usize::MAX as u64)? as usize;
        self.with_wg(|w| w.arg_u32(offset))
    }

    /// The little-endian u64 kernel argument (e.g. a pointer) at `offset`.
    fn arg_u64(&self, offset: &Bound<'_, PyAny>) -> PyResult<u64> {
        let offset = uint(offset, "offset", usize::MAX as u64)? as usize;
        self.with_wg(|w| w.arg_u64(offset))
    }

    #[getter]
    fn workgroup_id(&self) -> PyResult<(u32, u32, u32)> {
        self.with_wg(|w| Ok(w.workgroup_id()))
            .map(|[x, y, z]| (x, y, z))
    }

    #[getter]
    fn workgroup_size(&self) -> PyResult<(u32, u32, u32)> {
        self.with_wg(|w| Ok(w.workgroup_size()))
            .map(|[x, y, z]| (x, y, z))
    }

    #[getter]
    fn grid_size(&self) -> PyResult<(u32, u32, u32)> {
        self.with_wg(|w| Ok(w.grid_size()))
            .map(|[x, y, z]| (x, y, z))
    }

    /// Checked load of `size` bytes at device address `addr`.
    fn load<'py>(
        &self,
        py: Python<'py>,
        addr: &Bound<'_, PyAny>,
        size: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let addr = uint(addr, "addr", u64::MAX)?;
        // Bounded: a load larger than device memory faults anyway.
        let size = uint(size, "size", 1 << 30)? as usize;
        let data = self.with_wg(|w| {
            let mut out = vec![0u8; size];
            w.load(addr, &mut out)?;
            Ok(out)
        })?;
        Ok(PyBytes::new(py, &data))
    }

    /// Checked scalar load (through the scalar cache, like `s_load`) of
    /// `size` bytes at `addr`: stale when an earlier dispatch wrote them and
    /// no boundary since invalidated the scalar cache.
    fn scalar_load<'py>(
        &self,
        py: Python<'py>,
        addr: &Bound<'_, PyAny>,
        size: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let addr = uint(addr, "addr", u64::MAX)?;
        let size = uint(size, "size", 1 << 30)? as usize;
        let data = self.with_wg(|w| {
            let mut out = vec![0u8; size];
            w.scalar_load(addr, &mut out)?;
            Ok(out)
        })?;
        Ok(PyBytes::new(py, &data))
    }

    /// Checked store of `data` at device address `addr`.
    fn store(&self, addr: &Bound<'_, PyAny>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let addr = uint(addr, "addr", u64::MAX)?;
        let data = bytes_like(data, "data")?;
        self.with_wg(|w| w.store(addr, &data))
    }

    /// Device-scope atomic add at `addr`; returns the previous value.
    fn atomic_add_u32(&self, addr: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<u32> {
        let addr = uint(addr, "addr", u64::MAX)?;
        let value = uint(value, "value", u32::MAX.into())? as u32;
        self.with_wg(|w| w.atomic_add_u32(addr, value))
    }

    fn __repr__(&self) -> String {
        let slot = self.slot.lock();
        if slot.wg.is_some() {
            "<relaunch.sim.Workgroup (running)>".to_string()
        } else {
            "<relaunch.sim.Workgroup (finished)>".to_string()
        }
    }
}

/// Runs the Python function for one workgroup.
fn run_twin(
    name: &str,
    function: &Py<PyAny>,
    wg: &mut SimWorkgroup<'_>,
) -> Result<(), KernelFault> {
    let ptr = WgPtr((wg as *mut SimWorkgroup<'_>).cast::<c_void>());
    let slot = Arc::new(Mutex::new(Slot {
        wg: Some(ptr),
        fault: None,
    }));
    let outcome = Python::attach(|py| {
        let handle = Py::new(
            py,
            Workgroup {
                slot: Arc::clone(&slot),
            },
        )
        .map_err(|e| describe(py, name, &e))?;
        function
            .call1(py, (handle,))
            .map(drop)
            .map_err(|e| describe(py, name, &e))
    });
    let mut slot = slot.lock();
    // From here the workgroup handle refuses every access.
    slot.wg = None;
    match (slot.fault.take(), outcome) {
        (Some(fault), _) => Err(fault),
        (None, Ok(())) => Ok(()),
        (None, Err(message)) => Err(KernelFault::Twin(message)),
    }
}

fn describe(py: Python<'_>, name: &str, e: &PyErr) -> String {
    let kind = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "exception".to_string());
    format!(
        "the Python kernel registered for {name} raised {kind}: {}",
        e.value(py)
    )
}

/// Registers `function(wg)` as the simulated device's kernel for `symbol`
/// (with or without `.kd`), process-wide; it replaces an earlier twin of
/// that name, including relaunch's built-in test-kernel twins.
#[pyfunction]
fn register_kernel(symbol: &Bound<'_, PyAny>, function: &Bound<'_, PyAny>) -> PyResult<()> {
    let symbol = crate::args::text(symbol, "symbol")?;
    if symbol.is_empty() || symbol == ".kd" {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "symbol is empty; pass the kernel's name, e.g. \"counter\"",
        ));
    }
    if !function.is_callable() {
        return Err(PyTypeError::new_err(format!(
            "function must be callable (it gets one Workgroup per call), not {}",
            type_name(function)
        )));
    }
    let function: Py<PyAny> = function.clone().unbind();
    let name = symbol.strip_suffix(".kd").unwrap_or(&symbol).to_string();
    register_twin(&symbol, move |wg: &mut SimWorkgroup<'_>| {
        run_twin(&name, &function, wg)
    });
    Ok(())
}

/// Adds `register_kernel` and `Workgroup` (re-exported by `relaunch.sim`).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(register_kernel, m)?)?;
    m.add_class::<Workgroup>()?;
    Ok(())
}
