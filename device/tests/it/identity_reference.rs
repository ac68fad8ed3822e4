//! The reference system's manifests (#31.4): a deny entry written at any
//! of its three places (`/etc/redline`, `$XDG_CONFIG_HOME/redline`,
//! `.redline` in a walked directory) holds against every selector form, in
//! the same format and strictness as relaunch's; relaunch's file of a place
//! wins for an alias both define, and deny lists of both paths accumulate.

use crate::identity_support;

use identity_support::{sysfs_inventory, Scratch};
use relaunch_device::identity::{
    resolve_str, HostManifest, IdentityError, ManifestSources, Resolved,
};

/// Both systems' three places inside one scratch dir (`proj/work` walks up
/// to the scratch dir, which stands for the home).
fn both_paths(scratch: &Scratch) -> ManifestSources {
    let work = scratch.path().join("proj/work");
    std::fs::create_dir_all(&work).unwrap();
    ManifestSources {
        system: Some(scratch.path().join("etc/relaunch/devices.toml")),
        user: Some(scratch.path().join("config/relaunch/devices.toml")),
        reference_system: Some(scratch.path().join("etc/redline/devices.toml")),
        reference_user: Some(scratch.path().join("config/redline/devices.toml")),
        walk_from: Some(work),
        walk_stop: Some(scratch.path().to_path_buf()),
        reference_project: true,
        owner: None,
    }
}

/// The reference documents' own example: the APU denied by PCI address,
/// with its reason as the trailing comment.
const APU_DENY: &str = "[host.hipx]\n\
dev0 = \"uuid:GPU-43390a851e296ee5\"\n\
deny = [\"bdf:0000:bf:00.0\"]  # Strix Halo APU: device reset takes the host down\n";

const REASON: &str = "Strix Halo APU: device reset takes the host down";

fn assert_apu_denied_everywhere(manifest: &HostManifest, file: &str) {
    let inventory = sysfs_inventory("hipx");
    for selector in ["bdf:0000:bf:00.0", "bdf:bf:00.0", "name:gfx1151", "index:1"] {
        match resolve_str(selector, &inventory, manifest) {
            Err(IdentityError::Denied(denial)) => {
                assert_eq!(denial.reason.as_deref(), Some(REASON), "{selector}");
                assert!(
                    denial.origin.path.ends_with(file),
                    "{selector}: denied by {} instead of {file}",
                    denial.origin
                );
            }
            other => panic!("{selector} with a deny entry in {file}: {other:?}"),
        }
    }
    // The reference file's alias applies too.
    assert!(matches!(
        resolve_str("@dev0", &inventory, manifest),
        Ok(Resolved::Device(d)) if d.name == "gfx1100"
    ));
}

#[test]
fn a_deny_entry_at_each_reference_path_holds() {
    for file in [
        "etc/redline/devices.toml",
        "config/redline/devices.toml",
        "proj/.redline/devices.toml",
        "proj/work/.redline/devices.toml",
    ] {
        let scratch = Scratch::new("reference-deny");
        scratch.write(file, APU_DENY);
        let manifest = HostManifest::load(&both_paths(&scratch), "hipx").unwrap();
        assert_eq!(manifest.files().len(), 1, "{file}");
        assert_apu_denied_everywhere(&manifest, file);
    }
}

#[test]
fn reference_files_are_read_only_when_asked_for() {
    let scratch = Scratch::new("reference-off");
    scratch.write("proj/.redline/devices.toml", APU_DENY);
    let mut sources = both_paths(&scratch);
    sources.reference_project = false;
    let manifest = HostManifest::load(&sources, "hipx").unwrap();
    assert!(manifest.deny_entries().is_empty());
    // `from_env` asks for all three places.
    let env = ManifestSources::from_env();
    assert!(env.reference_project);
    assert_eq!(
        env.reference_system.as_deref(),
        Some(std::path::Path::new("/etc/redline/devices.toml"))
    );
    assert!(env
        .reference_user
        .is_some_and(|p| p.ends_with("redline/devices.toml")));
}

