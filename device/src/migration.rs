//! Settings a user switching from the reference system may still have set.
//!
//! relaunch keeps the reference system's C names, so an engine switches by
//! its include and link line; but its environment variables carry another
//! prefix (`REDLINE_*`) and its host manifests other paths (those are
//! `identity::sources`' business). None of them may be ignored without a
//! word, since a user who switched expects every setting they had to hold:
//!
//! - A variable of [`REFERENCE_VARS`] has an exact relaunch equivalent
//!   (same values, same meaning), so it is honoured as that variable when
//!   the relaunch name is unset, with a one-time warning naming both; when
//!   both are set the relaunch name wins, also said once.
//! - Any other `REDLINE_*` variable has no effect, and a one-time warning
//!   says so and why (relaunch has no setting of that name).
//!
//! Readers of a relaunch variable that has a reference name go through
//! [`setting`]; [`check_environment`] (called on every device open, and by
//! [`setting`]) warns about every `REDLINE_*` variable present.
//!
//! Warnings go to `tracing` at WARN and, when no subscriber would show them
//! (a C engine or Python has none), to stderr as one `relaunch: warning:`
//! line: once per variable per process either way.

use std::collections::BTreeSet;
use std::sync::Mutex;

/// The reference system's environment prefix.
pub const REFERENCE_PREFIX: &str = "REDLINE_";

/// One reference variable relaunch honours, and its relaunch name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReferenceVar {
    /// The reference system's name.
    pub name: &'static str,
    /// relaunch's name for the same setting.
    pub relaunch: &'static str,
    /// What it does, in both systems (documented in `docs/migrating.md`).
    pub meaning: &'static str,
}

/// Every reference variable the reference system's documents name, each
/// with an exact relaunch equivalent. Decided per variable:
/// - `REDLINE_PM4_FULL_STATE`: `1` writes every dispatch's full register
///   state, `0` (the default) elides unchanged SH registers; relaunch's
///   variable reads `1` the same way.
/// - `REDLINE_HOST`: which `[host.NAME]` section of the manifests is active.
///   relaunch's variable means the same; the machine's own sections' deny
///   entries apply in relaunch whatever it says, which only refuses more.
/// - `REDLINE_GRAPH_HSACO`, `REDLINE_GRAPH_SYMBOL`: the code object and
///   kernel symbol of the `graph_launch_smoke` example, which relaunch ships
///   with the same meaning.
pub const REFERENCE_VARS: &[ReferenceVar] = &[
    ReferenceVar {
        name: "REDLINE_PM4_FULL_STATE",
        relaunch: "RELAUNCH_PM4_FULL_STATE",
        meaning: "1: every dispatch writes its full register state (no SH-register elision); \
                  0 or unset: unchanged registers are elided",
    },
    ReferenceVar {
        name: "REDLINE_HOST",
        relaunch: "RELAUNCH_HOST",
        meaning: "the [host.NAME] section of devices.toml whose aliases apply, instead of the \
                  machine's host name",
    },
    ReferenceVar {
        name: "REDLINE_GRAPH_HSACO",
        relaunch: "RELAUNCH_GRAPH_HSACO",
        meaning: "the counter code object the graph_launch_smoke example loads",
    },
    ReferenceVar {
        name: "REDLINE_GRAPH_SYMBOL",
        relaunch: "RELAUNCH_GRAPH_SYMBOL",
        meaning: "the kernel symbol the graph_launch_smoke example dispatches",
    },
];

/// The table entry whose relaunch name is `relaunch`.
pub fn reference_for(relaunch: &str) -> Option<&'static ReferenceVar> {
    REFERENCE_VARS.iter().find(|v| v.relaunch == relaunch)
}

/// The value of relaunch's variable `name`, else (when the table gives it
/// a reference name) of that reference variable. Unset and empty are the
/// same. Warns once about every `REDLINE_*` variable present.
pub fn setting(name: &str) -> Option<String> {
    check_environment();
    let read = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    read(name).or_else(|| reference_for(name).and_then(|r| read(r.name)))
}

