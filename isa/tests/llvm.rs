//! The decoder against LLVM 19: every fixture code object disassembled with
//! llvm-objdump-19, and a generated set of instructions per family assembled
//! with llvm-mc-19. Mnemonics and lengths must agree everywhere; operands
//! must agree for every memory instruction the certifier classifies.
//! Without the tools these tests skip with a message, unless `CI` is set.

use std::path::{Path, PathBuf};
use std::process::Command;

use relaunch_isa::format::MemoryClass;
use relaunch_isa::{decode, Decoded, Family, Format, Instruction, Isa, Operand, Role};

fn tool(name: &str) -> Option<&str> {
    relaunch_testsupport::require_tool(name, "apt-get install llvm-19").then_some(name)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn code_objects() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for dir in ["tests/kernels/build", "tests/fixtures"] {
        walk(&repo().join(dir), &mut out);
    }
    out.sort();
    out
}

fn walk(dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        // file_type does not follow symlinks (the sysfs fixtures have cycles).
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "co") {
            let proc = p
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_string();
            out.push((proc, p));
        }
    }
}

/// LLVM's text of an SMEM instruction's operands.
pub fn smem_text(isa: Isa, i: &Instruction) -> String {
    let mut parts = Vec::new();
    if let Some(d) = i.field(Role::Dst).or(i.field(Role::Data)) {
        parts.push(d.to_string());
    }
    if let Some(b) = i.field(Role::Base) {
        parts.push(b.to_string());
    }
    let off = match i.field(Role::Offset) {
        Some(Operand::Imm(v)) => v,
        _ => 0,
    };
    let hex = |v: i64| {
        if v < 0 {
            format!("-0x{:x}", -v)
        } else {
            format!("0x{v:x}")
        }
    };
    match (i.field(Role::Soffset), isa.family) {
        (Some(s), _) if off != 0 => parts.push(format!("{s} offset:{}", hex(off))),
        (Some(s), _) => parts.push(s.to_string()),
        (None, Family::Gfx10 | Family::Gfx11) if off == 0 => parts.push("null".into()),
        (None, _) => parts.push(hex(off)),
    }
    parts.join(", ")
}

fn class(i: &Instruction) -> MemoryClass {
    i.format.memory_class()
}

/// Compare one LLVM line (mnemonic, operand text, bytes) with our decode.
fn check(isa: Isa, mnemonic: &str, operands: &str, bytes: &[u8], what: &str) -> Result<(), String> {
    match decode(isa, bytes) {
        Decoded::Unknown { format, len, dword } => Err(format!(
            "{what}: LLVM has `{mnemonic} {operands}` ({} bytes), we decode Unknown \
             (format {format:?}, len {len:?}, dword {dword:08x})",
            bytes.len()
        )),
        Decoded::Known(i) => {
            if i.len != bytes.len() {
                return Err(format!(
                    "{what}: `{mnemonic}` is {} bytes, we say {}",
                    bytes.len(),
                    i.len
                ));
            }
            if i.mnemonic() != mnemonic {
                return Err(format!("{what}: LLVM `{mnemonic}`, we `{}`", i.mnemonic()));
            }
            match class(&i) {
                MemoryClass::Scalar => {
                    let ours = smem_text(isa, &i);
                    let theirs = operands.split_whitespace().collect::<Vec<_>>().join(" ");
                    // Cache-policy suffixes (glc, dlc, th:, scope:) are not operands.
                    let theirs = theirs
                        .split(' ')
                        .filter(|t| {
                            !matches!(*t, "glc" | "dlc" | "slc" | "nv")
                                && !t.starts_with("th:")
                                && !t.starts_with("scope:")
                        })
                        .collect::<Vec<_>>()
                        .join(" ");
                    // The assembler prints `0x0` / `sN offset:0x0` where the
                    // disassembler prints `null` / `sN` for the same bytes.
                    let norm = |t: &str| t.replace(" offset:0x0", "").replace(", null", ", 0x0");
                    let (ours, theirs) = (norm(&ours), norm(&theirs));
                    if ours != theirs {
                        return Err(format!("{what}: `{mnemonic} {theirs}`, we `{ours}`"));
                    }
                }
                MemoryClass::Vector | MemoryClass::Lds => {
                    // The first register operand: the destination of loads,
                    // the address of flat/global stores, the data of buffer
                    // stores. Compare it whenever we name it.
                    let first = operands.split(',').next().unwrap_or("").trim();
                    let ours: Vec<String> = [Role::Dst, Role::Addr, Role::Data]
                        .iter()
                        .filter_map(|r| i.field(*r))
                        .map(|o| o.to_string())
                        .collect();
                    let bare = first.split_whitespace().next().unwrap_or("");
                    if !bare.is_empty() && bare.starts_with('v') && !ours.iter().any(|o| o == bare)
                    {
                        return Err(format!("{what}: `{mnemonic} {operands}`: first operand {bare} not among ours {ours:?}"));
                    }
                }
                MemoryClass::None => {}
            }
            Ok(())
        }
    }
}

