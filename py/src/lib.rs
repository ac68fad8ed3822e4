//! relaunch-py: the native module `relaunch._native` behind the public
//! Python package `relaunch` (python/relaunch).
//!
//! Owns: converting Python arguments, results and errors for the facade's
//! Rust API (`Gpu`, `Module`, `Pm4Ib`, `Graph`, `GraphExec`, twins). Refuses:
//! any logic of its own (graph planning, encoding, device selection live in
//! the facade and the crates below it). Must not import: anything but the
//! facade (`relaunch`) and pyo3; no other relaunch crate depends on this one.
//! Errors map to exceptions in one place (`errors`); panics are caught
//! there too. Calls that block or run kernel twins release the GIL.

mod args;
mod catalog;
mod devices;
mod errors;
mod gpu;
mod graph;
mod handles;
mod mock;
mod pm4;
mod sim;
mod wait;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<gpu::Gpu>()?;
    m.add_class::<gpu::Buffer>()?;
    m.add_class::<gpu::Module>()?;
    m.add_class::<catalog::Catalog>()?;
    m.add_class::<pm4::Pm4Ib>()?;
    m.add_class::<graph::Graph>()?;
    m.add_class::<graph::GraphBuffer>()?;
    m.add_class::<graph::Node>()?;
    m.add_class::<graph::GraphExec>()?;
    m.add_class::<mock::MockLaunch>()?;
    m.add_function(wrap_pyfunction!(devices::devices, m)?)?;
    sim::register(m)?;
    m.add("FALLBACK_SELECTOR", facade::FALLBACK_SELECTOR)?;
    m.add("DEVICE_ENV", facade::DEVICE_ENV)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
