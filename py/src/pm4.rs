//! Direct retained PM4 from Python: `Gpu.build` records dispatch tuples
//! into one IB and installs it; `Pm4Ib` replays and patches it. The facade
//! IB sits behind a mutex taken only with the GIL released, so a replay
//! whose twins need the GIL cannot deadlock against a waiting caller.

use parking_lot::Mutex;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::args::{boolean, bytes_like, dims, opt_uint, text, type_name, uint};
use crate::errors::call;

/// One dispatch tuple, converted.
struct DispatchArgs {
    symbol: String,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_group_bytes: u32,
    kernarg: Vec<u8>,
    serialize: bool,
}

const TUPLE_SHAPE: &str = "(symbol, grid, block, dynamic_group_bytes, kernarg_bytes, serialize)";

fn dispatch_args(index: usize, item: &Bound<'_, PyAny>) -> PyResult<DispatchArgs> {
    let what = |field: &str| format!("dispatches[{index}].{field}");
    let fields: Vec<Bound<'_, PyAny>> = if item.is_instance_of::<pyo3::types::PyTuple>()
        || item.is_instance_of::<pyo3::types::PyList>()
    {
        item.try_iter()?.collect::<PyResult<_>>()?
    } else {
        return Err(PyTypeError::new_err(format!(
            "dispatches[{index}] must be a tuple {TUPLE_SHAPE}, not {}",
            type_name(item)
        )));
    };
    if fields.len() != 5 && fields.len() != 6 {
        return Err(PyValueError::new_err(format!(
            "dispatches[{index}] has {} fields; expected {TUPLE_SHAPE} (serialize may be left out)",
            fields.len()
        )));
    }
    Ok(DispatchArgs {
        symbol: text(&fields[0], &what("symbol"))?,
        grid: dims(&fields[1], &what("grid"))?,
        block: dims(&fields[2], &what("block"))?,
        dynamic_group_bytes: uint(&fields[3], &what("dynamic_group_bytes"), u32::MAX.into())?
            as u32,
        kernarg: bytes_like(&fields[4], &what("kernarg_bytes"))?,
        serialize: match fields.get(5) {
            Some(s) => boolean(s, &what("serialize"))?,
            None => false,
        },
    })
}

/// `Gpu.build`: converts every tuple first (argument errors before any
/// recording), then records and installs with the GIL released.
pub fn build_ib(
    py: Python<'_>,
    gpu: &facade::Gpu,
    module: &facade::Module,
    dispatches: &Bound<'_, PyAny>,
    profile: Option<&Bound<'_, PyAny>>,
) -> PyResult<Pm4Ib> {
    let profiling = profiling(profile)?;
    if dispatches.is_instance_of::<pyo3::types::PyString>()
        || dispatches.is_instance_of::<pyo3::types::PyBytes>()
    {
        return Err(PyTypeError::new_err(format!(
            "dispatches must be a list of {TUPLE_SHAPE} tuples, not {}",
            type_name(dispatches)
        )));
    }
    let items = dispatches.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "dispatches must be a list of {TUPLE_SHAPE} tuples, not {}",
            type_name(dispatches)
        ))
    })?;
    let mut list = Vec::new();
    for (i, item) in items.enumerate() {
        list.push(dispatch_args(i, &item?)?);
    }
    let ib = py.detach(|| {
        call("Gpu.build", || {
            let mut b = gpu.builder();
            for (i, d) in list.iter().enumerate() {
                let at = |e: facade::Error| e.context(format!("dispatch {i} ({})", d.symbol));
                // `serialize` on a tuple is a read-after-write boundary
                // between that dispatch and the NEXT one (the consumer,
                // whose kernel picks the boundary's caches); on the last
                // dispatch the IB's epilogue already orders everything.
                let after_serialized = i > 0 && list[i - 1].serialize;
                if after_serialized {
                    b.wait_rmw(Some((module, &d.symbol))).map_err(at)?;
                }
                b.dispatch(
                    module,
                    &d.symbol,
                    d.grid,
                    d.block,
                    d.dynamic_group_bytes,
                    &d.kernarg,
                )
                .map_err(at)?;
            }
            match profiling {
                None => gpu.finalize(b),
                Some(p) => gpu.finalize_profiled(b, p),
            }
        })
    })?;
    Ok(Pm4Ib {
        dispatch_count: ib.dispatch_count(),
        dwords: ib.dwords(),
        ib: Mutex::new(ib),
    })
}

