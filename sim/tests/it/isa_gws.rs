//! The global wave sync on the interpreter (gfx1030 and gfx1100, kernels
//! llvm-mc-19 assembles): workgroups each write a value, meet at a
//! ds_gws_barrier (wave 0 of each, as ockl's grid sync does, the others
//! at their s_barrier), then each reads its neighbour's value; a barrier
//! expecting more waves than the dispatch has is a deadlock fault naming
//! it; workgroups pass a GWS semaphore on in turn; a wave that never wrote
//! M0 and a grid too large to be resident are refused by name. Workgroup
//! 0 initialises the resources: it runs first here (on hardware a kernel
//! of its own does it first, as ROCclr's `__amd_rocclr_gwsInit`). Fails
//! when `CI` is set and the tools are missing.

use relaunch_sim::SimConfig;
use relaunch_testsupport::asm;
use relaunch_testsupport::simkit::{linear, Rig};

/// Workgroups of the dispatch.
const GROUPS: u32 = 4;

/// The kernel: two waves per workgroup (64 work-items, wave32), one lane
/// each. Wave 0 stores `wg + 100` at out[wg]; workgroup 0's wave 0 runs
/// ds_gws_init with `count`; every wave 0 runs ds_gws_barrier with
/// `count` (M0 = 0 when `m0`); all meet at s_barrier; wave 0 then copies
/// out[(wg + 1) % groups] to out[groups + wg].
fn kernel(cpu: &str, groups: u32, count: u32, m0: bool) -> Vec<u8> {
    let sp = asm::spelling(cpu);
    let (load, wait, store) = (sp.s_load_b64, sp.wait_scalar, sp.global_store_b32);
    let gload = match store {
        "global_store_dword" => "global_load_dword",
        _ => "global_load_b32",
    };
    let set_m0 = if m0 { "  s_mov_b32 m0, 0\n" } else { "" };
    let body = format!(
        "  {load} s[4:5], s[0:1], 0x0
  {wait}
  s_mov_b32 exec_lo, 1
  v_readfirstlane_b32 s6, v0
  s_cmp_eq_u32 s6, 0
  s_cbranch_scc0 .Lsync
  s_lshl_b32 s7, s2, 2
  v_mov_b32 v1, s7
  s_add_u32 s8, s2, 100
  v_mov_b32 v2, s8
  {store} v1, v2, s[4:5]
{set_m0}  v_mov_b32 v3, {count}
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc0 .Lbar
  ds_gws_init v3 gds
.Lbar:
  ds_gws_barrier v3 gds
.Lsync:
  s_barrier
  s_cmp_eq_u32 s6, 0
  s_cbranch_scc0 .Ldone
  s_add_u32 s9, s2, 1
  s_cmp_eq_u32 s9, {groups}
  s_cselect_b32 s9, 0, s9
  s_lshl_b32 s9, s9, 2
  v_mov_b32 v1, s9
  {gload} v4, v1, s[4:5]
  s_waitcnt vmcnt(0)
  s_add_u32 s10, s2, {groups}
  s_lshl_b32 s10, s10, 2
  v_mov_b32 v1, s10
  {store} v1, v4, s[4:5]
.Ldone:
  s_endpgm
"
    );
    asm::one_kernel(cpu, "gws", &body, "")
}

/// Dispatch `bytes`'s kernel over `groups` workgroups of 64; the output
/// words, or the error.
fn run(cpu: &str, bytes: &[u8], groups: u32) -> Result<Vec<u32>, String> {
    run_on(SimConfig::new(cpu), bytes, groups)
}

/// [`run`] on a device configured by `cfg`.
fn run_on(cfg: SimConfig, bytes: &[u8], groups: u32) -> Result<Vec<u32>, String> {
    let cpu = cfg.target.clone();
    let launch = linear(64 * groups, 64);
    let (rig, out, result) = Rig::run_isa(cfg, bytes, "gws", 8 * groups as usize, &launch);
    let v = result.map_err(|e| e.to_string())?;
    assert_eq!(v, vec![], "{cpu}");
    Ok((0..2 * u64::from(groups))
        .map(|i| rig.dev.memory.read_u32(out + 4 * i).unwrap())
        .collect())
}

#[test]
fn workgroups_meet_at_a_gws_barrier_and_read_each_others_values() {
    if !asm::tools() {
        return;
    }
    let want: Vec<u32> = (0..GROUPS)
        .map(|g| g + 100)
        .chain((0..GROUPS).map(|g| (g + 1) % GROUPS + 100))
        .collect();
    for cpu in ["gfx1030", "gfx1100"] {
        let bytes = kernel(cpu, GROUPS, GROUPS - 1, true);
        // The same on one worker and on one per core.
        for workers in [1, 0] {
            relaunch_sim::isa::set_workers(workers);
            let out = run(cpu, &bytes, GROUPS);
            relaunch_sim::isa::set_workers(0);
            assert_eq!(out.unwrap(), want, "{cpu} on {workers} workers");
        }
    }
}

#[test]
fn a_gws_barrier_expecting_more_waves_than_arrive_is_a_named_deadlock() {
    if !asm::tools() {
        return;
    }
    for cpu in ["gfx1030", "gfx1100"] {
        let err = run(cpu, &kernel(cpu, GROUPS, GROUPS, true), GROUPS).unwrap_err();
        assert!(err.contains("deadlock"), "{cpu}: {err}");
        assert!(
            err.contains("ds_gws_barrier on GWS resource 0: 4 waves arrived of 5 expected"),
            "{cpu}: {err}"
        );
        assert!(err.contains("ds_gws_barrier"), "{cpu}: {err}");
    }
}

