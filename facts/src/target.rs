//! GPU target names (`gfx1100`, `gfx1201:xnack-`) as written, parsed in
//! canonical spelling only; what each names comes from its facts row
//! (`rows.rs`). Anything without a row is refused by name.

use std::fmt;

use crate::family::Family;
use crate::generic::GenericFacts;
use crate::rows::TargetFacts;

/// A target feature setting as written after the processor name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeatureSetting {
    On,
    Off,
}

/// A parsed target such as `gfx1100:xnack-` (the processor is kept as written).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GfxTarget {
    processor: String,
    features: Vec<(String, FeatureSetting)>,
}

/// Why a target string was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("target name {0:?} is not of the form gfxNNNN[:feature+|-]...")]
    Malformed(String),
    /// Spellings that name a processor but are not how it is written
    /// (`gfx01100`): one board, one spelling, so a deny entry cannot be
    /// dodged by writing its target differently.
    #[error("target name {given:?} is not in canonical spelling; write {canonical}")]
    NotCanonical { given: String, canonical: String },
    /// A generic target where a processor is needed (a device, a facts row).
    #[error(
        "target {target} is a generic target: its code runs on {covers}, and takes the \
         facts of the processor it is loaded on; name that processor"
    )]
    Generic { target: String, covers: String },
    #[error(
        "target {0} is not an RDNA GPU relaunch can encode PM4 for (supported: {list})",
        list = TargetFacts::supported_list()
    )]
    Unsupported(String),
}

impl GfxTarget {
    /// Parse `gfx1100`, `gfx1100:xnack-`, or a full target id such as
    /// `amdgcn-amd-amdhsa--gfx1100:sramecc+` (the triple prefix is dropped).
    /// Generic targets (`gfx11-generic`) parse too; they have no facts row.
    pub fn parse(text: &str) -> Result<Self, TargetError> {
        let id = text.rsplit("--").next().unwrap_or(text).trim();
        let mut parts = id.split(':');
        let processor = parts.next().unwrap_or_default();
        let features = Self::parse_features(text, parts)?;
        if crate::generic::is_generic_spelling(processor) {
            return Ok(GfxTarget {
                processor: processor.to_string(),
                features,
            });
        }
        let digits = processor.strip_prefix("gfx").unwrap_or("");
        let well_formed = !digits.is_empty()
            && digits.len() <= 16
            && digits
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase());
        if !well_formed {
            return Err(TargetError::Malformed(text.to_string()));
        }
        if !is_canonical_digits(digits) {
            let trimmed = digits.trim_start_matches('0');
            return Err(if is_canonical_digits(trimmed) {
                TargetError::NotCanonical {
                    given: text.to_string(),
                    canonical: format!("gfx{trimmed}"),
                }
            } else {
                TargetError::Malformed(text.to_string())
            });
        }
        Ok(GfxTarget {
            processor: processor.to_string(),
            features,
        })
    }

    fn parse_features<'a>(
        text: &str,
        parts: impl Iterator<Item = &'a str>,
    ) -> Result<Vec<(String, FeatureSetting)>, TargetError> {
        let mut features = Vec::new();
        for feature in parts {
            let (name, setting) = if let Some(name) = feature.strip_suffix('+') {
                (name, FeatureSetting::On)
            } else if let Some(name) = feature.strip_suffix('-') {
                (name, FeatureSetting::Off)
            } else {
                return Err(TargetError::Malformed(text.to_string()));
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(TargetError::Malformed(text.to_string()));
            }
            features.push((name.to_string(), setting));
        }
        Ok(features)
    }

    /// The processor name without features, e.g. `gfx1100`.
    pub fn processor(&self) -> &str {
        &self.processor
    }

    /// Feature settings in the order written.
    pub fn features(&self) -> &[(String, FeatureSetting)] {
        &self.features
    }

    /// The target's facts row, or an error naming the unsupported target
    /// (a generic target has none: its code takes the facts of the
    /// processor it is loaded on).
    pub fn facts(&self) -> Result<&'static TargetFacts, TargetError> {
        if let Some(g) = self.generic() {
            return Err(TargetError::Generic {
                target: self.to_string(),
                covers: g.covers_list(),
            });
        }
        TargetFacts::lookup(&self.processor)
            .ok_or_else(|| TargetError::Unsupported(self.to_string()))
    }

    /// The generic target this names (`gfx11-generic`), when it is one
    /// relaunch knows.
    pub fn generic(&self) -> Option<&'static GenericFacts> {
        GenericFacts::lookup(&self.processor)
    }

    /// The same feature settings on processor `processor` (a generic
    /// object's target read as the processor it runs on).
    pub fn with_processor(&self, processor: &str) -> GfxTarget {
        GfxTarget {
            processor: processor.to_string(),
            features: self.features.clone(),
        }
    }

    /// Whether code built for `self` runs on the processor `on` names:
    /// the same processor, or a generic target covering it. Features are
    /// not compared here.
    pub fn runs_on(&self, on: &GfxTarget) -> bool {
        self.processor == on.processor
            || self
                .generic()
                .is_some_and(|g| g.covers_processor(&on.processor))
    }

    /// The encoder family, or an error naming the unsupported target.
    pub fn family(&self) -> Result<Family, TargetError> {
        self.facts().map(|f| f.family)
    }
}

