//! Twins of the test kernels in `tests/kernels/*.cl` (test-only, so here
//! rather than in the simulator), matching their kernarg
//! layouts and semantics exactly (code object V5: kernels that index with
//! the workgroup size read it from `hidden_group_size_*`, so the twins do
//! too and fail when the kernarg block carries the wrong value).

use std::sync::Arc;

use relaunch_sim::twins::{registry, KernelFault, TwinFn, Workgroup};

/// Kernarg offset of `hidden_group_size_x` for kernels whose explicit
/// arguments end at or before byte 16 (hidden block starts at 16, +12).
const HIDDEN_GROUP_SIZE_AT_16: usize = 28;
/// The same for `axpy` (explicit arguments end at 24).
const AXPY_HIDDEN_GROUP_SIZE: usize = 36;

/// Register the test-kernel twins unless a twin of that name exists already.
pub fn register_test_kernel_twins() {
    let reg = registry();
    let all: [(&str, TwinFn); 7] = [
        ("counter", Arc::new(counter)),
        ("add_scalar", Arc::new(add_scalar)),
        ("axpy", Arc::new(axpy)),
        ("produce", Arc::new(produce)),
        ("consume", Arc::new(consume)),
        ("lds_reverse", Arc::new(lds_reverse)),
        ("scratch_hog", Arc::new(scratch_hog)),
    ];
    for (name, twin) in all {
        reg.register_if_absent(name, twin);
    }
}

/// Local ids of every work-item of the workgroup, x fastest.
fn local_ids(block: [u32; 3]) -> impl Iterator<Item = [u32; 3]> {
    (0..block[2])
        .flat_map(move |z| (0..block[1]).flat_map(move |y| (0..block[0]).map(move |x| [x, y, z])))
}

fn element(base: u64, index: u32) -> u64 {
    base.wrapping_add(4 * u64::from(index))
}

/// counter(uint *counter): every work-item atomically adds 1.
fn counter(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let counter = wg.arg_u64(0)?;
    let [x, y, z] = wg.workgroup_size();
    wg.atomic_add_u32(counter, x * y * z)?;
    Ok(())
}

/// add_scalar(uint *acc, uint value): acc[gid_x] += value.
fn add_scalar(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let acc = wg.arg_u64(0)?;
    let value = wg.arg_u32(8)?;
    // Built as code object v4 it reads the size from its dispatch packet.
    let size = if wg.has_dispatch_packet() {
        wg.packet_workgroup_size()?
    } else {
        wg.hidden_group_size(HIDDEN_GROUP_SIZE_AT_16)?
    };
    let id = wg.workgroup_id();
    for lid in local_ids(size) {
        let at = element(acc, id[0] * size[0] + lid[0]);
        let old = wg.load_u32(at)?;
        wg.store_u32(at, old.wrapping_add(value))?;
    }
    Ok(())
}

/// axpy(float *y, const float *x, float a, uint width): y[i] = fma(a, x[i], y[i]).
fn axpy(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let y = wg.arg_u64(0)?;
    let x = wg.arg_u64(8)?;
    let a = wg.arg_f32(16)?;
    let width = wg.arg_u32(20)?;
    let size = wg.hidden_group_size(AXPY_HIDDEN_GROUP_SIZE)?;
    let id = wg.workgroup_id();
    for lid in local_ids(size) {
        let gx = id[0] * size[0] + lid[0];
        let gy = id[1] * size[1] + lid[1];
        let i = gy.wrapping_mul(width).wrapping_add(gx);
        let xv = wg.load_f32(element(x, i))?;
        let yv = wg.load_f32(element(y, i))?;
        // The compiled kernel contracts to v_fmac_f32.
        wg.store_f32(element(y, i), a.mul_add(xv, yv))?;
    }
    Ok(())
}

/// produce(uint *buf, uint scale): buf[i] = i * scale.
fn produce(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let buf = wg.arg_u64(0)?;
    let scale = wg.arg_u32(8)?;
    let size = wg.hidden_group_size(HIDDEN_GROUP_SIZE_AT_16)?;
    let id = wg.workgroup_id();
    for lid in local_ids(size) {
        let i = id[0] * size[0] + lid[0];
        wg.store_u32(element(buf, i), i.wrapping_mul(scale))?;
    }
    Ok(())
}

