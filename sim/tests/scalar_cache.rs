//! The scalar-cache rule the narrow boundary relies on: a scalar load of
//! data an earlier dispatch wrote is stale after `rmw_vmem` (GCR 0x300 keeps
//! K$) and fine after `rmw` (0x380 invalidates it). This binary replaces the
//! `consume` twin with one that reads `buf` through the scalar cache, as a
//! kernel whose code is not VMEM-only would; and the same rule on a
//! hand-assembled kernel whose real `s_load` (run by the interpreter)
//! reads the previous dispatch's output, on gfx1030, gfx1100 and gfx1201.

use relaunch_encoders::BoundaryKind;
use relaunch_sim::isa::KernelMode;
use relaunch_sim::twins::register_twin;
use relaunch_sim::SimConfig;
use relaunch_testsupport::asm;
use relaunch_testsupport::simkit::{linear, Rig};

fn scalar_consumer() {
    // consume(uint *out, const uint *in): out[i] += in[i], with `in` read
    // by scalar loads (uniform per workgroup in real code; per item here).
    register_twin("consume", |wg| {
        let out = wg.arg_u64(0)?;
        let input = wg.arg_u64(8)?;
        let [gx, _, _] = wg.workgroup_id();
        let [bx, _, _] = wg.workgroup_size();
        for x in 0..bx {
            let i = gx * bx + x;
            let v = wg.scalar_load_u32(input + 4 * u64::from(i))?;
            let o = wg.load_u32(out + 4 * u64::from(i))?;
            wg.store_u32(out + 4 * u64::from(i), o.wrapping_add(v))?;
        }
        Ok(())
    });
}

#[test]
fn scalar_read_of_producer_data_is_stale_after_rmw_vmem_and_fine_after_rmw() {
    scalar_consumer();
    for target in ["gfx1030", "gfx1100", "gfx1201"] {
        let rig = Rig::new(target, "produce_consume", 3);
        let (b, _, _) = rig.producer_consumer(Some(BoundaryKind::RmwVmem));
        let ib = rig.place(b);
        let err = rig.lane().replay(&ib).unwrap_err();
        assert!(err.contains("stale read"), "{target}: {err}");
        assert!(err.contains("GLK_INV"), "{target}: {err}");

        let rig = Rig::new(target, "produce_consume", 3);
        let (b, _, out) = rig.producer_consumer(Some(BoundaryKind::Rmw));
        let ib = rig.place(b);
        rig.lane()
            .replay(&ib)
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert_eq!(
            rig.dev.memory.read_u32(out + 4 * 10).unwrap(),
            30,
            "{target}"
        );
        assert_eq!(rig.dev.take_violations().0, vec![]);
    }
}

/// A hand-assembled kernel `sload_copy(out, in)`: `out[0] = in[0] + 1`,
/// with `in[0]` read by a real `s_load` (wave32, one kernarg pair).
fn sload_copy(cpu: &str) -> Vec<u8> {
    let sp = asm::spelling(cpu);
    let (ld4, ld1, wait, st) = (
        sp.s_load_b128,
        sp.s_load_b32,
        sp.wait_scalar,
        sp.global_store_b32,
    );
    let body = format!(
        "  {ld4} s[4:7], s[0:1], 0x0\n  {wait}\n  {ld1} s8, s[6:7], 0x0\n  {wait}\n  \
         s_add_u32 s8, s8, 1\n  v_mov_b32 v1, s8\n  v_mov_b32 v0, 0\n  \
         {st} v0, v1, s[4:5]\n  s_endpgm"
    );
    asm::kernel_of_pointers(cpu, "sload_copy", &body, "", 2)
}

/// Two `sload_copy` dispatches with `kind` between them on a new rig:
/// mid = a + 1 (a vector store), then out = mid + 1 with mid read by
/// s_load after the boundary. Returns the rig, `out` and the replay's
/// result.
fn sload_chain(cpu: &str, bytes: &[u8], kind: BoundaryKind) -> (Rig, u64, Result<(), String>) {
    let mut cfg = SimConfig::new(cpu);
    cfg.kernels = KernelMode::Isa;
    let rig = Rig::from_bytes(cfg, bytes);
    let (a, mid, out) = (rig.alloc(64), rig.alloc(64), rig.alloc(64));
    rig.dev.memory.write_u32(a, 5).unwrap();
    let mut b = rig.builder();
    let mut first = mid.to_le_bytes().to_vec();
    first.extend(a.to_le_bytes());
    rig.dispatch(&mut b, "sload_copy", &linear(32, 32), &first);
    b.boundary(kind);
    let mut second = out.to_le_bytes().to_vec();
    second.extend(mid.to_le_bytes());
    rig.dispatch(&mut b, "sload_copy", &linear(32, 32), &second);
    let ib = rig.place(b);
    let r = rig.lane().replay(&ib);
    (rig, out, r)
}

#[test]
fn a_real_s_load_of_the_previous_dispatch_output_is_stale_after_rmw_vmem_and_fine_after_rmw() {
    if !asm::tools() {
        return;
    }
    for cpu in ["gfx1030", "gfx1100", "gfx1201"] {
        let bytes = sload_copy(cpu);
        for kind in [BoundaryKind::RmwVmem, BoundaryKind::Rmw] {
            let (rig, out, r) = sload_chain(cpu, &bytes, kind);
            match kind {
                BoundaryKind::RmwVmem => {
                    let err = r.expect_err(&format!("{cpu}: rmw_vmem keeps K$, must be stale"));
                    assert!(err.contains("stale read"), "{cpu}: {err}");
                    assert!(err.contains("GLK_INV"), "{cpu}: {err}");
                    assert!(err.contains("sload_copy"), "{cpu}: {err}");
                }
                _ => {
                    r.unwrap_or_else(|e| panic!("{cpu} {kind:?}: {e}"));
                    assert_eq!(rig.dev.memory.read_u32(out).unwrap(), 7, "{cpu}");
                    assert_eq!(rig.dev.take_violations().0, vec![], "{cpu}");
                }
            }
        }
    }
}

#[test]
fn the_invalidation_floor_keeps_k_cache_before_a_real_s_load_of_producer_data() {
    if !asm::tools() {
        return;
    }
    for cpu in ["gfx1030", "gfx1100", "gfx1201"] {
        let (rig, _, r) = sload_chain(cpu, &sload_copy(cpu), BoundaryKind::Rmw);
        r.unwrap_or_else(|e| panic!("{cpu}: {e}"));
        let n = rig.dev.cp_counts();
        // The prologue and the rmw boundary each invalidate all three.
        let ib_kinds = (n.ib.k_invalidate, n.ib.l0_invalidate, n.ib.gl1_invalidate);
        assert_eq!(ib_kinds, (2, 2, 2), "{cpu}");
        // Needed: K$ and GL1 before each dispatch (host kernargs, then
        // the s_load of `mid`), and no V$ (nothing is read by vector loads).
        let f = n.ib_floor;
        let floor = (f.k_invalidate, f.l0_invalidate, f.gl1_invalidate);
        assert_eq!(floor, (2, 0, 2), "{cpu}");
    }
}
