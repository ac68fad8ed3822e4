//! Which `devices.toml` files apply, and reading one.
//!
//! In order: the system file (`/etc/relaunch/devices.toml`, whatever the
//! environment says), the user's (`$XDG_CONFIG_HOME/relaunch/devices.toml`,
//! else `$HOME/.config/relaunch/devices.toml`), then project files
//! (`.relaunch/devices.toml`) from the farthest directory down to the
//! working directory. The walk goes up from the working directory and stops
//! at the user's home (included) or before a directory on another
//! filesystem, whichever comes first, so a file planted in `/tmp` or `/`
//! does not reach a project under the home.
//!
//! The reference system's files at the same three places
//! (`/etc/redline/devices.toml`, `$XDG_CONFIG_HOME/redline/devices.toml`,
//! `.redline/devices.toml`) are read too, each just before relaunch's file
//! of its place. Its documents give them relaunch's format exactly
//! (`[host.NAME]` tables of `alias = "selector"` and `deny = [...]`, the
//! same selector grammar, the trailing `# reason` quoted back), so they are
//! parsed by the same code with the same strictness, and a user who switched
//! keeps their deny list: a board denied there does not open. Being read
//! first, relaunch's file of the same place wins for an alias both define;
//! deny entries of all files accumulate, so neither path can lift a board
//! the other denies. (The reference documents say a later file "overrides"
//! an earlier one's deny list; relaunch never drops a deny entry, which
//! only refuses more, and the refusal names the file and line.) A warning
//! names each reference file read, once, with the relaunch path to move it
//! to.
//!
//! Every file, and the directory holding it, must be owned by the user or
//! root: a file someone else can write could re-point the user's aliases,
//! so it fails the load naming it (as git refuses a repository of dubious
//! ownership). Only regular files are read, through a size limit; a FIFO
//! or device fails the load instead of blocking it.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::error::{IdentityError, Origin};
use crate::file::{read_regular_file, FileError};

/// Largest manifest read; a hand-written host list is a few kilobytes.
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// Where to look for manifests. Tests set every field; `from_env` fills
/// them the way the CLI and library do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestSources {
    /// System-wide file, normally `/etc/relaunch/devices.toml`.
    pub system: Option<PathBuf>,
    /// Per-user file under the XDG config directory.
    pub user: Option<PathBuf>,
    /// The reference system's system file, normally
    /// `/etc/redline/devices.toml`; read just before `system`.
    pub reference_system: Option<PathBuf>,
    /// The reference system's per-user file,
    /// `$XDG_CONFIG_HOME/redline/devices.toml`; read just before `user`.
    pub reference_user: Option<PathBuf>,
    /// Directory to walk up from looking for `.relaunch/devices.toml`.
    pub walk_from: Option<PathBuf>,
    /// The walk's last directory (the user's home) when `walk_from` is
    /// inside it; the walk also stops at a filesystem boundary.
    pub walk_stop: Option<PathBuf>,
    /// Also read the reference system's project file
    /// (`.redline/devices.toml`) of each walked directory, just before that
    /// directory's `.relaunch/devices.toml`.
    pub reference_project: bool,
    /// Who may own a manifest besides root; `None`: this process's
    /// effective user.
    pub owner: Option<u32>,
}

/// One manifest file to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Candidate {
    pub path: PathBuf,
    /// For a reference system's file: relaunch's file of the same place
    /// (where to move it).
    pub relaunch_path: Option<PathBuf>,
}

/// The folder names of project manifests: relaunch's and the reference
/// system's.
const PROJECT_DIR: &str = ".relaunch";
const REFERENCE_PROJECT_DIR: &str = ".redline";

impl ManifestSources {
    pub fn from_env() -> Self {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let config_dir = match std::env::var_os("XDG_CONFIG_HOME") {
            Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
            _ => home.as_ref().map(|home| home.join(".config")),
        };
        let in_config = |name: &str| {
            config_dir
                .as_ref()
                .map(|d| d.join(name).join("devices.toml"))
        };
        ManifestSources {
            system: Some(PathBuf::from("/etc/relaunch/devices.toml")),
            user: in_config("relaunch"),
            reference_system: Some(PathBuf::from("/etc/redline/devices.toml")),
            reference_user: in_config("redline"),
            walk_from: std::env::current_dir().ok(),
            // The working directory has its links resolved; so must the home.
            walk_stop: home.map(|h| h.canonicalize().unwrap_or(h)),
            reference_project: true,
            owner: None,
        }
    }

