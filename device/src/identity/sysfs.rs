//! Read-only GPU enumeration from sysfs: KFD topology nodes, DRM cards and
//! PCI slot labels. Every path is taken under a root directory so tests can
//! point it at a fixture tree (`RELAUNCH_SYSFS_ROOT`, default `/`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::anchor::{gfx_name_from_target_version, Bdf, GpuUuid};
use super::error::IdentityError;
use crate::file::{read_regular, FileError};

/// Largest sysfs attribute read; real ones are a few hundred bytes.
const MAX_ATTR_BYTES: u64 = 64 * 1024;
/// Most directory entries looked at in one sysfs directory.
const MAX_ENTRIES: usize = 4096;

const TOPOLOGY_NODES: &str = "sys/class/kfd/kfd/topology/nodes";
const DRM_CLASS: &str = "sys/class/drm";
const PCI_SLOTS: &str = "sys/bus/pci/slots";

/// The directory all sysfs paths are read under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysfsRoot(PathBuf);

impl SysfsRoot {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        SysfsRoot(root.into())
    }

    /// `RELAUNCH_SYSFS_ROOT` if set and non-empty, else `/`.
    pub fn from_env() -> Self {
        match std::env::var_os("RELAUNCH_SYSFS_ROOT") {
            Some(root) if !root.is_empty() => SysfsRoot(PathBuf::from(root)),
            _ => SysfsRoot(PathBuf::from("/")),
        }
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The KFD topology nodes directory under this root.
    pub fn topology_nodes(&self) -> PathBuf {
        self.0.join(TOPOLOGY_NODES)
    }
}

/// One GPU node of the KFD topology, joined with its DRM card and slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KfdGpu {
    /// The topology node number (directory name).
    pub kfd_node: u32,
    /// KFD `gpu_id` file, when present.
    pub gpu_id: Option<u32>,
    /// gfx name derived from `gfx_target_version`, e.g. `gfx1100`.
    pub name: String,
    pub gfx_target_version: u64,
    pub bdf: Bdf,
    /// From `unique_id`; `None` when it is 0 or absent.
    pub uuid: Option<GpuUuid>,
    pub render_minor: Option<u32>,
    /// DRM card name such as `card0`.
    pub card: Option<String>,
    /// PCI slot label such as `3`.
    pub slot: Option<String>,
}

/// Whether this host has any PCI slot labels (`slot:` needs them).
pub fn has_slot_labels(root: &SysfsRoot) -> Result<bool, IdentityError> {
    Ok(!read_slots(root)?.is_empty())
}

/// All GPU nodes, in KFD node order. A missing topology directory means no
/// KFD driver: an empty list, not an error. Nodes the process may not read
/// (cgroup-masked GPUs return EPERM) are skipped with a warning.
pub fn scan(root: &SysfsRoot) -> Result<Vec<KfdGpu>, IdentityError> {
    let nodes_dir = root.topology_nodes();
    if !nodes_dir.is_dir() {
        tracing::debug!(path = %nodes_dir.display(), "no KFD topology: no AMD GPU driver");
        return Ok(Vec::new());
    }
    let cards = DrmCards::read(root)?;
    let slots = read_slots(root)?;
    let mut gpus = Vec::new();
    for KfdNode { node, dir, props } in kfd_nodes(&nodes_dir)? {
        let props_path = dir.join("properties");
        let version = props.get("gfx_target_version").copied().unwrap_or(0);
        if version == 0 {
            continue; // a CPU node
        }
        let bad = |message: String| IdentityError::Sysfs {
            path: props_path.clone(),
            message,
        };
        let name = gfx_name_from_target_version(version).map_err(bad)?;
        let domain = props.get("domain").copied().unwrap_or(0);
        let domain = u32::try_from(domain)
            .map_err(|_| bad(format!("domain {domain} does not fit in 32 bits")))?;
        let location = props.get("location_id").copied().ok_or_else(|| {
            bad("GPU node has no location_id, so its PCI address is unknown".to_string())
        })?;
        let bdf = Bdf::from_location_id(domain, location).map_err(bad)?;
        let uuid = props
            .get("unique_id")
            .copied()
            .and_then(GpuUuid::from_unique_id);
        let render_minor = props
            .get("drm_render_minor")
            .and_then(|m| u32::try_from(*m).ok())
            .filter(|m| *m > 0);
        let gpu_id = match read_attr(&dir.join("gpu_id")) {
            Ok(text) => text.trim().parse::<u32>().ok(),
            Err(_) => None,
        };
        gpus.push(KfdGpu {
            kfd_node: node,
            gpu_id,
            name,
            gfx_target_version: version,
            bdf,
            uuid,
            render_minor,
            card: cards.card_for(render_minor, &bdf),
            slot: slots
                .iter()
                .find(|(_, addr)| addr.matches(&bdf))
                .map(|(label, _)| label.clone()),
        });
    }
    Ok(gpus)
}

