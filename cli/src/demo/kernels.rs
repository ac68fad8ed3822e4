//! The decode kernels' explicit-argument layouts (and, for tests, the
//! committed fixtures `tests/kernels/build/<target>/decode.co`; the demo
//! loads the same code objects from their bundle tree, `source`). The demo packs
//! kernargs and the twins read them at these offsets; a loaded module is
//! checked against them first, so a code object built from other sources
//! is refused with the argument that differs, not run with wrong pointers.

use relaunch::ArgFill;
use relaunch::Module;
use relaunch::Pm4Verdict;

/// Targets with a committed decode code object.
#[cfg(test)]
pub const TARGETS: &[&str] = &["gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201"];

/// The committed decode code object for `target` (tests; the demo itself
/// loads the bundle tree through a catalog, `source`).
#[cfg(test)]
pub fn bundled(target: &str) -> Option<&'static [u8]> {
    Some(match target {
        "gfx1010" => include_bytes!("../../../tests/kernels/build/gfx1010/decode.co"),
        "gfx1030" => include_bytes!("../../../tests/kernels/build/gfx1030/decode.co"),
        "gfx1100" => include_bytes!("../../../tests/kernels/build/gfx1100/decode.co"),
        "gfx1151" => include_bytes!("../../../tests/kernels/build/gfx1151/decode.co"),
        "gfx1201" => include_bytes!("../../../tests/kernels/build/gfx1201/decode.co"),
        _ => return None,
    })
}

/// One explicit argument: name, byte offset, size.
pub type Arg = (&'static str, u32, u32);

/// A kernel's explicit arguments, in order.
pub struct Layout {
    pub symbol: &'static str,
    pub args: &'static [Arg],
}

/// Every decode kernel (see the `Kernarg:` lines in the .cl sources).
pub const LAYOUTS: &[Layout] = &[
    Layout {
        symbol: "rmsnorm",
        args: &[
            ("out", 0, 8),
            ("x", 8, 8),
            ("w", 16, 8),
            ("n", 24, 4),
            ("eps", 28, 4),
        ],
    },
    Layout {
        symbol: "matvec",
        args: &[
            ("out", 0, 8),
            ("x", 8, 8),
            ("w", 16, 8),
            ("rows", 24, 4),
            ("cols", 28, 4),
        ],
    },
    Layout {
        symbol: "rope",
        args: &[
            ("qk", 0, 8),
            ("n", 8, 4),
            ("head_dim", 12, 4),
            ("pos", 16, 4),
        ],
    },
    Layout {
        symbol: "kv_append",
        args: &[
            ("kv", 0, 8),
            ("kv_new", 8, 8),
            ("n", 16, 4),
            ("capacity", 20, 4),
            ("pos", 24, 4),
        ],
    },
    Layout {
        symbol: "attention",
        args: &[
            ("out", 0, 8),
            ("q", 8, 8),
            ("kv", 16, 8),
            ("n", 24, 4),
            ("head_dim", 28, 4),
            ("capacity", 32, 4),
            ("pos", 36, 4),
        ],
    },
    Layout {
        symbol: "residual_add",
        args: &[("x", 0, 8), ("delta", 8, 8), ("n", 16, 4)],
    },
    Layout {
        symbol: "silu_mul",
        args: &[("out", 0, 8), ("gate_up", 8, 8), ("n", 16, 4)],
    },
    Layout {
        symbol: "sampler",
        args: &[
            ("token", 0, 8),
            ("x", 8, 8),
            ("w", 16, 8),
            ("lm_head", 24, 8),
            ("n", 32, 4),
            ("vocab", 36, 4),
            ("eps", 40, 4),
        ],
    },
];

/// The layout of `symbol` (a programming error if absent: callers name
/// only the kernels above).
pub fn layout(symbol: &str) -> &'static Layout {
    LAYOUTS
        .iter()
        .find(|l| l.symbol == symbol)
        .unwrap_or_else(|| unreachable_layout(symbol))
}

#[cold]
fn unreachable_layout(symbol: &str) -> ! {
    panic!("demo: no layout for kernel {symbol:?} (the demo names only its own kernels)")
}

/// The byte offset of argument `name` of `symbol`.
pub fn offset(symbol: &str, name: &str) -> usize {
    layout(symbol)
        .args
        .iter()
        .find(|a| a.0 == name)
        .map(|a| a.1 as usize)
        .unwrap_or_else(|| unreachable_layout(symbol))
}

/// Checks that `module` has every decode kernel, runnable (by PM4, or as
/// public AQL), with exactly these explicit arguments. Returns what differs.
pub fn check(module: &Module) -> Result<(), String> {
    for layout in LAYOUTS {
        let info = module
            .kernel_info(layout.symbol)
            .ok_or_else(|| format!("the code object has no kernel {:?}", layout.symbol))?;
        // A kernel only the PM4 path refuses runs as public AQL (its lane
        // says so); one neither path can run is refused here.
        let verdict = info.pm4_verdict();
        if !verdict.aql_refusals().is_empty() {
            return Err(format!(
                "kernel {} cannot run: the direct PM4 path {verdict}, and public AQL cannot \
                 honour that either",
                layout.symbol
            ));
        }
        let explicit: Vec<(&str, u32, u32)> = info
            .args
            .iter()
            .filter(|a| a.fill() == ArgFill::Caller)
            .map(|a| (a.name.as_deref().unwrap_or("?"), a.offset, a.size))
            .collect();
        let expected: Vec<(&str, u32, u32)> = layout.args.to_vec();
        if explicit != expected {
            return Err(format!(
                "kernel {} takes {explicit:?}, the demo packs {expected:?}",
                layout.symbol
            ));
        }
    }
    Ok(())
}

/// Explicit kernarg bytes for `symbol` from `(name, value)` pairs, placed
/// at the layout's offsets (every argument must be given once).
pub fn pack(symbol: &str, values: &[(&str, Value)]) -> Vec<u8> {
    let layout = layout(symbol);
    let end = layout.args.iter().map(|a| a.1 + a.2).max().unwrap_or(0) as usize;
    let mut out = vec![0u8; end];
    for (name, offset, size) in layout.args {
        let value = values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| unreachable_layout(symbol));
        let bytes = value.bytes();
        let at = *offset as usize;
        out[at..at + *size as usize].copy_from_slice(&bytes[..*size as usize]);
    }
    out
}

/// A kernel argument value.
#[derive(Debug, Clone, Copy)]
pub enum Value {
    Ptr(u64),
    U32(u32),
    F32(f32),
}

impl Value {
    fn bytes(self) -> [u8; 8] {
        let mut b = [0u8; 8];
        match self {
            Value::Ptr(p) => b.copy_from_slice(&p.to_le_bytes()),
            Value::U32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
            Value::F32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_places_values_at_layout_offsets() {
        let bytes = pack(
            "rope",
            &[
                ("qk", Value::Ptr(0x1122_3344_5566_7788)),
                ("n", Value::U32(64)),
                ("head_dim", Value::U32(16)),
                ("pos", Value::U32(9)),
            ],
        );
        assert_eq!(bytes.len(), 20);
        assert_eq!(&bytes[..8], &0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(&bytes[16..20], &9u32.to_le_bytes());
        assert_eq!(offset("attention", "pos"), 36);
    }

    #[test]
    fn every_target_is_bundled() {
        for t in TARGETS {
            assert!(bundled(t).is_some_and(|b| b.starts_with(b"\x7fELF")), "{t}");
        }
        assert!(bundled("gfx90a").is_none());
    }
}
