//! Device selector grammar (API.md "Device selectors"). Every selector names
//! its kind with a prefix; unprefixed text is refused so that an ordinal copied
//! from another tool can never silently pick a device.

use std::fmt;

use super::anchor::{Bdf, BdfForm, GpuUuid};
use relaunch_facts::GfxTarget;

/// Listed in every parse error so the caller sees what would have worked.
pub const ACCEPTED_FORMS: &str = "uuid:GPU-<hex> (e.g. uuid:GPU-43390a851e296ee5), \
bdf:<domain:bus:device.function> or bdf:<bus:device.function> (e.g. bdf:0000:66:00.0, bdf:66:00.0), \
slot:<label> (e.g. slot:3), name:<gfx or product name> (e.g. name:gfx1100), \
index:<n> (volatile ROCr order, e.g. index:0), @<alias> (from the host manifest, e.g. @dev0), \
sim:<gfx target> (simulated device, e.g. sim:gfx1201)";

/// Longest selector accepted; longer input is refused before it is parsed.
const MAX_SELECTOR_LEN: usize = 256;

/// A parsed device selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// `uuid:GPU-…`: stable when the device reports a real UUID.
    Uuid(GpuUuid),
    /// `bdf:…`: the PCI address (short form means domain 0).
    Bdf { bdf: Bdf, form: BdfForm },
    /// `slot:…`: the host's PCI slot label.
    Slot(String),
    /// `name:…`: gfx name or product name; refused when ambiguous.
    Name(String),
    /// `index:N`: volatile ROCr discovery ordinal.
    Index(usize),
    /// `@alias`: expanded through the host manifest.
    Alias(String),
    /// `sim:<target>`: the simulated device.
    Sim(GfxTarget),
}

/// Why a selector was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("device selector {input:?}: {problem}; accepted forms: {ACCEPTED_FORMS}")]
pub struct SelectorError {
    /// The input as given (cut to the first 256 characters).
    pub input: String,
    /// What was wrong with it.
    pub problem: String,
}

impl Selector {
    /// Parse one selector; surrounding whitespace is ignored.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let fail = |problem: String| SelectorError {
            input: input.chars().take(MAX_SELECTOR_LEN).collect(),
            problem,
        };
        if input.len() > MAX_SELECTOR_LEN {
            return Err(fail(format!(
                "longer than {MAX_SELECTOR_LEN} bytes ({} bytes)",
                input.len()
            )));
        }
        let text = input.trim();
        if text.is_empty() {
            return Err(fail("empty selector".to_string()));
        }
        if let Some(alias) = text.strip_prefix('@') {
            validate_alias_name(alias).map_err(fail)?;
            return Ok(Selector::Alias(alias.to_string()));
        }
        let Some((prefix, value)) = text.split_once(':') else {
            return Err(fail(
                "has no kind prefix (unprefixed selectors are refused: an ordinal or name \
                 copied from another tool may pick the wrong device)"
                    .to_string(),
            ));
        };
        if value.is_empty() {
            return Err(fail(format!("nothing after `{prefix}:`")));
        }
        match prefix {
            "uuid" => GpuUuid::parse(value).map(Selector::Uuid).map_err(fail),
            "bdf" => Bdf::parse(value)
                .map(|(bdf, form)| Selector::Bdf { bdf, form })
                .map_err(fail),
            "slot" => validate_label(value, "slot label")
                .map(|()| Selector::Slot(value.to_string()))
                .map_err(fail),
            "name" => validate_name(value)
                .map(|()| Selector::Name(value.to_string()))
                .map_err(fail),
            "index" => parse_index(value).map(Selector::Index).map_err(fail),
            "sim" => parse_sim(value).map(Selector::Sim).map_err(fail),
            other => Err(fail(format!("unknown prefix `{other}:`"))),
        }
    }

    /// The kind prefix as written (`uuid`, `bdf`, …, `@` for aliases).
    pub fn kind(&self) -> &'static str {
        match self {
            Selector::Uuid(_) => "uuid",
            Selector::Bdf { .. } => "bdf",
            Selector::Slot(_) => "slot",
            Selector::Name(_) => "name",
            Selector::Index(_) => "index",
            Selector::Alias(_) => "@",
            Selector::Sim(_) => "sim",
        }
    }
}

impl std::str::FromStr for Selector {
    type Err = SelectorError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Selector::parse(s)
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Uuid(uuid) => write!(f, "uuid:{uuid}"),
            Selector::Bdf {
                bdf,
                form: BdfForm::Full,
            } => write!(f, "bdf:{bdf}"),
            Selector::Bdf {
                bdf,
                form: BdfForm::Short,
            } => write!(
                f,
                "bdf:{:02x}:{:02x}.{:x}",
                bdf.bus, bdf.device, bdf.function
            ),
            Selector::Slot(label) => write!(f, "slot:{label}"),
            Selector::Name(name) => write!(f, "name:{name}"),
            Selector::Index(index) => write!(f, "index:{index}"),
            Selector::Alias(alias) => write!(f, "@{alias}"),
            Selector::Sim(target) => write!(f, "sim:{target}"),
        }
    }
}

/// Alias names: 1-64 of `A-Z a-z 0-9 _ - .`, so they read the same in TOML
/// keys, shell arguments and messages.
pub fn validate_alias_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("nothing after `@`".to_string());
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.len() > 64 || !name.chars().all(allowed) {
        return Err(format!(
            "alias name {name:?} must be 1-64 characters of A-Z a-z 0-9 _ - ."
        ));
    }
    Ok(())
}

fn validate_label(value: &str, what: &str) -> Result<(), String> {
    if value.len() > 64 || value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{what} {value:?} must be at most 64 characters without spaces"
        ));
    }
    Ok(())
}

fn validate_name(value: &str) -> Result<(), String> {
    if value.len() > 128 || value.chars().any(|c| c.is_control()) {
        return Err(format!(
            "name {value:?} must be at most 128 printable characters"
        ));
    }
    Ok(())
}

fn parse_index(value: &str) -> Result<usize, String> {
    if value.len() > 6 || !value.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "index {value:?} must be a decimal ordinal such as 0 or 3"
        ));
    }
    value.parse().map_err(|e| format!("index {value:?}: {e}"))
}

fn parse_sim(value: &str) -> Result<GfxTarget, String> {
    let target = GfxTarget::parse(value).map_err(|e| e.to_string())?;
    target.family().map_err(|e| e.to_string())?;
    Ok(target)
}