#[test]
fn at_each_place_the_reference_file_is_read_first() {
    let scratch = Scratch::new("reference-order");
    let sources = both_paths(&scratch);
    let root = scratch.path().display().to_string();
    let candidates: Vec<String> = sources
        .candidates()
        .iter()
        .map(|p| p.display().to_string().replacen(&root, "", 1))
        .collect();
    assert_eq!(
        candidates,
        [
            "/etc/redline/devices.toml",
            "/etc/relaunch/devices.toml",
            "/config/redline/devices.toml",
            "/config/relaunch/devices.toml",
            "/.redline/devices.toml",
            "/.relaunch/devices.toml",
            "/proj/.redline/devices.toml",
            "/proj/.relaunch/devices.toml",
            "/proj/work/.redline/devices.toml",
            "/proj/work/.relaunch/devices.toml",
        ]
    );
}

#[test]
fn both_paths_present_deny_lists_accumulate_and_relaunch_wins_aliases() {
    let scratch = Scratch::new("reference-both");
    scratch.write(
        "etc/redline/devices.toml",
        "[host.hipx]\ngpu = \"bdf:0000:6e:00.0\"\nshared = \"slot:1\"\n\
         deny = [\"bdf:0000:bf:00.0 # from the reference system file\"]\n",
    );
    scratch.write(
        "etc/relaunch/devices.toml",
        "[host.hipx]\ngpu = \"uuid:GPU-43390a851e296ee5\"\n\
         deny = [\"uuid:GPU-c7ff6b154d0128bc # from relaunch's system file\"]\n",
    );
    // A relaunch project file may neither lift the reference deny entry
    // nor re-point an alias the reference system file defined.
    scratch.write(
        "proj/.relaunch/devices.toml",
        "[host.hipx]\nshared = \"bdf:0000:bf:00.0\"\ndeny = []\n",
    );
    let manifest = HostManifest::load(&both_paths(&scratch), "hipx").unwrap();
    let inventory = sysfs_inventory("hipx");
    let denied_by = |selector: &str| match resolve_str(selector, &inventory, &manifest) {
        Err(IdentityError::Denied(denial)) => denial.reason.unwrap_or_default(),
        other => panic!("{selector}: {other:?}"),
    };
    assert_eq!(denied_by("index:1"), "from the reference system file");
    assert_eq!(denied_by("slot:3"), "from relaunch's system file");
    // Same place, both define `gpu`: relaunch's file is read last and wins.
    assert!(matches!(
        resolve_str("@gpu", &inventory, &manifest),
        Ok(Resolved::Device(d)) if d.name == "gfx1100"
    ));
    assert!(matches!(
        resolve_str("@shared", &inventory, &manifest),
        Ok(Resolved::Device(d)) if d.name == "gfx1010"
    ));
    // The other way round: a reference project file cannot lift relaunch's.
    scratch.write("proj/.redline/devices.toml", "[host.hipx]\ndeny = []\n");
    let manifest = HostManifest::load(&both_paths(&scratch), "hipx").unwrap();
    assert!(matches!(
        resolve_str("slot:3", &inventory, &manifest),
        Err(IdentityError::Denied(_))
    ));
}

#[test]
fn a_malformed_reference_file_fails_the_load_naming_it_and_the_step() {
    let scratch = Scratch::new("reference-bad");
    let path = scratch.write(
        "config/redline/devices.toml",
        "[host.hipx]\ndeny = [\"bf:00.0\"]\n",
    );
    let err = HostManifest::load(&both_paths(&scratch), "hipx").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!("{}:2", path.display()))
            && text.contains("reference system's manifest")
            && text.contains("config/relaunch/devices.toml")
            && text.contains("docs/migrating.md"),
        "{text}"
    );
    // Unknown top-level tables are refused exactly as in relaunch's file.
    let scratch = Scratch::new("reference-unknown");
    scratch.write(
        "etc/redline/devices.toml",
        "[defaults]\ndevice = \"index:0\"\n",
    );
    let err = HostManifest::load(&both_paths(&scratch), "hipx")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("etc/redline/devices.toml") && err.contains("defaults"),
        "{err}"
    );
}
