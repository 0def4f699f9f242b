"""The exceptions a launch raises, whichever backend runs it.

They live apart from the modules that raise them so that the launcher (``dcu.launch``), its
backends (``dcu.backends.rtl``, ``dcu.backends.verilator``), the RTL pre-check (``dcu.backends.rtlcheck``) and the
command line's classification (``dcu.errors``) can all name them without importing one
another. Each is also importable from the module that raises it.
"""
from __future__ import annotations

__all__ = ["LaunchError", "LaunchUnsupported", "RtlUnsupportedError", "RtlError", "VerilatorError",
           "VerilatorMissing"]


class LaunchError(ValueError):
    """A launch that cannot be made: wrong arguments, unsupported ABI feature, resources."""


class LaunchUnsupported(LaunchError):
    """A launch of a kernel that needs what this device or backend does not have."""


class RtlUnsupportedError(LaunchUnsupported):
    """A launch refused because the RTL SIMD does not execute some of the kernel's instructions."""


class RtlError(RuntimeError):
    """The DCU stopped a dispatch: the message names the cause, SIMD, wave and PC.

    ``result`` is the :class:`dcu.backends.rtl.RtlResult` of the run so far (or None); ``fault`` (a
    :class:`dcu.errors.Fault`) and ``category`` (``fault``, ``unsupported`` or ``timeout``)
    say the same for a report (:func:`dcu.errors.rtl_fault`)."""

    def __init__(self, message: str, result=None, fault=None, category: str = "fault"):
        super().__init__(message)
        self.result = result
        self.fault, self.category = fault, category
        self.buffers = None        # set by the launcher: the buffers as the run left them


class VerilatorError(RuntimeError):
    """Verilator is missing or its build failed; the message says what to do."""


class VerilatorMissing(VerilatorError):
    """No usable Verilator (or C++ compiler) is installed."""
