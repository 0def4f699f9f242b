"""The SIMD32: issue, the scalar and vector ALUs, the transcendental unit, register files.

``hdl.simd.SIMD`` and the sets of what it executes (``IMPLEMENTED``, ``NO_CLAMP``, ``NO_OMOD``)
come from :mod:`hdl.simd.core`.
"""
from .core import IMPLEMENTED, NO_CLAMP, NO_OMOD, SIMD, ErrorCause, WaveStatus

__all__ = ["SIMD", "IMPLEMENTED", "NO_CLAMP", "NO_OMOD", "ErrorCause", "WaveStatus"]