/// consume(uint *out, const uint *buf): out[i] += buf[i].
fn consume(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let out = wg.arg_u64(0)?;
    let buf = wg.arg_u64(8)?;
    let size = wg.hidden_group_size(HIDDEN_GROUP_SIZE_AT_16)?;
    let id = wg.workgroup_id();
    for lid in local_ids(size) {
        let i = id[0] * size[0] + lid[0];
        let add = wg.load_u32(element(buf, i))?;
        let old = wg.load_u32(element(out, i))?;
        wg.store_u32(element(out, i), old.wrapping_add(add))?;
    }
    Ok(())
}

/// lds_reverse(uint *data, local uint *tmp): reverse each workgroup's slice
/// through group memory at byte offset `tmp`.
fn lds_reverse(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let data = wg.arg_u64(0)?;
    let tmp = wg.arg_u32(8)? as usize;
    let size = wg.hidden_group_size(HIDDEN_GROUP_SIZE_AT_16)?;
    let n = size[0];
    let id = wg.workgroup_id();
    // Work-items with the same x (other y/z) repeat the same stores, as on hardware.
    for lid in local_ids(size) {
        let v = wg.load_u32(element(data, id[0] * n + lid[0]))?;
        wg.set_lds_u32(tmp + 4 * lid[0] as usize, v)?;
    }
    for lid in local_ids(size) {
        let v = wg.lds_u32(tmp + 4 * (n - 1 - lid[0]) as usize)?;
        wg.store_u32(element(data, id[0] * n + lid[0]), v)?;
    }
    Ok(())
}

