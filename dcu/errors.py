"""Every failure of the ``dcu`` command as one line and an exit status (docs/cli.md).

A command raises one of the :class:`DcuError` classes below, or lets a library exception
through; :func:`classify` turns either into a :class:`DcuError` whose ``exit_code`` says what
kind of failure it was and whose ``str()`` is the one line the command prints. A kernel that
stops on a backend (the model's :class:`sim.model.ExecutionError`, the RTL's
:class:`dcu.backends.rtl.RtlError`) becomes a :class:`Fault`: the same fields (what, kernel,
workgroup, wave, PC, instruction, lane, address, buffer) whichever backend found it, so the
two can be compared.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .admission import ResourceError
from .launch_errors import (LaunchError, LaunchUnsupported, RtlError, RtlUnsupportedError,
                            VerilatorMissing)

__all__ = ["EXIT_CODES", "DcuError", "UsageError", "BuildFailed", "KernelFault", "Unsupported", "Timeout",
           "ToolMissing", "InternalError", "Fault", "classify", "model_fault", "access_of_kind"]

#: exit status -> what it means (docs/cli.md prints this table)
EXIT_CODES = {
    0: "success",
    1: "the kernel did not build (a compiler or assembler error), or an internal error",
    2: "usage: a bad option, argument, input or output file, or kernel name",
    3: "kernel fault: a memory access outside every buffer, a bad LDS access or PC, a barrier "
       "that can never complete",
    4: "unsupported: an instruction or feature the backend does not execute, a kernel that "
       "does not fit the configuration",
    5: "timeout: the instruction or cycle limit ran out (a kernel that spins or hangs)",
    6: "tool missing: LLVM 19, Verilator or an FPGA tool is not installed",
    130: "interrupted (Ctrl-C)",
}


class DcuError(Exception):
    """A failure the command reports in one line; ``label`` starts it, ``exit_code`` ends the run."""

    exit_code = 1
    label = "error"

    def __init__(self, message: str, fault: "Fault | None" = None):
        super().__init__(message)
        self.fault = fault


class UsageError(DcuError):
    exit_code, label = 2, "error"


class BuildFailed(DcuError):
    exit_code, label = 1, "build failed"


class KernelFault(DcuError):
    exit_code, label = 3, "kernel fault"


class Unsupported(DcuError):
    exit_code, label = 4, "unsupported"


class Timeout(DcuError):
    exit_code, label = 5, "timeout"


class ToolMissing(DcuError):
    exit_code, label = 6, "tool missing"


class InternalError(DcuError):
    exit_code, label = 1, "internal error"


class Interrupted(DcuError):
    exit_code, label = 130, "interrupted"


def access_of_kind(kind: str | None) -> str | None:
    """The access an instruction of ``isa.OpInfo.kind`` makes, in a fault's words."""
    return {"vmem_load": "load", "vmem_store": "store", "vmem_atomic": "atomic", "smem": "scalar load",
            "ds_load": "LDS load", "ds_store": "LDS store", "ds_atomic": "LDS atomic"}.get(kind or "")


@dataclass
class Fault:
    """A kernel stopped by a backend, in the fields every backend reports.

    ``what`` is the cause in words; ``access`` the memory access that faulted (``load``,
    ``store``, ``atomic``, ``scalar load``, ...); ``where`` places ``address`` among the
    buffers (:meth:`sim.memory.GlobalMemory.nearest`). The model knows the workgroup, wave,
    PC and instruction; the RTL the SIMD and wave slot, and a PC for the faults it latches at
    issue. ``waves`` describes each live wave when the cause is a limit or a deadlock.
    """

    what: str
    kernel: str | None = None
    backend: str | None = None
    access: str | None = None
    workgroup: tuple | None = None
    wave: int | None = None
    simd: int | None = None
    slot: int | None = None
    pc: int | None = None
    instruction: str | None = None
    lane: int | None = None
    address: int | None = None
    size: int | None = None
    where: str | None = None
    detail: str | None = None
    waves: list = field(default_factory=list)

    def line(self) -> str:
        """The one-line report: the cause, then where it happened, most specific last."""
        head = f"{self.access} outside every buffer" if self.access and self.where else self.what
        parts = []
        if self.kernel:
            parts.append(f"kernel {self.kernel}" + (f" on {self.backend}" if self.backend else ""))
        if self.workgroup is not None:
            parts.append(f"workgroup {tuple(self.workgroup)}")
        if self.wave is not None:
            parts.append(f"wave {self.wave}")
        if self.simd is not None:
            parts.append(f"SIMD {self.simd} wave slot {self.slot}")
        if self.pc is not None:
            parts.append(f"PC {self.pc:#x}" + (f" ({self.instruction})" if self.instruction else ""))
        if self.lane is not None:
            parts.append(f"lane {self.lane}")
        if self.address is not None:
            size = f" ({self.size} bytes)" if self.size else ""
            parts.append(f"address {self.address:#x}{size}" + (f": {self.where}" if self.where else ""))
        if self.detail:
            parts.append(self.detail)
        if self.waves:
            parts.append("waves: " + "; ".join(self.waves))
        return f"{head}: {', '.join(parts)}" if parts else head

    def to_dict(self) -> dict:
        d = asdict(self)
        if d["workgroup"] is not None:
            d["workgroup"] = list(d["workgroup"])
        return {k: v for k, v in d.items() if v not in (None, [])}


