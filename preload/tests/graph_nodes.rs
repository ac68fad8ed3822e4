//! Memset, memcpy and event nodes under the interposer (`app/graph_nodes.c`
//! against the fake HIP's stream threads): the check program of a
//! captured memset, kernel, device-to-device memcpy and two more kernels,
//! launched 100 times interleaved with the app's own work on one stream;
//! explicit 2-D memset / 3-D memcpy / event record and wait nodes; and the
//! graphs that fall through with the reason (pageable host memory, a wait
//! for an event recorded outside the graph).

mod common;

use common::{build_c, built, counter_co, run_with};

#[test]
fn memset_memcpy_and_event_nodes_replay_inside_the_ib() {
    let Some(b) = built() else { return };
    let app = build_c(&b.dir, "graph_nodes", "app/graph_nodes.c", &[], true);
    let log = [("RELAUNCH_LOG", Some("info"))];
    let (lines, stderr) = run_with(b, &app, &[&counter_co()], true, &log);
    assert_eq!(
        lines,
        [
            // Held stream: the launch returned with its three stream
            // operations (gate = seq, wait for gate 0, passed = seq) queued and
            // nothing run (x still holds the app's earlier 0x7f bytes);
            // then x = 0 + 8, y = x + 8, acc = 8.
            "capture pending=3 before=0 x_before=0x7f7f7f7f x=8 y=16 acc=8 launches=0",
            // Each read-back saw exactly the launches before it, and y as
            // the replay left it (16), not the app's memset after it.
            "interleaved right=100 of 100 x=8 y=0 acc=808 own_kernels=100 launches=0",
            // 4 rows of 16 bytes set (the 48-byte gaps untouched), rows 1
            // and 2 copied into 32 bytes of n; both kernels ran once.
            "explicit rows=64 gaps=192 copied=32 tail=0 k1=8 k2=8 launches=0",
            "pageable launches=1",
            "foreign k2=8 launches=2",
            // z[1..14] = 0xAB, z[22..32] = five 0xBEEF elements, the rest
            // 0x11: both replayed (no launch reached the fake).
            "bytes z=11ababababababababababababab1111111111111111efbeefbeefbeefbeefbe11111111 launches=2",
            // Every byte as the captured 2-D and D8/D16 forms leave it.
            "twod right=128 of 128 launches=2",
            // Between hipMallocAsync allocations: replayed.
            "async moved=64 launches=2",
            // From managed and from relocated registered memory: HIP's.
            "managed registered launches=4",
        ],
        "{stderr}"
    );
    assert!(
        stderr.contains("host-to-device") && stderr.contains("pageable host memory"),
        "{stderr}"
    );
    assert!(
        stderr.contains("which no node of the graph records"),
        "{stderr}"
    );
    assert!(
        stderr.contains("is managed memory (hipMallocManaged)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hipHostRegister'ed memory the device reaches at"),
        "{stderr}"
    );
    // Every replay finished (a failed one would release its stream and
    // fall through, leaving partial results).
    assert!(!stderr.contains("replay failed"), "{stderr}");
    // Without the interposer every launch reaches the fake (which runs no
    // graph): nothing is set or copied.
    let (lines, _) = run_with(b, &app, &[&counter_co()], false, &[]);
    assert_eq!(
        lines,
        [
            "capture pending=0 before=0 x_before=0x7f7f7f7f x=2139062143 y=0 acc=0 launches=1",
            "interleaved right=0 of 100 x=2139062143 y=0 acc=0 own_kernels=100 launches=101",
            "explicit rows=0 gaps=192 copied=0 tail=0 k1=0 k2=0 launches=102",
            "pageable launches=103",
            "foreign k2=0 launches=104",
            "bytes z=111111111111111111111111111111111111111111111111111111111111111111111111 launches=106",
            // Only the 76 bytes none of them writes.
            "twod right=76 of 128 launches=107",
            "async moved=0 launches=108",
            "managed registered launches=110",
        ]
    );
}

