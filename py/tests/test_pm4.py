"""Direct retained PM4: build, replay, patch, and argument checking."""

import struct

import pytest

import relaunch as rl
from conftest import counter_args, kernel_bytes


def test_counter_replays_n_dispatches(gpu, counter, counter_twin):
    buf = gpu.alloc(64)
    n = 5
    args = counter_args(counter, buf)
    ib = gpu.build(counter, [("counter", 1, 1, 0, args, False)] * n)
    assert ib.dispatch_count == n
    assert ib.dwords > 0
    ib.replay()
    assert buf.read_u32(0) == n
    ib.replay()
    assert buf.read_u32(0) == 2 * n
    assert len(counter_twin.calls) == 2 * n


def test_workgroups_and_sizes_reach_the_twin(gpu, counter, counter_twin):
    buf = gpu.alloc(16)
    args = counter_args(counter, buf, grid=(64, 2), block=(32, 1))
    ib = gpu.build(counter, [("counter", (64, 2), (32, 1), 0, args, True)])
    ib.replay()
    assert buf.read_u32(0) == 128
    assert sorted(c[0] for c in counter_twin.calls) == [(0, 0, 0), (0, 1, 0), (1, 0, 0), (1, 1, 0)]
    assert {c[1] for c in counter_twin.calls} == {(64, 2, 1)}


def test_set_kernargs_redirects_to_another_buffer(gpu, counter, counter_twin):
    first, second = gpu.alloc(16), gpu.alloc(16)
    ib = gpu.build(
        counter,
        [
            ("counter", 1, 1, 0, counter_args(counter, first), False),
            ("counter", 1, 1, 0, counter_args(counter, first), True),
        ],
    )
    ib.replay()
    assert (first.read_u32(0), second.read_u32(0)) == (2, 0)
    ib.set_kernargs(1, struct.pack("<Q", second.address()))
    ib.replay()
    assert (first.read_u32(0), second.read_u32(0)) == (3, 1)
    # Patch at an offset inside the 8-byte pointer: same low dword, back to first.
    ib.set_kernargs(1, struct.pack("<I", first.address() >> 32), byte_offset=4)
    ib.set_kernargs(1, struct.pack("<I", first.address() & 0xFFFFFFFF), byte_offset=0)
    ib.replay()
    assert (first.read_u32(0), second.read_u32(0)) == (5, 1)


def test_patch_outside_the_kernarg_block_is_refused(gpu, counter, counter_twin):
    buf = gpu.alloc(16)
    ib = gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, buf))])
    with pytest.raises(rl.RecordError, match="do not fit"):
        ib.set_kernargs(0, b"\0" * 8, byte_offset=4)
    with pytest.raises(rl.HandleError, match="dispatch 7 does not exist"):
        ib.set_kernargs(7, b"\0" * 4)


def test_buffer_read_write_and_bytes(gpu):
    buf = gpu.alloc(12)
    assert len(buf) == 12 and buf.host_visible
    assert bytes(buf) == b"\0" * 12
    buf.write(4, b"\x01\x02\x03\x04")
    assert buf.read_u32(4) == 0x04030201
    assert buf.read(4, 2) == b"\x01\x02"
    with pytest.raises(rl.ReplayError):
        buf.read_u32(10)
    with pytest.raises(ValueError):
        buf.read(13)


def test_memoryview_is_a_writable_view_of_host_visible_memory(gpu):
    buf = gpu.alloc(8)
    view = memoryview(buf)
    assert (view.nbytes, view.readonly, view.format) == (8, False, "B")
    view[4:8] = b"\x01\x02\x03\x04"
    assert buf.read_u32(4) == 0x04030201
    buf.write(0, b"\xaa")
    assert view[0] == 0xAA
    del buf  # the view keeps the memory alive
    assert bytes(view[4:8]) == b"\x01\x02\x03\x04"
    view.release()


def test_memoryview_of_device_local_memory_is_refused(gpu):
    buf = gpu.alloc(8, host_visible=False)
    with pytest.raises(BufferError, match="no host view"):
        memoryview(buf)


def test_kernarg_size_and_unknown_symbol(counter):
    assert counter.kernarg_size("counter") == counter.kernarg_size("counter.kd") > 0
    assert counter.kernels == ["counter"]
    with pytest.raises(rl.RecordError, match="no kernel"):
        counter.kernarg_size("nope")


def test_unknown_symbol_in_build_names_the_dispatch(gpu, counter):
    buf = gpu.alloc(16)
    with pytest.raises(rl.RecordError, match=r"dispatch 1 \(nope\).*no kernel"):
        gpu.build(
            counter,
            [
                ("counter", 1, 1, 0, counter_args(counter, buf), False),
                ("nope", 1, 1, 0, b"", False),
            ],
        )


def test_a_grid_past_the_hardware_limit_is_refused_at_build(gpu, counter, counter_twin):
    # Each dimension fits 32 bits; the product (2^64 work-items) does not.
    buf = gpu.alloc(16)
    big = (2**31, 2**31, 4)
    with pytest.raises(rl.RecordError, match=r"dispatch 0 \(counter\).*grid .*more work-items"):
        gpu.build(counter, [("counter", big, 1, 0, counter_args(counter, buf), False)])
    assert counter_twin.calls == []