    /// Candidate paths in application order (later files add aliases).
    pub fn candidates(&self) -> Vec<PathBuf> {
        let (trusted, project) = self.split();
        trusted.into_iter().chain(project).map(|c| c.path).collect()
    }

    /// (system and user files, project files), each in application order,
    /// no path twice: at each place the reference system's file, then
    /// relaunch's.
    pub(super) fn split(&self) -> (Vec<Candidate>, Vec<Candidate>) {
        let mut trusted: Vec<Candidate> = Vec::new();
        fn add(list: &mut Vec<Candidate>, path: &Path, relaunch: Option<&PathBuf>) {
            if !list.iter().any(|c| c.path == path) {
                list.push(Candidate {
                    path: path.to_path_buf(),
                    relaunch_path: relaunch.cloned(),
                });
            }
        }
        for (reference, own) in [
            (&self.reference_system, &self.system),
            (&self.reference_user, &self.user),
        ] {
            if let Some(path) = reference {
                add(&mut trusted, path, own.as_ref());
            }
            if let Some(path) = own {
                add(&mut trusted, path, None);
            }
        }
        let mut project: Vec<Candidate> = Vec::new();
        // Farthest first, so the nearest is applied last.
        for dir in self.walked_dirs().into_iter().rev() {
            let own = dir.join(PROJECT_DIR).join("devices.toml");
            if self.reference_project {
                let reference = dir.join(REFERENCE_PROJECT_DIR).join("devices.toml");
                if !trusted.iter().any(|c| c.path == reference) {
                    add(&mut project, &reference, Some(&own));
                }
            }
            if !trusted.iter().any(|c| c.path == own) {
                add(&mut project, &own, None);
            }
        }
        (trusted, project)
    }

    /// The working directory and its ancestors up to the stop (nearest first).
    fn walked_dirs(&self) -> Vec<PathBuf> {
        let Some(start) = &self.walk_from else {
            return Vec::new();
        };
        let device = |dir: &Path| std::fs::metadata(dir).ok().map(|m| m.dev());
        let start_device = device(start);
        let stop = self
            .walk_stop
            .as_deref()
            .filter(|home| start.starts_with(home));
        let mut dirs = Vec::new();
        for dir in start.ancestors() {
            if let (Some(a), Some(b)) = (start_device, device(dir)) {
                if a != b {
                    break;
                }
            }
            dirs.push(dir.to_path_buf());
            if Some(dir) == stop {
                break;
            }
        }
        dirs
    }

    fn owner(&self) -> u32 {
        self.owner.unwrap_or_else(effective_uid)
    }
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The text of the manifest at `path`, `None` when there is none. A file
/// that exists but cannot be read (or may not be trusted) is an error: a
/// deny list must not be skipped silently.
pub(super) fn read_manifest(
    path: &Path,
    sources: &ManifestSources,
) -> Result<Option<String>, IdentityError> {
    let at_line = |line: usize| Origin {
        path: path.to_path_buf(),
        line,
    };
    let file = match read_regular_file(path, MAX_MANIFEST_BYTES, "a host manifest") {
        Ok(file) => file,
        Err(e) if e.is_missing() => return Ok(None),
        Err(FileError::TooLarge { .. }) => {
            return Err(IdentityError::Manifest {
                origin: at_line(1),
                message: format!("larger than {MAX_MANIFEST_BYTES} bytes; not a host manifest"),
            })
        }
        Err(e) => {
            return Err(IdentityError::Io {
                path: path.to_path_buf(),
                message: e.to_string(),
            })
        }
    };
    check_owner(path, file.metadata.uid(), sources.owner(), "the file")?;
    if let Some(dir) = path.parent() {
        let uid = std::fs::metadata(dir)
            .map_err(|e| IdentityError::Io {
                path: dir.to_path_buf(),
                message: e.to_string(),
            })?
            .uid();
        check_owner(path, uid, sources.owner(), "its directory")?;
    }
    let text = String::from_utf8(file.bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..offset]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        IdentityError::Manifest {
            origin: at_line(line),
            message: "not valid UTF-8".to_string(),
        }
    })?;
    Ok(Some(text))
}

fn check_owner(path: &Path, uid: u32, user: u32, what: &str) -> Result<(), IdentityError> {
    if uid == user || uid == 0 {
        return Ok(());
    }
    Err(IdentityError::Manifest {
        origin: Origin {
            path: path.to_path_buf(),
            line: 1,
        },
        message: format!(
            "{what} is owned by uid {uid}, not by you (uid {user}) or root; a manifest someone \
             else can write could re-point your aliases, so it is not read. Remove it, or have \
             it owned by you or root"
        ),
    })
}
