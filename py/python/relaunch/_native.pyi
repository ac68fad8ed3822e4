"""Type stubs and reference documentation for ``relaunch._native``.

Import the public package instead: ``import relaunch as rl``. Every class
and function below is re-exported there (the twin API also as
``relaunch.sim``). Malformed Python arguments raise ``TypeError`` (wrong
type) or ``ValueError`` (right type, bad value); everything else raises a
subclass of :class:`Error`.
"""

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, Optional, TypedDict, Union, final

_Bytes = Union[bytes, bytearray, memoryview]
_Dims = Union[int, tuple[int], tuple[int, int], tuple[int, int, int], Sequence[int]]
_Dispatch = Union[
    tuple[str, _Dims, _Dims, int, _Bytes, bool],
    tuple[str, _Dims, _Dims, int, _Bytes],
]
_Access = tuple[Union["GraphBuffer", int], int, int, bool]
_NodeRef = Union["Node", int]

class _DeviceInfo(TypedDict):
    """One entry of :func:`devices` (a plain dict at runtime)."""

    index: int
    name: str
    product: Optional[str]
    anchor: Optional[str]
    uuid: Optional[str]
    bdf: Optional[str]
    slot: Optional[str]
    describe: str
    denied: Optional[str]

class _BoundaryInfo(TypedDict):
    """One entry of :attr:`GraphExec.boundaries` (a plain dict at runtime)."""

    before: "Node"
    kind: str
    hazard: str
    producer: "Node"
    buffer: str
    range: tuple[int, int]
    why: str

class _KernelInfo(TypedDict):
    """One entry of :meth:`Module.describe` (a plain dict at runtime)."""

    name: str
    kernarg_size: int
    accepted: bool
    verdict: str

__all__ = [
    "__version__",
    "DEVICE_ENV",
    "FALLBACK_SELECTOR",
    "Buffer",
    "Catalog",
    "CertificationError",
    "CompileError",
    "DeviceError",
    "DeviceLostError",
    "Error",
    "Gpu",
    "Graph",
    "GraphBuffer",
    "GraphExec",
    "HandleError",
    "Hazard",
    "MockLaunch",
    "Module",
    "Node",
    "Pm4Ib",
    "RecordError",
    "ReplayError",
    "Workgroup",
    "devices",
    "register_kernel",
]

__version__: str
"""The relaunch version this module was built from."""

DEVICE_ENV: str
"""Environment variable naming the default device selector (``RELAUNCH_DEVICE``)."""

FALLBACK_SELECTOR: str
"""The selector used without a real GPU (``sim:gfx1201``)."""

class Error(Exception):
    """Base class of every error relaunch raises; the message says what was
    wrong and what to do."""

class RecordError(Error):
    """Recording a graph, an IB, a module load, an allocation or a kernarg
    patch was refused."""

class CompileError(Error):
    """Instantiating or finalizing was refused; hazards are listed with the
    pair of nodes, the buffer and the byte range.

    Attributes:
        hazards: the unordered pairs of a refused graph (empty otherwise).
        truncated: the hazard listing stopped early; more may exist.
        kernel: the kernel a submission path refused (``None`` otherwise).
        reason: why that kernel was refused (``None`` otherwise).
    """

    hazards: tuple[Hazard, ...]
    truncated: bool
    kernel: str | None
    reason: str | None

@final
class Hazard:
    """Two nodes with conflicting accesses and no dependency path between
    them (an entry of ``CompileError.hazards``)."""

    @property
    def kind(self) -> str:
        """``"RAW"``, ``"WAR"``, ``"WAW"`` or ``"ORDER"``."""
    @property
    def buffer(self) -> int:
        """The buffer's id in the graph."""
    @property
    def buffer_label(self) -> str:
        """The buffer's label (the resource both nodes touch)."""
    @property
    def range(self) -> tuple[int, int]:
        """The overlapping byte range ``(start, end)``."""
    @property
    def first(self) -> int:
        """The earlier node's id."""
    @property
    def first_name(self) -> str:
        """The earlier node's kernel name."""
    @property
    def second(self) -> int:
        """The later node's id."""
    @property
    def second_name(self) -> str:
        """The later node's kernel name."""

