//! Resolution: every selector form, ambiguity, aliases, the simulated
//! device, runtime agent facts joined with sysfs, and every way one might try
//! to reach a denied device.

use crate::identity_support;

use identity_support::{fixture_root, manifest, sysfs_inventory, Scratch};
use relaunch_device::identity::{
    device_deny_match, resolve_str, AgentFacts, Bdf, GpuUuid, HostContext, HostManifest,
    IdentityError, Inventory, ManifestSources, Resolved, MAX_ALIAS_DEPTH,
};

fn device(text: &str, inventory: &Inventory, manifest: &HostManifest) -> String {
    match resolve_str(text, inventory, manifest) {
        Ok(Resolved::Device(device)) => device.describe(),
        other => panic!("{text}: {other:?}"),
    }
}

fn error(text: &str, inventory: &Inventory, manifest: &HostManifest) -> IdentityError {
    match resolve_str(text, inventory, manifest) {
        Err(e) => e,
        Ok(found) => panic!("{text} resolved to {found:?}"),
    }
}

const GFX1100: &str =
    "gfx1100 0000:66:00.0 [uuid:GPU-43390a851e296ee5] card0 kfd_node=1 rocr#0(volatile)";
const GFX1151: &str = "gfx1151 0000:bf:00.0 [bdf:0000:bf:00.0] card1 kfd_node=2 rocr#1(volatile)";
const GFX1010: &str =
    "gfx1010 0000:6e:00.0 [bdf:0000:6e:00.0] slot=1 card2 kfd_node=3 rocr#2(volatile)";
const GFX1030: &str =
    "gfx1030 0000:99:00.0 [uuid:GPU-c7ff6b154d0128bc] slot=3 card3 kfd_node=4 rocr#3(volatile)";