# ---- the model's failures ------------------------------------------------------------------
def model_fault(e, kernel: str | None = None) -> DcuError:
    """The :class:`DcuError` of a :class:`sim.model.ExecutionError`."""
    from isa import DecodeError, disassemble
    from sim.memory import MemoryFault
    from sim.model import BarrierDeadlock, Watchdog

    inst = getattr(e, "inst", None)
    text = disassemble(inst) if inst is not None else None
    f = Fault("", kernel, "model", workgroup=e.wg, wave=e.wave, pc=e.pc, instruction=text)
    cause = e.cause
    if isinstance(e, Watchdog):
        f.what, f.wave, f.pc, f.instruction = "instruction limit", None, None, None
        f.detail = (f"wave {e.wave} ran {e.limit:,} instructions, the limit per wave" if e.per_wave
                    else f"the dispatch ran {e.limit:,} instructions, its budget")
        f.waves = [f"wave {i} at PC {pc:#x} ({t.split('  [')[0]})" for i, pc, t in e.waves]
        return Timeout(f.line() + " (raise it with --max-instructions)", f)
    if isinstance(e, BarrierDeadlock):
        f.what, f.detail = "barrier deadlock", str(e).split(": ", 1)[-1]
        return KernelFault(f.line(), f)
    if isinstance(cause, MemoryFault):
        f.access = access_of_kind(inst.info.kind if inst is not None else None) or "access"
        f.lane = None if f.access == "scalar load" else cause.lane
        f.address, f.size, f.where = cause.addr, cause.size, cause.where
        f.what = "memory fault"
        return KernelFault(f.line(), f)
    f.detail = str(cause)
    if isinstance(cause, DecodeError):
        f.what = "not an instruction the decoder knows"
        f.detail = f"dwords {' '.join(f'{w:08x}' for w in cause.words)}" + (
            f" ({cause.mnemonic}: not implemented)" if cause.mnemonic else "")
        return Unsupported(f.line(), f)
    # the model's ModelError says "not implemented" / "not supported" for what it lacks
    if "not implemented" in f.detail or "not supported" in f.detail:
        f.what = "unsupported instruction"
        return Unsupported(f.line(), f)
    f.what = "execution error"
    return KernelFault(f.line(), f)


# ---- everything else -------------------------------------------------------------------------
def classify(e: BaseException, kernel: str | None = None) -> DcuError:
    """The :class:`DcuError` a command reports for ``e`` (``kernel``: the kernel it ran)."""
    if isinstance(e, DcuError):
        return e
    if isinstance(e, KeyboardInterrupt):
        return Interrupted("stopped by Ctrl-C")
    from sim.model import ExecutionError
    if isinstance(e, ExecutionError):
        return model_fault(e, kernel)
    if isinstance(e, RtlError):
        return rtl_error(e)
    from .toolchain import ToolchainError, ToolNotFoundError
    if isinstance(e, ToolNotFoundError) or isinstance(e.__cause__, VerilatorMissing) or isinstance(e, VerilatorMissing):
        return ToolMissing(_first_line(e))
    if isinstance(e, ToolchainError):
        return BuildFailed(_build_message(e))
    from hdl.config import ConfigError
    if isinstance(e, (ResourceError, LaunchUnsupported, RtlUnsupportedError)):
        return Unsupported(str(e))
    if isinstance(e, (LaunchError, ConfigError)):
        return UsageError(str(e))
    from .codeobj import CodeObjectError
    if isinstance(e, CodeObjectError):
        return UsageError(str(e))
    if isinstance(e, FileNotFoundError):
        return UsageError(str(e))
    if isinstance(e, KeyError):           # an unknown kernel or benchmark
        return UsageError(str(e.args[0]) if e.args else str(e))
    if isinstance(e, OSError):
        return UsageError(f"{e.strerror or e}: {e.filename}" if e.filename else str(e))
    return InternalError(f"{type(e).__name__}: {e} (a bug in dcu: --debug shows the traceback)")