fn hex_bytes(words: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for w in words.split_whitespace() {
        let Ok(v) = u32::from_str_radix(w, 16) else {
            break;
        };
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

#[test]
fn every_fixture_disassembles_like_llvm_objdump() {
    let Some(objdump) = tool("llvm-objdump-19") else {
        return;
    };
    let objects = code_objects();
    assert!(!objects.is_empty(), "no fixture code objects found");
    let mut errors = Vec::new();
    let mut checked = 0usize;
    for (proc, path) in objects {
        let Some(isa) = Isa::from_processor(&proc, false) else {
            continue; // gfx90a and other non-RDNA fixtures
        };
        let out = Command::new(objdump).arg("-d").arg(&path).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            let Some((asm, enc)) = line.split_once("//") else {
                continue;
            };
            let asm = asm.trim();
            let Some((_, words)) = enc.split_once(':') else {
                continue;
            };
            let words = words.split('<').next().unwrap();
            if asm.is_empty() || asm.starts_with('<') {
                continue;
            }
            let (m, ops) = asm.split_once(char::is_whitespace).unwrap_or((asm, ""));
            let bytes = hex_bytes(words);
            if m.starts_with('.') || bytes.is_empty() {
                continue;
            }
            checked += 1;
            if let Err(e) = check(isa, m, ops.trim(), &bytes, &format!("{}", path.display())) {
                errors.push(e);
            }
        }
    }
    assert!(checked > 1000, "only {checked} instructions checked");
    assert!(
        errors.is_empty(),
        "{} of {checked} differ:\n{}",
        errors.len(),
        errors[..errors.len().min(40)].join("\n")
    );
}

/// Instructions per family: every memory shape the certifier classifies,
/// literals, DPP, SDWA, VOP3 literals, VOPD, NSA images, branches.
fn generated(f: Family) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let (ld, ld2, ld4, ld8, ld16, bld, bld4, gld, gld2, gst, bufld, dsrd, dswr) = match f {
        Family::Gfx10 => (
            "s_load_dword",
            "s_load_dwordx2",
            "s_load_dwordx4",
            "s_load_dwordx8",
            "s_load_dwordx16",
            "s_buffer_load_dword",
            "s_buffer_load_dwordx4",
            "global_load_dword",
            "global_load_dwordx2",
            "global_store_dword",
            "buffer_load_dword",
            "ds_read_b32",
            "ds_write_b32",
        ),
        Family::Gfx11 | Family::Gfx12 => (
            "s_load_b32",
            "s_load_b64",
            "s_load_b128",
            "s_load_b256",
            "s_load_b512",
            "s_buffer_load_b32",
            "s_buffer_load_b128",
            "global_load_b32",
            "global_load_b64",
            "global_store_b32",
            "buffer_load_b32",
            "ds_load_b32",
            "ds_store_b32",
        ),
    };
    for (base, b) in [
        (0, "s[0:1]"),
        (4, "s[4:5]"),
        (8, "s[8:9]"),
        (40, "s[40:41]"),
    ] {
        let _ = base;
        for off in ["0x0", "0x4", "0x18", "0xfff", "-0x10", "0x1000"] {
            v.push(format!("{ld} s7, {b}, {off}"));
            v.push(format!("{ld2} s[2:3], {b}, {off}"));
            v.push(format!("{ld4} s[4:7], {b}, {off}"));
        }
        v.push(format!("{ld8} s[8:15], {b}, 0x20"));
        v.push(format!("{ld16} s[16:31], {b}, 0x40"));
        v.push(format!("{ld} s7, {b}, s3"));
        v.push(format!("{ld} s7, {b}, s3 offset:0x10"));
        v.push(format!("{ld} s7, {b}, m0"));
    }
    v.push(format!("{bld} s7, s[8:11], 0x10"));
    v.push(format!("{bld4} s[4:7], s[8:11], s2"));
    v.push(format!("{gld} v1, v[2:3], off"));
    v.push(format!("{gld} v1, v2, s[4:5] offset:16"));
    v.push(format!("{gld2} v[1:2], v[2:3], off offset:-8"));
    v.push(format!("{gst} v[2:3], v1, off"));
    v.push(format!("{bufld} v1, v2, s[8:11], s3 offen offset:16"));
    v.push(format!("{bufld} v1, off, s[8:11], s3"));
    v.push(format!("{dsrd} v1, v2 offset:16"));
    v.push(format!("{dswr} v1, v2"));
    v.extend(
        [
            "s_mov_b32 s0, 0x12345678",
            "s_mov_b64 s[8:9], s[4:5]",
            "s_mov_b32 s9, s5",
            "s_add_u32 s0, s1, 0x1234",
            "s_movk_i32 s5, 0x1234",
            "s_cmp_eq_u32 s1, 0x100",
            "s_branch 5",
            "s_cbranch_scc0 -3",
            "s_getpc_b64 s[4:5]",
            "s_setpc_b64 s[4:5]",
            "s_endpgm",
            "v_mov_b32 v1, 0x3f800000",
            "v_add_f32 v1, 0x12345678, v2",
            "v_add_f32_e64 v1, 0x12345678, v2",
            "v_mov_b32_dpp v1, v2 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
            "v_add_f32_dpp v1, v2, v3 dpp8:[0,1,2,3,4,5,6,7]",
            "v_fmaak_f32 v1, v2, v3, 0x11223344",
            "v_readfirstlane_b32 s5, v1",
            "v_cmp_eq_u32 vcc_lo, v1, v2",
            "v_cmp_eq_u32_e64 s4, v1, v2",
            "v_add_co_u32 v1, s4, v2, v3",
            "v_pk_add_f16 v1, v2, v3",
            "s_waitcnt lgkmcnt(0)",
        ]
        .map(String::from),
    );
    match f {
        Family::Gfx10 => v.extend(
            [
                "v_mov_b32_sdwa v1, v2 dst_sel:WORD_1 src0_sel:BYTE_0",
                "image_sample v20, [v40, v45], s[40:47], s[48:51] dmask:0x1 dim:SQ_RSRC_IMG_2D",
                "image_load v20, v40, s[40:47] dmask:0x1 dim:SQ_RSRC_IMG_1D",
                "tbuffer_load_format_x v20, v40, s[40:43], s7 format:[BUF_FMT_32_FLOAT] offen offset:16",
                "scratch_load_dword v20, off, s7",
                "flat_load_dword v20, v[40:41]",
                "global_atomic_cmpswap_x2 v[4:5], v[0:1], v[6:9], off offset:24 glc",
                "global_atomic_add v3, v[0:1], v2, off glc",
            ]
            .map(String::from),
        ),
        Family::Gfx11 => v.extend(
            [
                "v_dual_mov_b32 v1, v2 :: v_dual_mov_b32 v2, v5",
                "v_dual_add_f32 v10, 0x1234, v30 :: v_dual_mul_f32 v11, v41, v51",
                "v_add_f32_e64_dpp v1, v2, v3 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
                "image_sample v20, [v40, v45], s[40:47], s[48:51] dmask:0x1 dim:SQ_RSRC_IMG_2D",
                "image_load v20, v40, s[40:47] dmask:0x1 dim:SQ_RSRC_IMG_1D",
                "lds_direct_load v1",
                "v_interp_p10_f32 v1, v2, v3, v4",
                "scratch_load_b32 v20, off, s7",
                "flat_load_b32 v20, v[40:41]",
                "global_atomic_cmpswap_b64 v[4:5], v[0:1], v[6:9], off offset:24 glc",
                "global_atomic_add_u32 v3, v[0:1], v2, off glc",
            ]
            .map(String::from),
        ),
        Family::Gfx12 => v.extend(
            [
                "v_dual_mov_b32 v1, v2 :: v_dual_mov_b32 v2, v5",
                "v_add_f32_e64_dpp v1, v2, v3 dpp8:[0,1,2,3,4,5,6,7]",
                "image_sample v20, [v40, v45], s[40:47], s[48:51] dmask:0x1 dim:SQ_RSRC_IMG_2D",
                "image_load v20, v40, s[40:47] dmask:0x1 dim:SQ_RSRC_IMG_1D",
                "s_load_b32 s20, s[40:41], 0x10 th:TH_LOAD_NT scope:SCOPE_SYS",
                "s_load_b32 s20, s[40:41], 0x7fffff",
                "s_fmaak_f32 s10, s20, s21, 0x11223344",
                "s_fmamk_f32 s10, s20, 0x11223344, s21",
                "scratch_load_b32 v20, off, s7",
                "flat_load_b32 v20, v[40:41]",
                "tbuffer_load_format_x v20, v40, s[40:43], s7 format:[BUF_FMT_32_FLOAT] offen offset:16",
                "global_atomic_cmpswap_b64 v[4:5], v[0:1], v[6:9], off offset:24 th:TH_ATOMIC_RETURN",
                "global_atomic_add_u32 v3, v[0:1], v2, off th:TH_ATOMIC_RETURN",
            ]
            .map(String::from),
        ),
    }
    v
}

