//! Read-modify-write operations shared by LDS (`ds_*`) and global/flat
//! atomics: what each computes from the old value and the data operands.

/// An atomic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AOp {
    Add,
    Sub,
    /// data - mem
    Rsub,
    /// mem >= data ? 0 : mem + 1
    Inc,
    /// mem == 0 || mem > data ? data : mem - 1
    Dec,
    MinI,
    MaxI,
    MinU,
    MaxU,
    And,
    Or,
    Xor,
    /// (mem & !data0) | data1
    Mskor,
    Swap,
    /// mem == cmp ? new : mem
    Cmpswap,
    AddF32,
    MinF32,
    MaxF32,
}

/// The operation and width a name's `<op>_<type>` tail names
/// (`add_u32`, `smin_x2`, `cmpswap_b64`, `add_f32`, ...).
pub(crate) fn parse(op: &str) -> Option<(AOp, bool)> {
    // gfx10 spellings: `add`, `add_x2`, `smin`, `umax_x2`, `swap`, `cmpswap`.
    let (base, wide) = match op.strip_suffix("_x2") {
        Some(b) => (b, true),
        None => (op, false),
    };
    let gfx10 = |b: &str| -> Option<AOp> {
        Some(match b {
            "add" => AOp::Add,
            "sub" => AOp::Sub,
            "inc" => AOp::Inc,
            "dec" => AOp::Dec,
            "smin" => AOp::MinI,
            "smax" => AOp::MaxI,
            "umin" => AOp::MinU,
            "umax" => AOp::MaxU,
            "and" => AOp::And,
            "or" => AOp::Or,
            "xor" => AOp::Xor,
            "swap" => AOp::Swap,
            "cmpswap" => AOp::Cmpswap,
            _ => return None,
        })
    };
    if let Some(a) = gfx10(base) {
        return Some((a, wide));
    }
    let (name, ty) = op.rsplit_once('_')?;
    let wide = match ty {
        "u32" | "i32" | "b32" | "f32" => false,
        "u64" | "i64" | "b64" => true,
        _ => return None,
    };
    let a = match (name, ty) {
        ("add", "f32") => AOp::AddF32,
        ("min" | "min_num", "f32") => AOp::MinF32,
        ("max" | "max_num", "f32") => AOp::MaxF32,
        (_, "f32") => return None,
        ("add", _) => AOp::Add,
        ("sub", _) => AOp::Sub,
        ("rsub", _) => AOp::Rsub,
        ("inc", _) => AOp::Inc,
        ("dec", _) => AOp::Dec,
        ("min", "i32" | "i64") => AOp::MinI,
        ("max", "i32" | "i64") => AOp::MaxI,
        ("min", _) => AOp::MinU,
        ("max", _) => AOp::MaxU,
        ("and", _) => AOp::And,
        ("or", _) => AOp::Or,
        ("xor", _) => AOp::Xor,
        ("mskor", _) => AOp::Mskor,
        ("swap" | "wrxchg_rtn" | "storexchg_rtn", _) => AOp::Swap,
        ("cmpswap", _) => AOp::Cmpswap,
        _ => return None,
    };
    Some((a, wide))
}

/// The new memory value. `data` is the first data operand, `data2` the
/// second (Mskor's OR value, Cmpswap's compare value). 32-bit ops use the
/// low halves.
#[inline]
pub(crate) fn apply(op: AOp, wide: bool, mem: u64, data: u64, data2: u64) -> u64 {
    let (m, d) = if wide {
        (mem, data)
    } else {
        (mem & 0xFFFF_FFFF, data & 0xFFFF_FFFF)
    };
    let sx = |v: u64| {
        if wide {
            v as i64
        } else {
            i64::from(v as u32 as i32)
        }
    };
    let f = |v: u64| f32::from_bits(v as u32);
    let r = match op {
        AOp::Add => m.wrapping_add(d),
        AOp::Sub => m.wrapping_sub(d),
        AOp::Rsub => d.wrapping_sub(m),
        AOp::Inc => {
            if m >= d {
                0
            } else {
                m + 1
            }
        }
        AOp::Dec => {
            if m == 0 || m > d {
                d
            } else {
                m - 1
            }
        }
        AOp::MinI => sx(m).min(sx(d)) as u64,
        AOp::MaxI => sx(m).max(sx(d)) as u64,
        AOp::MinU => m.min(d),
        AOp::MaxU => m.max(d),
        AOp::And => m & d,
        AOp::Or => m | d,
        AOp::Xor => m ^ d,
        AOp::Mskor => (m & !d) | data2,
        AOp::Swap => d,
        AOp::Cmpswap => {
            let c = if wide { data2 } else { data2 & 0xFFFF_FFFF };
            if m == c {
                d
            } else {
                m
            }
        }
        AOp::AddF32 => u64::from((f(m) + f(d)).to_bits()),
        AOp::MinF32 => u64::from(f(m).min(f(d)).to_bits()),
        AOp::MaxF32 => u64::from(f(m).max(f(d)).to_bits()),
    };
    if wide {
        r
    } else {
        r & 0xFFFF_FFFF
    }
}
