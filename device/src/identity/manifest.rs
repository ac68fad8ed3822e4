//! The host manifest (`devices.toml`): per-host aliases and a deny list.
//!
//! Format (the shape `INTEGRATION.md` shows; aliases sit directly in the host
//! table, next to `deny`):
//!
//! ```toml
//! [host.hipx]
//! dev0 = "uuid:GPU-43390a851e296ee5"
//! apu  = "bdf:0000:bf:00.0"
//! deny = ["bdf:0000:bf:00.0"]  # Strix Halo APU: device reset takes the host down
//! ```
//!
//! A deny entry's reason is either written inside the string after `#`
//! (`"bdf:0000:bf:00.0 # reason"`, wins when present) or as the TOML comment
//! at the end of the entry's line (every entry on that line shares it).
//!
//! Which files apply and in what order: `super::sources` (system, user,
//! then project files from the farthest to the working directory). Aliases
//! of a later file override an earlier one's, except that a project file
//! never re-points an alias of the system or user file (it is kept, with a
//! warning): a project can add aliases, not move the user's. Deny lists
//! from all files accumulate; nothing can remove an earlier deny entry.
//!
//! A deny entry means the device it named in the file that declared it: its
//! aliases are expanded when that file is applied (with that file's aliases
//! and the earlier files'), so a later file that re-points an alias moves the
//! alias, never the deny entry. An alias not defined by then fails the load.
//!
//! Host names match ignoring ASCII case (DNS names do; `[host.HipX]` is
//! `hipx`), and a file with two sections naming one host that way is refused.
//! Aliases come from the active host's sections (`RELAUNCH_HOST`, else the
//! kernel's host name). Deny entries come from those and also from the
//! sections of any of the machine's own names (`super::hostname`: the
//! kernel's host name and `/etc/hostname`), so neither naming another host
//! in `RELAUNCH_HOST` nor renaming the host in a user namespace can drop the
//! deny list written for this machine.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

use super::error::{IdentityError, Origin};
use super::selector::{validate_alias_name, Selector};
use super::sources::{read_manifest, ManifestSources};

/// `[host.NAME] alias = "selector"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasEntry {
    pub name: String,
    pub selector: Selector,
    pub origin: Origin,
}

/// One `deny` entry with the reason quoted back when it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenyEntry {
    /// The selector as written (may be an `@alias`).
    pub selector: Selector,
    /// What it named in its own file: `selector` with aliases expanded
    /// there, never an alias. This is what is matched.
    pub target: Selector,
    /// The selector part as written.
    pub text: String,
    pub reason: Option<String>,
    pub origin: Origin,
}

/// The active host's aliases and deny list, merged over all files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostManifest {
    host: String,
    /// The machine's own names that differ from `host` (ignoring case):
    /// their sections add deny entries (and aliases those entries use).
    machine: Vec<String>,
    aliases: BTreeMap<String, AliasEntry>,
    machine_aliases: BTreeMap<String, AliasEntry>,
    /// Aliases (of `aliases`, of `machine_aliases`) a system or user file
    /// defined: project files may not re-point them.
    pinned: [BTreeSet<String>; 2],
    deny: Vec<DenyEntry>,
    files: Vec<PathBuf>,
}

impl HostManifest {
    /// No files: no aliases, nothing denied.
    pub fn empty(host: impl Into<String>) -> Self {
        HostManifest::empty_for(host, None)
    }

    /// No files yet, for active host `host` on the machine named `machine`
    /// (`None`: the same as `host`).
    pub fn empty_for(host: impl Into<String>, machine: Option<&str>) -> Self {
        let names: Vec<String> = machine.into_iter().map(str::to_string).collect();
        HostManifest::empty_for_names(host, &names)
    }

