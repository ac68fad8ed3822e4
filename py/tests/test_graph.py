"""Graphs: recording, hazards, lanes, boundaries, fingerprints, launches."""

import struct

import pytest

import relaunch as rl
from conftest import counter_args, kernel_bytes


def two_chains(lanes=2):
    g = rl.Graph(lanes=lanes)
    a, b = g.buffer("A", 64), g.buffer("B", 64)
    x1 = g.kernel("x1", 1, 1, accesses=[(a, 0, 4, True)])
    x2 = g.kernel("x2", 1, 1, accesses=[(a, 0, 4, True)], deps=[x1])
    y1 = g.kernel("y1", 1, 1, accesses=[(b, 0, 4, True)])
    y2 = g.kernel("y2", 1, 1, accesses=[(b, 0, 4, False)], deps=[y1])
    return g, (x1, x2, y1, y2)


def test_two_independent_chains_make_two_lanes():
    g, (x1, x2, y1, y2) = two_chains()
    exec_ = g.instantiate()
    assert exec_.lane_count == 2
    lanes = sorted(exec_.lanes, key=lambda lane: lane[0].id)
    assert lanes == [[x1, x2], [y1, y2]]
    assert [n.name for n in lanes[0]] == ["x1", "x2"]


def test_one_lane_when_asked():
    g, nodes = two_chains(lanes=1)
    exec_ = g.instantiate()
    assert exec_.lane_count == 1
    assert sorted(n.id for n in exec_.lanes[0]) == sorted(n.id for n in nodes)


def test_boundaries_say_where_and_why():
    g, (x1, x2, y1, y2) = two_chains()
    exec_ = g.instantiate()
    found = {b["before"]: b for lane in exec_.boundaries for b in lane}
    assert set(found) == {x2, y2}
    assert (found[x2]["kind"], found[x2]["hazard"], found[x2]["producer"]) == ("wait", "WAW", x1)
    assert (found[y2]["kind"], found[y2]["hazard"], found[y2]["buffer"]) == ("rmw", "RAW", "B")
    assert found[y2]["range"] == (0, 4)
    assert '"y2"' in found[y2]["why"] and "RAW" in found[y2]["why"]


def test_hazard_is_a_compile_error_listing_the_pair():
    g = rl.Graph()
    a = g.buffer("acts", 128)
    g.kernel("writer", 1, 1, accesses=[(a, 0, 64, True)])
    g.kernel("reader", 1, 1, accesses=[(a, 32, 64, False)])
    with pytest.raises(rl.CompileError) as info:
        g.instantiate()
    message = str(info.value)
    assert "RAW" in message and '"writer"' in message and '"reader"' in message
    assert '"acts"' in message
    # The same as data: the node pair and the resource.
    (hazard,) = info.value.hazards
    assert isinstance(hazard, rl.Hazard)
    assert (hazard.kind, hazard.buffer_label, hazard.range) == ("RAW", "acts", (32, 64))
    assert (hazard.first_name, hazard.second_name) == ("writer", "reader")
    assert hazard.first != hazard.second and not info.value.truncated
    assert info.value.kernel is None and info.value.reason is None


def test_fingerprint_is_stable_across_identical_graphs():
    f1 = two_chains()[0].instantiate().fingerprint()
    f2 = two_chains()[0].instantiate().fingerprint()
    assert f1 == f2
    assert len(f1) == 64 and int(f1, 16) >= 0
    g = rl.Graph(lanes=2)
    a = g.buffer("A", 64)
    g.kernel("x1", 1, 1, accesses=[(a, 0, 4, True)])
    assert g.instantiate().fingerprint() != f1


def test_launch_mock_and_dot():
    g, (x1, x2, y1, y2) = two_chains()
    exec_ = g.instantiate()
    mock = exec_.launch_mock()
    assert mock.lane_count == 2
    orders = sorted(mock.dispatch_order, key=lambda lane: lane[0].id)
    assert orders == [[x1, x2], [y1, y2]]
    steps = {tuple(kind for kind, _ in lane) for lane in mock.events}
    assert steps == {("dispatch", "boundary", "dispatch")}
    assert "boundary rmw" in str(mock) and "dispatch x1 (node 0)" in str(mock)
    dot = exec_.to_dot()
    assert dot.startswith("digraph") and "cluster_lane1" in dot and "rmw" in dot


def test_foreign_handles_and_bad_arguments():
    g1, (x1, *_rest) = two_chains()
    g2 = rl.Graph()
    b2 = g2.buffer("C", 16)
    with pytest.raises(rl.HandleError):
        g1.kernel("z", 1, 1, deps=[g2.kernel("w", 1, 1)])
    with pytest.raises(rl.HandleError):
        g1.kernel("z", 1, 1, accesses=[(b2, 0, 4, True)])
    with pytest.raises(TypeError):
        g1.kernel("z", 1, 1, accesses=[("A", 0, 4, True)])
    with pytest.raises(ValueError):
        g1.kernel("z", 1, 1, accesses=[(b2, 0, 4)])
    with pytest.raises(TypeError):
        g1.kernel("z", 1, 1, deps=["x1"])
    with pytest.raises(rl.HandleError, match="unknown node handle 99"):
        g1.kernel("z", 1, 1, deps=[99])
    with pytest.raises(ValueError, match="mode"):
        rl.Graph(mode="fast")
    with pytest.raises(TypeError):
        rl.Graph(lanes="2")
    with pytest.raises(rl.RecordError):
        g2.kernel("oob", 1, 1, accesses=[(b2, 8, 16, True)])
    with pytest.raises(rl.CompileError):
        rl.Graph().instantiate()


