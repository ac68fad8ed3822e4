"""gpu.catalog(root)[toc_key] on archives written by an independent
writer: this file packs .kpack archives from the format facts alone
(MessagePack via ``msgpack``, zstd via ``zstandard``; ROCm's own packer,
rocm-kpack, is only a placeholder on PyPI) and the manifest beside them,
and relaunch reads every code object back bit-exact."""

import hashlib
import json
import struct
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import zstandard

import relaunch as rl

from conftest import TARGET, kernel_bytes

# Explicit-argument layouts of the test kernels (tests/kernels/README.md),
# written by hand so the manifest does not come from relaunch's packer.
SIGNATURES = {
    "counter": [("counter", [(0, 8, "global_buffer")])],
    "add_scalar": [("add_scalar", [(0, 8, "global_buffer"), (8, 4, "by_value")])],
    "axpy": [
        (
            "axpy",
            [
                (0, 8, "global_buffer"),
                (8, 8, "global_buffer"),
                (16, 4, "by_value"),
                (20, 4, "by_value"),
            ],
        )
    ],
}
NAMES = list(SIGNATURES)


def signature(name: str) -> dict[str, Any]:
    return {
        "format": "relaunch.kernargs/v1",
        "kernels": [
            {
                "name": kernel,
                "args": [{"offset": o, "size": s, "kind": k} for o, s, k in args],
            }
            for kernel, args in SIGNATURES[name]
        ],
    }


def write_kpack(path: Path, group: str, arch: str, blobs: list[tuple[str, bytes]], scheme: str) -> None:
    """A .kpack per the format facts: 16-byte header (KPAK, u32 version 1,
    u64 TOC offset), zero padding to 64, blob data, MessagePack TOC."""
    data = bytearray(64)
    toc: dict[str, Any] = {
        "format_version": 1,
        "group_name": group,
        "gfx_arch_family": arch,
        "gfx_arches": [arch],
        "compression_scheme": scheme,
    }
    if scheme == "none":
        entries = []
        for _, blob in blobs:
            data.extend(b"\0" * (-len(data) % 64))
            entries.append({"offset": len(data), "size": len(blob)})
            data.extend(blob)
        toc["blobs"] = entries
    else:
        start = len(data)
        data.extend(struct.pack("<I", len(blobs)))
        compressor = zstandard.ZstdCompressor(level=19)
        for _, blob in blobs:
            frame = compressor.compress(blob)
            data.extend(struct.pack("<I", len(frame)))
            data.extend(frame)
        toc["zstd_offset"] = start
        toc["zstd_size"] = len(data) - start
    toc["toc"] = {
        key: {arch: {"type": "hsaco", "ordinal": i, "original_size": len(blob)}}
        for i, (key, blob) in enumerate(blobs)
    }
    toc_offset = len(data)
    data.extend(msgpack.packb(toc, use_bin_type=True))
    data[0:16] = b"KPAK" + struct.pack("<IQ", 1, toc_offset)
    path.write_bytes(bytes(data))


def write_tree(root: Path, scheme: str, group: str = "pytest") -> dict[str, bytes]:
    arch_dir = root / TARGET
    arch_dir.mkdir(parents=True, exist_ok=True)
    blobs = [(f"{group}/{n}", kernel_bytes(n)) for n in NAMES]
    stem = f"relaunch_{group}_{TARGET}"
    write_kpack(arch_dir / f"{stem}.kpack", group, TARGET, blobs, scheme)
    manifest = {
        "schema": "relaunch.bundle/v1",
        "arch": TARGET,
        "group": group,
        "kpack": f"{stem}.kpack",
        "kernels": [
            {
                "toc_key": key,
                "hsaco_sha256": hashlib.sha256(blob).hexdigest(),
                "args_signature": signature(key.split("/")[1]),
                "launch": {"grid": [64, 1, 1], "workgroup": [64, 1, 1]},
            }
            for key, blob in blobs
        ],
    }
    (arch_dir / f"{stem}.json").write_text(json.dumps(manifest))
    return dict(blobs)


@pytest.mark.parametrize("scheme", ["zstd-per-kernel", "none"])
def test_an_independently_written_archive_reads_back_bit_exact(gpu: rl.Gpu, tmp_path: Path, scheme: str) -> None:
    want = write_tree(tmp_path, scheme)
    cat = gpu.catalog(tmp_path)
    assert cat.arch == TARGET
    assert cat.keys() == sorted(want)
    assert len(cat) == 3 and "pytest/axpy" in cat
    for key, blob in want.items():
        assert cat.code_object(key) == blob, key
    module = cat["pytest/axpy"]
    assert module.kernels == ["axpy"]
    assert cat["pytest/axpy"].kernarg_size("axpy") == module.kernarg_size("axpy")
    launch = cat.launch("pytest/counter")
    assert launch is not None and json.loads(launch)["workgroup"] == [64, 1, 1]


def test_tampering_and_missing_keys_are_refused(gpu: rl.Gpu, tmp_path: Path) -> None:
    write_tree(tmp_path, "none")
    kpack = tmp_path / TARGET / f"relaunch_pytest_{TARGET}.kpack"
    data = bytearray(kpack.read_bytes())
    at = data.index(kernel_bytes("counter")) + 1000
    data[at] ^= 0x01
    kpack.write_bytes(bytes(data))
    cat = gpu.catalog(tmp_path)
    with pytest.raises(rl.RecordError, match="pytest/counter: sha256 mismatch"):
        cat["pytest/counter"]
    with pytest.raises(rl.RecordError, match="pytest/missing"):
        cat["pytest/missing"]
    # The untouched entries still load.
    assert cat["pytest/add_scalar"].kernels == ["add_scalar"]


def test_a_wrong_signature_is_refused(gpu: rl.Gpu, tmp_path: Path) -> None:
    write_tree(tmp_path, "zstd-per-kernel")
    path = tmp_path / TARGET / f"relaunch_pytest_{TARGET}.json"
    manifest = json.loads(path.read_text())
    manifest["kernels"][2]["args_signature"]["kernels"][0]["args"][3]["size"] = 8
    path.write_text(json.dumps(manifest))
    with pytest.raises(rl.RecordError, match="args_signature disagrees"):
        gpu.catalog(tmp_path)["pytest/axpy"]


def test_another_arch_only_is_refused(tmp_path: Path) -> None:
    write_tree(tmp_path, "none")
    other = rl.Gpu("sim:gfx1100")
    with pytest.raises(rl.RecordError, match="no gfx1100 directory"):
        other.catalog(tmp_path)
