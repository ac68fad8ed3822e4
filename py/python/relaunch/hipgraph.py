"""Inspect relaunch's hipGraph interposer from inside the process it runs
in: which graph execs relaunch replays and why the others run on the real
HIP, how many launches went each way, and a switch that turns replay off
and on at run time.

The interposer is ``librelaunch_hipgraph.so``, loaded with ``LD_PRELOAD``
(see ``preload/README.md``); this module reads its C API
(``relaunch_hipgraph.h``) through ctypes and needs nothing else. Without
the interposer in the process, every call raises
:class:`InterposerNotLoaded`.

An exec is HIP's ``hipGraphExec_t``, given as an integer address (what
``ctypes.c_void_p(...).value`` holds)::

    from relaunch import hipgraph
    for info in hipgraph.execs():
        print(hex(info.exec), info.replayed, info.reason.name, info.text)
"""

from __future__ import annotations

import ctypes
import enum
from typing import NamedTuple, Optional

__all__ = [
    "Counters",
    "ExecInfo",
    "InterposerNotLoaded",
    "Reason",
    "api_version",
    "attach",
    "available",
    "counters",
    "exec_info",
    "execs",
    "set_replay",
]

API_VERSION = 1

_OK = 0
_INVALID_ARGUMENT = 1
_UNKNOWN_EXEC = 2
_SHADOW_DISABLED = 3
_SIZE_MAX = ctypes.c_size_t(-1).value


class InterposerNotLoaded(RuntimeError):
    """The interposer is not in this process (or too old for this module)."""


class Reason(enum.IntEnum):
    """What keeps an exec on the real HIP (``rl_hipgraph_reason_t``)."""

    REPLAYED = 0
    DISABLED = 1
    DEVICE = 2
    DEVICE_LOST = 3
    MODULE = 4
    KERNEL = 5
    TRANSFER = 6
    GRAPH = 7
    CAPTURE = 8
    CHANGED = 9
    UPDATE = 10
    STREAM_ORDER = 11
    INTERNAL = 12


class ExecInfo(NamedTuple):
    """One exec as the interposer sees it now."""

    exec: int
    replayed: bool
    reason: Reason
    text: str
    launches_replayed: int
    launches_on_hip: int
    launches_failed: int
    lanes: int


class Counters(NamedTuple):
    """Process totals."""

    execs_replayed: int
    execs_on_hip: int
    launches_replayed: int
    launches_on_hip: int
    launches_failed: int
    replay_enabled: bool


class _ExecInfo(ctypes.Structure):
    # Declared for type checkers; ctypes makes them from _fields_.
    struct_size: int
    replayed: int
    reason: int
    launches_replayed: int
    launches_on_hip: int
    launches_failed: int
    reason_len: int
    lanes: int
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("replayed", ctypes.c_int32),
        ("reason", ctypes.c_int32),
        ("launches_replayed", ctypes.c_uint64),
        ("launches_on_hip", ctypes.c_uint64),
        ("launches_failed", ctypes.c_uint64),
        ("reason_len", ctypes.c_size_t),
        ("lanes", ctypes.c_uint32),
    ]


class _Counters(ctypes.Structure):
    struct_size: int
    execs_replayed: int
    execs_on_hip: int
    launches_replayed: int
    launches_on_hip: int
    launches_failed: int
    replay_enabled: int
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("execs_replayed", ctypes.c_uint64),
        ("execs_on_hip", ctypes.c_uint64),
        ("launches_replayed", ctypes.c_uint64),
        ("launches_on_hip", ctypes.c_uint64),
        ("launches_failed", ctypes.c_uint64),
        ("replay_enabled", ctypes.c_int32),
    ]


_lib: Optional[ctypes.CDLL] = None


def _bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    lib.rl_hipgraph_api_version.restype = ctypes.c_uint32
    lib.rl_hipgraph_api_version.argtypes = []
    lib.rl_hipgraph_counters.restype = ctypes.c_int
    lib.rl_hipgraph_counters.argtypes = [ctypes.POINTER(_Counters)]
    lib.rl_hipgraph_execs.restype = ctypes.c_size_t
    lib.rl_hipgraph_execs.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    lib.rl_hipgraph_exec_info.restype = ctypes.c_int
    lib.rl_hipgraph_exec_info.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(_ExecInfo),
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.rl_hipgraph_set_replay.restype = ctypes.c_int
    lib.rl_hipgraph_set_replay.argtypes = [ctypes.c_int]
    return lib