    /// No files yet, for active host `host` on the machine with these names.
    pub fn empty_for_names(host: impl Into<String>, machine: &[String]) -> Self {
        let host = host.into();
        let mut names: Vec<String> = Vec::new();
        for name in machine {
            if !name.eq_ignore_ascii_case(&host)
                && !names.iter().any(|n| n.eq_ignore_ascii_case(name))
            {
                names.push(name.clone());
            }
        }
        HostManifest {
            host,
            machine: names,
            aliases: BTreeMap::new(),
            machine_aliases: BTreeMap::new(),
            pinned: Default::default(),
            deny: Vec::new(),
            files: Vec::new(),
        }
    }

    /// Read every existing candidate file in order. A file that exists but
    /// cannot be read is an error: a deny list must not be skipped silently.
    pub fn load(sources: &ManifestSources, host: &str) -> Result<Self, IdentityError> {
        HostManifest::load_for(sources, host, None)
    }

    /// As `load`, with the machine's own name when the active host was
    /// overridden (`RELAUNCH_HOST`): that name's deny entries apply too.
    pub fn load_for(
        sources: &ManifestSources,
        host: &str,
        machine: Option<&str>,
    ) -> Result<Self, IdentityError> {
        let names: Vec<String> = machine.into_iter().map(str::to_string).collect();
        HostManifest::load_for_names(sources, host, &names)
    }

    /// As `load`, for active host `host` on the machine with these names
    /// (`hostname::machine_names`): their sections' deny entries apply too.
    pub fn load_for_names(
        sources: &ManifestSources,
        host: &str,
        machine: &[String],
    ) -> Result<Self, IdentityError> {
        let mut manifest = HostManifest::empty_for_names(host, machine);
        let (trusted, project) = sources.split();
        for (candidate, is_project) in trusted
            .into_iter()
            .map(|c| (c, false))
            .chain(project.into_iter().map(|c| (c, true)))
        {
            let path = &candidate.path;
            let Some(text) = read_manifest(path, sources)
                .map_err(|e| reference_hint(e, candidate.relaunch_path.as_deref()))?
            else {
                continue;
            };
            manifest
                .merge(path, &text, is_project)
                .map_err(|e| reference_hint(e, candidate.relaunch_path.as_deref()))?;
            if let Some(own) = &candidate.relaunch_path {
                crate::migration::warn_once(&format!("manifest {}", path.display()), || {
                    format!(
                        "{} is the reference system's host manifest: relaunch reads it in the \
                         same format (its deny entries and aliases apply, before those of {}); \
                         move its entries to {} (docs/migrating.md)",
                        path.display(),
                        own.display(),
                        own.display()
                    )
                });
            }
        }
        Ok(manifest)
    }

    /// Apply a system or user file's text (named `path` in messages) over
    /// this manifest.
    pub fn merge_text(&mut self, path: &Path, text: &str) -> Result<(), IdentityError> {
        self.merge(path, text, false)
    }

    /// Apply a project file's text: as `merge_text`, but an alias a system
    /// or user file defined keeps its selector.
    pub fn merge_project_text(&mut self, path: &Path, text: &str) -> Result<(), IdentityError> {
        self.merge(path, text, true)
    }