def rtl_error(e) -> DcuError:
    """The :class:`DcuError` of a :class:`dcu.backends.rtl.RtlError` (its ``fault`` says the class)."""
    f = getattr(e, "fault", None)
    if f is None:
        return KernelFault(str(e))
    cls = {"timeout": Timeout, "unsupported": Unsupported}.get(getattr(e, "category", ""), KernelFault)
    hint = " (raise it with --max-cycles)" if cls is Timeout and f.what.startswith("cycle limit") else ""
    return cls(f.line() + hint, f)


def _first_line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def _build_message(e) -> str:
    """A tool's failure in one line: its first diagnostic (``file:line:col: error: ...``)."""
    diag = [ln for ln in (getattr(e, "stderr", "") or "").splitlines() if "error" in ln]
    return f"{diag[0].strip()}" + (f" (and {len(diag) - 1} more)" if len(diag) > 1 else "") if diag \
        else _first_line(e)


# ---- the RTL's failures ----------------------------------------------------------------------
def rtl_fault(err, config, prep, kernel: str, backend: str, buffers, *, mem_faults=(), waves=None,
              watchdog_cycles: int | None = None, max_cycles: int | None = None) -> tuple[Fault, str]:
    """The :class:`Fault` and category (``fault``, ``unsupported``, ``timeout``) of a dispatch
    the DCU stopped: ``err`` is its latched ``hdl.top.dcu.DcuError`` (None or not valid: the cycle
    limit ran out), ``mem_faults`` the memory model's :class:`dcu.memmodel.MemFault` records
    (they add the kind and the bytes of a vector access the memory refused), ``buffers`` the
    buffer map, ``waves`` the resident waves described."""
    from hdl.top.dcu import DcuErrorCause as Cause

    f = Fault("", kernel, backend, waves=list(waves or []))
    if err is None or not err.valid:
        f.what, f.detail = "cycle limit", f"the dispatch did not finish within {max_cycles} cycles"
        return f, "timeout"
    cause = Cause(err.cause)
    f.simd, f.slot = int(err.simd), int(err.wave)
    if cause == Cause.WATCHDOG:
        f.what, f.detail = "watchdog", f"no instruction issued for {watchdog_cycles} cycles"
        return f, "timeout"
    f.waves = []
    if cause in (Cause.ILLEGAL_INSTRUCTION, Cause.UNSUPPORTED):    # the DCU keeps the PC: the words are in memory
        from .refused import refused_instruction
        unit, f.instruction = refused_instruction(prep, int(err.pc))
        f.pc = int(err.pc)
        f.what = ("not an instruction the RTL executes" if cause == Cause.ILLEGAL_INSTRUCTION
                  else f"an instruction the RTL's {unit} does not execute")
        return f, "unsupported"
    if cause == Cause.DISPATCH:
        f.simd = f.slot = None
        f.what = "a workgroup can never be placed on this configuration"
        return f, "unsupported"
    if cause == Cause.LDS_FAULT:
        f.what, f.lane = "LDS fault", int(err.lane)
        f.detail = f"LDS address {int(err.addr):#x} is misaligned or outside the workgroup's LDS"
        return f, "fault"
    f.what, f.address = "memory fault", int(err.addr)
    if cause == Cause.SCALAR_FAULT:
        f.access = "scalar load"
    elif cause == Cause.FETCH_FAULT:
        f.access = "instruction fetch"
    else:
        from hdl.mem.vmem import OpKind
        f.lane = int(err.lane)
        access = {OpKind.LOAD: "load", OpKind.STORE: "store", OpKind.ATOMIC: "atomic"}.get(OpKind(err.access))
        if access:     # the vector memory unit's own check names the lane's access and bytes
            f.access, f.size = access, int(err.size)
        else:
            _refine_vector_fault(f, err, config, buffers, mem_faults)
    f.where = prep.mem.nearest(f.address, f.size or 1)
    return f, "fault"


def _refine_vector_fault(f: Fault, err, config, buffers, mem_faults) -> None:
    """Kind and address of a vector access from the memory's record of the request the DCU
    reported (its L0's, of the same line, or the same dword for an atomic). The DCU latches a
    line fill's or a store's line: the memory adds the first byte of a store outside every
    buffer; a load's address stays its line's (the memory sees no lane address)."""
    from hdl.mem.memport import CLIENT_TAG_BITS, Client, MemKind
    from .memmodel import first_outside

    client = Client.L0_CU0 + int(err.simd) // config.simds_per_cu
    for m in mem_faults:
        if m.tag >> CLIENT_TAG_BITS != client:
            continue
        if m.kind == MemKind.ATOMIC and m.addr == f.address:
            f.access, f.size = "atomic", 4
            return
        if m.kind in (MemKind.READ, MemKind.WRITE) and m.addr == f.address & ~0x7F:
            if m.kind == MemKind.WRITE:
                f.access = "store"
                f.address = first_outside(buffers, m.addr, m.mask) or m.addr
            else:
                f.access, f.address, f.size = "load", m.addr, 128
            return
    f.access = "access"
