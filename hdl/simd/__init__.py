"""The SIMD32 (docs/simd.md): front end, issue and scalar pipe, vector pipe, counters.

``hdl.simd.SIMD`` and the sets of what it executes (``IMPLEMENTED``, ``NO_CLAMP``, ``NO_OMOD``).
"""
from .executed import IMPLEMENTED, NO_CLAMP, NO_OMOD
from .simd import SIMD, SimdError

__all__ = ["SIMD", "SimdError", "IMPLEMENTED", "NO_CLAMP", "NO_OMOD"]
