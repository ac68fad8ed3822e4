"""Python kernel twins on the simulated device."""

import struct
import threading

import pytest

import relaunch as rl
from conftest import counter_args, kernel_bytes


def test_twin_exception_is_a_replay_error_naming_it(gpu, counter):
    def broken(wg):
        raise ValueError("twin exploded on purpose")

    rl.sim.register_kernel("counter", broken)
    buf = gpu.alloc(16)
    ib = gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, buf), False)])
    with pytest.raises(rl.ReplayError) as info:
        ib.replay()
    message = str(info.value)
    assert "ValueError" in message and "twin exploded on purpose" in message
    assert "counter" in message


def test_memory_fault_loses_the_gpu_not_the_process():
    # A VM fault loses its GPU for the rest of the process (as on ROCr), so
    # this test has a simulated target of its own.
    gpu = rl.Gpu("sim:gfx1010")
    counter = gpu.load_module(kernel_bytes("counter", "gfx1010"))
    seen = []

    def faulting(wg):
        try:
            wg.atomic_add_u32(16, 1)  # no allocation covers address 16
        except rl.ReplayError as e:
            seen.append(str(e))

    rl.sim.register_kernel("counter.kd", faulting)
    buf = gpu.alloc(16)
    ib = gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, buf), False)])
    with pytest.raises(rl.DeviceLostError) as info:
        ib.replay()
    assert isinstance(info.value, rl.DeviceError)
    assert "0x10" in str(info.value) and "lost" in str(info.value)
    assert info.value.address == 0x10
    assert seen and "kernel fault" in seen[0]
    # Every later call on that GPU fails the same way, at once.
    with pytest.raises(rl.DeviceLostError):
        ib.replay()


def test_workgroup_is_dead_after_the_call(gpu, counter, counter_twin):
    kept = []

    def keep(wg):
        kept.append(wg)
        counter_twin(wg)

    rl.sim.register_kernel("counter", keep)
    buf = gpu.alloc(16)
    ib = gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, buf), False)])
    ib.replay()
    assert buf.read_u32(0) == 1
    with pytest.raises(rl.HandleError, match="no longer valid"):
        kept[0].kernarg()
    with pytest.raises(rl.HandleError):
        _ = kept[0].workgroup_id


def test_twin_sees_kernargs_and_moves_memory(gpu, counter):
    def copy_twin(wg):
        ka = wg.kernarg()
        (ptr,) = struct.unpack_from("<Q", ka, 0)
        assert wg.arg_u64(0) == ptr
        old = wg.load(ptr + 4, 4)
        wg.store(ptr, old)
        wg.store(ptr + 8, bytearray(b"\x2a\0\0\0"))
        assert wg.atomic_add_u32(ptr + 12, 3) == 0

    rl.sim.register_kernel("counter", copy_twin)
    buf = gpu.alloc(16)
    buf.write(4, struct.pack("<I", 77))
    ib = gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, buf), False)])
    ib.replay()
    assert [buf.read_u32(o) for o in (0, 4, 8, 12)] == [77, 77, 42, 3]


def test_kernarg_read_outside_the_segment_faults(gpu, counter):
    def reads_too_far(wg):
        wg.arg_u64(4096)

    rl.sim.register_kernel("counter", reads_too_far)
    buf = gpu.alloc(16)
    ib = gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, buf), False)])
    with pytest.raises(rl.ReplayError, match="kernarg"):
        ib.replay()


def test_replays_from_python_threads(gpu, counter, counter_twin):
    bufs = [gpu.alloc(16) for _ in range(3)]
    ibs = [
        gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, b), False)] * 4)
        for b in bufs
    ]
    errors = []

    def run(ib):
        try:
            for _ in range(3):
                ib.replay()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(ib,)) for ib in ibs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert [b.read_u32(0) for b in bufs] == [12, 12, 12]


def test_register_kernel_arguments():
    with pytest.raises(TypeError, match="callable"):
        rl.sim.register_kernel("counter", 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        rl.sim.register_kernel(3, lambda wg: None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        rl.sim.register_kernel("", lambda wg: None)


def test_accessor_arguments_are_checked(gpu, counter):
    problems = []

    def twin(wg):
        for call in (
            lambda: wg.store(0, "text"),
            lambda: wg.load(-1, 4),
            lambda: wg.atomic_add_u32(0, 1 << 40),
        ):
            try:
                call()
            except (TypeError, ValueError) as e:
                problems.append(type(e).__name__)
        wg.atomic_add_u32(wg.arg_u64(0), 1)

    rl.sim.register_kernel("counter", twin)
    buf = gpu.alloc(16)
    gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, buf), False)]).replay()
    assert problems == ["TypeError", "ValueError", "ValueError"]
    assert buf.read_u32(0) == 1


