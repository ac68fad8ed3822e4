//! Which manifest files apply (#30): the walk for project files stops at
//! the user's home and at a filesystem boundary, a file owned by anyone but
//! the user or root is refused, a project file never re-points an alias of
//! the system or user file, a FIFO never blocks the load, and the machine's
//! own deny sections are found by a name a user namespace cannot change.

use crate::bundle_files::{mkfifo, within_10s};
use crate::identity_support;

use std::path::Path;

use identity_support::{sysfs_inventory, Scratch};
use relaunch_device::identity::{
    machine_names_from, resolve_str, HostManifest, IdentityError, ManifestSources, Resolved,
};

/// `etc`, `config` and a home `home/u` with a project `home/u/proj`.
fn sources(scratch: &Scratch) -> ManifestSources {
    let work = scratch.path().join("home/u/proj");
    std::fs::create_dir_all(&work).unwrap();
    ManifestSources {
        system: Some(scratch.path().join("etc/relaunch/devices.toml")),
        user: Some(scratch.path().join("config/relaunch/devices.toml")),
        walk_from: Some(work),
        walk_stop: Some(scratch.path().join("home/u")),
        owner: None,
        ..Default::default()
    }
}

fn sim_target(manifest: &HostManifest, selector: &str) -> String {
    match resolve_str(selector, &sysfs_inventory("nogpu"), manifest) {
        Ok(Resolved::Sim(t)) => t.processor().to_string(),
        other => panic!("{selector}: {other:?}"),
    }
}

#[test]
fn a_fifo_manifest_in_a_parent_directory_does_not_block() {
    let scratch = Scratch::new("fifo");
    let sources = sources(&scratch);
    let dir = scratch.path().join("home/u/.relaunch");
    std::fs::create_dir_all(&dir).unwrap();
    mkfifo(&dir.join("devices.toml"));
    let err = within_10s("HostManifest::load", move || {
        HostManifest::load(&sources, "hipx")
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("a FIFO") && err.contains("devices.toml"),
        "{err}"
    );
}

#[test]
fn the_walk_stops_at_home() {
    let scratch = Scratch::new("stop");
    let sources = sources(&scratch);
    scratch.write(
        "home/.relaunch/devices.toml",
        "[host.hipx]\nabove = \"sim:gfx1030\"\n",
    );
    scratch.write(
        "home/u/.relaunch/devices.toml",
        "[host.hipx]\nathome = \"sim:gfx1100\"\n",
    );
    let manifest = HostManifest::load(&sources, "hipx").unwrap();
    assert!(manifest.alias("above").is_none());
    assert!(manifest.alias("athome").is_some());
    let candidates = sources.candidates();
    assert!(
        candidates
            .last()
            .unwrap()
            .ends_with("home/u/proj/.relaunch/devices.toml")
            && !candidates
                .iter()
                .any(|p| p.ends_with("home/.relaunch/devices.toml")),
        "{candidates:?}"
    );
}

#[test]
fn a_manifest_owned_by_someone_else_is_refused() {
    let scratch = Scratch::new("owner");
    let planted = scratch.write(
        "home/u/.relaunch/devices.toml",
        "[host.hipx]\ndev0 = \"sim:gfx1030\"\n",
    );
    let mut sources = sources(&scratch);
    // Root's files are trusted: as root, give the file to nobody; as anyone
    // else, trust another uid than the file's.
    if chown_to_nobody(&planted) {
        sources.owner = None;
    } else {
        sources.owner = Some(4242);
    }
    let err = HostManifest::load(&sources, "hipx").unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, IdentityError::Manifest { .. })
            && text.contains("owned by uid")
            && text.contains("home/u/.relaunch/devices.toml"),
        "{text}"
    );
}

/// Gives `path` to uid 65534 when this process may (it runs as root).
fn chown_to_nobody(path: &Path) -> bool {
    std::process::Command::new("chown")
        .arg("65534")
        .arg(path)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_project_file_never_repoints_a_user_alias() {
    let scratch = Scratch::new("precedence");
    let sources = sources(&scratch);
    scratch.write(
        "etc/relaunch/devices.toml",
        "[host.hipx]\nsys = \"sim:gfx1030\"\nover = \"sim:gfx1030\"\n",
    );
    scratch.write(
        "config/relaunch/devices.toml",
        "[host.hipx]\ndev0 = \"sim:gfx1100\"\nover = \"sim:gfx1201\"\n",
    );
    scratch.write(
        "home/u/proj/.relaunch/devices.toml",
        "[host.hipx]\ndev0 = \"sim:gfx1030\"\nsys = \"sim:gfx1201\"\nextra = \"sim:gfx1201\"\n\
         deny = [\"@dev0\"]\n",
    );
    let manifest = HostManifest::load(&sources, "hipx").unwrap();
    // The user's file overrides the system file; a project file neither.
    assert_eq!(sim_target(&manifest, "@over"), "gfx1201");
    assert_eq!(sim_target(&manifest, "@sys"), "gfx1030");
    assert_eq!(
        manifest.alias("dev0").unwrap().selector.to_string(),
        "sim:gfx1100"
    );
    assert_eq!(sim_target(&manifest, "@extra"), "gfx1201");
    // The project's deny entry still adds up, naming the user's @dev0.
    assert!(matches!(
        resolve_str("sim:gfx1100", &sysfs_inventory("nogpu"), &manifest),
        Err(IdentityError::Denied(_))
    ));
}

#[test]
fn a_renamed_host_keeps_the_machines_deny_sections() {
    let scratch = Scratch::new("uts");
    // What `unshare -Ur --uts; hostname elsewhere` leaves: the kernel name
    // changed, /etc/hostname (root's file) not.
    let kernel = scratch.write("proc/hostname", "elsewhere\n");
    let fixed = scratch.write("etc/hostname", "# static host name\nHIPX\n");
    let names = machine_names_from(&kernel, &fixed).unwrap();
    assert_eq!(names, ["elsewhere", "HIPX"]);
    scratch.write(
        "etc/relaunch/devices.toml",
        "[host.hipx]\nmine = \"sim:gfx1100\"\ndeny = [\"@mine\"]\n\n\
         [host.elsewhere]\nother = \"sim:gfx1030\"\n",
    );
    let manifest = HostManifest::load_for_names(&sources(&scratch), "elsewhere", &names).unwrap();
    assert!(matches!(
        resolve_str("sim:gfx1100", &sysfs_inventory("nogpu"), &manifest),
        Err(IdentityError::Denied(_))
    ));
    assert!(manifest.alias("other").is_some() && manifest.alias("mine").is_none());

    // Without /etc/hostname the kernel's name is all there is.
    let missing = scratch.path().join("etc/none");
    assert_eq!(
        machine_names_from(&kernel, &missing).unwrap(),
        ["elsewhere"]
    );
    let err = machine_names_from(&missing, &missing).unwrap_err();
    assert!(matches!(err, IdentityError::Hostname { .. }), "{err}");
}
