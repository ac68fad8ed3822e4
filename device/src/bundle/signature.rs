//! relaunch's `args_signature` for its own bundles: per kernel of a code
//! object, in metadata order, the ordered kernarg layout of its explicit
//! arguments (offset, size and value kind of each; hidden arguments are
//! the runtime's and left out). Written by `bundle pack` from the code
//! object's metadata and checked against it again at load, so a manifest
//! that describes other kernels than the archive holds is refused.
//!
//! JSON form (`format` = [`FORMAT`]):
//! `{"format":"relaunch.kernargs/v1","kernels":[{"name":"axpy","args":
//! [{"offset":0,"size":8,"kind":"global_buffer"},...]}]}`

use serde::{Deserialize, Serialize};

use crate::codeobj::CodeObject;

/// The `format` string of relaunch's signature.
pub const FORMAT: &str = "relaunch.kernargs/v1";

/// One explicit argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgSlot {
    pub offset: u32,
    pub size: u32,
    /// The metadata `.value_kind` (`global_buffer`, `by_value`, ...).
    pub kind: String,
}

/// One kernel's explicit arguments, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelSignature {
    pub name: String,
    pub args: Vec<ArgSlot>,
}

/// Every kernel of one code object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgsSignature {
    pub format: String,
    pub kernels: Vec<KernelSignature>,
}

impl ArgsSignature {
    /// The signature the code object's metadata gives.
    pub fn of(code: &CodeObject) -> ArgsSignature {
        ArgsSignature {
            format: FORMAT.to_string(),
            kernels: code
                .kernels()
                .iter()
                .map(|k| KernelSignature {
                    name: k.name.clone(),
                    args: k
                        .args
                        .iter()
                        .filter(|a| !a.value_kind.is_hidden())
                        .map(|a| ArgSlot {
                            offset: a.offset,
                            size: a.size,
                            kind: a.value_kind.as_str().to_string(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// `Ok` when `code`'s metadata gives exactly this signature, else the
    /// first difference in words.
    pub fn check(&self, code: &CodeObject) -> Result<(), String> {
        if self.format != FORMAT {
            return Err(format!(
                "format {:?} is not {FORMAT:?} (relaunch checks only its own signatures)",
                self.format
            ));
        }
        let have = ArgsSignature::of(code);
        let names = |s: &ArgsSignature| {
            s.kernels
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if self.kernels.len() != have.kernels.len()
            || self
                .kernels
                .iter()
                .zip(&have.kernels)
                .any(|(a, b)| a.name != b.name)
        {
            return Err(format!(
                "the manifest lists kernels [{}], the code object holds [{}]",
                names(self),
                names(&have)
            ));
        }
        for (want, got) in self.kernels.iter().zip(&have.kernels) {
            let slot = |a: &ArgSlot| format!("offset {} size {} {}", a.offset, a.size, a.kind);
            for i in 0..want.args.len().max(got.args.len()) {
                match (want.args.get(i), got.args.get(i)) {
                    (Some(w), Some(g)) if w == g => {}
                    (w, g) => {
                        return Err(format!(
                            "kernel {} explicit argument {i}: manifest says {}, metadata says {}",
                            want.name,
                            w.map_or("nothing".to_string(), slot),
                            g.map_or("nothing".to_string(), slot)
                        ))
                    }
                }
            }
        }
        Ok(())
    }
}
