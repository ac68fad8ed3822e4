//! Shared helpers for the identity tests: fixture sysfs roots and scratch
//! directories for manifests (never the real /etc or home).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use relaunch_device::identity::{HostContext, HostManifest, Inventory, ManifestSources, SysfsRoot};

/// `tests/fixtures/sysfs/<name>` at the workspace root.
pub fn fixture_root(name: &str) -> SysfsRoot {
    SysfsRoot::new(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/sysfs")
            .join(name),
    )
}

/// The sysfs-only inventory of a fixture host.
pub fn sysfs_inventory(name: &str) -> Inventory {
    let ctx = HostContext::load(fixture_root(name), &ManifestSources::default(), name)
        .expect("fixture loads");
    ctx.inventory(None).expect("sysfs inventory")
}

/// A manifest for `host` made of one file with this text.
pub fn manifest(host: &str, text: &str) -> HostManifest {
    let mut manifest = HostManifest::empty(host);
    manifest
        .merge_text(Path::new("test/devices.toml"), text)
        .expect("manifest parses");
    manifest
}

/// A scratch directory removed on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "relaunch-identity-{}-{n}-{tag}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Write `text` to `relative` (parents created) and return the path.
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.0.join(relative);
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