def test_scalar_load_of_producer_data_after_rmw_vmem_is_stale(gpu):
    # consume is proven VMEM-only, so serialize=True after produce gives it rmw_vmem
    # (K$ kept); a twin reading the producer's data through the scalar
    # cache is then a stale read.
    module = gpu.load_module(kernel_bytes("produce_consume"))
    assert module.mutable_read_cache("consume.kd") == "vmem_only"
    assert module.mutable_read_cache("nope") == "scalar_or_unknown"
    assert module.wavefront_size == 32
    assert not module.radiowave_certified
    assert module.scheduler_profile == "unknown"

    def produce(wg):
        wg.store(wg.arg_u64(0), struct.pack("<I", 7))

    def consume(wg):
        wg.store(wg.arg_u64(0), wg.scalar_load(wg.arg_u64(8), 4))

    rl.sim.register_kernel("produce", produce)
    rl.sim.register_kernel("consume", consume)
    buf, out = gpu.alloc(16), gpu.alloc(16)
    kp = module.pack_kernargs("produce", struct.pack("<QI", buf.address(), 3), 1, 1)
    kc = module.pack_kernargs("consume", struct.pack("<QQ", out.address(), buf.address()), 1, 1)
    ib = gpu.build(module, [("produce", 1, 1, 0, kp, True), ("consume", 1, 1, 0, kc, False)])
    with pytest.raises(rl.ReplayError, match="stale read"):
        ib.replay()


@pytest.mark.parametrize("action", ["replay", "replay_other", "patch"])
def test_a_twin_that_replays_or_patches_is_refused_at_once(gpu, counter, action):
    import time

    buf = gpu.alloc(16)
    args = counter_args(counter, buf)
    other = gpu.build(counter, [("counter", 1, 1, 0, args, False)])
    seen = []
    holder: dict[str, rl.Pm4Ib] = {}

    def reentrant(wg):
        try:
            if action == "replay":
                holder["ib"].replay()
            elif action == "replay_other":
                other.replay()
            else:
                holder["ib"].set_kernargs(0, args)
        except rl.ReplayError as e:
            seen.append(str(e))
            raise

    rl.sim.register_kernel("counter", reentrant)
    holder["ib"] = gpu.build(counter, [("counter", 1, 1, 0, args, False)])
    start = time.monotonic()
    with pytest.raises(rl.ReplayError, match="inside a kernel twin"):
        holder["ib"].replay()
    assert time.monotonic() - start < 10, "waited for the replay timeout"
    assert seen and "deadlock" in seen[0]


def test_ctrl_c_abandons_a_hung_replay_at_once(gpu, counter, counter_twin):
    # Issue 30, finding 12: Ctrl-C during a replay whose twin hangs used to
    # wait out the 60 s replay timeout. Now KeyboardInterrupt arrives within
    # a wait slice and the replay is abandoned as a timed-out one would be.
    import os
    import signal
    import time

    entered = threading.Event()
    release = threading.Event()
    seen = []

    def hung(wg):
        entered.set()
        release.wait(30)
        # Returning late, after the abandon: the store must be refused.
        try:
            wg.atomic_add_u32(wg.arg_u64(0), 100)
        except rl.ReplayError as e:
            seen.append(str(e))

    rl.sim.register_kernel("counter", hung)
    buf = gpu.alloc(16)
    ib = gpu.build(counter, [("counter", 1, 1, 0, counter_args(counter, buf), False)])

    def interrupt():
        if entered.wait(20):
            os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt)
    sender.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        ib.replay()
    took = time.monotonic() - start
    sender.join(timeout=20)
    release.set()
    assert took < 10, f"Ctrl-C took {took:.1f} s to reach the replay"
    # The next replay runs on a new queue; the abandoned one wrote nothing.
    rl.sim.register_kernel("counter", counter_twin)
    ib.replay()
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert buf.read_u32(0) == 1
    assert seen, "the late twin's store was not refused"