class ReplayError(Error):
    """A replay failed: queue or kernel fault (including an exception in a
    Python twin), timeout or simulator violation."""

class HandleError(Error):
    """An object was used with another GPU or graph than its own, or a
    twin's Workgroup was used after its call returned."""

class CertificationError(Error):
    """Certification of a module was refused (not supported yet)."""

class DeviceError(Error):
    """No such device, a denied device, an ambiguous or malformed selector."""

class DeviceLostError(DeviceError):
    """The GPU is lost to this process: a memory (VM) fault was reported for
    it (the message names the address) and the driver stopped its queues.
    Other GPUs keep working; restart the process to use this one again.

    Attributes:
        address: the faulting GPU virtual address, when the fault named one.
    """

    address: int | None

@final
class Gpu:
    """An opened GPU, real or simulated (``sim:<target>``)."""

    def __new__(cls, selector_or_ordinal: Union[str, int, None] = None) -> "Gpu":
        """Opens a device.

        Arguments:
            selector_or_ordinal: a selector (``uuid:GPU-…``, ``bdf:…``,
                ``slot:N``, ``name:gfx1100``, ``index:N``, ``@alias``,
                ``sim:gfx1201``), an int ordinal (volatile, like ``index:N``),
                or None: ``RELAUNCH_DEVICE`` if set, else the first real GPU,
                else ``sim:gfx1201``.

        Raises:
            DeviceError: unknown, malformed, ambiguous or denied selector
                (a deny list's reason is quoted), or no runtime.
            TypeError: not a str, int or None.
        """

    def describe(self) -> str:
        """One line naming the device by its stable anchors."""

    @property
    def target(self) -> str:
        """The GPU target, e.g. ``gfx1201``."""

    @property
    def simulated(self) -> bool:
        """True on the simulated device."""

    def load_module(
        self, code: _Bytes, manifest: Union[_Bytes, str, None] = None
    ) -> "Module":
        """Loads a code object (ELF, or an offload bundle holding this target).

        Arguments:
            code: the code object bytes.
            manifest: a certification manifest (JSON bytes or text); takes
                the certified path.

        Raises:
            RecordError: unreadable code object, or one for another target.
            CertificationError: a manifest was given (certification is not
                supported yet; load without one).
            TypeError: ``code`` or ``manifest`` is not bytes-like.
        """

    def catalog(self, root: Union[str, "os.PathLike[str]"]) -> "Catalog":
        """Opens the per-architecture bundle tree at ``root`` for this GPU:
        ``root/<processor>/`` (the exact processor, no sibling fallback),
        with every ``*.json`` manifest and the ``.kpack`` it names.

        Raises:
            RecordError: no directory for this processor (the message lists
                what the tree has), or a damaged manifest or archive.
        """

    def alloc(self, size: int, host_visible: bool = True) -> "Buffer":
        """Zero-filled memory the GPU can use.

        Arguments:
            size: bytes, at least 1.
            host_visible: fine-grained host memory (default) or device-local.

        Raises:
            RecordError: ``size`` is 0.
            DeviceError: the allocation failed.
            TypeError, ValueError: ``size`` is not a non-negative int.
        """

    def alloc_device(self, size: int) -> "Buffer":
        """Device-local memory: ``alloc(size, host_visible=False)``.

        Raises:
            RecordError: ``size`` is 0.
            DeviceError: the allocation failed.
        """

    def build(
        self,
        module: "Module",
        dispatches: Iterable[_Dispatch],
        profile: Optional[Literal["span", "dispatches"]] = None,
    ) -> "Pm4Ib":
        """Records dispatches into one retained PM4 IB and installs it.

        Arguments:
            module: the module the kernels come from (loaded on this GPU).
            dispatches: tuples ``(symbol, grid, block, dynamic_group_bytes,
                kernarg_bytes, serialize)``; grid and block are work-items
                (an int or 1-3 ints); ``serialize`` True puts a
                read-after-write boundary between that dispatch and the next
                one, so the next consumer sees what it wrote (may be left
                out: False; on the last dispatch it changes nothing). The
                kernarg bytes are the full segment
                (:meth:`Module.pack_kernargs`) or exactly the explicit
                arguments, whose hidden arguments relaunch then fills.
            profile: None (no timestamps), ``"span"`` (the IB writes the
                GPU clock after its prologue and after its epilogue, for
                :meth:`Pm4Ib.replay_profiled`) or ``"dispatches"`` (also
                before and after every dispatch, 16 more dwords each, for
                :meth:`Pm4Ib.dispatch_times`).

        Raises:
            RecordError: unknown symbol, kernel refused by the PM4 verdict,
                bad geometry (the message names the dispatch).
            CompileError: no dispatches, or the encoder refused the IB.
            HandleError: the module was loaded on another GPU.
            TypeError, ValueError: a malformed tuple (the message names it),
                or an unknown ``profile``.
        """

    def pm4_queue_count(self, width: int, policy: Union[str, int, None] = None) -> int:
        """Queues used for ``width`` independent lanes under ``policy``.

        Arguments:
            width: independent lanes available.
            policy: ``"auto"`` or None (the per-family width that held up
                on hardware) or a fixed count 1-4.

        Raises:
            ValueError: unknown policy or a count outside 1-4.
            TypeError: ``width`` is not an int.
        """

