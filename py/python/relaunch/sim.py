"""Kernel twins in Python for the simulated device (``sim:<target>``).

``register_kernel(symbol, function)`` makes ``function(wg)`` the kernel for
``symbol``: it is called once per workgroup (on a simulator thread, holding
the GIL) with a :class:`Workgroup` that reads kernargs and accesses device
memory through checked accessors. An exception out of ``function`` fails the
kernel; the replay then raises :class:`relaunch.ReplayError` naming it.
"""

from ._native import Workgroup, register_kernel

__all__ = ["Workgroup", "register_kernel"]
