"""Device-local memory from Python: Buffer.read / write / bytes() go
through the runtime's copy (hsa_memory_copy), and allocations of any
length, odd ones included, come back zero-filled."""

import pytest

import relaunch as rl


@pytest.mark.parametrize("size", [1, 3, 7, 10, 64, 4099])
def test_device_local_buffers_are_zeroed_read_and_written_at_any_length(gpu, size):
    buf = gpu.alloc_device(size)
    assert not buf.host_visible
    assert len(buf) == size
    assert bytes(buf) == bytes(size)
    assert buf.read() == bytes(size)

    pattern = bytes((i * 7 + 1) & 0xFF for i in range(size))
    buf.write(0, pattern)
    assert bytes(buf) == pattern
    assert buf.read(0, size) == pattern
    if size > 2:
        # An odd range at an odd offset, its neighbours untouched.
        buf.write(1, b"\x5a" * (size - 2))
        assert buf.read(1, size - 2) == b"\x5a" * (size - 2)
        assert buf.read(0, 1) == pattern[:1]
        assert buf.read(size - 1) == pattern[-1:]
    if size >= 4:
        buf.write(0, b"\x01\x02\x03\x04")
        assert buf.read_u32(0) == 0x04030201


def test_device_local_accesses_outside_the_buffer_are_refused(gpu):
    buf = gpu.alloc_device(5)
    with pytest.raises(ValueError):
        buf.read(4, 2)
    with pytest.raises(rl.ReplayError, match="outside"):
        buf.write(5, b"\x01")
    with pytest.raises(rl.ReplayError, match="outside"):
        buf.read_u32(2)