    fn merge(&mut self, path: &Path, text: &str, project: bool) -> Result<(), IdentityError> {
        let file: ManifestFile = toml::from_str(text).map_err(|e| IdentityError::Manifest {
            origin: origin_at(path, text, e.span().map_or(0, |s| s.start)),
            message: e.message().trim().to_string(),
        })?;
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for host in file.host.keys() {
            if let Some(first) = seen.insert(host.to_ascii_lowercase(), host.clone()) {
                return Err(IdentityError::Manifest {
                    origin: origin_at(path, text, 0),
                    message: format!(
                        "sections [host.{first}] and [host.{host}] name the same host (host \
                         names match ignoring case); merge them into one"
                    ),
                });
            }
        }
        let mut active = Vec::new();
        let mut machine = Vec::new();
        for (host, section) in file.host {
            let parsed = parse_section(path, text, section)?;
            // Sections of other hosts are still validated above: a typo
            // fails on every host.
            if host.eq_ignore_ascii_case(&self.host) {
                active.push(parsed);
            } else if self.machine.iter().any(|m| host.eq_ignore_ascii_case(m)) {
                machine.push(parsed);
            }
        }
        // Aliases first, then this file's deny entries expanded against
        // them: what an entry names is fixed here, before later files.
        let mut new_deny = Vec::new();
        let machine_name = self.machine.join(" or ");
        let [pinned, machine_pinned] = &mut self.pinned;
        for (sections, host, aliases, pinned) in [
            (active, self.host.as_str(), &mut self.aliases, pinned),
            (
                machine,
                machine_name.as_str(),
                &mut self.machine_aliases,
                machine_pinned,
            ),
        ] {
            for parsed in &sections {
                for alias in &parsed.aliases {
                    let old = aliases.get(&alias.name);
                    if let (true, true, Some(old)) = (project, pinned.contains(&alias.name), old) {
                        tracing::warn!(
                            alias = %alias.name, kept = %old.origin, ignored = %alias.origin,
                            "a project manifest cannot re-point an alias of the system or user \
                             manifest; rename it in the project file"
                        );
                        continue;
                    }
                    if let Some(old) = old {
                        tracing::debug!(alias = %alias.name, old = %old.origin, new = %alias.origin, "alias overridden");
                    }
                    aliases.insert(alias.name.clone(), alias.clone());
                    if !project {
                        pinned.insert(alias.name.clone());
                    }
                }
            }
            for parsed in sections {
                for mut entry in parsed.deny {
                    entry.target = expand_deny(&entry, host, aliases)?;
                    new_deny.push(entry);
                }
            }
        }
        self.deny.extend(new_deny);
        self.files.push(path.to_path_buf());
        Ok(())
    }

    /// The machine's own names that differ from the active host.
    pub fn machine(&self) -> &[String] {
        &self.machine
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn alias(&self, name: &str) -> Option<&AliasEntry> {
        self.aliases.get(name)
    }

    pub fn aliases(&self) -> impl Iterator<Item = &AliasEntry> {
        self.aliases.values()
    }

    pub(super) fn alias_map(&self) -> &BTreeMap<String, AliasEntry> {
        &self.aliases
    }

    pub fn deny_entries(&self) -> &[DenyEntry] {
        &self.deny
    }

    /// The files that were read, in order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

/// A reference system's file that fails the load says so: relaunch refuses
/// every device open while a manifest it cannot apply exists (its deny list
/// might name the device), and the user should know which migration step
/// unblocks them.
fn reference_hint(e: IdentityError, relaunch_path: Option<&Path>) -> IdentityError {
    let Some(own) = relaunch_path else {
        return e;
    };
    let step = format!(
        " (a reference system's manifest: relaunch reads it in its own format, which the \
         reference documents share, and opens no device while it cannot; fix it, or move its \
         entries to {} and delete it; docs/migrating.md)",
        own.display()
    );
    match e {
        IdentityError::Manifest { origin, message } => IdentityError::Manifest {
            origin,
            message: message + &step,
        },
        IdentityError::Io { path, message } => IdentityError::Io {
            path,
            message: message + &step,
        },
        other => other,
    }
}

/// A deny entry's selector with its aliases expanded (to what they name at
/// this point of loading); an undefined or looping alias fails the load.
fn expand_deny(
    entry: &DenyEntry,
    host: &str,
    aliases: &BTreeMap<String, AliasEntry>,
) -> Result<Selector, IdentityError> {
    super::resolve::expand_in(&entry.selector, host, aliases)
        .map(|(target, _)| target)
        .map_err(|e| IdentityError::Manifest {
            origin: entry.origin.clone(),
            message: format!(
                "deny entry `{}`: {e} (a deny entry may use aliases of its own file \
                 or of earlier ones)",
                entry.text
            ),
        })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    #[serde(default)]
    host: BTreeMap<String, BTreeMap<String, Spanned<HostValue>>>,
}

/// A value in a host table: an alias's selector, or the `deny` list.
enum HostValue {
    Selector(String),
    List(Vec<Spanned<String>>),
}

impl<'de> Deserialize<'de> for HostValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(HostValueVisitor)
    }
}

