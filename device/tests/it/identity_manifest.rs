//! Host manifest: discovery across the three locations, precedence, host
//! sections, deny reasons, and malformed files named by file and line.

use crate::identity_support;

use std::path::PathBuf;

use identity_support::{manifest, Scratch};
use relaunch_device::identity::{HostManifest, IdentityError, ManifestSources, Selector};

/// `etc`, `config` and a project tree `proj/sub/work` inside one scratch dir.
fn three_locations(scratch: &Scratch) -> ManifestSources {
    let work = scratch.path().join("proj/sub/work");
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

fn alias_text(manifest: &HostManifest, name: &str) -> String {
    manifest.alias(name).expect(name).selector.to_string()
}

#[test]
fn later_files_add_aliases_and_deny_lists_accumulate() {
    let scratch = Scratch::new("order");
    let sources = three_locations(&scratch);
    scratch.write(
        "etc/relaunch/devices.toml",
        "[host.hipx]\ndev0 = \"uuid:GPU-43390a851e296ee5\"\nold = \"slot:3\"\n\
         deny = [\"bdf:0000:bf:00.0\"]  # Strix Halo APU: device reset takes the host down\n",
    );
    scratch.write(
        "config/relaunch/devices.toml",
        "[host.hipx]\ndev0 = \"bdf:66:00.0\"\nmine = \"name:gfx1030\"\ndeny = [\"slot:1 # loaned out\"]\n",
    );
    // Walked files: the one nearer the working directory wins among them,
    // but none re-points an alias of the system or user file (`mine`).
    scratch.write(
        "proj/.relaunch/devices.toml",
        "[host.hipx]\nmine = \"index:0\"\nproj = \"bdf:0000:99:00.0\"\n",
    );
    scratch.write(
        "proj/sub/.relaunch/devices.toml",
        "[host.hipx]\nproj = \"uuid:GPU-c7ff6b154d0128bc\"\ndeny = [\"index:2\"]\n",
    );
    let manifest = HostManifest::load(&sources, "hipx").unwrap();
    assert_eq!(alias_text(&manifest, "dev0"), "bdf:66:00.0");
    assert_eq!(alias_text(&manifest, "old"), "slot:3");
    assert_eq!(alias_text(&manifest, "mine"), "name:gfx1030");
    assert_eq!(alias_text(&manifest, "proj"), "uuid:GPU-c7ff6b154d0128bc");
    let deny: Vec<(String, Option<String>)> = manifest
        .deny_entries()
        .iter()
        .map(|d| (d.text.clone(), d.reason.clone()))
        .collect();
    assert_eq!(
        deny,
        vec![
            (
                "bdf:0000:bf:00.0".to_string(),
                Some("Strix Halo APU: device reset takes the host down".to_string())
            ),
            ("slot:1".to_string(), Some("loaned out".to_string())),
            ("index:2".to_string(), None),
        ]
    );
    let files: Vec<PathBuf> = manifest.files().to_vec();
    assert_eq!(files.len(), 4);
    assert!(files[0].ends_with("etc/relaunch/devices.toml"));
    assert!(files[3].ends_with("proj/sub/.relaunch/devices.toml"));
    assert_eq!(manifest.alias("proj").unwrap().origin.line, 2);
}

#[test]
fn candidates_walk_from_the_home_down_to_the_working_directory() {
    let mut sources = ManifestSources {
        system: Some("/etc/relaunch/devices.toml".into()),
        user: Some("/home/u/.config/relaunch/devices.toml".into()),
        walk_from: Some("/home/u/proj".into()),
        walk_stop: Some("/home/u".into()),
        owner: None,
        ..Default::default()
    };
    let candidates: Vec<String> = sources
        .candidates()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(
        candidates,
        vec![
            "/etc/relaunch/devices.toml",
            "/home/u/.config/relaunch/devices.toml",
            "/home/u/.relaunch/devices.toml",
            "/home/u/proj/.relaunch/devices.toml",
        ]
    );
    // Outside the home the walk goes up to the filesystem's top (owners
    // are checked when the files are read).
    sources.walk_stop = Some("/elsewhere".into());
    assert_eq!(sources.candidates().len(), 6);
}

#[test]
fn only_the_active_host_section_applies() {
    let manifest = manifest(
        "hiptrx",
        "[host.hipx]\ndev0 = \"uuid:GPU-43390a851e296ee5\"\ndeny = [\"bdf:0000:bf:00.0\"]\n\n\
         [host.hiptrx]\nboard0 = \"bdf:03:00.0\"\n",
    );
    assert!(manifest.alias("dev0").is_none());
    assert_eq!(alias_text(&manifest, "board0"), "bdf:03:00.0");
    assert!(manifest.deny_entries().is_empty());
    assert_eq!(manifest.host(), "hiptrx");
}

#[test]
fn reasons_from_strings_and_trailing_comments() {
    let manifest = manifest(
        "h",
        "[host.h]\ndeny = [\n  \"slot:3\",  # flaky riser\n  \"index:0 # in-string wins\", # ignored\n  \
         'name:gfx1151',\n  \"bdf:0000:6e:00.0\" , \"uuid:GPU-c7ff6b154d0128bc\" # both share this\n]\n",
    );
    let deny: Vec<(String, Option<String>, usize)> = manifest
        .deny_entries()
        .iter()
        .map(|d| (d.text.clone(), d.reason.clone(), d.origin.line))
        .collect();
    assert_eq!(
        deny,
        vec![
            ("slot:3".into(), Some("flaky riser".into()), 3),
            ("index:0".into(), Some("in-string wins".into()), 4),
            ("name:gfx1151".into(), None, 5),
            ("bdf:0000:6e:00.0".into(), Some("both share this".into()), 6),
            (
                "uuid:GPU-c7ff6b154d0128bc".into(),
                Some("both share this".into()),
                6
            ),
        ]
    );
    assert_eq!(
        manifest.deny_entries()[2].selector,
        Selector::Name("gfx1151".into())
    );
}

fn manifest_error(text: &str) -> (usize, String) {
    let mut manifest = HostManifest::empty("hipx");
    match manifest.merge_text(std::path::Path::new("/etc/relaunch/devices.toml"), text) {
        Err(IdentityError::Manifest { origin, message }) => {
            assert_eq!(origin.path, PathBuf::from("/etc/relaunch/devices.toml"));
            (origin.line, message)
        }
        other => panic!("expected a manifest error, got {other:?}"),
    }
}

#[test]
fn toml_syntax_errors_name_the_line() {
    let (line, message) = manifest_error("[host.hipx]\ndev0 = \"uuid:GPU-4339\n");
    assert_eq!(line, 2, "{message}");
    let (line, _) = manifest_error("[host.hipx]\n\n\ndev0 = uuid:GPU-4339\n");
    assert_eq!(line, 4);
}

#[test]
fn malformed_entries_name_the_line_and_problem() {
    let (line, message) = manifest_error("[host.hipx]\ndev0 = \"0\"\n");
    assert_eq!(line, 2);
    assert!(
        message.contains("alias `dev0`") && message.contains("no kind prefix"),
        "{message}"
    );

    let (line, message) =
        manifest_error("[host.hipx]\ndeny = [\n \"slot:1\",\n \"gpu:3 # oops\",\n]\n");
    assert_eq!(line, 4);
    assert!(
        message.contains("deny entry") && message.contains("unknown prefix `gpu:`"),
        "{message}"
    );

    let (line, message) = manifest_error("[host.hipx]\n\ndeny = \"bdf:0000:bf:00.0\"\n");
    assert_eq!(line, 3);
    assert!(message.contains("`deny` must be a list"), "{message}");

    let (line, message) = manifest_error("[host.hipx]\ngpus = [\"slot:1\"]\n");
    assert_eq!(line, 2);
    assert!(message.contains("only `deny` may be a list"), "{message}");

    let (line, message) = manifest_error("[host.hipx]\ndev0 = 3\n");
    assert_eq!(line, 2);
    assert!(message.contains("a selector string"), "{message}");

    let (_, message) = manifest_error("[host.hipx]\n\"dev 0\" = \"slot:1\"\n");
    assert!(message.contains("alias name"), "{message}");
}

#[test]
fn unknown_top_level_keys_are_refused() {
    let (line, message) = manifest_error("[hosts.hipx]\ndev0 = \"slot:1\"\n");
    assert_eq!(line, 1, "{message}");
    assert!(message.contains("hosts"), "{message}");
}

#[test]
fn malformed_sections_for_other_hosts_are_still_refused() {
    let (line, message) = manifest_error("[host.other]\ndev0 = \"index:x\"\n");
    assert_eq!(line, 2);
    assert!(message.contains("decimal"), "{message}");
}

#[test]
fn unreadable_or_non_utf8_files_are_errors_not_skipped() {
    let scratch = Scratch::new("bad-utf8");
    let path = scratch.path().join("devices.toml");
    std::fs::write(&path, b"[host.hipx]\n\ndev0 = \"\xff\"\n").unwrap();
    let sources = ManifestSources {
        system: Some(path.clone()),
        user: None,
        walk_from: None,
        ..Default::default()
    };
    match HostManifest::load(&sources, "hipx") {
        Err(IdentityError::Manifest { origin, message }) => {
            assert_eq!((origin.path, origin.line), (path, 3));
            assert!(message.contains("UTF-8"));
        }
        other => panic!("{other:?}"),
    }
    // A directory where a file should be cannot be read.
    let dir_sources = ManifestSources {
        system: Some(scratch.path().to_path_buf()),
        user: None,
        walk_from: None,
        ..Default::default()
    };
    let err = HostManifest::load(&dir_sources, "hipx").unwrap_err();
    assert!(matches!(err, IdentityError::Io { .. }), "{err:?}");
}

#[test]
fn missing_files_are_skipped() {
    let scratch = Scratch::new("none");
    let manifest = HostManifest::load(&three_locations(&scratch), "hipx").unwrap();
    assert!(manifest.files().is_empty());
    assert!(manifest.deny_entries().is_empty());
}
