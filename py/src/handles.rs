//! Buffer and node handles as graph calls take them: the objects
//! `Graph.buffer()` / `Graph.kernel()` return (checked to belong to the
//! graph), or their integer ids, as the reference module's users pass
//! them. An integer that names nothing is refused by the graph itself
//! (`HandleError`, naming how many exist).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::args::{type_name, uint};
use crate::errors::HandleError;
use crate::graph::{GraphBuffer, Node};

fn foreign(what: &str) -> PyErr {
    HandleError::new_err(format!(
        "this {what} belongs to another graph; use handles returned by this graph's buffer()/kernel()"
    ))
}

fn is_int(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<pyo3::types::PyInt>() && !obj.is_instance_of::<pyo3::types::PyBool>()
}

/// The raw id of a buffer handle of graph `graph` (`what` names it).
pub fn buffer_id(obj: &Bound<'_, PyAny>, graph: u64, what: &str) -> PyResult<u32> {
    if is_int(obj) {
        return Ok(uint(obj, what, u32::MAX.into())? as u32);
    }
    let buffer = obj.cast::<GraphBuffer>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a GraphBuffer from Graph.buffer() (or its int id), not {}",
            type_name(obj)
        ))
    })?;
    let buffer = buffer.get();
    if buffer.graph != graph {
        return Err(foreign("buffer"));
    }
    Ok(buffer.id)
}

/// The raw id of a node handle of graph `graph` (`what` names it).
pub fn node_id(obj: &Bound<'_, PyAny>, graph: u64, what: &str) -> PyResult<u32> {
    if is_int(obj) {
        return Ok(uint(obj, what, u32::MAX.into())? as u32);
    }
    let node = obj.cast::<Node>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a Node from Graph.kernel() (or its int id), not {}",
            type_name(obj)
        ))
    })?;
    let node = node.get();
    if node.graph != graph {
        return Err(foreign("node"));
    }
    Ok(node.id)
}