impl fmt::Display for GfxTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.processor)?;
        for (name, setting) in &self.features {
            let sign = match setting {
                FeatureSetting::On => '+',
                FeatureSetting::Off => '-',
            };
            write!(f, ":{name}{sign}")?;
        }
        Ok(())
    }
}

/// The digits after `gfx` as LLVM writes processors: a decimal major
/// version without leading zeros, then one lower-case hex digit each for
/// minor and stepping (`1100`, `90a`).
fn is_canonical_digits(digits: &str) -> bool {
    let bytes = digits.as_bytes();
    if bytes.len() < 3 || bytes.len() > 5 {
        return false;
    }
    let (major, rest) = bytes.split_at(bytes.len() - 2);
    major[0] != b'0'
        && major.iter().all(u8::is_ascii_digit)
        && rest
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

/// Family of a bare processor name; `None` for anything relaunch refuses
/// (non-canonical spellings such as `gfx01100` included).
pub fn family_of(processor: &str) -> Option<Family> {
    TargetFacts::lookup(processor).map(|f| f.family)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_of_supported_targets() {
        for (name, family) in [
            ("gfx1010", Family::Gfx10),
            ("gfx1030", Family::Gfx10),
            ("gfx1036", Family::Gfx10),
            ("gfx1100", Family::Gfx11),
            ("gfx1151", Family::Gfx11),
            ("gfx1200", Family::Gfx12),
            ("gfx1201", Family::Gfx12),
        ] {
            assert_eq!(
                GfxTarget::parse(name).unwrap().family(),
                Ok(family),
                "{name}"
            );
        }
    }

    #[test]
    fn refuses_other_families_by_name() {
        for name in [
            "gfx90a", "gfx942", "gfx1250", "gfx1037", "gfx1104", "gfx1020",
        ] {
            let err = GfxTarget::parse(name).unwrap().family().unwrap_err();
            assert!(err.to_string().contains(name), "{err}");
        }
    }

    #[test]
    fn parses_features_and_triples() {
        let t = GfxTarget::parse("amdgcn-amd-amdhsa--gfx1030:sramecc-:xnack+").unwrap();
        assert_eq!(t.processor(), "gfx1030");
        assert_eq!(t.to_string(), "gfx1030:sramecc-:xnack+");
        assert!(GfxTarget::parse("gfx").is_err());
        assert!(GfxTarget::parse("gfx1100:xnack").is_err());
        assert!(GfxTarget::parse("GFX1100").is_err());
        assert!(GfxTarget::parse("sm_90").is_err());
    }

    #[test]
    fn only_canonical_spellings_parse() {
        for (given, canonical) in [("gfx01100", "gfx1100"), ("gfx001201", "gfx1201")] {
            match GfxTarget::parse(given) {
                Err(TargetError::NotCanonical { canonical: c, .. }) => assert_eq!(c, canonical),
                other => panic!("{given}: {other:?}"),
            }
        }
        for bad in ["gfx0", "gfx00", "gfx11a00", "gfx1a"] {
            assert!(GfxTarget::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(family_of("gfx01100"), None);
        assert_eq!(GfxTarget::parse("gfx90a").unwrap().processor(), "gfx90a");
    }

    #[test]
    fn generic_targets_parse_and_cover_their_processors() {
        let g = GfxTarget::parse("amdgcn-amd-amdhsa--gfx11-generic:xnack-").unwrap();
        assert_eq!(g.processor(), "gfx11-generic");
        assert_eq!(g.to_string(), "gfx11-generic:xnack-");
        let on = |p: &str| g.runs_on(&GfxTarget::parse(p).unwrap());
        assert!(on("gfx1100") && on("gfx1151") && on("gfx1153"));
        assert!(!on("gfx1030") && !on("gfx1200"));
        let err = g.facts().unwrap_err().to_string();
        assert!(err.contains("generic") && err.contains("gfx1103"), "{err}");
        // A generic relaunch does not know parses, and is unsupported.
        let cdna = GfxTarget::parse("gfx9-generic").unwrap();
        assert!(matches!(cdna.facts(), Err(TargetError::Unsupported(_))));
        assert!(!cdna.runs_on(&GfxTarget::parse("gfx900").unwrap()));
        assert!(GfxTarget::parse("gfx011-generic").is_err());
        // A processor runs only its own code.
        let exact = GfxTarget::parse("gfx1100").unwrap();
        assert!(exact.runs_on(&exact.clone()));
        assert!(!exact.runs_on(&GfxTarget::parse("gfx1101").unwrap()));
    }
}