/// `Gpu.build`'s `profile`: None, "span" or "dispatches".
fn profiling(profile: Option<&Bound<'_, PyAny>>) -> PyResult<Option<facade::Profiling>> {
    let Some(p) = profile.filter(|p| !p.is_none()) else {
        return Ok(None);
    };
    match text(p, "profile")?.as_str() {
        "span" => Ok(Some(facade::Profiling::Span)),
        "dispatches" => Ok(Some(facade::Profiling::Dispatches)),
        other => Err(PyValueError::new_err(format!(
            "profile {other:?} is not a profiling mode; use None, \"span\" (the IB's GPU \
             execution span) or \"dispatches\" (also every dispatch's start and end)"
        ))),
    }
}

/// A retained IB installed on one queue of its GPU.
#[pyclass(module = "relaunch", frozen)]
pub struct Pm4Ib {
    ib: Mutex<facade::Pm4Ib>,
    dispatch_count: usize,
    dwords: usize,
}

#[pymethods]
impl Pm4Ib {
    /// Submits the IB and waits for it (Ctrl-C abandons the replay, as
    /// the timeout does: `wait.rs`).
    fn replay(&self, py: Python<'_>) -> PyResult<()> {
        // Checked before the lock: a twin of this very replay would wait
        // for the lock its replay holds.
        call("Pm4Ib.replay", || {
            facade::refuse_inside_twin("Pm4Ib.replay")
        })?;
        // The lock covers the submission only, not the wait.
        let replay = py.detach(|| call("Pm4Ib.replay", || self.ib.lock().replay_async()))?;
        crate::wait::replay(py, "Pm4Ib.replay", &replay)
    }

    /// Overwrites kernarg bytes of dispatch `index` for later replays.
    #[pyo3(signature = (index, data, byte_offset = None))]
    fn set_kernargs(
        &self,
        py: Python<'_>,
        index: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        byte_offset: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let index = uint(index, "index", usize::MAX as u64)? as usize;
        let data = bytes_like(data, "data")?;
        let offset = opt_uint(byte_offset, "byte_offset", usize::MAX as u64, 0)? as usize;
        call("Pm4Ib.set_kernargs", || {
            facade::refuse_inside_twin("Pm4Ib.set_kernargs")
        })?;
        py.detach(|| {
            call("Pm4Ib.set_kernargs", || {
                // `mut`: the facade's patch is moving to `&mut self`.
                #[allow(unused_mut)]
                let mut ib = self.ib.lock();
                ib.set_kernargs(index, offset, &data)
            })
        })
    }

    /// Replays, waits, and returns the GPU execution span in microseconds,
    /// measured by the IB's own timestamps (IBs built with `profile`).
    fn replay_profiled(&self, py: Python<'_>) -> PyResult<f64> {
        call("Pm4Ib.replay_profiled", || {
            facade::refuse_inside_twin("Pm4Ib.replay_profiled")
        })?;
        py.detach(|| {
            call("Pm4Ib.replay_profiled", || {
                self.ib.lock().replay_profiled().map(|t| t.gpu_us)
            })
        })
    }

    /// `(start_us, end_us)` of every dispatch in the last profiled replay,
    /// from the IB's start (IBs built with `profile="dispatches"`).
    fn dispatch_times(&self, py: Python<'_>) -> PyResult<Vec<(f64, f64)>> {
        py.detach(|| {
            call("Pm4Ib.dispatch_times", || {
                let times = self.ib.lock().dispatch_times()?;
                Ok(times.iter().map(|t| (t.start_us, t.end_us)).collect())
            })
        })
    }

    #[getter]
    fn dispatch_count(&self) -> usize {
        self.dispatch_count
    }

    #[getter]
    fn dwords(&self) -> usize {
        self.dwords
    }

    fn __repr__(&self) -> String {
        format!(
            "<relaunch.Pm4Ib {} dispatches, {} dwords>",
            self.dispatch_count, self.dwords
        )
    }
}
