//! The one place a facade error becomes a Python exception: each
//! `relaunch::ErrorClass` maps to one subclass of `relaunch.Error`, and
//! every facade call goes through `call`, which also turns a panic into an
//! exception (panics never unwind into the interpreter).

use std::panic::{catch_unwind, AssertUnwindSafe};

use facade::{Error as FacadeError, ErrorClass};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    relaunch,
    Error,
    PyException,
    "Base class of every error relaunch raises (a class plus a message that says what to do)."
);
create_exception!(
    relaunch,
    RecordError,
    Error,
    "Recording a graph, an IB, a module load or an allocation was refused."
);
create_exception!(
    relaunch,
    CompileError,
    Error,
    "Instantiating or finalizing was refused (hazards are listed in the message)."
);
create_exception!(
    relaunch,
    ReplayError,
    Error,
    "A replay failed: queue fault, kernel fault, timeout or simulator violation."
);
create_exception!(
    relaunch,
    HandleError,
    Error,
    "An object was used with another GPU or graph than the one it belongs to."
);
create_exception!(
    relaunch,
    CertificationError,
    Error,
    "Certification of a module was refused."
);
create_exception!(
    relaunch,
    DeviceError,
    Error,
    "No such device, a denied device, an ambiguous or malformed selector."
);

create_exception!(
    relaunch,
    DeviceLostError,
    DeviceError,
    "The GPU is lost to this process: a memory (VM) fault was reported for it and \
     the driver stopped its queues; the message names the fault. Other GPUs keep working."
);

/// One unordered pair of accesses a refused graph holds
/// (`CompileError.hazards`).
#[pyclass(module = "relaunch", frozen, get_all)]
pub struct Hazard {
    /// `"RAW"`, `"WAR"`, `"WAW"` or `"ORDER"`.
    kind: String,
    /// The buffer's id and label (the resource both nodes touch).
    buffer: u32,
    buffer_label: String,
    /// The overlapping byte range, `(start, end)`.
    range: (u64, u64),
    /// The two nodes, by id and kernel name.
    first: u32,
    first_name: String,
    second: u32,
    second_name: String,
}

#[pymethods]
impl Hazard {
    fn __repr__(&self) -> String {
        format!(
            "Hazard({} on {:?} [{}, {}): node {} {:?} and node {} {:?})",
            self.kind,
            self.buffer_label,
            self.range.0,
            self.range.1,
            self.first,
            self.first_name,
            self.second,
            self.second_name
        )
    }
}

impl Hazard {
    fn of(h: &facade::Hazard) -> Hazard {
        Hazard {
            kind: h.kind.to_string(),
            buffer: h.buffer,
            buffer_label: h.buffer_label.clone(),
            range: h.range,
            first: h.first,
            first_name: h.first_name.clone(),
            second: h.second,
            second_name: h.second_name.clone(),
        }
    }
}

/// The exception for a facade error (the only mapping from classes), with
/// the error's data as attributes: `CompileError.hazards` / `.truncated`
/// and `.kernel` / `.reason` (a refused kernel), `DeviceLostError.address`.
pub fn to_py(e: FacadeError) -> PyErr {
    let err = exception_of(&e);
    Python::attach(|py| {
        if let Err(failed) = attach(py, &err, &e) {
            // The exception stays right without its data; say why.
            eprintln!(
                "relaunch: warning: could not attach the error's data to the exception: {failed}"
            );
        }
    });
    err
}

fn attach(py: Python<'_>, err: &PyErr, e: &FacadeError) -> PyResult<()> {
    let value = err.value(py);
    if let Some((hazards, truncated)) = e.hazards() {
        let list: Vec<Hazard> = hazards.iter().map(Hazard::of).collect();
        value.setattr("hazards", pyo3::types::PyTuple::new(py, list)?)?;
        value.setattr("truncated", truncated)?;
    }
    if let Some((kernel, reason)) = e.refused_kernel() {
        value.setattr("kernel", kernel)?;
        value.setattr("reason", reason)?;
    }
    if let Some(address) = e.lost_address() {
        value.setattr("address", address)?;
    }
    Ok(())
}

fn exception_of(e: &FacadeError) -> PyErr {
    let message = e.message().to_string();
    match e.class() {
        ErrorClass::Record => RecordError::new_err(message),
        ErrorClass::Compile => CompileError::new_err(message),
        ErrorClass::Replay => ReplayError::new_err(message),
        ErrorClass::Handle => HandleError::new_err(message),
        ErrorClass::Certification => CertificationError::new_err(message),
        ErrorClass::Device => DeviceError::new_err(message),
        ErrorClass::DeviceLost => DeviceLostError::new_err(message),
        // Front-end argument classes: Python's own exceptions.
        ErrorClass::Null => PyTypeError::new_err(message),
        ErrorClass::Utf8 => PyValueError::new_err(message),
        ErrorClass::Internal => Error::new_err(format!("internal error: {message}")),
    }
}

/// Runs a facade call, mapping its error and catching a panic.
pub fn call<T>(what: &str, f: impl FnOnce() -> Result<T, FacadeError>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result.map_err(to_py),
        Err(panic) => Err(Error::new_err(format!(
            "internal error in {what}: {} (a relaunch bug; please report it)",
            facade::panic_message(panic.as_ref())
        ))),
    }
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("RecordError", py.get_type::<RecordError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("ReplayError", py.get_type::<ReplayError>())?;
    m.add("HandleError", py.get_type::<HandleError>())?;
    m.add("CertificationError", py.get_type::<CertificationError>())?;
    m.add("DeviceError", py.get_type::<DeviceError>())?;
    m.add("DeviceLostError", py.get_type::<DeviceLostError>())?;
    m.add_class::<Hazard>()?;
    // The data attributes exist on every instance: class defaults, which
    // `to_py` overrides on the instances that carry data.
    let compile = py.get_type::<CompileError>();
    compile.setattr("hazards", pyo3::types::PyTuple::empty(py))?;
    compile.setattr("truncated", false)?;
    compile.setattr("kernel", py.None())?;
    compile.setattr("reason", py.None())?;
    py.get_type::<DeviceLostError>()
        .setattr("address", py.None())?;
    Ok(())
}