@final
class Buffer:
    """Memory allocated with :meth:`Gpu.alloc`; freed with its last reference.

    Host-visible memory supports the buffer protocol: ``memoryview(buf)`` is
    a writable view without a copy (it keeps the buffer alive). Device-local
    memory raises BufferError there; use :meth:`read`, :meth:`write` or
    ``bytes(buf)`` (copies). Do not touch memory a running replay uses.
    """

    def address(self) -> int:
        """The GPU virtual address (put it in kernargs)."""

    def __len__(self) -> int: ...
    @property
    def host_visible(self) -> bool:
        """True for host-visible (fine-grained) memory."""

    def read_u32(self, offset: int) -> int:
        """The little-endian u32 at ``offset``.

        Raises:
            ReplayError: the read is outside the buffer.
        """

    def read_u32s(self, offset: int, count: int) -> list[int]:
        """``count`` little-endian u32 values from byte ``offset``.

        Raises:
            ValueError: the range is outside the buffer.
        """

    def read(self, offset: Optional[int] = None, size: Optional[int] = None) -> bytes:
        """A copy of ``size`` bytes at ``offset`` (default: to the end).

        Raises:
            ValueError: the range is outside the buffer.
        """

    def write(self, offset: int, data: _Bytes) -> None:
        """Copies ``data`` into the buffer at ``offset``.

        Raises:
            ReplayError: the write is outside the buffer.
        """

    def __bytes__(self) -> bytes: ...

@final
class Module:
    """A code object loaded on a GPU."""

    def kernarg_size(self, symbol: str) -> int:
        """Kernarg segment size of ``symbol`` (with or without ``.kd``).

        Raises:
            RecordError: the module has no such kernel (its kernels are listed).
        """

    @property
    def kernels(self) -> list[str]:
        """Names of the kernels in the module."""

    @property
    def radiowave_certified(self) -> bool:
        """True when the module was loaded with an accepted manifest."""

    @property
    def scheduler_profile(self) -> str:
        """The manifest's scheduler profile (``"default"``, ``"max_ilp"``, ...;
        ``"unknown"`` without one)."""

    @property
    def wavefront_size(self) -> int:
        """The module's real wavefront size (32 or 64)."""

    def mutable_read_cache(self, symbol: str) -> str:
        """relaunch's own proof for ``symbol``: ``"vmem_only"`` or
        ``"scalar_or_unknown"`` (also for an unknown symbol)."""

    def pack_kernargs(
        self,
        symbol: str,
        explicit: _Bytes,
        grid: _Dims,
        block: _Dims,
        dynamic_group_bytes: Optional[int] = None,
    ) -> bytes:
        """The full kernarg segment of ``symbol`` for one launch: the
        explicit arguments as packed by the caller, hidden ones filled from
        the geometry.

        Raises:
            RecordError: unknown kernel, or explicit bytes larger than the segment.
        """

    def describe(self) -> list[_KernelInfo]:
        """Per kernel: ``name``, ``kernarg_size``, ``accepted`` and ``verdict``
        (the direct-PM4 verdict with reasons)."""