@pytest.mark.parametrize(
    "name,why", [("scratch_huge", "scratch"), ("uses_printf", "hidden_printf_buffer")]
)
def test_a_kernel_the_pm4_path_refuses_is_a_compile_error(gpu, name, why):
    # The reference guide's "PM4 compilation rejects the kernel".
    module = gpu.load_module(kernel_bytes(name))
    kernarg = b"\0" * module.kernarg_size(name)
    with pytest.raises(rl.CompileError, match=why) as info:
        gpu.build(module, [(name, 1, 1, 0, kernarg, False)])
    assert info.value.kernel == name
    assert info.value.reason is not None and why in info.value.reason
    assert info.value.hazards == ()


def test_empty_build_is_a_compile_error(gpu, counter):
    with pytest.raises(rl.CompileError, match="no dispatches"):
        gpu.build(counter, [])


@pytest.mark.parametrize(
    "dispatches, error",
    [
        ("counter", TypeError),
        ([["counter", 1, 1, 0]], ValueError),
        ([("counter", "1", 1, 0, b"", False)], TypeError),
        ([("counter", 1, (1, 1, 1, 1), 0, b"", False)], ValueError),
        ([("counter", 0, 1, 0, b"", False)], ValueError),
        ([("counter", 1, 1, -1, b"", False)], ValueError),
        ([("counter", 1, 1, 0, "text", False)], TypeError),
        ([("counter", 1, 1, 0, b"", 1)], TypeError),
        ([(1, 1, 1, 0, b"", False)], TypeError),
        ([42], TypeError),
        (None, TypeError),
    ],
)
def test_malformed_dispatch_tuples(gpu, counter, dispatches, error):
    with pytest.raises(error):
        gpu.build(counter, dispatches)


def test_module_arguments(gpu):
    with pytest.raises(TypeError):
        gpu.load_module("not bytes")
    with pytest.raises(rl.RecordError, match="loading module"):
        gpu.load_module(b"\x7fELF garbage")
    other = kernel_bytes("counter", "gfx1100")
    with pytest.raises(rl.RecordError, match="gfx1100"):
        gpu.load_module(other)


def test_manifest_takes_the_certified_path(gpu):
    # A manifest that is not JSON (or binds to other bytes) is refused.
    with pytest.raises(rl.CertificationError, match="not JSON"):
        gpu.load_module(kernel_bytes("counter"), manifest=b"kernels = []")


def test_module_from_another_gpu_is_a_handle_error(counter):
    other = rl.Gpu("sim:gfx1100")
    with pytest.raises(rl.HandleError):
        other.build(counter, [("counter", 1, 1, 0, b"\0" * 8, False)])


def test_pack_kernargs_checks_sizes(counter):
    assert len(counter.pack_kernargs("counter", b"\0" * 8, 1, 1)) == counter.kernarg_size("counter")
    with pytest.raises(rl.RecordError, match="exceed"):
        counter.pack_kernargs("counter", b"\0" * 4096, 1, 1)


def test_alloc_arguments(gpu):
    with pytest.raises(rl.RecordError, match="0 bytes"):
        gpu.alloc(0)
    with pytest.raises(ValueError):
        gpu.alloc(-1)
    with pytest.raises(TypeError):
        gpu.alloc(1.5)


def test_ib_keeps_its_gpu_and_module_alive(counter_twin):
    gpu = rl.Gpu("sim:gfx1201")
    module = gpu.load_module(kernel_bytes("counter"))
    buf = gpu.alloc(16)
    ib = gpu.build(module, [("counter", 1, 1, 0, counter_args(module, buf), False)])
    del gpu, module
    import gc

    gc.collect()
    ib.replay()
    assert buf.read_u32(0) == 1


def test_an_ib_keeps_alive_the_buffers_its_kernargs_point_into(gpu, counter, counter_twin):
    import gc

    buf = gpu.alloc(64)
    address = buf.address()
    ib = gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, buf), False)])
    del buf
    gc.collect()
    # The memory is still the IB's: a new allocation does not get it, and
    # the replay writes it without a VM fault.
    other = gpu.alloc(64)
    assert other.address() != address
    ib.replay()
    ib.replay()
    assert other.read_u32(0) == 0
    # Re-pointed at `other`: the replay counts there, and the old memory
    # is no longer held by the IB.
    ib.set_kernargs(0, struct.pack("<Q", other.address()))
    ib.replay()
    assert other.read_u32(0) == 1


def test_profiled_replay_measures_the_gpu_span_and_each_dispatch(gpu, counter, counter_twin):
    buf = gpu.alloc(16)
    args = counter_args(counter, buf)
    one = gpu.build(counter, [("counter", 1, 1, 0, args, True)], profile="span")
    many = gpu.build(counter, [("counter", 1, 1, 0, args, True)] * 8, profile="dispatches")
    span_one = one.replay_profiled()
    span_many = many.replay_profiled()
    assert buf.read_u32(0) == 9
    assert span_one > 0.0
    assert span_many > span_one
    times = many.dispatch_times()
    assert len(times) == 8
    previous = 0.0
    for start, end in times:
        assert previous <= start < end <= span_many
        previous = end
    with pytest.raises(rl.ReplayError, match="per-dispatch profiling"):
        one.dispatch_times()


def test_profiled_replay_of_an_unprofiled_ib_is_refused(gpu, counter, counter_twin):
    buf = gpu.alloc(16)
    ib = gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, buf))])
    with pytest.raises(rl.ReplayError, match="without profiling"):
        ib.replay_profiled()
    assert buf.read_u32(0) == 0, "nothing was replayed"
    with pytest.raises(ValueError, match="profiling mode"):
        gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, buf))], profile="ticks")