/// `app/dispatch_geometry.c`: a code object v4 kernel that reads its
/// workgroup size through the dispatch packet (the committed
/// `add_scalar-v4.co`, gfx1100, run by the simulator's interpreter), in a
/// graph whose geometry a patch changes between launches: the exec is
/// built again each time, so every replay's packet (and kernargs) carry
/// its own geometry, and nothing falls through.
#[test]
fn a_geometry_patch_rebuilds_the_exec_and_the_dispatch_packet_follows() {
    let Some(b) = built() else { return };
    let app = build_c(
        &b.dir,
        "dispatch_geometry",
        "app/dispatch_geometry.c",
        &[],
        true,
    );
    let co = relaunch_testsupport::fixture_path("gfx1100", "add_scalar-v4");
    let env = [
        ("RELAUNCH_SIM_TARGETS", Some("gfx1100")),
        ("RELAUNCH_DEVICE", Some("name:gfx1100")),
        // The fake HIP's device is the simulated gfx1100's board.
        ("FAKEHIP_PCI_BUS_ID", Some("1100:e0:00.0")),
        ("RELAUNCH_SIM_KERNELS", Some("isa")),
        ("RELAUNCH_LOG", Some("info")),
    ];
    let (lines, stderr) = run_with(b, &app, &[&co], true, &env);
    assert_eq!(
        lines,
        [
            "first acc=1111111100000000 launches=0",
            "wider acc=3333333322222222 launches=0",
            "narrower acc=7777773322222222 launches=0",
            // 7 + 4 + 8 = 19 for 0..6 and 3 + 8 = 11 for 6..8 (decimal).
            "inflight acc=191919191919111122222222 launches=0",
        ],
        "{stderr}"
    );
    assert!(stderr.contains("rebuilt"), "{stderr}");
    // Without the interposer the fake runs nothing.
    let (lines, _) = run_with(b, &app, &[&co], false, &env);
    assert_eq!(
        lines,
        [
            "first acc=0000000000000000 launches=1",
            "wider acc=0000000000000000 launches=2",
            "narrower acc=0000000000000000 launches=3",
            "inflight acc=0000000000000000 launches=5",
        ]
    );
}

/// The check of #19: a code object v4 HIP kernel built now by clang-19
/// with `-mcode-object-version=4`, reading `blockDim.x` and `gridDim.x`
/// through the dispatch pointer (`tests/kernels/hip/dims_v4.hip`), in a
/// graph whose geometry SetParams changes between launches: every group
/// of every launch reads that launch's values (the simulator's
/// interpreter runs the machine code).
#[test]
fn a_v4_hip_kernel_reads_each_patched_geometry_through_the_dispatch_packet() {
    let Some(b) = built() else { return };
    let Some(bytes) = relaunch_testsupport::hip::dims_v4() else {
        return;
    };
    let co = b.dir.join("dims_v4.co");
    std::fs::write(&co, bytes).unwrap();
    let app = build_c(&b.dir, "dims_geometry", "app/dims_geometry.c", &[], true);
    let env = [
        ("RELAUNCH_SIM_TARGETS", Some("gfx1100")),
        ("RELAUNCH_DEVICE", Some("name:gfx1100")),
        // The fake HIP's device is the simulated gfx1100's board.
        ("FAKEHIP_PCI_BUS_ID", Some("1100:e0:00.0")),
        ("RELAUNCH_SIM_KERNELS", Some("isa")),
    ];
    let (lines, stderr) = run_with(b, &app, &[&co], true, &env);
    assert_eq!(
        lines,
        [
            "block=64 groups=3 read=64/3,64/3,64/3 launches=0",
            "block=32 groups=5 read=32/5,32/5,32/5,32/5,32/5 launches=0",
            "block=128 groups=2 read=128/2,128/2 launches=0",
        ],
        "{stderr}"
    );
}