#[test]
fn every_selector_form_resolves_on_hipx() {
    let inventory = sysfs_inventory("hipx");
    let aliases = manifest(
        "hipx",
        "[host.hipx]\ndev0 = \"uuid:GPU-43390a851e296ee5\"\nfast = \"sim:gfx1201\"\n",
    );
    for (selector, expected) in [
        ("uuid:GPU-43390a851e296ee5", GFX1100),
        ("uuid:GPU-C7FF6B154D0128BC", GFX1030),
        ("bdf:0000:6e:00.0", GFX1010),
        ("bdf:6e:00.0", GFX1010),
        ("bdf:bf:00.0", GFX1151),
        ("slot:1", GFX1010),
        ("slot:3", GFX1030),
        ("name:gfx1030", GFX1030),
        ("index:0", GFX1100),
        ("index:1", GFX1151),
        ("@dev0", GFX1100),
    ] {
        assert_eq!(
            device(selector, &inventory, &aliases),
            expected,
            "{selector}"
        );
    }
    for selector in ["sim:gfx1201", "@fast"] {
        match resolve_str(selector, &inventory, &aliases).unwrap() {
            Resolved::Sim(target) => assert_eq!(target.processor(), "gfx1201"),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn name_matching_several_boards_is_refused_listing_them() {
    let inventory = sysfs_inventory("hiptrx");
    let none = HostManifest::empty("hiptrx");
    let err = error("name:gfx1201", &inventory, &none);
    let IdentityError::Ambiguous { count, matches, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*count, 4);
    for bdf in [
        "0000:03:00.0",
        "0000:c3:00.0",
        "0000:e3:00.0",
        "0000:13:00.0",
    ] {
        assert!(
            matches.contains("[uuid:GPU-") && matches.contains(bdf),
            "{matches}"
        );
    }
    assert!(
        err.to_string().contains("select one by its anchor"),
        "{err}"
    );
    // An anchor picks exactly one of the identical boards.
    assert!(device("bdf:c3:00.0", &inventory, &none).starts_with("gfx1201 0000:c3:00.0 "));
    assert!(device("index:3", &inventory, &none).starts_with("gfx1201 0000:13:00.0 "));
}

#[test]
fn slot_is_refused_on_a_host_without_slot_labels() {
    let inventory = sysfs_inventory("hiptrx");
    let err = error("slot:1", &inventory, &HostManifest::empty("hiptrx"));
    assert!(matches!(err, IdentityError::NoSlotLabels { .. }), "{err:?}");
    assert!(err.to_string().contains("has no slot labels"));
}

#[test]
fn selectors_matching_nothing_list_the_devices() {
    let inventory = sysfs_inventory("hipx");
    let none = HostManifest::empty("hipx");
    for selector in [
        "uuid:GPU-0123456789abcdef",
        "bdf:0001:66:00.0",
        "slot:5",
        "name:gfx1201",
        "index:4",
    ] {
        let err = error(selector, &inventory, &none);
        let message = err.to_string();
        assert!(
            matches!(err, IdentityError::NoMatch { .. }),
            "{selector}: {err:?}"
        );
        assert!(
            message.contains(GFX1100) && message.contains(GFX1030),
            "{message}"
        );
    }
    let err = error("bdf:66:00.0", &sysfs_inventory("nogpu"), &none);
    assert!(err.to_string().contains("sim:gfx1201"), "{err}");
}

#[test]
fn short_bdf_means_domain_zero_and_hints_at_other_domains() {
    let agents = vec![AgentFacts {
        rocr_index: 0,
        name: "gfx1201".into(),
        product: None,
        uuid: None,
        bdf: Some(Bdf::new(1, 0x66, 0, 0).unwrap()),
        simulated: false,
    }];
    let inventory = Inventory::from_agents(agents, &[], false).unwrap();
    let err = error("bdf:66:00.0", &inventory, &HostManifest::empty("h"));
    assert!(
        err.to_string().contains("did you mean bdf:0001:66:00.0?"),
        "{err}"
    );
    assert!(
        device("bdf:0001:66:00.0", &inventory, &HostManifest::empty("h"))
            .starts_with("gfx1201 0001:66:00.0 [bdf:0001:66:00.0]")
    );
}

const HIPX_DENY: &str = "[host.hipx]\n\
apu = \"bdf:0000:bf:00.0\"\n\
apu2 = \"@apu\"\n\
old = \"uuid:GPU-c7ff6b154d0128bc\"\n\
deny = [\n\
  \"bdf:0000:bf:00.0\",  # Strix Halo APU: device reset takes the host down\n\
  \"bdf:0000:99:00.0 # fan broken\",\n\
]\n";

#[test]
fn no_selector_form_reaches_a_denied_device() {
    let inventory = sysfs_inventory("hipx");
    let manifest = manifest("hipx", HIPX_DENY);
    let attempts = [
        // The APU: no UUID, no slot.
        (
            "bdf:0000:bf:00.0",
            "Strix Halo APU: device reset takes the host down",
        ),
        (
            "bdf:bf:00.0",
            "Strix Halo APU: device reset takes the host down",
        ),
        (
            "name:gfx1151",
            "Strix Halo APU: device reset takes the host down",
        ),
        (
            "index:1",
            "Strix Halo APU: device reset takes the host down",
        ),
        ("@apu", "Strix Halo APU: device reset takes the host down"),
        ("@apu2", "Strix Halo APU: device reset takes the host down"),
        // The gfx1030: denied by BDF, approached by every other anchor.
        ("uuid:GPU-c7ff6b154d0128bc", "fan broken"),
        ("bdf:0000:99:00.0", "fan broken"),
        ("bdf:99:00.0", "fan broken"),
        ("slot:3", "fan broken"),
        ("name:gfx1030", "fan broken"),
        ("index:3", "fan broken"),
        ("@old", "fan broken"),
    ];
    for (selector, reason) in attempts {
        let err = error(selector, &inventory, &manifest);
        let IdentityError::Denied(denial) = &err else {
            panic!("{selector}: {err:?}");
        };
        assert_eq!(denial.reason.as_deref(), Some(reason), "{selector}");
        assert_eq!(denial.selector, selector);
        assert!(err.to_string().contains(reason), "{err}");
    }
    // Devices not on the list still open.
    assert_eq!(device("index:0", &inventory, &manifest), GFX1100);
    assert_eq!(device("slot:1", &inventory, &manifest), GFX1010);
}

#[test]
fn denied_message_quotes_entry_origin_reason_and_path() {
    let inventory = sysfs_inventory("hipx");
    let manifest = manifest("hipx", HIPX_DENY);
    let err = error("@apu2", &inventory, &manifest);
    assert_eq!(
        err.to_string(),
        format!(
            "device {GFX1151} is denied on host hipx by deny entry `bdf:0000:bf:00.0` \
             (test/devices.toml:6): Strix Halo APU: device reset takes the host down; \
             it was selected by `@apu2` (via @apu2 -> @apu). Pick another device \
             (`relaunch devices` lists them) or remove the entry from the manifest"
        )
    );
}

#[test]
fn deny_entries_in_every_form_match_the_resolved_device() {
    let inventory = sysfs_inventory("hipx");
    for entry in [
        "uuid:GPU-43390a851e296ee5",
        "bdf:66:00.0",
        "name:gfx1100",
        "index:0",
        "@main",
    ] {
        let text = format!("[host.hipx]\nmain = \"bdf:0000:66:00.0\"\ndeny = [\"{entry} # no\"]\n");
        let manifest = manifest("hipx", &text);
        for selector in [
            "uuid:GPU-43390a851e296ee5",
            "bdf:0000:66:00.0",
            "index:0",
            "@main",
        ] {
            let err = error(selector, &inventory, &manifest);
            assert!(
                matches!(err, IdentityError::Denied(_)),
                "{entry} / {selector}: {err:?}"
            );
        }
        assert_eq!(device("index:3", &inventory, &manifest), GFX1030, "{entry}");
    }
    let by_slot = manifest("hipx", "[host.hipx]\ndeny = [\"slot:1\"]\n");
    assert!(matches!(
        error("bdf:6e:00.0", &inventory, &by_slot),
        IdentityError::Denied(_)
    ));
}

#[test]
fn name_deny_covers_every_matching_board() {
    let inventory = sysfs_inventory("hiptrx");
    let manifest = manifest(
        "hiptrx",
        "[host.hiptrx]\ndeny = [\"name:gfx1201 # shared rig\"]\n",
    );
    for selector in ["bdf:03:00.0", "bdf:c3:00.0", "index:2", "index:3"] {
        assert!(matches!(
            error(selector, &inventory, &manifest),
            IdentityError::Denied(_)
        ));
    }
}

#[test]
fn deny_list_fails_closed_on_an_undefined_alias() {
    // Refused when the file is loaded: every open fails, none passes.
    let mut manifest = HostManifest::empty("hipx");
    let err = manifest
        .merge_text(
            std::path::Path::new("test/devices.toml"),
            "[host.hipx]\ndeny = [\"@gone\"]\n",
        )
        .unwrap_err();
    assert!(
        matches!(err, IdentityError::Manifest { ref message, .. } if message.contains("@gone is not defined")),
        "{err:?}"
    );
}

#[test]
fn simulated_targets_pass_through_unless_denied() {
    let inventory = sysfs_inventory("nogpu");
    let manifest = manifest(
        "nogpu",
        "[host.nogpu]\ndeny = [\"sim:gfx1100 # not modelled here\"]\n",
    );
    assert!(matches!(
        resolve_str("sim:gfx1201", &inventory, &manifest),
        Ok(Resolved::Sim(_))
    ));
    let err = error("sim:gfx1100", &inventory, &manifest);
    assert!(
        err.to_string().contains("device sim:gfx1100 is denied"),
        "{err}"
    );
    assert!(err.to_string().contains("not modelled here"), "{err}");
}

#[test]
fn alias_chains_loops_and_undefined_aliases() {
    let inventory = sysfs_inventory("hipx");
    let manifest = manifest(
        "hipx",
        "[host.hipx]\na = \"@b\"\nb = \"@c\"\nc = \"slot:3\"\nx = \"@y\"\ny = \"@x\"\nself = \"@self\"\n",
    );
    assert_eq!(device("@a", &inventory, &manifest), GFX1030);
    let err = error("@x", &inventory, &manifest);
    assert_eq!(
        err.to_string(),
        "aliases form a loop: @x -> @y -> @x; make one of them name a device (uuid:… or bdf:…)"
    );
    assert!(matches!(
        error("@self", &inventory, &manifest),
        IdentityError::AliasLoop { .. }
    ));
    let err = error("@nope", &inventory, &manifest);
    assert!(
        err.to_string()
            .contains("alias @nope is not defined for host hipx"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("(defined: @a, @b, @c, @self, @x, @y)"),
        "{err}"
    );
    let err = error("@nope", &inventory, &HostManifest::empty("hipx"));
    assert!(
        err.to_string().contains("no manifest defines aliases"),
        "{err}"
    );
}

#[test]
fn alias_chains_longer_than_the_limit_are_refused() {
    let mut text = String::from("[host.h]\n");
    for i in 0..MAX_ALIAS_DEPTH {
        text.push_str(&format!("a{i} = \"@a{}\"\n", i + 1));
    }
    text.push_str(&format!("a{MAX_ALIAS_DEPTH} = \"index:0\"\n"));
    let manifest = manifest("h", &text);
    let err = error("@a0", &sysfs_inventory("hipx"), &manifest);
    assert!(
        matches!(
            err,
            IdentityError::AliasTooDeep {
                limit: MAX_ALIAS_DEPTH,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(device("@a1", &sysfs_inventory("hipx"), &manifest), GFX1100);
}

fn hipx_agents() -> Vec<AgentFacts> {
    // ROCr order differs from KFD order here (as under ROCR_VISIBLE_DEVICES
    // reordering); runtime facts win for the index, name and product.
    let agent = |index, name: &str, product: &str, uuid: &str, bus| AgentFacts {
        rocr_index: index,
        name: name.to_string(),
        product: Some(product.to_string()),
        uuid: GpuUuid::from_reported(uuid),
        bdf: Some(Bdf::new(0, bus, 0, 0).unwrap()),
        simulated: false,
    };
    vec![
        agent(
            0,
            "gfx1030",
            "AMD Radeon RX 6800 XT",
            "GPU-c7ff6b154d0128bc",
            0x99,
        ),
        agent(
            1,
            "gfx1100",
            "AMD Radeon RX 7900 XTX",
            "GPU-43390a851e296ee5",
            0x66,
        ),
        agent(2, "gfx1151", "AMD Radeon Graphics", "GPU-XX", 0xbf),
    ]
}

#[test]
fn runtime_agents_join_sysfs_by_pci_address() {
    let ctx = HostContext::load(fixture_root("hipx"), &ManifestSources::default(), "hipx").unwrap();
    let inventory = ctx.inventory(Some(hipx_agents())).unwrap();
    let lines: Vec<String> = inventory.devices().iter().map(|d| d.describe()).collect();
    assert_eq!(
        lines,
        vec![
            "gfx1030 0000:99:00.0 [uuid:GPU-c7ff6b154d0128bc] slot=3 card3 kfd_node=4 rocr#0(volatile)",
            "gfx1100 0000:66:00.0 [uuid:GPU-43390a851e296ee5] card0 kfd_node=1 rocr#1(volatile)",
            "gfx1151 0000:bf:00.0 [bdf:0000:bf:00.0] card1 kfd_node=2 rocr#2(volatile)",
        ]
    );
    // The hidden gfx1010 is not selectable; product names select too.
    let none = HostManifest::empty("hipx");
    assert!(matches!(
        error("slot:1", &inventory, &none),
        IdentityError::NoMatch { .. }
    ));
    assert!(device("name:amd radeon rx 7900 xtx", &inventory, &none).starts_with("gfx1100 "));
    assert!(device("index:0", &inventory, &none).starts_with("gfx1030 "));
}

#[test]
fn inconsistent_agent_facts_are_refused() {
    let mut agents = hipx_agents();
    agents[1].rocr_index = 0;
    let err = Inventory::from_agents(agents, &[], false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "runtime agent facts are inconsistent: two agents report ROCr index 0"
    );
    let mut agents = hipx_agents();
    agents[1].bdf = agents[0].bdf;
    let err = Inventory::from_agents(agents, &[], false).unwrap_err();
    assert!(err
        .to_string()
        .contains("two agents report PCI address 0000:99:00.0"));
}

#[test]
fn deny_marks_for_listings() {
    let inventory = sysfs_inventory("hipx");
    let manifest = manifest("hipx", HIPX_DENY);
    let marked: Vec<Option<String>> = inventory
        .devices()
        .iter()
        .map(|d| {
            device_deny_match(d, &manifest)
                .unwrap()
                .map(|e| e.text.clone())
        })
        .collect();
    assert_eq!(
        marked,
        vec![
            None,
            Some("bdf:0000:bf:00.0".into()),
            None,
            Some("bdf:0000:99:00.0".into())
        ]
    );
}

#[test]
fn whole_path_from_files_on_disk() {
    // Fixture sysfs + manifests in three scratch locations.
    let scratch = Scratch::new("whole");
    let work = scratch.path().join("repo/crate");
    std::fs::create_dir_all(&work).unwrap();
    scratch.write(
        "etc/devices.toml",
        "[host.hipx]\ndeny = [\"bdf:0000:bf:00.0\"]  # APU resets the host\n",
    );
    scratch.write(
        "xdg/relaunch/devices.toml",
        "[host.hipx]\ndev1 = \"index:1\"\n",
    );
    scratch.write(
        "repo/.relaunch/devices.toml",
        "[host.hipx]\ndev0 = \"slot:1\"\n",
    );
    let sources = ManifestSources {
        system: Some(scratch.path().join("etc/devices.toml")),
        user: Some(scratch.path().join("xdg/relaunch/devices.toml")),
        walk_from: Some(work),
        walk_stop: Some(scratch.path().to_path_buf()),
        owner: None,
        ..Default::default()
    };
    let ctx = HostContext::load(fixture_root("hipx"), &sources, "hipx").unwrap();
    let inventory = ctx.inventory(None).unwrap();
    match ctx.resolve("@dev0", &inventory).unwrap() {
        Resolved::Device(d) => assert_eq!(d.describe(), GFX1010),
        other => panic!("{other:?}"),
    }
    let err = ctx.resolve("index:1", &inventory).unwrap_err();
    assert!(err.to_string().contains(": APU resets the host;"), "{err}");
}

fn example_context(host: &str) -> HostContext {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/manifests/devices.toml");
    let sources = ManifestSources {
        system: Some(example),
        user: None,
        walk_from: None,
        ..Default::default()
    };
    HostContext::load(fixture_root(host), &sources, host).unwrap()
}

#[test]
fn example_manifest_works_on_both_fixture_hosts() {
    let hipx = example_context("hipx");
    let inventory = hipx.inventory(None).unwrap();
    let open = |sel: &str| match hipx.resolve(sel, &inventory) {
        Ok(Resolved::Device(d)) => d.describe(),
        other => panic!("{sel}: {other:?}"),
    };
    assert_eq!(open("@default"), GFX1100);
    assert_eq!(open("@navi10"), GFX1010);
    assert_eq!(open("@rdna2"), GFX1030);
    assert_eq!(open("name:GFX1030"), GFX1030);
    let err = hipx.resolve("index:1", &inventory).unwrap_err();
    assert!(
        err.to_string().contains("devices.toml:16): Strix Halo APU"),
        "{err}"
    );

    let hiptrx = example_context("hiptrx");
    let inventory = hiptrx.inventory(None).unwrap();
    match hiptrx.resolve("@board1", &inventory).unwrap() {
        Resolved::Device(d) => assert_eq!(d.card.as_deref(), Some("card2")),
        other => panic!("{other:?}"),
    }
    let err = hiptrx.resolve("@board3", &inventory).unwrap_err();
    assert!(
        err.to_string()
            .contains(": reserved for the nightly soak run;"),
        "{err}"
    );
}