/// One KFD topology node: its number, directory and parsed `properties`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KfdNode {
    pub node: u32,
    pub dir: PathBuf,
    pub props: BTreeMap<String, u64>,
}

impl KfdNode {
    /// A GPU node (CPU nodes have no SIMDs and no gfx target version).
    pub fn is_gpu(&self) -> bool {
        self.props.get("simd_count").copied().unwrap_or(0) > 0
            || self.props.get("gfx_target_version").copied().unwrap_or(0) > 0
    }
}

/// Every node of the KFD topology under `nodes_dir` (numbered
/// directories), in node order, with its `properties` parsed: the one
/// reader of that file (device enumeration and the trap-handler rule both
/// use it). A directory without `properties` is not a node; one the
/// process may not read (a cgroup-masked GPU) is skipped with a warning.
pub fn kfd_nodes(nodes_dir: &Path) -> Result<Vec<KfdNode>, IdentityError> {
    let mut nodes: Vec<(u32, PathBuf)> = list_dir(nodes_dir)?
        .into_iter()
        .filter_map(|(name, path)| name.parse::<u32>().ok().map(|n| (n, path)))
        .collect();
    nodes.sort_by_key(|(n, _)| *n);
    let mut out = Vec::with_capacity(nodes.len());
    for (node, dir) in nodes {
        let props_path = dir.join("properties");
        let text = match read_attr(&props_path) {
            Ok(text) => text,
            Err(ReadFailure::Denied) => {
                tracing::warn!(path = %props_path.display(), "KFD node not readable (masked?); skipped");
                continue;
            }
            Err(ReadFailure::Missing) => continue,
            Err(ReadFailure::Other(message)) => {
                return Err(IdentityError::Sysfs {
                    path: props_path,
                    message,
                })
            }
        };
        let props = parse_properties(&props_path, &text)?;
        out.push(KfdNode { node, dir, props });
    }
    Ok(out)
}

/// Parse KFD `properties`: one `key value` pair per line, values decimal.
pub fn parse_properties(path: &Path, text: &str) -> Result<BTreeMap<String, u64>, IdentityError> {
    let mut props = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(key), Some(value), None) = (words.next(), words.next(), words.next()) else {
            return Err(IdentityError::Sysfs {
                path: path.to_path_buf(),
                message: format!("line {}: {line:?} is not `key value`", number + 1),
            });
        };
        let value: u64 = value.parse().map_err(|_| IdentityError::Sysfs {
            path: path.to_path_buf(),
            message: format!(
                "line {}: value of {key} ({value:?}) is not a decimal number",
                number + 1
            ),
        })?;
        props.insert(key.to_string(), value);
    }
    Ok(props)
}

enum ReadFailure {
    Denied,
    Missing,
    Other(String),
}

