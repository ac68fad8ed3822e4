//! `relaunch devices`: read-only inventory of this host's GPUs with their
//! stable anchors and deny marks. Opens no queue and touches no device, so it
//! is safe on a busy machine. Reads sysfs under `RELAUNCH_SYSFS_ROOT`, and the
//! HSA runtime's agent list when sysfs shows GPUs (initialising HSA creates no
//! queue).

use std::io::Write;

use relaunch::HostDevices;
use relaunch_device::identity::FactSource;

use super::Failure;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<(), Failure> {
    let host = relaunch::host_devices().map_err(|e| Failure::input(e.message().to_string()))?;
    if let Some(problem) = &host.runtime_problem {
        tracing::warn!("listing from sysfs only: {problem}");
    }
    let text = render(&host);
    // A closed pipe (`relaunch devices | head -1`) is not an error worth a panic.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(())
}

/// The whole listing as text.
fn render(host_devices: &HostDevices) -> String {
    let ctx = &host_devices.context;
    let host = ctx.manifest.host();
    let mut out = String::new();
    if host_devices.devices.is_empty() {
        out.push_str(&format!(
            "host {host}: no AMD GPU agents (no GPU node under {}).\n\
             Use the simulated device instead: --device sim:gfx1201 (or any RDNA target: \
             gfx1010-gfx1036, gfx1100-gfx1103, gfx1150-gfx1153, gfx1200-gfx1201).\n",
            ctx.sysfs_root.topology_nodes().display()
        ));
        return out;
    }
    let source = match host_devices.source {
        FactSource::Sysfs => {
            " (from sysfs; rocr# assumes KFD order without a ROCR_VISIBLE_DEVICES filter)"
        }
        FactSource::Runtime => "",
    };
    out.push_str(&format!(
        "host {host}: {} GPU agent(s){source}\n",
        host_devices.devices.len()
    ));
    if let Some(filter) = std::env::var_os("ROCR_VISIBLE_DEVICES").filter(|f| !f.is_empty()) {
        if host_devices.source == FactSource::Sysfs {
            out.push_str(&format!(
                "  note: ROCR_VISIBLE_DEVICES={} is set; the runtime's indices may differ \
                 from the rocr# shown here\n",
                filter.to_string_lossy()
            ));
        }
    }
    for (position, listed) in host_devices.devices.iter().enumerate() {
        let mark = match &listed.denied {
            None => String::new(),
            Some(entry) => format!(
                "  DENIED by `{}` ({}){}",
                entry.text,
                entry.origin,
                entry
                    .reason
                    .as_ref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            ),
        };
        out.push_str(&format!(
            "  [{position}] {}{mark}\n",
            listed.identity.describe()
        ));
    }
    out.push_str(
        "Copy the bracketed anchor (uuid:… or bdf:…) into engine config or the host manifest; \
         do not copy the leading [N] ordinal.\n",
    );
    match ctx.manifest.files() {
        [] => out.push_str(&format!(
            "No host manifest found (aliases and deny lists go in [host.{host}] of \
             /etc/relaunch/devices.toml, ~/.config/relaunch/devices.toml or .relaunch/devices.toml).\n"
        )),
        files => {
            let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            out.push_str(&format!("Host manifest: {}\n", names.join(", ")));
            for alias in ctx.manifest.aliases() {
                out.push_str(&format!(
                    "  @{} = {} ({})\n",
                    alias.name, alias.selector, alias.origin
                ));
            }
        }
    }
    out
}
