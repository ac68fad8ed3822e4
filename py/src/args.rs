//! Conversions of Python arguments: malformed input is a `TypeError` (wrong
//! type) or `ValueError` (right type, bad value) naming the argument.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyTuple};

/// Bytes from `bytes`, `bytearray` or a `memoryview` (copied).
pub fn bytes_like(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    if obj.is_instance_of::<PyMemoryView>() {
        let copy = obj.call_method0("tobytes")?;
        return Ok(copy.cast::<PyBytes>()?.as_bytes().to_vec());
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be bytes, bytearray or memoryview, not {}",
        type_name(obj)
    )))
}

/// A grid or block size: an int (x) or a tuple/list of 1 to 3 ints; missing
/// dimensions are 1. Every dimension must be at least 1.
pub fn dims(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<[u32; 3]> {
    let values: Vec<Bound<'_, PyAny>> = if is_int(obj) {
        vec![obj.clone()]
    } else if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<pyo3::types::PyList>() {
        obj.try_iter()?.collect::<PyResult<_>>()?
    } else {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int or a tuple of 1 to 3 ints, not {}",
            type_name(obj)
        )));
    };
    if values.is_empty() || values.len() > 3 {
        return Err(PyValueError::new_err(format!(
            "{what} must have 1 to 3 dimensions, got {}",
            values.len()
        )));
    }
    let mut out = [1u32; 3];
    for (d, v) in values.iter().enumerate() {
        let n = uint(v, &format!("{what}[{d}]"), u64::from(u32::MAX))?;
        if n == 0 {
            return Err(PyValueError::new_err(format!(
                "{what}[{d}] is 0; every dimension must be at least 1"
            )));
        }
        out[d] = n as u32;
    }
    Ok(out)
}

/// A non-negative int at most `max` (bool is refused: it is not a size).
pub fn uint(obj: &Bound<'_, PyAny>, what: &str, max: u64) -> PyResult<u64> {
    if !is_int(obj) {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int, not {}",
            type_name(obj)
        )));
    }
    let value: i128 = obj
        .extract()
        .map_err(|_| PyValueError::new_err(format!("{what} is out of range (0..={max})")))?;
    if value < 0 || value > i128::from(max) {
        return Err(PyValueError::new_err(format!(
            "{what} is {value}, outside 0..={max}"
        )));
    }
    Ok(value as u64)
}

/// `uint` for an optional argument (None or absent: `default`).
pub fn opt_uint(
    obj: Option<&Bound<'_, PyAny>>,
    what: &str,
    max: u64,
    default: u64,
) -> PyResult<u64> {
    match obj.filter(|o| !o.is_none()) {
        Some(o) => uint(o, what, max),
        None => Ok(default),
    }
}

/// A Python bool (ints are refused so tuple fields cannot shift silently).
pub fn boolean(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<bool> {
    if let Ok(b) = obj.cast::<pyo3::types::PyBool>() {
        return Ok(b.is_true());
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be a bool, not {}",
        type_name(obj)
    )))
}

/// A str argument.
pub fn text(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Ok(s) = obj.cast::<pyo3::types::PyString>() {
        return s.extract::<String>();
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be a str, not {}",
        type_name(obj)
    )))
}

fn is_int(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<pyo3::types::PyInt>() && !obj.is_instance_of::<pyo3::types::PyBool>()
}

/// The Python type name of `obj`, for messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_string())
}