@final
class Catalog:
    """A GPU's view of a bundle tree (from :meth:`Gpu.catalog`);
    ``catalog[toc_key]`` is the module of that key."""

    def __getitem__(self, toc_key: str, /) -> Module:
        """The module of ``toc_key`` (e.g. ``"demo/decode"``), verified
        (sha256, target, args_signature) before it is loaded and loaded once.

        Raises:
            RecordError: no such key, a sha256 mismatch or an args_signature
                that disagrees with the code object (root, arch and key are
                named; nothing is loaded).
        """

    def __contains__(self, toc_key: str, /) -> bool: ...
    def __len__(self) -> int: ...
    def keys(self) -> list[str]:
        """Every toc key of the device's arch directory, sorted."""

    def code_object(self, toc_key: str) -> bytes:
        """The verified code-object bytes of ``toc_key`` (not loaded).

        Raises:
            RecordError: as for ``catalog[toc_key]``.
        """

    def launch(self, toc_key: str) -> Optional[str]:
        """The manifest's launch data of ``toc_key`` as JSON text, or None.

        Raises:
            KeyError: no such key.
        """

    @property
    def arch(self) -> str:
        """The arch directory in use (``gfx1100``)."""

    @property
    def root(self) -> str:
        """The tree's root as given."""

@final
class Pm4Ib:
    """A retained IB installed on one queue of its GPU."""

    def replay(self) -> None:
        """Submits the IB and waits for it (twins run meanwhile).

        Raises:
            ReplayError: a queue or kernel fault, a timeout or a simulator
                violation (a Python twin's exception is named).
        """

    def set_kernargs(self, index: int, data: _Bytes, byte_offset: Optional[int] = None) -> None:
        """Overwrites kernarg bytes of dispatch ``index`` for later replays.

        Raises:
            HandleError: no such dispatch.
            RecordError: bytes outside its kernarg block.
        """

    def replay_profiled(self) -> float:
        """Replays, waits, and returns the GPU execution span in
        microseconds, from the IB's own start and end timestamps (converted
        with the agent's timestamp frequency).

        Raises:
            ReplayError: the IB was built without ``profile`` (nothing is
                replayed), or the replay failed.
        """

    def dispatch_times(self) -> list[tuple[float, float]]:
        """``(start_us, end_us)`` of every dispatch in the last
        :meth:`replay_profiled`, in microseconds from the IB's start: the
        start is when everything before the dispatch had finished, the end
        when the dispatch had. Ordered and inside the span.

        Raises:
            ReplayError: the IB was not built with ``profile="dispatches"``,
                or no profiled replay has completed yet.
        """

    @property
    def dispatch_count(self) -> int: ...
    @property
    def dwords(self) -> int:
        """Size of the recorded IB in dwords."""