/// scratch_hog(uint *out, uint seed): out[i] = ((seed + i) & 255) * seed.
fn scratch_hog(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let out = wg.arg_u64(0)?;
    let seed = wg.arg_u32(8)?;
    let size = wg.hidden_group_size(HIDDEN_GROUP_SIZE_AT_16)?;
    let id = wg.workgroup_id();
    for lid in local_ids(size) {
        let i = id[0] * size[0] + lid[0];
        let k = seed.wrapping_add(i) & 255;
        wg.store_u32(element(out, i), k.wrapping_mul(seed))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use relaunch_sim::memory::{DeviceMemory, MemKind};
    use relaunch_sim::twins::DispatchContext;

    struct Fixture {
        mem: DeviceMemory,
        ka: u64,
    }

    impl Fixture {
        fn new(kernarg: &[u8]) -> Self {
            let mem = DeviceMemory::new(1 << 22);
            let ka = mem
                .allocate(kernarg.len(), MemKind::HostFineGrained)
                .unwrap();
            mem.write(ka, kernarg).unwrap();
            Fixture { mem, ka }
        }
        fn run(
            &self,
            twin: TwinFn,
            grid: [u32; 3],
            block: [u32; 3],
            lds: usize,
        ) -> Result<(), KernelFault> {
            let len = self.mem.allocation_of(self.ka).unwrap().len;
            DispatchContext::new(self.ka, len, grid, block, lds).run(&self.mem, &twin)
        }
    }

    fn kernarg(explicit: &[u8], hidden_at: usize, block: [u16; 3]) -> Vec<u8> {
        let mut k = vec![0u8; 272];
        k[..explicit.len()].copy_from_slice(explicit);
        for (d, b) in block.iter().enumerate() {
            k[hidden_at + 2 * d..hidden_at + 2 * d + 2].copy_from_slice(&b.to_le_bytes());
        }
        k
    }

    fn words(m: &DeviceMemory, addr: u64, n: usize) -> Vec<u32> {
        (0..n)
            .map(|i| m.read_u32(addr + 4 * i as u64).unwrap())
            .collect()
    }

    #[test]
    fn counter_counts_work_items() {
        let mem = DeviceMemory::new(1 << 20);
        let c = mem.allocate(4, MemKind::Device).unwrap();
        let ka = mem.allocate(8, MemKind::HostFineGrained).unwrap();
        mem.write_u64(ka, c).unwrap();
        let twin: TwinFn = Arc::new(counter);
        DispatchContext::new(ka, 8, [64, 2, 1], [32, 1, 1], 0)
            .run(&mem, &twin)
            .unwrap();
        assert_eq!(mem.read_u32(c).unwrap(), 128);
    }

    #[test]
    fn produce_then_consume_and_add_scalar() {
        let f = Fixture::new(&[0u8; 272]);
        let buf = f.mem.allocate(64, MemKind::Device).unwrap();
        let out = f.mem.allocate(64, MemKind::Device).unwrap();
        let mut e = buf.to_le_bytes().to_vec();
        e.extend(3u32.to_le_bytes());
        f.mem.write(f.ka, &kernarg(&e, 28, [4, 1, 1])).unwrap();
        f.run(Arc::new(produce), [16, 1, 1], [4, 1, 1], 0).unwrap();
        assert_eq!(words(&f.mem, buf, 4), vec![0, 3, 6, 9]);
        let mut e = out.to_le_bytes().to_vec();
        e.extend(buf.to_le_bytes());
        f.mem.write(f.ka, &kernarg(&e, 28, [8, 1, 1])).unwrap();
        f.run(Arc::new(consume), [16, 1, 1], [8, 1, 1], 0).unwrap();
        f.run(Arc::new(consume), [16, 1, 1], [8, 1, 1], 0).unwrap();
        assert_eq!(words(&f.mem, out, 3), vec![0, 6, 12]);
        let mut e = out.to_le_bytes().to_vec();
        e.extend(5u32.to_le_bytes());
        f.mem.write(f.ka, &kernarg(&e, 28, [16, 1, 1])).unwrap();
        f.run(Arc::new(add_scalar), [16, 1, 1], [16, 1, 1], 0)
            .unwrap();
        assert_eq!(words(&f.mem, out, 2), vec![5, 11]);
    }

    #[test]
    fn wrong_hidden_group_size_is_reported() {
        let f = Fixture::new(&kernarg(&[0u8; 12], 28, [32, 1, 1]));
        let err = f
            .run(Arc::new(add_scalar), [64, 1, 1], [64, 1, 1], 0)
            .unwrap_err();
        assert_eq!(
            err,
            KernelFault::HiddenArgMismatch {
                what: "hidden_group_size_x",
                offset: 28,
                found: 32,
                expected: 64
            }
        );
    }

    #[test]
    fn axpy_uses_fused_multiply_add_over_two_dims() {
        let f = Fixture::new(&[0u8; 272]);
        let y = f.mem.allocate(4 * 8, MemKind::Device).unwrap();
        let x = f.mem.allocate(4 * 8, MemKind::Device).unwrap();
        for i in 0..8u64 {
            f.mem.write(x + 4 * i, &(i as f32).to_le_bytes()).unwrap();
            f.mem.write(y + 4 * i, &1.0f32.to_le_bytes()).unwrap();
        }
        let mut e = y.to_le_bytes().to_vec();
        e.extend(x.to_le_bytes());
        e.extend(0.5f32.to_le_bytes());
        e.extend(4u32.to_le_bytes());
        f.mem.write(f.ka, &kernarg(&e, 36, [2, 2, 1])).unwrap();
        f.run(Arc::new(axpy), [4, 2, 1], [2, 2, 1], 0).unwrap();
        let got: Vec<f32> = words(&f.mem, y, 8)
            .into_iter()
            .map(f32::from_bits)
            .collect();
        assert_eq!(got, vec![1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5]);
    }

    #[test]
    fn lds_reverse_reverses_each_workgroup_and_checks_lds_size() {
        let f = Fixture::new(&[0u8; 272]);
        let data = f.mem.allocate(4 * 8, MemKind::Device).unwrap();
        for i in 0..8u64 {
            f.mem.write_u32(data + 4 * i, i as u32).unwrap();
        }
        let mut e = data.to_le_bytes().to_vec();
        e.extend(0u32.to_le_bytes());
        f.mem.write(f.ka, &kernarg(&e, 28, [4, 1, 1])).unwrap();
        f.run(Arc::new(lds_reverse), [8, 1, 1], [4, 1, 1], 512)
            .unwrap();
        assert_eq!(words(&f.mem, data, 8), vec![3, 2, 1, 0, 7, 6, 5, 4]);
        let err = f
            .run(Arc::new(lds_reverse), [8, 1, 1], [4, 1, 1], 8)
            .unwrap_err();
        assert!(matches!(err, KernelFault::LdsOutOfRange { .. }), "{err}");
    }

    #[test]
    fn scratch_hog_matches_its_formula() {
        let f = Fixture::new(&[0u8; 272]);
        let out = f.mem.allocate(16, MemKind::Device).unwrap();
        let mut e = out.to_le_bytes().to_vec();
        e.extend(7u32.to_le_bytes());
        f.mem.write(f.ka, &kernarg(&e, 28, [4, 1, 1])).unwrap();
        f.run(Arc::new(scratch_hog), [4, 1, 1], [4, 1, 1], 0)
            .unwrap();
        assert_eq!(words(&f.mem, out, 4), vec![49, 56, 63, 70]);
    }
}
