//! `relaunch.devices()`: the host's GPUs with their stable anchors and deny
//! marks, from the facade's `host_devices` (what `relaunch devices` shows).

use facade::Error;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::call;

/// One device's facts, as Python values.
struct Entry {
    index: usize,
    name: String,
    product: Option<String>,
    anchor: Option<String>,
    uuid: Option<String>,
    bdf: Option<String>,
    slot: Option<String>,
    describe: String,
    denied: Option<String>,
}

fn list() -> Result<Vec<Entry>, Error> {
    let host = facade::host_devices()?;
    Ok(host
        .devices
        .into_iter()
        .map(|listed| {
            let d = listed.identity;
            let denied = listed.denied.map(|entry| {
                let reason = entry.reason.as_deref().map(|r| format!(": {r}"));
                format!(
                    "{} ({}){}",
                    entry.text,
                    entry.origin,
                    reason.unwrap_or_default()
                )
            });
            Entry {
                index: d.rocr_index,
                anchor: d.anchor(),
                uuid: d.uuid.as_ref().map(|u| u.to_string()),
                bdf: d.bdf.as_ref().map(|b| b.to_string()),
                describe: d.describe(),
                name: d.name,
                product: d.product,
                slot: d.slot,
                denied,
            }
        })
        .collect())
}

/// The host's GPUs: dicts with `index` (volatile), `name`, `product`,
/// `anchor` (the selector to copy: `uuid:` or `bdf:`), `uuid`, `bdf`,
/// `slot`, `describe` and `denied` (the deny entry, or None). Empty on a
/// machine without AMD GPUs: use `Gpu("sim:gfx1201")` there.
#[pyfunction]
pub fn devices(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let entries = py.detach(|| call("devices", list))?;
    entries
        .into_iter()
        .map(|e| {
            let d = PyDict::new(py);
            d.set_item("index", e.index)?;
            d.set_item("name", e.name)?;
            d.set_item("product", e.product)?;
            d.set_item("anchor", e.anchor)?;
            d.set_item("uuid", e.uuid)?;
            d.set_item("bdf", e.bdf)?;
            d.set_item("slot", e.slot)?;
            d.set_item("describe", e.describe)?;
            d.set_item("denied", e.denied)?;
            Ok(d)
        })
        .collect()
}
