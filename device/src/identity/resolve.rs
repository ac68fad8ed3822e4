//! Selector -> one device, then the deny check on that device. The deny
//! check looks at the device found, not at the words used to find it, so no
//! selector form (index, alias, name, short BDF, UUID, slot) can reach a
//! denied device.
//!
//! Aliases may name other aliases; a chain is followed up to
//! `MAX_ALIAS_DEPTH` steps and a loop is refused, naming every step.

use std::collections::BTreeMap;

use super::anchor::Bdf;
use super::error::{Denial, IdentityError};
use super::inventory::{DeviceIdentity, Inventory};
use super::manifest::{AliasEntry, DenyEntry, HostManifest};
use super::selector::Selector;
use relaunch_facts::GfxTarget;

/// Longest alias chain followed (`@a -> @b -> … -> device`).
pub const MAX_ALIAS_DEPTH: usize = 8;

/// What a selector resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A real GPU agent of the inventory.
    Device(DeviceIdentity),
    /// The simulated device for this target (`sim:`), passed through.
    Sim(GfxTarget),
}

/// Parse `text` and resolve it.
pub fn resolve_str(
    text: &str,
    inventory: &Inventory,
    manifest: &HostManifest,
) -> Result<Resolved, IdentityError> {
    resolve(&Selector::parse(text)?, inventory, manifest)
}

/// Resolve a selector to one device (or a simulated target) and refuse it
/// when a deny entry of the active host matches what was found.
pub fn resolve(
    selector: &Selector,
    inventory: &Inventory,
    manifest: &HostManifest,
) -> Result<Resolved, IdentityError> {
    let (target, chain) = expand_aliases(selector, manifest)?;
    let via = via_text(&chain);
    let resolved = match &target {
        Selector::Sim(gfx) => Resolved::Sim(gfx.clone()),
        Selector::Alias(_) => unreachable_alias(),
        _ => Resolved::Device(find_device(&target, &via, inventory)?),
    };
    if let Selector::Index(index) = target {
        tracing::warn!(
            index,
            "index: selectors are volatile (discovery order); pin uuid: or bdf: in configuration"
        );
    }
    refuse_denied(&resolved, manifest, &selector.to_string(), &via)?;
    Ok(resolved)
}

/// `Err(Denied)` when a deny entry matches `resolved`. `selector` and `via`
/// say how the caller asked for it. Openers call this again once a
/// simulated board's runtime facts (PCI address, UUID) are known.
pub fn refuse_denied(
    resolved: &Resolved,
    manifest: &HostManifest,
    selector: &str,
    via: &str,
) -> Result<(), IdentityError> {
    let Some(entry) = deny_match(resolved, manifest)? else {
        return Ok(());
    };
    let device = match resolved {
        Resolved::Device(device) => device.describe(),
        Resolved::Sim(gfx) => format!("sim:{gfx}"),
    };
    tracing::warn!(%device, entry = %entry.text, origin = %entry.origin, "device denied");
    let written = if entry.target == entry.selector {
        entry.text.clone()
    } else {
        format!("{}` = `{}", entry.text, entry.target)
    };
    Err(IdentityError::Denied(Box::new(Denial {
        device,
        host: manifest.host().to_string(),
        entry: written,
        origin: entry.origin.clone(),
        reason: entry.reason.clone(),
        selector: selector.to_string(),
        via: via.to_string(),
    })))
}

/// The first deny entry that matches this device, if any. Used by
/// `resolve` and by listings that mark denied devices. Entries were
/// expanded when their file was loaded, so this cannot fail today; the
/// `Result` keeps a failing check an error rather than a pass.
pub fn deny_match<'m>(
    resolved: &Resolved,
    manifest: &'m HostManifest,
) -> Result<Option<&'m DenyEntry>, IdentityError> {
    Ok(manifest
        .deny_entries()
        .iter()
        .find(|entry| entry_matches(&entry.target, resolved)))
}

/// Whether the device at this position would be refused, for listings.
pub fn device_deny_match<'m>(
    device: &DeviceIdentity,
    manifest: &'m HostManifest,
) -> Result<Option<&'m DenyEntry>, IdentityError> {
    deny_match(&Resolved::Device(device.clone()), manifest)
}

/// Identity, not wording: `sim:T` names the simulated T boards whichever
/// runtime reports them (the in-process table or the simulator loaded as
/// `RELAUNCH_HSA_LIB`); other forms name a device by its facts, a simulated
/// one included. A `sim:` request before its board is open is known only by
/// its target, so anchors are checked again on the opened board.
fn entry_matches(entry: &Selector, resolved: &Resolved) -> bool {
    match (entry, resolved) {
        (Selector::Sim(denied), Resolved::Sim(wanted)) => denied.processor() == wanted.processor(),
        (Selector::Sim(denied), Resolved::Device(device)) => {
            // Agents report the bare processor; a name with features
            // (`gfx1100:xnack-`) is the same board.
            device.simulated
                && (device.name == denied.processor()
                    || GfxTarget::parse(&device.name)
                        .is_ok_and(|t| t.processor() == denied.processor()))
        }
        (Selector::Name(name), Resolved::Sim(wanted)) => {
            wanted.processor().eq_ignore_ascii_case(name)
        }
        (
            Selector::Uuid(_)
            | Selector::Bdf { .. }
            | Selector::Slot(_)
            | Selector::Index(_)
            | Selector::Alias(_),
            Resolved::Sim(_),
        ) => false,
        (_, Resolved::Device(device)) => selector_matches(entry, device),
    }
}

