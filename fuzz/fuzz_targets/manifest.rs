//! The host-manifest parser and selector resolution. Input: a host pick
//! byte, then up to four manifest files separated by NUL bytes. Properties:
//! no panic; every refusal names its file; and no denied device resolves:
//! a deny entry denies what it names in the manifest of its own file and
//! the earlier ones (for the active host or the machine's own name), and
//! no selector may reach that device through the whole manifest.
#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use relaunch_device::identity::{
    deny_match, resolve_str, AgentFacts, Bdf, GpuUuid, HostManifest, Inventory,
};

const HOSTS: [(&str, Option<&str>); 4] = [
    ("hipx", None),
    ("HIPX", Some("hipx")),
    ("other", Some("hipx")),
    ("hipx", Some("other")),
];
const POOL: &[&str] = &[
    "sim:gfx1100",
    "sim:gfx1030",
    "sim:gfx1201",
    "name:gfx1100",
    "name:gfx1030",
    "bdf:0000:66:00.0",
    "bdf:66:00.0",
    "bdf:0000:e0:00.0",
    "uuid:GPU-43390a851e296ee5",
    "slot:3",
    "index:0",
    "index:1",
    "index:3",
];

fn inventory() -> Inventory {
    let agent = |index, name: &str, uuid: &str, bus, simulated| AgentFacts {
        rocr_index: index,
        name: name.to_string(),
        product: None,
        uuid: GpuUuid::from_reported(uuid),
        bdf: Some(Bdf::new(0, bus, 0, 0).unwrap()),
        simulated,
    };
    let agents = vec![
        agent(0, "gfx1100", "GPU-43390a851e296ee5", 0x66, false),
        agent(1, "gfx1030", "GPU-c7ff6b154d0128bc", 0x99, false),
        agent(2, "gfx1151", "GPU-XX", 0xbf, false),
        agent(3, "gfx1100", "GPU-XX", 0xe0, true),
        agent(4, "gfx1201", "GPU-XX", 0xe1, true),
    ];
    Inventory::from_agents(agents, &[], true).unwrap()
}

fn load(files: &[String], host: &str, machine: Option<&str>) -> Option<HostManifest> {
    let mut manifest = HostManifest::empty_for(host, machine);
    for (i, text) in files.iter().enumerate() {
        let path = PathBuf::from(format!("/fuzz/{i}/devices.toml"));
        if let Err(e) = manifest.merge_text(Path::new(&path), text) {
            let message = e.to_string();
            assert!(message.contains(&*path.to_string_lossy()), "{message}");
            return None;
        }
    }
    Some(manifest)
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (host, machine) = HOSTS[usize::from(pick) % HOSTS.len()];
    let text = String::from_utf8_lossy(rest);
    let files: Vec<String> = text.split('\0').take(4).map(str::to_string).collect();
    let Some(full) = load(&files, host, machine) else {
        return; // refused: nothing opens
    };
    let mut judges = Vec::new();
    for k in 0..files.len() {
        for name in [Some(host), machine].into_iter().flatten() {
            if let Some(m) = load(&files[..=k], name, None) {
                judges.push(m);
            }
        }
    }
    let inventory = inventory();
    let aliases: Vec<String> = full.aliases().map(|a| format!("@{}", a.name)).collect();
    for selector in POOL
        .iter()
        .copied()
        .chain(aliases.iter().map(String::as_str))
    {
        if let Ok(found) = resolve_str(selector, &inventory, &full) {
            for judge in &judges {
                assert!(
                    deny_match(&found, judge).unwrap().is_none(),
                    "{selector} reached {found:?}, denied in a prefix for host {}",
                    judge.host()
                );
            }
        }
    }
});