def attach(path: Optional[str] = None) -> None:
    """Find the interposer: already in the process (``LD_PRELOAD``), or
    loaded from ``path``. Called on first use; raises
    :class:`InterposerNotLoaded` when it is absent."""
    global _lib
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL) if path else ctypes.CDLL(None)
    except OSError as e:
        raise InterposerNotLoaded(f"cannot load {path}: {e}") from e
    if not hasattr(lib, "rl_hipgraph_api_version"):
        raise InterposerNotLoaded(
            "librelaunch_hipgraph.so is not loaded in this process "
            "(run it with LD_PRELOAD=.../librelaunch_hipgraph.so)"
        )
    lib = _bind(lib)
    version = lib.rl_hipgraph_api_version()
    if version < API_VERSION:
        raise InterposerNotLoaded(
            f"the interposer's inspection API is version {version}; this module needs "
            f"{API_VERSION}"
        )
    _lib = lib


def _api() -> ctypes.CDLL:
    if _lib is None:
        attach()
    assert _lib is not None
    return _lib


def available() -> bool:
    """Whether the interposer is in this process."""
    try:
        _api()
    except InterposerNotLoaded:
        return False
    return True


def api_version() -> int:
    """The loaded interposer's API version."""
    return int(_api().rl_hipgraph_api_version())


def _check(rc: int, what: str) -> None:
    if rc == _OK:
        return
    if rc == _UNKNOWN_EXEC:
        raise LookupError(f"{what}: not an exec instantiated under the interposer")
    if rc == _SHADOW_DISABLED:
        raise RuntimeError(
            f"{what}: an internal error disabled the interposer; every launch runs on HIP"
        )
    raise ValueError(f"{what}: the interposer refused the call (status {rc})")


def counters() -> Counters:
    """Process totals of execs and launches, each way."""
    c = _Counters(struct_size=ctypes.sizeof(_Counters))
    _check(_api().rl_hipgraph_counters(ctypes.byref(c)), "counters")
    return Counters(
        execs_replayed=c.execs_replayed,
        execs_on_hip=c.execs_on_hip,
        launches_replayed=c.launches_replayed,
        launches_on_hip=c.launches_on_hip,
        launches_failed=c.launches_failed,
        replay_enabled=bool(c.replay_enabled),
    )


def exec_info(handle: int) -> ExecInfo:
    """What one exec does now; :class:`LookupError` for an unknown one."""
    lib = _api()
    info = _ExecInfo(struct_size=ctypes.sizeof(_ExecInfo))
    text = ctypes.create_string_buffer(512)
    _check(
        lib.rl_hipgraph_exec_info(handle, ctypes.byref(info), text, len(text)),
        f"exec {handle:#x}",
    )
    if info.reason_len >= len(text):
        text = ctypes.create_string_buffer(info.reason_len + 1)
        _check(
            lib.rl_hipgraph_exec_info(handle, ctypes.byref(info), text, len(text)),
            f"exec {handle:#x}",
        )
    return ExecInfo(
        exec=handle,
        replayed=bool(info.replayed),
        reason=Reason(info.reason),
        text=text.value.decode("utf-8", "replace"),
        launches_replayed=info.launches_replayed,
        launches_on_hip=info.launches_on_hip,
        launches_failed=info.launches_failed,
        lanes=info.lanes,
    )


def execs() -> list[ExecInfo]:
    """Every live exec instantiated under the interposer, in handle order."""
    lib = _api()
    while True:
        n = lib.rl_hipgraph_execs(None, 0)
        if n == _SIZE_MAX:
            _check(_SHADOW_DISABLED, "execs")
        handles = (ctypes.c_void_p * max(n, 1))()
        got = lib.rl_hipgraph_execs(handles, n)
        if got <= n:
            break
    out = []
    for h in handles[:got]:
        try:
            out.append(exec_info(int(h or 0)))
        except LookupError:
            continue  # destroyed in between
    return out


def set_replay(enabled: bool) -> bool:
    """Turn replay on or off for the whole process; returns whether it was
    on. Off, every launch runs on the real HIP."""
    return bool(_api().rl_hipgraph_set_replay(1 if enabled else 0))