def test_named_kernels_cannot_launch(gpu):
    exec_ = two_chains()[0].instantiate()
    with pytest.raises(rl.CompileError, match="named only"):
        exec_.launch(gpu)


@pytest.mark.parametrize("submission", ["auto", "aql"])
def test_launch_on_the_sim_and_patch_a_node(gpu, counter, counter_twin, submission):
    real_a, real_b, real_c = gpu.alloc(16), gpu.alloc(16), gpu.alloc(16)
    g = rl.Graph(lanes=2)
    a, b = g.buffer("A", 16), g.buffer("B", 16)

    def node(name, buf, real, deps=()):
        return g.kernel(
            "counter",
            (64, 1, 1),
            (32, 1, 1),
            accesses=[(buf, 0, 4, True)],
            deps=list(deps),
            module=counter,
            kernarg=counter_args(counter, real, grid=64, block=32),
        )

    a1 = node("a1", a, real_a)
    a2 = node("a2", a, real_a, [a1])
    b1 = node("b1", b, real_b)
    b2 = node("b2", b, real_b, [b1])
    assert a1.name == "counter"
    exec_ = g.instantiate(submission=submission)
    assert exec_.lane_count == 2
    kinds = [kind for kind, _ in exec_.lane_submissions]
    assert kinds == (["aql", "aql"] if submission == "aql" else ["pm4", "pm4"])
    exec_.launch(gpu)
    assert (real_a.read_u32(0), real_b.read_u32(0)) == (128, 128)
    exec_.set_kernargs(b2, struct.pack("<Q", real_c.address()))
    exec_.launch(gpu)
    assert (real_a.read_u32(0), real_b.read_u32(0), real_c.read_u32(0)) == (256, 192, 64)
    with pytest.raises(rl.RecordError):
        exec_.set_kernargs(a2, b"\0" * 8, byte_offset=4096)
    with pytest.raises(rl.HandleError):
        exec_.launch(rl.Gpu("sim:gfx1201"))
    with pytest.raises(TypeError):
        exec_.set_kernargs("a2", b"\0")  # type: ignore[arg-type]


def test_module_node_needs_a_full_kernarg(gpu, counter):
    g = rl.Graph()
    with pytest.raises(rl.RecordError, match="kernarg"):
        g.kernel("counter", 1, 1, module=counter, kernarg=b"")
    with pytest.raises(TypeError, match="module"):
        g.kernel("counter", 1, 1, module="counter")  # type: ignore[arg-type]


def test_twin_exception_during_graph_launch(gpu, counter):
    def broken(wg):
        raise RuntimeError("graph twin failed")

    real = gpu.alloc(16)
    g = rl.Graph()
    a = g.buffer("A", 16)
    g.kernel("counter", 1, 1, accesses=[(a, 0, 4, True)], module=counter,
             kernarg=counter_args(counter, real))
    exec_ = g.instantiate()
    rl.sim.register_kernel("counter", broken)
    with pytest.raises(rl.ReplayError, match="graph twin failed"):
        exec_.launch(gpu)


def test_a_kernel_pm4_refuses_runs_its_lane_as_public_aql(gpu):
    # More scratch per work-item than the PM4 path gives.
    scratch = gpu.load_module(kernel_bytes("scratch_huge"))
    real = gpu.alloc(256)
    g = rl.Graph()
    out = g.buffer("out", 256)
    kernarg = scratch.pack_kernargs("scratch_huge", struct.pack("<QI", real.address(), 3), 32, 32)
    g.kernel("scratch_huge", 32, 32, accesses=[(out, 0, 128, True)], module=scratch,
             kernarg=kernarg)
    exec_ = g.instantiate()
    ((kind, reason),) = exec_.lane_submissions
    assert kind == "aql"
    assert reason is not None and "scratch_huge" in reason and "scratch" in reason
    with pytest.raises(rl.CompileError, match="direct PM4 path"):
        g.instantiate(submission="pm4")
    with pytest.raises(ValueError, match="submission"):
        g.instantiate(submission="vulkan")


def test_a_printf_kernel_runs_as_public_aql_and_prints_to_stdout(capfd):
    # HIP's device printf (hostcall), built for gfx1100 only.
    gpu = rl.Gpu("sim:gfx1100")
    printf = gpu.load_module(kernel_bytes("hip_printf", "gfx1100"))
    real = gpu.alloc(256)
    g = rl.Graph()
    out = g.buffer("out", 256)
    kernarg = printf.pack_kernargs("hip_printf", struct.pack("<QI", real.address(), 6), 64, 32)
    g.kernel("hip_printf", 64, 32, accesses=[(out, 0, 256, True)], module=printf,
             kernarg=kernarg)
    exec_ = g.instantiate()
    ((kind, reason),) = exec_.lane_submissions
    assert kind == "aql"
    assert reason is not None and "hip_printf" in reason and "hostcall" in reason
    capfd.readouterr()
    exec_.launch(gpu)
    assert capfd.readouterr().out == (
        "tag 6: hello -7  1.50 0xbeef z|ab  |1.234500e+03\n"
        "item 0 of tag 6\nitem 1 of tag 6\n"
    )