#[test]
fn generated_instructions_round_trip_through_llvm_mc() {
    let Some(mc) = tool("llvm-mc-19") else { return };
    let mut errors = Vec::new();
    for (cpu, isa) in [
        ("gfx1010", Isa::from_processor("gfx1010", false).unwrap()),
        ("gfx1030", Isa::from_processor("gfx1030", false).unwrap()),
        ("gfx1100", Isa::from_processor("gfx1100", false).unwrap()),
        ("gfx1201", Isa::from_processor("gfx1201", false).unwrap()),
    ] {
        let src = generated(isa.family).join("\n") + "\n";
        let dir = std::env::temp_dir().join(format!("relaunch-isa-{}-{cpu}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("gen.s");
        std::fs::write(&file, &src).unwrap();
        let out = Command::new(mc)
            .args([
                "-triple=amdgcn-amd-amdhsa",
                &format!("-mcpu={cpu}"),
                "-mattr=+wavefrontsize32",
                "-show-encoding",
            ])
            .arg(&file)
            .output()
            .unwrap();
        std::fs::remove_dir_all(&dir).ok();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("error"),
            "{cpu}: llvm-mc refused the generated set:\n{stderr}"
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let mut n = 0;
        for line in text.lines() {
            let Some((asm, enc)) = line.split_once("; encoding: [") else {
                continue;
            };
            let bytes: Vec<u8> = enc
                .trim_end_matches(']')
                .split(',')
                .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).unwrap())
                .collect();
            let asm = asm.trim();
            let (m, ops) = asm.split_once(char::is_whitespace).unwrap_or((asm, ""));
            n += 1;
            if let Err(e) = check(isa, m, ops.trim(), &bytes, cpu) {
                errors.push(e);
            }
        }
        assert!(n > 50, "{cpu}: only {n} instructions assembled");
    }
    assert!(
        errors.is_empty(),
        "{} differ:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn unknown_encodings_are_unknown() {
    let isa = Isa::from_processor("gfx1100", false).unwrap();
    // An SMEM opcode gfx11 does not have (op 0xFF).
    let d0: u32 = 0xF400_0000 | (0xFF << 18);
    let mut b = d0.to_le_bytes().to_vec();
    b.extend_from_slice(&0xF800_0000u32.to_le_bytes());
    assert!(matches!(
        decode(isa, &b),
        Decoded::Unknown {
            format: Some(Format::Smem),
            ..
        }
    ));
    // A truncated 64-bit instruction.
    assert!(matches!(
        decode(isa, &d0.to_le_bytes()),
        Decoded::Unknown { .. }
    ));
}
