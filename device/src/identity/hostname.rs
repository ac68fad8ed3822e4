//! Which host this is, for the `[host.NAME]` sections of `devices.toml`.
//!
//! The active host (whose aliases apply) is `RELAUNCH_HOST`, else the
//! kernel's host name. The machine's own names (whose deny entries apply
//! whatever the active host is) are the kernel's host name and the static
//! one in `/etc/hostname`: a user namespace (`unshare -Ur --uts`) can
//! rename the first but not the second, which only root can write, so a
//! deny list written under the static name holds in any UTS namespace.

use std::path::Path;

use super::error::IdentityError;
use crate::file::read_regular;

/// The kernel's host name (per UTS namespace).
pub const KERNEL_HOSTNAME: &str = "/proc/sys/kernel/hostname";
/// The static host name (a file only root can write).
pub const STATIC_HOSTNAME: &str = "/etc/hostname";

/// A host-name file is one short line.
const MAX_HOSTNAME_FILE_BYTES: u64 = 4096;

/// `RELAUNCH_HOST` when set and non-empty (else the reference name
/// `REDLINE_HOST`, with a warning: `crate::migration`), else the kernel's
/// host name.
pub fn hostname_from_env() -> Result<String, IdentityError> {
    if let Some(host) = crate::migration::setting("RELAUNCH_HOST").filter(|h| !h.trim().is_empty())
    {
        return Ok(host.trim().to_string());
    }
    machine_hostname()
}

/// The kernel's host name (`/proc/sys/kernel/hostname`), whatever
/// `RELAUNCH_HOST` says.
pub fn machine_hostname() -> Result<String, IdentityError> {
    read_name(Path::new(KERNEL_HOSTNAME))?.ok_or_else(|| IdentityError::Hostname {
        reason: format!("{KERNEL_HOSTNAME} is empty"),
    })
}

/// Every name of this machine whose deny entries apply: the kernel's host
/// name and the static one (see the module docs).
pub fn machine_names() -> Result<Vec<String>, IdentityError> {
    machine_names_from(Path::new(KERNEL_HOSTNAME), Path::new(STATIC_HOSTNAME))
}

/// As [`machine_names`] from these two files (tests). A missing or empty
/// file adds no name; no name at all is an error.
pub fn machine_names_from(kernel: &Path, fixed: &Path) -> Result<Vec<String>, IdentityError> {
    let mut names: Vec<String> = Vec::new();
    let mut failures = Vec::new();
    for path in [kernel, fixed] {
        match read_name(path) {
            Ok(Some(name)) => {
                if !names.iter().any(|n| n.eq_ignore_ascii_case(&name)) {
                    names.push(name);
                }
            }
            Ok(None) => failures.push(format!("{} is empty", path.display())),
            Err(IdentityError::Hostname { reason }) => failures.push(reason),
            Err(e) => return Err(e),
        }
    }
    if names.is_empty() {
        return Err(IdentityError::Hostname {
            reason: failures.join("; "),
        });
    }
    Ok(names)
}

/// The first line of `path` that is not empty or a `#` comment (the
/// format of `/etc/hostname`), `None` when there is none.
fn read_name(path: &Path) -> Result<Option<String>, IdentityError> {
    let bytes = read_regular(path, MAX_HOSTNAME_FILE_BYTES, "a host name file").map_err(|e| {
        IdentityError::Hostname {
            reason: e.to_string(),
        }
    })?;
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_string))
}
