#!/usr/bin/env python3
"""Generate facts/src/isa/gfx{10,11,12}.rs from LLVM's disassembler.

For every encoding format of a family, every opcode value is placed in a
canonical instruction (destination registers s20/v20, sources s40/v40,
s60/v60, s80/v80) and disassembled with llvm-mc-19. What LLVM prints is the
fact recorded: the mnemonic, the destination's register file and width (in
wave32 and in wave64, so lane masks are told apart), whether a 32-bit literal
is mandatory. Opcodes LLVM rejects with every operand choice are left out and
decode as Unknown.

Usage: facts/tools/gen_tables.py [OUT_DIR [FAMILY...]]   (default: facts/src/isa, all)
"""
import os
import re
import subprocess
import sys
import tempfile

LLVM_MC = os.environ.get("LLVM_MC", "llvm-mc-19")
NOP = 0xBF800000  # s_nop 0 in every family: the marker between candidates
PAD = 0x00000001  # a padding dword: read as the literal when one is mandatory

# Operand choices per pass: (scalar/vector source field values).
V40, V60, V80 = 256 + 40, 256 + 60, 256 + 80
S40, S60, S80 = 40, 60, 80
INL0 = 128


def disasm(cpu, wave, lines):
    """lines: list of list-of-dwords. Returns per line (text, nbytes) or None.

    Each candidate line is followed by a marker line (s_nop 0), so the output
    of one candidate (its instruction, then whatever its padding dword
    decodes to) is the run between two markers."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for dws in lines:
            for d in (dws, [NOP]):
                bs = b"".join(x.to_bytes(4, "little") for x in d)
                f.write(",".join("0x%02x" % b for b in bs) + "\n")
        path = f.name
    p = subprocess.run(
        [LLVM_MC, "--disassemble", "-triple=amdgcn-amd-amdhsa", "-mcpu=" + cpu,
         "-mattr=+wavefrontsize%d" % wave, "-show-encoding", path],
        capture_output=True, text=True)
    os.unlink(path)
    refused = set()
    for m in re.finditer(r":(\d+):(\d+): warning: invalid instruction encoding", p.stderr):
        if int(m.group(2)) == 1:
            refused.add(int(m.group(1)))
    outs = []
    for l in p.stdout.splitlines():
        m = re.match(r"\s+(.*?)\s*; encoding: \[(.*)\]", l)
        if m:
            outs.append((m.group(1).strip(), len(m.group(2).split(","))))
    segs = [[]]
    for text, n in outs:
        if text == "s_nop 0" and n == 4:
            segs.append([])
        else:
            segs[-1].append((text, n))
    if len(segs) != len(lines) + 1:
        raise SystemExit("marker count mismatch (%d vs %d)" % (len(segs), len(lines) + 1))
    res = []
    for i in range(len(lines)):
        if (2 * i + 1) in refused or not segs[i]:
            res.append(None)
        else:
            res.append(segs[i][0])
    return res


REG = re.compile(r"^(s|v|ttmp)(\d+)$|^(s|v|ttmp)\[(\d+):(\d+)\]$")


def reg(text):
    m = REG.match(text)
    if not m:
        return None
    if m.group(1):
        return (m.group(1), int(m.group(2)), 1)
    return (m.group(3), int(m.group(4)), int(m.group(5)) - int(m.group(4)) + 1)


def operands(text):
    parts = text.split(None, 1)
    if len(parts) == 1:
        return parts[0], []
    ops = []
    depth = 0
    cur = ""
    for ch in parts[1]:
        if ch in "[(":
            depth += 1
        if ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        ops.append(cur.strip())
    return parts[0], ops


def dst_of(name, ops, want, fmt):
    """Which register file and width the canonical destination shows."""
    if not ops:
        return None
    r = reg(ops[0].split()[0])
    if r is None or r[1] != want[1] or r[0] != want[0]:
        return None
    if fmt in ("SMEM",) and ("store" in name or "probe" in name):
        return None
    if fmt == "SOPK" and re.search(r"cmpk|setreg|waitcnt", name):
        return None
    return (r[0], r[2])


def sd_of(name, ops):
    """VOP3SD carry-out (sdst field = s0 in the canonical encoding)."""
    for o in ops[1:2]:
        r = reg(o)
        if r and r[0] == "s" and r[1] == 0:
            return r[2]
    return None


# ---- canonical encodings per family and format ------------------------------

def fam_of(cpu):
    return {"gfx1010": 10, "gfx1030": 10, "gfx1100": 11, "gfx1150": 11, "gfx1200": 12}[cpu]


def null_sgpr(f):
    return 125 if f == 10 else 124


def canon(f, fmt, op, p):
    """The dwords of opcode `op` in format `fmt` with field values `p` (a
    dict; fields an instruction does not use must be zero for LLVM)."""
    g = lambda k, d=0: p.get(k, d)
    if fmt == "SOP2":
        return [(2 << 30) | (op << 23) | (g("d") << 16) | (g("b") << 8) | g("a")]
    if fmt == "SOPK":
        return [(0xB << 28) | (op << 23) | (g("d") << 16) | g("imm")]
    if fmt == "SOP1":
        return [0xBE800000 | (g("d") << 16) | (op << 8) | g("a")]
    if fmt == "SOPC":
        return [0xBF000000 | (op << 16) | (g("b") << 8) | g("a")]
    if fmt == "SOPP":
        return [0xBF800000 | (op << 16) | g("imm")]
    if fmt == "SMEM":
        d1 = (g("soff", null_sgpr(f)) << 25) | g("off")
        if f == 12:
            return [0xF4000000 | (op << 13) | (g("d") << 6) | g("base"), d1]
        return [0xF4000000 | (op << 18) | (g("d") << 6) | g("base"), d1]
    if fmt == "VOP2":
        return [(op << 25) | (g("d") << 17) | (g("b") << 9) | g("a")]
    if fmt == "VOP1":
        return [0x7E000000 | (g("d") << 17) | (op << 9) | g("a")]
    if fmt == "VOPC":
        return [0x7C000000 | (op << 17) | (g("b") << 9) | g("a")]
    if fmt == "VOP3":
        return [0xD4000000 | (op << 16) | g("d"), g("a") | (g("b") << 9) | (g("c") << 18)]
    if fmt == "VOP3P":
        return [0xCC000000 | (op << 16) | g("d") | (g("hi2") << 14),
                g("a") | (g("b") << 9) | (g("c") << 18) | (g("hi") << 27)]
    if fmt == "DS":
        # GDS (bit 17, gfx10/gfx11): the global wave sync ops exist only with it.
        return [0xD8000000 | (op << 18) | (g("gds") << 17),
                g("addr") | (g("d0") << 8) | (g("d1") << 16) | (g("d") << 24)]
    if fmt.startswith("FLAT"):
        seg = int(fmt[4:])
        if f == 12:
            return [0xEC000000 | (seg << 24) | (op << 14) | g("saddr", null_sgpr(f)),
                    g("d") | (g("data") << 23), g("addr")]
        shift = 14 if f == 10 else 16
        return [0xDC000000 | (op << 18) | (seg << shift),
                g("addr") | (g("data") << 8) | (g("saddr", null_sgpr(f)) << 16) | (g("d") << 24)]
    if fmt == "MUBUF":
        if f == 12:
            return [0xC4000000 | (op << 14) | g("soff", null_sgpr(f)),
                    g("d") | (40 << 9), g("addr")]
        return [0xE0000000 | (op << 18),
                g("addr") | (g("d") << 8) | (10 << 16) | (g("soff", null_sgpr(f)) << 24)]
    if fmt == "MTBUF":
        if f == 10:
            lo, hi = op & 7, op >> 3
            return [0xE8000000 | (lo << 16) | (1 << 19),
                    g("addr") | (g("d") << 8) | (10 << 16) | (hi << 21) | (null_sgpr(f) << 24)]
        return [0xE8000000 | (op << 15) | (1 << 19),
                g("addr") | (g("d") << 8) | (10 << 16) | (null_sgpr(f) << 24)]
    if fmt == "MIMG":
        if f == 10:
            lo, hi = op & 0x7F, op >> 7
            return [0xF0000000 | (lo << 18) | (g("dmask", 1) << 8) | hi,
                    g("addr") | (g("d") << 8) | (10 << 16) | (g("samp") << 21)]
        return [0xF0000000 | (op << 18) | (g("dmask", 1) << 8),
                g("addr") | (g("d") << 8) | (10 << 16) | (g("samp") << 21)]
    if fmt == "VIMAGE":
        return [0xD0000000 | (g("dmask", 1) << 22) | (op << 14), g("d") | (40 << 9), g("addr")]
    if fmt == "VSAMPLE":
        return [0xE4000000 | (g("dmask", 1) << 22) | (op << 14),
                g("d") | (40 << 9) | (g("samp") << 23), g("addr")]
    raise ValueError(fmt)


def product(**choices):
    keys = list(choices)
    out = [{}]
    for k in keys:
        out = [dict(o, **{k: v}) for o in out for v in choices[k]]
    return out


def passes(fmt):
    """Field choices tried in order until LLVM accepts an opcode."""
    if fmt == "SOP2":
        return product(d=[20, 0], a=[40, 0, 128], b=[60, 0, 128])
    if fmt == "SOPK":
        return product(d=[20, 0], imm=[0x10, 0])
    if fmt == "SOP1":
        return product(d=[20, 0], a=[40, 0, 128])
    if fmt == "SOPC":
        return product(a=[40, 0, 128], b=[60, 0, 128])
    if fmt == "SOPP":
        return product(imm=[1, 0])
    if fmt == "SMEM":
        return product(d=[20, 0], base=[20, 0], off=[0x10, 0], soff=[None, 0])
    if fmt in ("VOP2", "VOPC"):
        return product(d=[20], a=[V40, S40, INL0], b=[60])
    if fmt == "VOP1":
        return product(d=[20, 0], a=[V40, S40, INL0, 0])
    if fmt in ("VOP3", "VOP3P"):
        srcs = [V40, S40, INL0, 0]
        base = product(d=[20, 0], a=srcs, b=[V60, S60, 0], c=[V80, 0])
        if fmt == "VOP3P":
            base = [dict(x, hi=h, hi2=h2) for x in base for h in (3, 0) for h2 in (1, 0)]
        return base
    if fmt == "DS":
        return product(gds=[0, 1], d=[20, 0], addr=[40, 0], d0=[41, 0], d1=[42, 0])
    if fmt.startswith("FLAT"):
        return product(d=[20, 0], addr=[40, 0], data=[41, 0], saddr=[None, 40])
    if fmt in ("MUBUF", "MTBUF"):
        return product(d=[20, 0], addr=[40, 0])
    if fmt in ("MIMG", "VIMAGE", "VSAMPLE"):
        return product(d=[20, 0], addr=[40, 0], samp=[12, 0], dmask=[1, 0xf])
    raise ValueError(fmt)


FORMATS = {
    10: [("SOP2", 0x60), ("SOPK", 29), ("SOP1", 256), ("SOPC", 128), ("SOPP", 128),
         ("SMEM", 256), ("VOP2", 62), ("VOP1", 256), ("VOPC", 256), ("VOP3", 1024),
         ("VOP3P", 128), ("DS", 256), ("FLAT0", 128), ("FLAT1", 128), ("FLAT2", 128),
         ("MUBUF", 128), ("MTBUF", 16), ("MIMG", 256)],
    11: [("SOP2", 0x60), ("SOPK", 29), ("SOP1", 256), ("SOPC", 128), ("SOPP", 128),
         ("SMEM", 256), ("VOP2", 62), ("VOP1", 256), ("VOPC", 256), ("VOP3", 1024),
         ("VOP3P", 128), ("DS", 256), ("FLAT0", 128), ("FLAT1", 128), ("FLAT2", 128),
         ("MUBUF", 256), ("MTBUF", 16), ("MIMG", 256)],
    12: [("SOP2", 0x60), ("SOPK", 29), ("SOP1", 256), ("SOPC", 128), ("SOPP", 128),
         ("SMEM", 64), ("VOP2", 62), ("VOP1", 256), ("VOPC", 256), ("VOP3", 1024),
         ("VOP3P", 128), ("DS", 256), ("FLAT0", 256), ("FLAT1", 256), ("FLAT2", 256),
         ("MUBUF", 256), ("VIMAGE", 256), ("VSAMPLE", 256)],
}

# The canonical destination register of each format (file, index).
WANT = {"SOP2": ("s", 20), "SOPK": ("s", 20), "SOP1": ("s", 20), "SMEM": ("s", 20)}


def want_for(fmt, name):
    if fmt in WANT:
        return WANT[fmt]
    return ("v", 20)


def survey(cpu, fmt, count):
    """Per opcode: (name, dst32, dst64, sd32, sd64, nbytes) or None."""
    f = fam_of(cpu)
    found = {}
    for p in passes(fmt):
        p = {k: v for k, v in p.items() if v is not None}
        todo = [op for op in range(count) if op not in found]
        if not todo:
            break
        per_wave = {}
        for wave in (32, 64):
            lines = [canon(f, fmt, op, p) + [PAD] for op in todo]
            per_wave[wave] = disasm(cpu, wave, lines)
        for i, op in enumerate(todo):
            r32, r64 = per_wave[32][i], per_wave[64][i]
            if r32 is None and r64 is None:
                continue
            text, n = r32 or r64
            name, ops = operands(text)
            n64 = operands(r64[0])[1] if r64 else ops
            want = want_for(fmt, name)
            d32 = dst_of(name, ops, want, fmt) if r32 else None
            d64 = dst_of(name, n64, want, fmt) if r64 else None
            # VOP3/VOPC with an SGPR destination (v_cmp_*_e64, v_readlane).
            if fmt in ("VOP3", "VOP1") and d32 is None:
                d32 = dst_of(name, ops, ("s", 20), fmt) if r32 else None
                d64 = dst_of(name, n64, ("s", 20), fmt) if r64 else None
            sd32 = sd_of(name, ops) if fmt == "VOP3" and r32 else None
            sd64 = sd_of(name, n64) if fmt == "VOP3" and r64 else None
            found[op] = (name, d32, d64, sd32, sd64, n, r32 is not None, r64 is not None)
    return found


def dst_expr(d32, d64, ok32, ok64):
    if not ok32:
        d32 = d64
    if not ok64:
        d64 = d32
    if d32 is None and d64 is None:
        return "D::None"
    if d32 is None or d64 is None:
        d = d32 or d64
        return "D::%s(%d)" % ("S" if d[0] == "s" else "V", d[1])
    if d32 == d64:
        return "D::%s(%d)" % ("S" if d32[0] == "s" else "V", d32[1])
    if d32[0] == d64[0] == "s" and d32[1] * 2 == d64[1]:
        return "D::Mask"
    return "D::%s(%d)" % ("S" if d64[0] == "s" else "V", max(d32[1], d64[1]))


def sd_expr(s32, s64):
    if s32 is None and s64 is None:
        return "D::None"
    if s32 == 1 and s64 == 2:
        return "D::Mask"
    return "D::S(%d)" % (s64 or s32)


def base_len(f, fmt):
    if fmt in ("SOP2", "SOPK", "SOP1", "SOPC", "SOPP", "VOP2", "VOP1", "VOPC"):
        return 4
    if f == 12 and (fmt.startswith("FLAT") or fmt in ("MUBUF", "VIMAGE", "VSAMPLE")):
        return 12
    return 8


def row(f, fmt, op, info, sub):
    name, d32, d64, sd32, sd64, n, ok32, ok64 = info
    lit = n > base_len(f, fmt) and fmt not in ("MIMG",)
    flags = []
    if lit:
        flags.append("LIT")
    if re.match(r"s_movreld|s_movrels", name):
        flags.append("INDIRECT")
    if not ok32:
        flags.append("W64")
    if not ok64:
        flags.append("W32")
    fl = " | ".join(flags) if flags else "0"
    sd = sd_expr(sd32, sd64)
    return "    op(%d, %s, %s, %s, %s, %s)," % (op, '"%s"' % name, dst_expr(d32, d64, ok32, ok64), sd, fl, sub)


SUBS = {10: ("G101", "G103"), 11: ("G110", "G115"), 12: ("ALL",)}


def emit(f, cpus, out):
    lines = ["// @generated by facts/tools/gen_tables.py from %s; do not edit." % LLVM_MC,
             "// Facts: opcode -> mnemonic, destination file/width, flags, as LLVM 19",
             "// disassembles them (%s)." % ", ".join(cpus),
             "use super::table::{op, Dst as D, Op, ALL, INDIRECT, LIT, W32, W64%s};" %
             ("".join(", " + x for x in SUBS[f]) if len(cpus) > 1 else ""),
             ""]
    for fmt, count in FORMATS[f]:
        per = [survey(c, fmt, count) for c in cpus]
        body = []
        for op in range(count):
            infos = [p.get(op) for p in per]
            if len(cpus) == 1 or infos[0] == infos[1] or (
                    infos[0] and infos[1] and infos[0][0] == infos[1][0]):
                info = infos[-1] or infos[0]
                if info:
                    body.append(row(f, fmt, op, info, "ALL"))
            else:
                for info, sub in zip(infos, SUBS[f]):
                    if info:
                        body.append(row(f, fmt, op, info, sub))
        lines.append("pub static %s: &[Op] = &[" % fmt)
        lines += body
        lines.append("];")
        lines.append("")
        print("gfx%d %s: %d opcodes" % (f, fmt, len(body)), file=sys.stderr)
    with open(out, "w") as fh:
        fh.write("\n".join(lines))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "src", "isa")
    only = sys.argv[2:]  # optional family numbers to regenerate
    for f, cpus in ((10, ["gfx1010", "gfx1030"]), (11, ["gfx1100", "gfx1150"]), (12, ["gfx1200"])):
        if not only or str(f) in only:
            emit(f, cpus, os.path.join(out, "gfx%d.rs" % f))


if __name__ == "__main__":
    main()
