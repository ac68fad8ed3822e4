//! The instruction interpreter against LLVM 19: every opcode it claims
//! (`isa::implemented`) is assembled by llvm-mc-19 for gfx1010, gfx1030,
//! gfx1100, gfx1151 and gfx1201 and must decode back to the same mnemonic
//! and be executed; every fixture under tests/kernels/build is disassembled
//! by llvm-objdump-19 and each kernel the direct path accepts must be
//! executed whole (every instruction reachable from its entry decodes to
//! LLVM's mnemonic and is implemented); and a kernel with an instruction
//! the interpreter does not implement (assembled here) stops its dispatch
//! with an error naming the kernel, the offset, the mnemonic and the
//! target. Fails when `CI` is set and the tools are missing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use relaunch_isa::{Family, Isa};
use relaunch_sim::isa;
use relaunch_sim::SimConfig;
use relaunch_testsupport::asm;
use relaunch_testsupport::simkit::Rig;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Operand shapes tried in turn for a mnemonic until llvm-mc takes one.
fn templates() -> Vec<&'static str> {
    vec![
        "",
        " 0",
        " 4",
        " -1",
        " s10",
        " s10, s20",
        " s10, s20, s21",
        " s[10:11], s[20:21]",
        " s[10:11], s[20:21], s[22:23]",
        " s[10:11], s[20:21], s22",
        " s10, s[20:21]",
        " s[10:11], s20",
        " s[10:11]",
        " s[20:21], s10",
        " s10, s20, 0x11223344",
        " s10, 0x11223344, s20",
        " s10, s20, s21, 0x11223344",
        " s10, s20, 0x11223344, s21",
        " s10, 0x10",
        " s10, hwreg(HW_REG_MODE)",
        " hwreg(HW_REG_MODE), s10",
        " hwreg(HW_REG_MODE), 0x1",
        " null, 0x0",
        " sendmsg(MSG_DEALLOC_VGPRS)",
        " s10, s[20:21], 0x10",
        " s10, s[20:21], 0x0",
        " s[10:11], s[20:21], 0x10",
        " s[12:14], s[20:21], 0x10",
        " s[12:15], s[20:21], 0x10",
        " s[16:23], s[20:21], 0x10",
        " s[16:31], s[20:21], 0x10",
        " s10, s[20:23], 0x10",
        " s[10:11], s[20:23], 0x10",
        " s[12:14], s[20:23], 0x10",
        " s[12:15], s[20:23], 0x10",
        " s[16:23], s[20:23], 0x10",
        " s[16:31], s[20:23], 0x10",
        // DS
        " v1, v2",
        " v1, v2 offset:16",
        " v1, v[2:3]",
        " v1, v[2:3], v[4:5]",
        " v1, v[2:4]",
        " v1, v[2:5]",
        " v[2:3], v1",
        " v[2:4], v1",
        " v[2:5], v1",
        " v1, v2, v3",
        " v1, v2, v3 offset0:1 offset1:2",
        " v1, v[2:3], v[4:5] offset0:1 offset1:2",
        " v[2:3], v1 offset0:1 offset1:2",
        " v[2:5], v1 offset0:1 offset1:2",
        " v1, v2, v3, v4",
        " v[2:3], v1, v[4:5]",
        " v[2:3], v1, v[4:5], v[6:7]",
        " v1, v2 offset:swizzle(SWAP,16)",
        // GWS (GDS set, which LLVM requires for them)
        " v1 gds",
        " gds",
        // global / flat
        " v1, v[2:3], off",
        " v[4:5], v[2:3], off",
        " v[4:6], v[2:3], off",
        " v[4:7], v[2:3], off",
        " v[2:3], v1, off",
        " v[2:3], v[4:5], off",
        " v[2:3], v[4:6], off",
        " v[2:3], v[4:7], off",
        " v1, v[2:3]",
        " v[4:5], v[2:3]",
        " v[4:6], v[2:3]",
        " v[4:7], v[2:3]",
        " v[2:3], v1",
        " v[2:3], v[4:5]",
        " v[2:3], v[4:6]",
        " v[2:3], v[4:7]",
        // scratch (vaddr forms)
        " v1, v2, off",
        " v[4:5], v2, off",
        " v[4:6], v2, off",
        " v[4:7], v2, off",
        " v2, v1, off",
        " v2, v[4:5], off",
        " v2, v[4:6], off",
        " v2, v[4:7], off",
        // buffer
        " v1, v2, s[20:23], 0 offen",
        " v[4:5], v2, s[20:23], 0 offen",
        " v[4:6], v2, s[20:23], 0 offen",
        " v[4:7], v2, s[20:23], 0 offen",
        " off, s[20:23], 0",
        // vector ALU
        " v1, v2",
        " v[2:3], v[4:5]",
        " v1, v[4:5]",
        " v[2:3], v4",
        " s10, v2",
        " v1, v2, v3",
        " v1, v2, v3, v4",
        " v[2:3], v[4:5], v[6:7]",
        " v[2:3], v4, v[6:7]",
        " v[2:3], v[4:5], v6",
        " v[2:3], v[4:5], v[6:7], v[8:9]",
        " v[2:3], vcc_lo, v[4:5], v[6:7], v[8:9]",
        " v1, vcc_lo, v2, v3",
        " v1, vcc_lo, v2, v3, vcc_lo",
        " v1, s10, v2, v3",
        " v1, s10, v2, v3, s11",
        " v[2:3], s10, v4, v5, v[6:7]",
        " v[2:3], null, v4, v5, v[6:7]",
        " vcc_lo, v2, v3",
        " vcc_lo, v[2:3], v[4:5]",
        " s10, v2, v3",
        " s10, v[2:3], v[4:5]",
        " v2, v3",
        " v1, v2, 0x11223344",
        " v1, 0x11223344, v2",
        " v1, v2, 0x11223344, v3",
        " v1, v2, v3, 0x11223344",
        " v1, v2, s3",
        " v1, s2, s3",
        " v1, v2, v3, s4",
        " v1, v2, v3, vcc_lo",
        " v1, s2",
        " v1, v2, v3 :: v_dual_mov_b32 v4, v5",
        " v1, v2 :: v_dual_mov_b32 v4, v5",
        " v1, v2, v3, vcc_lo :: v_dual_mov_b32 v4, v5",
        " v1, v2, 0x11223344, v3 :: v_dual_mov_b32 v4, v5",
        " v1, v2, v3, 0x11223344 :: v_dual_mov_b32 v4, v5",
        "v_dual_mov_b32 v4, v5 :: {n} v1, v2, v3",
        " s[10:11], s20, s21",
        " v1, v2, v3, 0x1122",
        " v1, v2, 0x1122, v3",
        " s10, v2, s3",
        " s[20:21], 0x10, null, 0",
        " v1, v2, s[20:23], s4 offen",
        " v[4:5], v2, s[20:23], s4 offen",
        " v[4:6], v2, s[20:23], s4 offen",
        " v[4:7], v2, s[20:23], s4 offen",
        // WMMA (wave32 register counts): A, B, C/D per form and family.
        " v[0:7], v[8:15], v[16:23], v[0:7]",
        " v[0:7], v[8:11], v[16:19], v[0:7]",
        " v[0:7], v[8:9], v[16:17], v[0:7]",
        " v[0:3], v[8:11], v[16:19], v[0:3]",
        " v[0:7], v8, v16, v[0:7]",
        // gfx11+ true16 moves.
        " v1.l, v2.l",
        // v_permlane16/x16: a VGPR and the 64-bit selector in two SGPRs.
        " v1, v2, s3, s4",
    ]
}

