//! #15 property: generated manifests (several files, aliases, host sections
//! in any case, a host override, every selector form) never let a denied
//! device open. "Denied" is judged per file: an entry denies what it names
//! in the manifest made of its own file and the earlier ones, loaded for the
//! host spelling its section uses. Whatever later files or the host override
//! say, no selector may then resolve to that device.

use crate::identity_support;

use std::path::Path;

use identity_support::sysfs_inventory;
use proptest::prelude::*;
use relaunch_device::identity::{
    deny_match, resolve_str, AgentFacts, Bdf, HostManifest, Inventory, Resolved,
};

const MACHINE: &str = "hipx";
/// Section names a file may use: the machine in several cases, another host.
const SECTIONS: &[&str] = &["hipx", "HipX", "HIPX", "other"];
/// Active host names (`RELAUNCH_HOST`, or none = the machine's).
const ACTIVE: &[&str] = &["hipx", "HIPX", "other", "elsewhere"];
const ALIASES: &[&str] = &["a", "b", "c"];
/// Every selector form, aimed at the fixture's boards and simulated ones.
const POOL: &[&str] = &[
    "sim:gfx1100",
    "sim:gfx1030",
    "sim:gfx1201",
    "name:gfx1100",
    "name:gfx1030",
    "name:AMD Radeon RX 7900 XTX",
    "bdf:0000:66:00.0",
    "bdf:66:00.0",
    "bdf:0000:bf:00.0",
    "bdf:0000:e0:00.0",
    "bdf:e1:00.0",
    "uuid:GPU-43390a851e296ee5",
    "uuid:GPU-c7ff6b154d0128bc",
    "slot:3",
    "index:0",
    "index:1",
    "index:2",
    "@a",
    "@b",
    "@c",
];
/// Spellings that must never reach a board.
const ODD: &[&str] = &[
    "sim:gfx01100",
    "sim:gfx001030",
    "sim:GFX1100",
    "gfx1100",
    "sim:gfx1100 x",
];

#[derive(Debug, Clone)]
struct Section {
    host: usize,
    aliases: Vec<(usize, usize)>,
    deny: Vec<usize>,
}

fn section() -> impl Strategy<Value = Section> {
    (
        0..SECTIONS.len(),
        proptest::collection::vec((0..ALIASES.len(), 0..POOL.len()), 0..4),
        // Aliases half the time: re-pointing them is the bypass to catch.
        proptest::collection::vec(
            prop_oneof![0..POOL.len(), (POOL.len() - ALIASES.len())..POOL.len()],
            0..3,
        ),
    )
        .prop_map(|(host, aliases, deny)| Section {
            host,
            aliases,
            deny,
        })
}

fn file_text(sections: &[Section]) -> String {
    let mut text = String::new();
    for s in sections {
        text.push_str(&format!("[host.{}]\n", SECTIONS[s.host]));
        let mut seen = Vec::new();
        for &(alias, target) in &s.aliases {
            if !seen.contains(&alias) {
                seen.push(alias);
                text.push_str(&format!("{} = \"{}\"\n", ALIASES[alias], POOL[target]));
            }
        }
        let deny: Vec<String> = s.deny.iter().map(|&d| format!("\"{}\"", POOL[d])).collect();
        text.push_str(&format!("deny = [{}]\n", deny.join(", ")));
    }
    text
}

/// A manifest of `files` for `host` (on machine `machine`), or None when
/// it is refused (then nothing opens).
fn load(files: &[String], host: &str, machine: Option<&str>) -> Option<HostManifest> {
    let mut manifest = HostManifest::empty_for(host, machine);
    for (i, text) in files.iter().enumerate() {
        let path = format!("/gen/{i}/devices.toml");
        manifest.merge_text(Path::new(&path), text).ok()?;
    }
    Some(manifest)
}

/// The fixture host's boards, and the simulator's reported as agents.
fn inventories() -> Vec<Inventory> {
    let sim = |index, name: &str, bus| AgentFacts {
        rocr_index: index,
        name: name.to_string(),
        product: Some(format!("relaunch simulated {name}")),
        uuid: None,
        bdf: Some(Bdf::new(0, bus, 0, 0).unwrap()),
        simulated: true,
    };
    vec![
        sysfs_inventory("hipx"),
        Inventory::from_agents(
            vec![sim(0, "gfx1100", 0xe0), sim(1, "gfx1030", 0xe1)],
            &[],
            false,
        )
        .unwrap(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn no_denied_device_ever_opens(
        files in proptest::collection::vec(proptest::collection::vec(section(), 1..4), 1..5),
        active in 0..ACTIVE.len(),
    ) {
        let texts: Vec<String> = files.iter().map(|f| file_text(f)).collect();
        let active = ACTIVE[active];
        let Some(full) = load(&texts, active, Some(MACHINE)) else {
            return Ok(()); // refused: every open fails
        };
        // Each prefix, for every host spelling its sections use that names
        // the machine or the active host.
        let mut judges = Vec::new();
        for (k, file) in files.iter().enumerate() {
            for s in file {
                let spelled = SECTIONS[s.host];
                if spelled.eq_ignore_ascii_case(MACHINE) || spelled.eq_ignore_ascii_case(active) {
                    if let Some(m) = load(&texts[..=k], spelled, None) {
                        judges.push(m);
                    }
                }
            }
        }
        let denied = |r: &Resolved| judges.iter().any(|m| deny_match(r, m).unwrap().is_some());
        for inventory in inventories() {
            for selector in POOL.iter().chain(ODD) {
                if let Ok(found) = resolve_str(selector, &inventory, &full) {
                    prop_assert!(ODD.iter().all(|odd| odd != selector), "{selector} opened {found:?}");
                    prop_assert!(
                        !denied(&found),
                        "{selector} (active host {active}) opened denied {found:?}\nfiles:\n{}",
                        texts.join("\n---\n")
                    );
                }
            }
        }
    }
}
