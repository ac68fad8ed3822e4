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

/// The exception for a facade error (the only mapping from classes).
pub fn to_py(e: FacadeError) -> PyErr {
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
            panic_text(&panic)
        ))),
    }
}

/// The text of a caught panic payload.
pub fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
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
    Ok(())
}