/// A chain through a GWS semaphore (M0[21:16] = 1, offset 2: resource
/// 3), one wave per workgroup: workgroup 0 initialises it to 0; every
/// workgroup but the last queues at ds_gws_sema_p, in id order; the last
/// stores 1 at its out[wg] and gives the semaphore (ds_gws_sema_v), which
/// releases the first queued, which stores its predecessor's value (out of
/// workgroup (wg - 1) mod groups) plus one and gives it on.
fn chain(cpu: &str, groups: u32) -> Vec<u8> {
    let sp = asm::spelling(cpu);
    let (load, wait, store) = (sp.s_load_b64, sp.wait_scalar, sp.global_store_b32);
    let gload = match store {
        "global_store_dword" => "global_load_dword",
        _ => "global_load_b32",
    };
    let last = groups - 1;
    let body = format!(
        "  {load} s[4:5], s[0:1], 0x0
  {wait}
  s_mov_b32 exec_lo, 1
  s_mov_b32 m0, 0x10000
  s_lshl_b32 s7, s2, 2
  v_mov_b32 v1, s7
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc0 .Lstart
  v_mov_b32 v3, 0
  ds_gws_init v3 offset:2 gds
.Lstart:
  s_cmp_eq_u32 s2, {last}
  s_cbranch_scc0 .Lwait
  v_mov_b32 v2, 1
  s_branch .Lstore
.Lwait:
  ds_gws_sema_p offset:2 gds
  s_add_u32 s8, s2, {last}
  s_sub_u32 s9, s8, {groups}
  s_cmp_ge_u32 s8, {groups}
  s_cselect_b32 s8, s9, s8
  s_lshl_b32 s8, s8, 2
  v_mov_b32 v4, s8
  {gload} v2, v4, s[4:5]
  s_waitcnt vmcnt(0)
  v_add_nc_u32 v2, v2, 1
.Lstore:
  {store} v1, v2, s[4:5]
  ds_gws_sema_v offset:2 gds
  s_endpgm
"
    );
    asm::one_kernel(cpu, "gws", &body, "")
}

#[test]
fn workgroups_queued_at_a_gws_semaphore_are_released_in_turn() {
    if !asm::tools() {
        return;
    }
    for cpu in ["gfx1030", "gfx1100"] {
        let launch = linear(32 * GROUPS, 32);
        let bytes = chain(cpu, GROUPS);
        let (rig, out, result) = Rig::run_isa(
            SimConfig::new(cpu),
            &bytes,
            "gws",
            4 * GROUPS as usize,
            &launch,
        );
        assert_eq!(result.unwrap(), vec![], "{cpu}");
        let got: Vec<u32> = (0..u64::from(GROUPS))
            .map(|i| rig.dev.memory.read_u32(out + 4 * i).unwrap())
            .collect();
        // The last workgroup first (1), then 0, 1, 2 in the order queued.
        assert_eq!(got, vec![2, 3, 4, 1], "{cpu}");
    }
}

#[test]
fn gws_without_m0_and_grids_too_large_to_be_resident_are_refused() {
    if !asm::tools() {
        return;
    }
    let cpu = "gfx1030";
    let err = run(cpu, &kernel(cpu, GROUPS, GROUPS - 1, false), GROUPS).unwrap_err();
    assert!(err.contains("ds_gws_init gds"), "{err}");
    assert!(err.contains("has not written M0"), "{err}");
    // 600 workgroups of two waves: more than 32 CUs x 32 waves.
    let err = run(cpu, &kernel(cpu, 600, 599, true), 600).unwrap_err();
    assert!(err.contains("must be resident at once"), "{err}");
    assert!(err.contains("1024"), "{err}");
    // The bound is the device's: 4 compute units hold 128 waves, so 80
    // workgroups of two are refused there and run on the default board.
    let mut small = SimConfig::new(cpu);
    small.compute_units = 4;
    let err = run_on(small, &kernel(cpu, 80, 79, true), 80).unwrap_err();
    assert!(err.contains("holds 128 (4 compute units"), "{err}");
    assert!(run(cpu, &kernel(cpu, 80, 79, true), 80).is_ok());
}

#[test]
fn gws_encodings_round_trip_through_llvm_mc_and_other_gds_accesses_stay_refused() {
    if !asm::mc() {
        return;
    }
    let lines: Vec<String> = [
        "ds_gws_init v1 gds",
        "ds_gws_barrier v2 offset:5 gds",
        "ds_gws_sema_v gds",
        "ds_gws_sema_br v3 gds",
        "ds_gws_sema_p offset:63 gds",
        "ds_gws_sema_release_all gds",
        "ds_add_u32 v1, v2 gds",
        "ds_ordered_count v1, v2 gds",
    ]
    .map(String::from)
    .to_vec();
    for cpu in ["gfx1030", "gfx1100"] {
        let isa = relaunch_isa::Isa::from_processor(cpu, false).unwrap();
        for (line, bytes) in lines.iter().zip(asm::encodings(cpu, &lines)) {
            let bytes = bytes.unwrap_or_else(|| panic!("{cpu}: llvm-mc refused {line}"));
            let (name, runs) = relaunch_sim::isa::executes(isa, &bytes).expect("decodes");
            let mnemonic = line.split(' ').next().unwrap();
            assert_eq!(name, format!("{mnemonic} gds"), "{cpu}: {line}");
            assert_eq!(runs, mnemonic.starts_with("ds_gws_"), "{cpu}: {line}");
        }
    }
    // gfx12 has no GDS: LLVM refuses them all.
    assert!(asm::encodings("gfx1201", &lines)
        .iter()
        .all(Option::is_none));
}