#[test]
fn every_claimed_opcode_round_trips_through_llvm_mc_and_is_executed() {
    if !asm::mc() {
        return;
    }
    let targets: [(&str, Family); 5] = [
        ("gfx1010", Family::Gfx10),
        ("gfx1030", Family::Gfx10),
        ("gfx1100", Family::Gfx11),
        ("gfx1151", Family::Gfx11),
        ("gfx1201", Family::Gfx12),
    ];
    let mut fitted: HashMap<Family, BTreeSet<&'static str>> = HashMap::new();
    let mut problems = Vec::new();
    for (cpu, family) in targets {
        let isa = Isa::from_processor(cpu, false).unwrap();
        let mut left: Vec<&'static str> = isa::implemented(family);
        // The default syntax first; what it refuses again in LLVM's true16
        // syntax (v_mov_b16_e64 exists only there), never on gfx10.
        let true16 = match family {
            Family::Gfx10 => None,
            Family::Gfx11 | Family::Gfx12 => Some("+real-true16"),
        };
        let passes = templates()
            .into_iter()
            .map(|t| (None, t))
            .chain(true16.into_iter().flat_map(|m| {
                [" v1.l, v2.l", " v1.h, v2.h"]
                    .into_iter()
                    .map(move |t| (Some(m), t))
            }));
        for (mattr, t) in passes {
            if left.is_empty() {
                break;
            }
            let lines: Vec<String> = left
                .iter()
                .map(|n| {
                    if t.contains("{n}") {
                        t.replace("{n}", n)
                    } else {
                        format!("{n}{t}")
                    }
                })
                .collect();
            let enc = asm::encodings_with(cpu, mattr, &lines);
            let mut still = Vec::new();
            for (name, e) in left.iter().zip(enc) {
                let Some(bytes) = e else {
                    still.push(*name);
                    continue;
                };
                match isa::executes(isa, &bytes) {
                    None => problems.push(format!("{cpu}: `{name}{t}` does not decode")),
                    Some((m, ok)) => {
                        let want = name.strip_suffix("_e32").unwrap_or(name);
                        let got = m.strip_suffix("_e32").unwrap_or(&m);
                        if got != want && !m.starts_with(want) && !m.contains(&format!(":: {want}"))
                        {
                            problems.push(format!("{cpu}: `{name}{t}` decodes as {m}"));
                        } else if !ok {
                            problems.push(format!("{cpu}: {name} is claimed but not executed"));
                        }
                    }
                }
                fitted.entry(family).or_default().insert(name);
            }
            left = still;
        }
    }
    for (family, names) in
        [Family::Gfx10, Family::Gfx11, Family::Gfx12].map(|f| (f, isa::implemented(f)))
    {
        let got = fitted.get(&family).cloned().unwrap_or_default();
        let missing: Vec<_> = names.iter().filter(|n| !got.contains(*n)).collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{family:?}: no operand template assembled for {} claimed opcodes: {missing:?}",
                missing.len()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// llvm-objdump-19's mnemonic at every address of `path`.
fn objdump(cpu: &str, path: &Path) -> BTreeMap<u64, String> {
    let out = Command::new("llvm-objdump-19")
        .args(["-d", &format!("--mcpu={cpu}")])
        .arg(path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let Some((ins, comment)) = line.split_once("// ") else {
            continue;
        };
        let Some((addr, _)) = comment.split_once(':') else {
            continue;
        };
        let (Ok(a), Some(mn)) = (
            u64::from_str_radix(addr.trim(), 16),
            ins.split_whitespace().next(),
        ) else {
            continue;
        };
        m.insert(a, mn.to_string());
    }
    m
}

#[test]
fn every_accepted_fixture_kernel_is_executed_whole_and_decodes_like_llvm_objdump() {
    if !relaunch_testsupport::require_tool("llvm-objdump-19", "apt-get install llvm-19") {
        return;
    }
    let mut problems = Vec::new();
    let mut checked = 0;
    for cpu in ["gfx1030", "gfx1100", "gfx1151", "gfx1201"] {
        let dir = repo().join("tests/kernels/build").join(cpu);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "co"))
            .collect();
        files.sort();
        for path in files {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            // Refused by the direct path (scratch, printf): not the interpreter's.
            let refused = matches!(name.as_str(), "scratch_hog" | "uses_printf");
            let dev = relaunch_sim::SimDevice::new(SimConfig::new(cpu)).unwrap();
            let image = dev
                .load_code_object(&std::fs::read(&path).unwrap())
                .unwrap();
            let llvm = objdump(cpu, &path);
            for k in &image.kernels {
                let isa = Isa::from_processor(cpu, !k.descriptor.wave32()).unwrap();
                // The whole allocation, as a dispatch decodes it.
                let info = dev.memory.allocation_of(k.code_entry).unwrap();
                let code = dev.memory.read_vec(info.base, info.len).unwrap();
                let entry_at = (k.code_entry - info.base) as usize;
                let prog = isa::program::build_in(isa, k.code_entry, &code, entry_at);
                let vaddr = k.code_entry - image.base;
                for i in &prog.insts[..prog.insts.len() - 1] {
                    let at = vaddr.wrapping_add_signed(i.from_entry());
                    let ours = i.decoded.mnemonic();
                    match llvm.get(&at) {
                        Some(m) if *m == ours => {}
                        other => problems.push(format!(
                            "{cpu} {name}/{}: at {at:#x} LLVM {other:?}, we {ours}",
                            k.symbol
                        )),
                    }
                }
                let missing = prog.unimplemented();
                if !refused && !missing.is_empty() {
                    problems.push(format!(
                        "{cpu} {name}/{}: not executed: {missing:?}",
                        k.symbol
                    ));
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 40, "only {checked} kernels found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn an_unimplemented_instruction_stops_the_dispatch_naming_it() {
    if !asm::tools() {
        return;
    }
    // s_load, a store that works, then an image load the interpreter does
    // not execute (MIMG), then s_endpgm.
    let cases = [
        (
            "gfx1100",
            "  s_load_b64 s[2:3], s[0:1], 0x0\n  s_waitcnt lgkmcnt(0)\n  v_mov_b32 v1, 7\n  \
             v_mov_b32 v2, 0\n  global_store_b32 v2, v1, s[2:3]\n  \
             image_load v1, v2, s[4:11] dmask:0x1 dim:SQ_RSRC_IMG_1D\n  s_endpgm",
            "image_load",
            0x1c,
        ),
        (
            "gfx1030",
            "  s_load_dwordx2 s[2:3], s[0:1], 0x0\n  s_waitcnt lgkmcnt(0)\n  v_mov_b32 v1, 7\n  \
             v_mov_b32 v2, 0\n  global_store_dword v2, v1, s[2:3]\n  \
             image_load v1, v2, s[4:11] dmask:0x1 dim:SQ_RSRC_IMG_1D\n  s_endpgm",
            "image_load",
            0x1c,
        ),
        (
            // gfx12: split wait counters, and the global store is 12 bytes
            // (VGLOBAL), so the image load starts at 0x20.
            "gfx1201",
            "  s_load_b64 s[2:3], s[0:1], 0x0\n  s_wait_kmcnt 0\n  v_mov_b32 v1, 7\n  \
             v_mov_b32 v2, 0\n  global_store_b32 v2, v1, s[2:3]\n  \
             image_load v1, v2, s[4:11] dmask:0x1 dim:SQ_RSRC_IMG_1D\n  s_endpgm",
            "image_load",
            0x20,
        ),
    ];
    for (cpu, body, mnemonic, offset) in cases {
        let bytes = asm::one_kernel(cpu, "uses_image", body, "");
        let (rig, out, result) = Rig::run_isa_once(cpu, &bytes, "uses_image", 64);
        let err = result.unwrap_err().to_string();
        for want in [
            "uses_image".to_string(),
            format!("byte offset {offset:#x}"),
            mnemonic.to_string(),
            cpu.to_string(),
            "twin".to_string(),
        ] {
            assert!(err.contains(&want), "{cpu}: `{want}` missing from: {err}");
        }
        // What ran before it ran: the store landed.
        assert_eq!(rig.dev.memory.read_u32(out).unwrap(), 7, "{cpu}");
    }
}
