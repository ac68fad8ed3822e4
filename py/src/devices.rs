//! `relaunch.devices()`: the host's GPUs with their stable anchors and deny
//! marks, read the way `relaunch devices` reads them (sysfs, then the HSA
//! runtime's agent list only when sysfs shows GPUs; no queue is opened).

use facade::device::hsa::Runtime;
use facade::device::identity::{device_deny_match, HostContext};
use facade::{Error, ErrorClass};
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
    let device = |e: &dyn std::fmt::Display| Error::new(ErrorClass::Device, e.to_string());
    let ctx = HostContext::from_env().map_err(|e| device(&e))?;
    let sysfs = ctx.inventory(None).map_err(|e| device(&e))?;
    let inventory = if sysfs.is_empty() || std::env::var_os("RELAUNCH_SYSFS_ROOT").is_some() {
        sysfs
    } else {
        match Runtime::open_system(None) {
            Ok(rt) => ctx
                .inventory(Some(facade::runtime_agent_facts(&rt)))
                .map_err(|e| device(&e))?,
            Err(_) => sysfs,
        }
    };
    inventory
        .devices()
        .iter()
        .map(|d| {
            let denied = device_deny_match(d, &ctx.manifest)
                .map_err(|e| device(&e))?
                .map(|entry| {
                    let reason = entry.reason.as_deref().map(|r| format!(": {r}"));
                    format!(
                        "{} ({}){}",
                        entry.text,
                        entry.origin,
                        reason.unwrap_or_default()
                    )
                });
            Ok(Entry {
                index: d.rocr_index,
                name: d.name.clone(),
                product: d.product.clone(),
                anchor: d.anchor(),
                uuid: d.uuid.as_ref().map(|u| u.to_string()),
                bdf: d.bdf.as_ref().map(|b| b.to_string()),
                slot: d.slot.clone(),
                describe: d.describe(),
                denied,
            })
        })
        .collect()
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
