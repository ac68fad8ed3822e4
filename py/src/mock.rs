//! `MockLaunch`: what `GraphExec.launch_mock()` recorded, per lane, as
//! Python values (the recording itself is the lanes crate's).

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::graph::Node;

pub(crate) enum MockStep {
    Dispatch(Node),
    Boundary(String),
}

/// What a mock launch replayed, per lane.
#[pyclass(module = "relaunch", frozen)]
pub struct MockLaunch {
    pub(crate) text: String,
    pub(crate) lanes: Vec<Vec<MockStep>>,
}

#[pymethods]
impl MockLaunch {
    #[getter]
    fn lane_count(&self) -> usize {
        self.lanes.len()
    }

    /// Per lane: `("dispatch", Node)` and `("boundary", kind)` steps in order.
    #[getter]
    fn events<'py>(&self, py: Python<'py>) -> PyResult<Vec<Vec<Bound<'py, PyTuple>>>> {
        self.lanes
            .iter()
            .map(|lane| {
                lane.iter()
                    .map(|s| match s {
                        MockStep::Dispatch(n) => ("dispatch", n.clone()).into_pyobject(py),
                        MockStep::Boundary(k) => ("boundary", k.as_str()).into_pyobject(py),
                    })
                    .collect()
            })
            .collect()
    }

    /// Per lane: the dispatched nodes in order.
    #[getter]
    fn dispatch_order(&self) -> Vec<Vec<Node>> {
        self.lanes
            .iter()
            .map(|lane| {
                lane.iter()
                    .filter_map(|s| match s {
                        MockStep::Dispatch(n) => Some(n.clone()),
                        MockStep::Boundary(_) => None,
                    })
                    .collect()
            })
            .collect()
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!("<relaunch.MockLaunch {} lane(s)>", self.lanes.len())
    }
}
