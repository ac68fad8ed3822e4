//! Deny-list bypasses found by the #15 attack campaign, one test each: a
//! deny entry keeps meaning the device it named, whatever later files,
//! host overrides, spellings or runtimes say.

use crate::identity_support;

use identity_support::{sysfs_inventory, Scratch};
use relaunch_device::identity::{
    resolve_str, HostManifest, IdentityError, ManifestSources, Resolved,
};

fn sources(scratch: &Scratch) -> ManifestSources {
    let work = scratch.path().join("proj");
    std::fs::create_dir_all(&work).unwrap();
    ManifestSources {
        system: Some(scratch.path().join("etc/relaunch/devices.toml")),
        user: Some(scratch.path().join("config/relaunch/devices.toml")),
        walk_from: Some(work),
        walk_stop: Some(scratch.path().to_path_buf()),
        owner: None,
        ..Default::default()
    }
}

fn assert_denied(result: Result<Resolved, IdentityError>, what: &str) {
    match result {
        Err(IdentityError::Denied(denial)) => assert!(
            denial.device.contains("gfx1100"),
            "{what}: denied the wrong device: {denial}"
        ),
        other => panic!("{what}: expected a denial, got {other:?}"),
    }
}

/// #15.1: a later file re-pointing the alias a deny entry used does not
/// move the entry; it still denies the device it named where it was written.
#[test]
fn a_later_file_cannot_repoint_a_deny_alias() {
    let scratch = Scratch::new("repoint");
    scratch.write(
        "etc/relaunch/devices.toml",
        "[host.hipx]\nblocked = \"sim:gfx1100\"\ndeny = [\"@blocked\"]\n",
    );
    scratch.write(
        "config/relaunch/devices.toml",
        "[host.hipx]\nblocked = \"sim:gfx1030\"\n",
    );
    let manifest = HostManifest::load(&sources(&scratch), "hipx").unwrap();
    let inventory = sysfs_inventory("nogpu");
    assert_denied(
        resolve_str("sim:gfx1100", &inventory, &manifest),
        "sim:gfx1100 after re-pointing @blocked",
    );
    // The alias itself follows the later file.
    assert!(matches!(
        resolve_str("@blocked", &inventory, &manifest),
        Ok(Resolved::Sim(t)) if t.processor() == "gfx1030"
    ));
}

/// #15.1: a deny entry may only use aliases known where it is written (this
/// file or an earlier one); one a later file would define fails the load.
#[test]
fn a_deny_alias_defined_only_by_a_later_file_is_refused() {
    let scratch = Scratch::new("forward");
    scratch.write(
        "etc/relaunch/devices.toml",
        "[host.hipx]\ndeny = [\"@later\"]\n",
    );
    scratch.write(
        "config/relaunch/devices.toml",
        "[host.hipx]\nlater = \"sim:gfx1030\"\n",
    );
    let err = HostManifest::load(&sources(&scratch), "hipx").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("@later") && text.contains("etc/relaunch/devices.toml:2"),
        "{text}"
    );
}

/// #15.2: the host name is matched ignoring ASCII case (DNS names are).
#[test]
fn host_sections_match_the_host_name_in_any_case() {
    let scratch = Scratch::new("case");
    scratch.write(
        "etc/relaunch/devices.toml",
        "[host.hipx]\ndeny = [\"sim:gfx1100\"]\n",
    );
    let manifest = HostManifest::load(&sources(&scratch), "HipX").unwrap();
    assert_denied(
        resolve_str("sim:gfx1100", &sysfs_inventory("nogpu"), &manifest),
        "host name in another case",
    );
}

/// #15.4: a target in a non-canonical spelling is refused, naming the
/// canonical one, instead of opening the board a deny entry names.
#[test]
fn non_canonical_target_spellings_are_refused() {
    let scratch = Scratch::new("spelling");
    scratch.write(
        "etc/relaunch/devices.toml",
        "[host.hipx]\ndeny = [\"sim:gfx1100\"]\n",
    );
    let manifest = HostManifest::load(&sources(&scratch), "hipx").unwrap();
    let inventory = sysfs_inventory("nogpu");
    for spelling in [
        "sim:gfx01100",
        "sim:gfx001100",
        "sim:amdgcn-amd-amdhsa--gfx01100",
    ] {
        match resolve_str(spelling, &inventory, &manifest) {
            Err(IdentityError::Selector(e)) => {
                assert!(e.to_string().contains("gfx1100"), "{spelling}: {e}")
            }
            other => panic!("{spelling}: expected a selector error, got {other:?}"),
        }
    }
}

/// #15.2: naming another host (`RELAUNCH_HOST`) keeps the deny entries of
/// the machine's own sections; aliases follow the named host.
#[test]
fn a_host_override_keeps_the_machines_deny_entries() {
    let scratch = Scratch::new("override");
    scratch.write(
        "etc/relaunch/devices.toml",
        "[host.hipx]\nmine = \"sim:gfx1100\"\ndeny = [\"@mine\"]\n\n\
         [host.elsewhere]\nother = \"sim:gfx1030\"\n",
    );
    let manifest = HostManifest::load_for(&sources(&scratch), "elsewhere", Some("HIPX")).unwrap();
    let inventory = sysfs_inventory("nogpu");
    assert_denied(
        resolve_str("sim:gfx1100", &inventory, &manifest),
        "RELAUNCH_HOST=elsewhere on machine hipx",
    );
    assert!(manifest.alias("other").is_some() && manifest.alias("mine").is_none());
}

/// #15.2: two sections naming one host in different case are refused
/// rather than one silently winning.
#[test]
fn sections_differing_only_in_case_are_refused() {
    let mut manifest = HostManifest::empty("hipx");
    let err = manifest
        .merge_text(
            std::path::Path::new("d.toml"),
            "[host.hipx]\ndeny = []\n[host.HIPX]\na = \"sim:gfx1100\"\n",
        )
        .unwrap_err();
    assert!(err.to_string().contains("name the same host"), "{err}");
}

/// #15.3: a simulated board reported as a runtime agent (the simulator
/// loaded as the HSA library) is still the board a `sim:` entry names,
/// whatever selector reaches it; a real board of that target is not.
#[test]
fn sim_entries_match_simulated_agents_from_any_runtime() {
    use relaunch_device::identity::{AgentFacts, Bdf, Inventory};
    let manifest = identity_support::manifest("hipx", "[host.hipx]\ndeny = [\"sim:gfx1100\"]\n");
    let agent = |index, simulated, bus| AgentFacts {
        rocr_index: index,
        name: "gfx1100".into(),
        product: Some("relaunch simulated gfx1100".into()),
        uuid: None,
        bdf: Some(Bdf::new(0, bus, 0, 0).unwrap()),
        simulated,
    };
    let simulated = Inventory::from_agents(vec![agent(0, true, 0xe0)], &[], false).unwrap();
    for selector in ["index:0", "name:gfx1100", "bdf:0000:e0:00.0", "bdf:e0:00.0"] {
        assert_denied(resolve_str(selector, &simulated, &manifest), selector);
    }
    let real = Inventory::from_agents(vec![agent(0, false, 0x66)], &[], false).unwrap();
    assert!(resolve_str("index:0", &real, &manifest).is_ok());
}
