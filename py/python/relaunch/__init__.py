"""relaunch: record AMD GPU kernel dispatches once, encode them as retained
PM4 indirect buffers, and replay them with one AQL packet per queue.

Everything here comes from the native module ``relaunch._native`` (Rust,
pyo3, abi3). Without an AMD GPU, use the simulated device:
``relaunch.Gpu("sim:gfx1201")`` (or any RDNA target, e.g. ``sim:gfx1100``),
and ``relaunch.sim.register_kernel`` to give kernels host twins.
"""

from ._native import (
    DEVICE_ENV,
    FALLBACK_SELECTOR,
    Buffer,
    Catalog,
    CertificationError,
    CompileError,
    DeviceError,
    DeviceLostError,
    Error,
    Gpu,
    Graph,
    GraphBuffer,
    GraphExec,
    HandleError,
    Hazard,
    MockLaunch,
    Module,
    Node,
    Pm4Ib,
    RecordError,
    ReplayError,
    __version__,
    devices,
)
from . import sim

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
    "devices",
    "sim",
]