fn read_attr(path: &Path) -> Result<String, ReadFailure> {
    // RELAUNCH_SYSFS_ROOT may point anywhere: a FIFO must not block us.
    let bytes = read_regular(path, MAX_ATTR_BYTES, "a sysfs attribute").map_err(|e| match e {
        FileError::Io {
            kind: std::io::ErrorKind::PermissionDenied,
            ..
        } => ReadFailure::Denied,
        e if e.is_missing() => ReadFailure::Missing,
        e => ReadFailure::Other(e.to_string()),
    })?;
    String::from_utf8(bytes).map_err(|_| ReadFailure::Other("not valid UTF-8".to_string()))
}

fn list_dir(dir: &Path) -> Result<Vec<(String, PathBuf)>, IdentityError> {
    let io = |e: std::io::Error| IdentityError::Sysfs {
        path: dir.to_path_buf(),
        message: e.to_string(),
    };
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        if entries.len() == MAX_ENTRIES {
            return Err(IdentityError::Sysfs {
                path: dir.to_path_buf(),
                message: format!("more than {MAX_ENTRIES} entries; refusing to scan"),
            });
        }
        if let Some(name) = entry.file_name().to_str() {
            entries.push((name.to_string(), entry.path()));
        }
    }
    entries.sort();
    Ok(entries)
}

/// DRM `card*` and `renderD*` entries with the PCI device each points at.
struct DrmCards {
    cards: Vec<(String, PathBuf)>,
    renders: BTreeMap<u32, PathBuf>,
}

impl DrmCards {
    fn read(root: &SysfsRoot) -> Result<Self, IdentityError> {
        let dir = root.path().join(DRM_CLASS);
        let mut drm = DrmCards {
            cards: Vec::new(),
            renders: BTreeMap::new(),
        };
        if !dir.is_dir() {
            return Ok(drm);
        }
        for (name, path) in list_dir(&dir)? {
            // `card0-DP-1` style connector entries are not cards.
            let Ok(device) = fs::canonicalize(path.join("device")) else {
                continue;
            };
            if let Some(n) = name.strip_prefix("card") {
                if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) {
                    drm.cards.push((name.clone(), device));
                }
            } else if let Some(n) = name.strip_prefix("renderD") {
                if let Ok(minor) = n.parse::<u32>() {
                    drm.renders.insert(minor, device);
                }
            }
        }
        Ok(drm)
    }

    /// The card sharing a PCI device with `renderD<minor>`; without a render
    /// node, the card whose device directory is named after the BDF.
    fn card_for(&self, render_minor: Option<u32>, bdf: &Bdf) -> Option<String> {
        if let Some(device) = render_minor.and_then(|m| self.renders.get(&m)) {
            return self
                .cards
                .iter()
                .find(|(_, d)| d == device)
                .map(|(name, _)| name.clone());
        }
        let wanted = bdf.to_string();
        self.cards
            .iter()
            .find(|(_, d)| d.file_name().and_then(|f| f.to_str()) == Some(wanted.as_str()))
            .map(|(name, _)| name.clone())
    }
}

/// A slot `address` file: `domain:bus:device` (no function).
struct SlotAddress {
    domain: u32,
    bus: u8,
    device: u8,
}

impl SlotAddress {
    fn matches(&self, bdf: &Bdf) -> bool {
        self.domain == bdf.domain && self.bus == bdf.bus && self.device == bdf.device
    }
}

fn read_slots(root: &SysfsRoot) -> Result<Vec<(String, SlotAddress)>, IdentityError> {
    let dir = root.path().join(PCI_SLOTS);
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut slots = Vec::new();
    for (label, path) in list_dir(&dir)? {
        let address_path = path.join("address");
        let Ok(text) = read_attr(&address_path) else {
            continue; // a slot without an address has no card to label
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        // Reuse the BDF parser by giving the address a function number.
        let (bdf, _) =
            Bdf::parse(&format!("{text}.0")).map_err(|message| IdentityError::Sysfs {
                path: address_path.clone(),
                message: format!("{text:?} is not domain:bus:device ({message})"),
            })?;
        slots.push((
            label,
            SlotAddress {
                domain: bdf.domain,
                bus: bdf.bus,
                device: bdf.device,
            },
        ));
    }
    Ok(slots)
}