/// Warns (once per variable per process) about every `REDLINE_*` variable
/// in the environment: what relaunch makes of it.
pub fn check_environment() {
    let relaunch_value = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    for (name, value) in std::env::vars_os() {
        let Ok(name) = name.into_string() else {
            continue;
        };
        if name.starts_with(REFERENCE_PREFIX) {
            warn_once(&format!("env {name}"), || {
                warning(&name, &value.to_string_lossy(), relaunch_value)
            });
        }
    }
}

/// Emits the warning `message` makes unless one with this `key` was
/// emitted before in this process.
pub fn warn_once(key: &str, message: impl FnOnce() -> String) {
    static WARNED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    if warned.insert(key.to_string()) {
        // Emitted under the lock, so a second thread cannot print first
        // and a test counting lines sees exactly one.
        emit(&message());
    }
}

/// What relaunch makes of reference variable `name` set to `value`;
/// `relaunch_value` reads relaunch's variables.
pub fn warning(name: &str, value: &str, relaunch_value: impl Fn(&str) -> Option<String>) -> String {
    let Some(var) = REFERENCE_VARS.iter().find(|v| v.name == name) else {
        let known: Vec<&str> = REFERENCE_VARS.iter().map(|v| v.name).collect();
        return format!(
            "{name} has no effect: it is not a setting relaunch has (relaunch's settings are \
             RELAUNCH_*; the reference variables it reads are {}); see docs/migrating.md",
            known.join(", ")
        );
    };
    if value.is_empty() {
        return format!(
            "{name} is set but empty, so it has no effect (an empty {} is unset too); rename \
             it to {} (docs/migrating.md)",
            var.relaunch, var.relaunch
        );
    }
    match relaunch_value(var.relaunch) {
        Some(own) if own == value => format!(
            "{name}={value} is the reference name of {}, which is set to the same value; \
             remove {name} (docs/migrating.md)",
            var.relaunch
        ),
        Some(own) => format!(
            "{name}={value} is ignored: {}={own} is set and takes precedence; remove one of \
             them (docs/migrating.md)",
            var.relaunch
        ),
        None => format!(
            "{name}={value} is read as {}={value} ({}); rename it to {} (docs/migrating.md)",
            var.relaunch, var.meaning, var.relaunch
        ),
    }
}

/// To `tracing`, and to stderr when no subscriber shows warnings.
fn emit(message: &str) {
    tracing::warn!(target: "relaunch::migration", "{message}");
    if !tracing::enabled!(target: "relaunch::migration", tracing::Level::WARN) {
        eprintln!("relaunch: warning: {message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn every_reference_name_carries_the_prefix_and_maps_to_a_relaunch_name() {
        for var in REFERENCE_VARS {
            assert!(var.name.starts_with(REFERENCE_PREFIX), "{}", var.name);
            assert_eq!(
                var.relaunch,
                format!("RELAUNCH_{}", &var.name[REFERENCE_PREFIX.len()..]),
                "{}: the relaunch name is the same name with relaunch's prefix",
                var.name
            );
        }
    }

    #[test]
    fn honoured_unknown_shadowed_and_empty_are_told_apart() {
        let honoured = warning("REDLINE_PM4_FULL_STATE", "1", none);
        assert!(
            honoured.contains("read as RELAUNCH_PM4_FULL_STATE=1"),
            "{honoured}"
        );
        let unknown = warning("REDLINE_GRAPH_LANES", "4", none);
        assert!(
            unknown.starts_with("REDLINE_GRAPH_LANES has no effect")
                && unknown.contains("REDLINE_HOST"),
            "{unknown}"
        );
        let set = |_: &str| Some("other".to_string());
        let shadowed = warning("REDLINE_HOST", "hipx", set);
        assert!(
            shadowed.contains("ignored") && shadowed.contains("RELAUNCH_HOST=other"),
            "{shadowed}"
        );
        let same = |_: &str| Some("hipx".to_string());
        assert!(warning("REDLINE_HOST", "hipx", same).contains("same value"));
        assert!(warning("REDLINE_HOST", "", none).contains("empty"));
    }
}