@final
class GraphBuffer:
    """A buffer declared in a graph: a label and a size, not memory."""

    @property
    def id(self) -> int: ...
    @property
    def label(self) -> str: ...
    @property
    def size(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Node:
    """A kernel node of a graph (equal by graph and id)."""

    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Graph:
    """A graph being recorded."""

    def __new__(
        cls,
        lanes: Union[int, str, None] = None,
        mode: Union[str, int, None] = None,
        max_in_flight: Optional[int] = None,
    ) -> "Graph":
        """``Graph(lanes, mode, max_in_flight)``, positionally as the
        reference module takes them (a lone string first is the mode).

        Arguments:
            lanes: most lanes (queues) one replay may use (None: 1, one
                serial lane).
            mode: ``"latency"`` (None), ``"overlap"`` or ``"throughput"``
                (or 0, 1, 2).
            max_in_flight: most replays of the plan in flight at once (None: 1).

        Raises:
            ValueError: unknown mode or a negative count.
            TypeError: an argument of the wrong type.
        """

    def buffer(self, label: str, size: int) -> GraphBuffer:
        """Declares a buffer of ``size`` bytes.

        Raises:
            RecordError: size 0 or a refused label.
        """

    def kernel(
        self,
        name: str,
        grid: _Dims,
        block: _Dims,
        accesses: Optional[Iterable[_Access]] = None,
        deps: Optional[Iterable[_NodeRef]] = None,
        module: Optional[Module] = None,
        kernarg: Optional[_Bytes] = None,
        dynamic_group_bytes: Optional[int] = None,
    ) -> Node:
        """Adds a kernel node.

        Arguments:
            name: the kernel symbol (with ``module``) or an authoring name.
            grid, block: work-items, an int or 1-3 ints.
            accesses: ``(buffer, offset, len, write)`` ranges it touches.
            deps: nodes that must finish before it.
            module: where the kernel comes from; None records a named node
                that instantiates and mock-launches but cannot launch.
            kernarg: its kernarg bytes (None: empty; a module kernel takes
                its full segment, or exactly its explicit arguments, whose
                hidden arguments are then filled from the geometry).
            dynamic_group_bytes: extra LDS per workgroup (None: 0).

        Raises:
            RecordError: an access outside its buffer, an unknown kernel,
                a short kernarg, a dependency cycle.
            HandleError: a buffer or node from another graph, or an int id
                that names none.
            TypeError, ValueError: malformed arguments.
        """

    def add_dependency(self, src: _NodeRef, to: _NodeRef) -> None:
        """Makes ``to`` run after ``src`` (Nodes or their int ids).

        Raises:
            RecordError: the edge would close a cycle.
            HandleError: a node from another graph, or an unknown id.
        """

    @property
    def node_count(self) -> int: ...
    def instantiate(self, submission: str = "auto") -> "GraphExec":
        """Checks hazards, partitions into lanes and derives boundaries.

        Arguments:
            submission: ``"auto"`` (PM4 lanes, except a lane with a kernel
                the PM4 path refuses, which runs as public-AQL dispatches),
                ``"pm4"`` (every lane PM4) or ``"aql"`` (every lane public
                AQL).

        Raises:
            CompileError: an empty graph, bad options, unordered hazards
                (each listed with both nodes, the buffer and the range), a
                kernel the PM4 path refuses with ``"pm4"``, or a kernel
                neither path can run.
            ValueError: an unknown ``submission``.
        """

@final
class GraphExec:
    """A compiled graph; the first launch installs one retained IB per lane."""

    @property
    def lane_count(self) -> int: ...
    @property
    def lane_submissions(self) -> list[tuple[str, Optional[str]]]:
        """Per lane: ``("pm4", None)``, or ``("aql", reason)`` naming the
        kernel the PM4 path refuses and why (or that AQL was asked for)."""
    @property
    def lanes(self) -> list[list[Node]]:
        """Nodes of every lane, in replay order."""

    @property
    def boundaries(self) -> list[list[_BoundaryInfo]]:
        """Per lane, each boundary: ``before`` (Node), ``kind`` (``wait``,
        ``rmw``, ...), ``hazard`` (``RAW``/``WAR``/``WAW``), ``producer``
        (Node), ``buffer`` (label), ``range`` ((start, end)) and ``why``."""

    def fingerprint(self) -> str:
        """SHA-256 of the compiled plan, as 64 hex digits (stable across
        identical graphs)."""

    def launch_mock(self) -> "MockLaunch":
        """Replays the plan into a recorder; no device needed."""

    def launch(self, gpu: Gpu) -> None:
        """Replays the graph on ``gpu`` and waits.

        Raises:
            CompileError: a named (module-less) node, or an encoder refusal.
            HandleError: a module of another GPU, or a later launch on
                another GPU than the first.
            ReplayError: a queue or kernel fault or a timeout.
        """

    def set_kernargs(
        self, node: _NodeRef, data: _Bytes, byte_offset: Optional[int] = None
    ) -> None:
        """Overwrites kernarg bytes of ``node`` for every later launch.

        Raises:
            RecordError: bytes outside the node's kernarg.
            HandleError: a node from another graph, or an unknown id.
            TypeError: ``node`` is not a Node or an int.
        """

    def to_dot(self) -> str:
        """Graphviz DOT of the plan: lanes as clusters, boundaries on edges."""

@final
class MockLaunch:
    """What a mock launch replayed, per lane."""

    @property
    def lane_count(self) -> int: ...
    @property
    def events(self) -> list[list[tuple[str, object]]]:
        """Per lane: ``("dispatch", Node)`` and ``("boundary", kind)`` steps."""

    @property
    def dispatch_order(self) -> list[list[Node]]:
        """Per lane: the dispatched nodes in order."""

def devices() -> list[_DeviceInfo]:
    """The host's GPUs (sysfs, and the HSA runtime's order when it has GPUs):
    dicts with ``index`` (volatile), ``name``, ``product``, ``anchor`` (the
    stable selector to copy: ``uuid:…`` or ``bdf:…``), ``uuid``, ``bdf``,
    ``slot``, ``describe`` and ``denied`` (the deny entry, or None). Empty on
    a machine without AMD GPUs: open ``Gpu("sim:gfx1201")`` there.

    Raises:
        DeviceError: an unreadable host manifest or sysfs tree.
    """

@final
class Workgroup:
    """One workgroup of a simulated dispatch, valid only while the twin
    call it was passed to runs (then every accessor raises HandleError).
    Accessor faults raise ReplayError and fail the kernel even if caught."""

    def kernarg(self) -> bytes:
        """The kernarg segment as the dispatch delivered it."""

    def arg_u32(self, offset: int) -> int:
        """The little-endian u32 kernel argument at ``offset``.

        Raises:
            ReplayError: outside the kernarg segment.
        """

    def arg_u64(self, offset: int) -> int:
        """The little-endian u64 kernel argument (e.g. a pointer) at ``offset``.

        Raises:
            ReplayError: outside the kernarg segment.
        """

    @property
    def workgroup_id(self) -> tuple[int, int, int]: ...
    @property
    def workgroup_size(self) -> tuple[int, int, int]:
        """Work-items per workgroup (x, y, z)."""

    @property
    def grid_size(self) -> tuple[int, int, int]:
        """Work-items in the grid (x, y, z)."""

    def scalar_load(self, addr: int, size: int) -> bytes:
        """Checked scalar load (through the scalar cache, like ``s_load``) of
        ``size`` bytes at ``addr``; stale when an earlier dispatch wrote them
        and no boundary since invalidated the scalar cache."""

    def load(self, addr: int, size: int) -> bytes:
        """Checked load of ``size`` bytes at device address ``addr``.

        Raises:
            ReplayError: a VM fault (no allocation covers the range).
        """

    def store(self, addr: int, data: _Bytes) -> None:
        """Checked store of ``data`` at device address ``addr``.

        Raises:
            ReplayError: a VM fault.
        """

    def atomic_add_u32(self, addr: int, value: int) -> int:
        """Device-scope atomic add; returns the previous value.

        Raises:
            ReplayError: a VM fault.
        """

def register_kernel(symbol: str, function: Callable[[Workgroup], object]) -> None:
    """Makes ``function(wg)`` the simulated device's kernel for ``symbol``
    (with or without ``.kd``), process-wide, replacing an earlier twin of
    that name. It is called once per workgroup on a simulator thread,
    holding the GIL; an exception out of it fails the kernel and the replay
    raises ReplayError naming it.

    Raises:
        TypeError: ``function`` is not callable or ``symbol`` not a str.
        ValueError: ``symbol`` is empty.
    """