/// Does a (non-alias, non-sim) selector name this device?
fn selector_matches(selector: &Selector, device: &DeviceIdentity) -> bool {
    match selector {
        Selector::Uuid(uuid) => device.uuid.as_ref() == Some(uuid),
        Selector::Bdf { bdf, .. } => device.bdf.as_ref() == Some(bdf),
        Selector::Slot(label) => device.slot.as_deref() == Some(label.as_str()),
        Selector::Name(name) => {
            device.name.eq_ignore_ascii_case(name)
                || device
                    .product
                    .as_ref()
                    .is_some_and(|p| p.eq_ignore_ascii_case(name))
        }
        Selector::Index(index) => device.rocr_index == *index,
        Selector::Alias(_) | Selector::Sim(_) => false,
    }
}

fn find_device(
    selector: &Selector,
    via: &str,
    inventory: &Inventory,
) -> Result<DeviceIdentity, IdentityError> {
    if let Selector::Slot(_) = selector {
        if !inventory.has_slot_labels() {
            return Err(IdentityError::NoSlotLabels {
                selector: selector.to_string(),
                via: via.to_string(),
            });
        }
    }
    let matches: Vec<&DeviceIdentity> = inventory
        .devices()
        .iter()
        .filter(|device| selector_matches(selector, device))
        .collect();
    match matches.as_slice() {
        [device] => Ok((*device).clone()),
        [] => Err(IdentityError::NoMatch {
            selector: selector.to_string(),
            via: via.to_string(),
            available: no_match_hint(selector, inventory),
        }),
        many => Err(IdentityError::Ambiguous {
            selector: selector.to_string(),
            via: via.to_string(),
            count: many.len(),
            matches: many
                .iter()
                .map(|d| d.describe())
                .collect::<Vec<_>>()
                .join("; "),
        }),
    }
}

fn no_match_hint(selector: &Selector, inventory: &Inventory) -> String {
    let summary = inventory.summary();
    match selector {
        // A short BDF is domain 0; say so when the bus/device exists elsewhere.
        Selector::Bdf { bdf, .. } => {
            let other_domain: Vec<Bdf> = inventory
                .devices()
                .iter()
                .filter_map(|d| d.bdf)
                .filter(|b| {
                    b.domain != bdf.domain
                        && (b.bus, b.device, b.function) == (bdf.bus, bdf.device, bdf.function)
                })
                .collect();
            match other_domain.first() {
                Some(found) => format!("{summary} (did you mean bdf:{found}?)"),
                None => summary,
            }
        }
        _ => summary,
    }
}

/// Follow `@alias` steps to a selector that names a device or a simulated
/// target. Returns it with the chain of aliases taken.
fn expand_aliases(
    selector: &Selector,
    manifest: &HostManifest,
) -> Result<(Selector, Vec<String>), IdentityError> {
    expand_in(selector, manifest.host(), manifest.alias_map())
}

/// `expand_aliases` over one alias table (`host` names it in messages);
/// the manifest uses it to fix what a deny entry names when it is loaded.
pub(super) fn expand_in(
    selector: &Selector,
    host: &str,
    aliases: &BTreeMap<String, AliasEntry>,
) -> Result<(Selector, Vec<String>), IdentityError> {
    let mut chain: Vec<String> = Vec::new();
    let mut current = selector.clone();
    while let Selector::Alias(name) = &current {
        if chain.contains(name) {
            chain.push(name.clone());
            return Err(IdentityError::AliasLoop {
                chain: chain_text(&chain),
            });
        }
        chain.push(name.clone());
        if chain.len() > MAX_ALIAS_DEPTH {
            return Err(IdentityError::AliasTooDeep {
                chain: chain_text(&chain),
                limit: MAX_ALIAS_DEPTH,
            });
        }
        let Some(entry) = aliases.get(name) else {
            let defined: Vec<String> = aliases.keys().map(|a| format!("@{a}")).collect();
            return Err(IdentityError::UnknownAlias {
                alias: name.clone(),
                host: host.to_string(),
                defined: if defined.is_empty() {
                    " (no manifest defines aliases for this host)".to_string()
                } else {
                    format!(" (defined: {})", defined.join(", "))
                },
            });
        };
        current = entry.selector.clone();
    }
    Ok((current, chain))
}

fn chain_text(chain: &[String]) -> String {
    chain
        .iter()
        .map(|a| format!("@{a}"))
        .collect::<Vec<_>>()
        .join(" -> ")
}

fn via_text(chain: &[String]) -> String {
    if chain.is_empty() {
        String::new()
    } else {
        format!(" (via {})", chain_text(chain))
    }
}

#[cold]
fn unreachable_alias() -> ! {
    panic!("expand_aliases returned an alias selector; it loops until none is left")
}
