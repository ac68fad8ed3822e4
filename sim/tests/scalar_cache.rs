//! The scalar-cache rule the narrow boundary relies on: a scalar load of
//! data an earlier dispatch wrote is stale after `rmw_vmem` (GCR 0x300 keeps
//! K$) and fine after `rmw` (0x380 invalidates it). This binary replaces the
//! `consume` twin with one that reads `buf` through the scalar cache, as a
//! kernel whose code is not VMEM-only would.

use relaunch_encoders::BoundaryKind;
use relaunch_sim::twins::register_twin;
use relaunch_testsupport::simkit::Rig;

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