struct HostValueVisitor;

impl<'de> Visitor<'de> for HostValueVisitor {
    type Value = HostValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a selector string (an alias) or, for `deny`, a list of selector strings")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<HostValue, E> {
        Ok(HostValue::Selector(value.to_string()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<HostValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<String>>()? {
            items.push(item);
        }
        Ok(HostValue::List(items))
    }
}

struct ParsedSection {
    aliases: Vec<AliasEntry>,
    deny: Vec<DenyEntry>,
}

fn parse_section(
    path: &Path,
    text: &str,
    section: BTreeMap<String, Spanned<HostValue>>,
) -> Result<ParsedSection, IdentityError> {
    let mut parsed = ParsedSection {
        aliases: Vec::new(),
        deny: Vec::new(),
    };
    for (key, value) in section {
        let origin = origin_at(path, text, value.span().start);
        let fail = |message: String| IdentityError::Manifest {
            origin: origin.clone(),
            message,
        };
        match (key.as_str(), value.into_inner()) {
            ("deny", HostValue::List(items)) => {
                for item in items {
                    parsed.deny.push(parse_deny(path, text, item)?);
                }
            }
            ("deny", HostValue::Selector(_)) => {
                return Err(fail(
                    "`deny` must be a list of selector strings, e.g. deny = [\"bdf:0000:bf:00.0\"]"
                        .to_string(),
                ))
            }
            (name, HostValue::Selector(selector_text)) => {
                validate_alias_name(name).map_err(|e| fail(format!("alias key: {e}")))?;
                let selector = Selector::parse(&selector_text)
                    .map_err(|e| fail(format!("alias `{name}`: {e}")))?;
                parsed.aliases.push(AliasEntry {
                    name: name.to_string(),
                    selector,
                    origin,
                });
            }
            (name, HostValue::List(_)) => {
                return Err(fail(format!(
                    "`{name}` is a list, but only `deny` may be a list; an alias is one \
                     selector string, e.g. {name} = \"uuid:GPU-…\""
                )))
            }
        }
    }
    Ok(parsed)
}

fn parse_deny(path: &Path, text: &str, item: Spanned<String>) -> Result<DenyEntry, IdentityError> {
    let span = item.span();
    let origin = origin_at(path, text, span.start);
    let raw = item.into_inner();
    let (selector_text, in_string_reason) = match raw.split_once('#') {
        Some((selector, reason)) => (selector.trim(), non_empty(reason)),
        None => (raw.trim(), None),
    };
    let selector = Selector::parse(selector_text).map_err(|e| IdentityError::Manifest {
        origin: origin.clone(),
        message: format!("deny entry: {e}"),
    })?;
    let reason = in_string_reason.or_else(|| trailing_comment(text, span.end));
    Ok(DenyEntry {
        target: selector.clone(),
        selector,
        text: selector_text.to_string(),
        reason,
        origin,
    })
}

fn non_empty(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// The `# comment` after byte `from` on the same line, skipping over any
/// further strings, commas and brackets on that line.
fn trailing_comment(text: &str, from: usize) -> Option<String> {
    let rest = text.get(from..)?;
    let line = rest.split('\n').next().unwrap_or("");
    let mut chars = line.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '#' => return non_empty(&line[at + 1..]),
            '"' => {
                // A basic string: skip to the closing quote, honouring escapes.
                while let Some((_, c)) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '\'' => {
                for (_, c) in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    None
}

fn origin_at(path: &Path, text: &str, offset: usize) -> Origin {
    let end = offset.min(text.len());
    let line = text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1;
    Origin {
        path: path.to_path_buf(),
        line,
    }
}
