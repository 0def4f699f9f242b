"""Which of a kernel's instructions the RTL SIMD does not execute, found before a launch.

The RTL backends (``rtl``, ``verilator``) refuse such a kernel before they elaborate the
design: the RTL's decoder would otherwise latch an error mid-run, or never reach the
instruction on the path a test happens to take. The reference is ``hdl.simd.IMPLEMENTED``
(mnemonics), ``hdl.simd.NO_CLAMP`` (those refused with the VOP3 ``clamp`` bit set) and
``hdl.simd.NO_OMOD`` (those refused with a VOP3 ``omod``). A VOPD dual-issue word runs when
the RTL executes both of its operations, unless each half reads the other's destination (the
RTL issues the halves one after the other: it refuses that pair); DPP source forms are refused
whatever their operations.

The instructions checked are the kernel's own (its symbol's range, or to the end of
``.text`` when the symbol has no size) and, when it calls a function (``s_swappc_b64``,
``s_call_b64``), every instruction of ``.text``, which holds its callees.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from isa.decoder import DecodeError, decode

from ..launch_errors import RtlUnsupportedError

__all__ = ["Found", "RtlUnsupportedError", "kernel_instructions", "unsupported", "float_mode_users",
           "refuse_unsupported"]

DEFAULT_FLOAT_MODE = 0xF0   # MODE[7:0] of clang-19's gfx1200 kernels: round to nearest even, denormals kept
_FLOAT_TYPE = re.compile(r"_(f16|f32|f64|bf16)(?:_|$| )")


_VOPD_MASK, _VOPD_BITS = 0xFC000000, 0xC8000000
_VOPD_LITERAL_OPS = (1, 2)                      # v_dual_fmaak_f32, v_dual_fmamk_f32
_DPP_CODES = {0xE9: "DPP8", 0xEA: "DPP8", 0xFA: "DPP16"}       # (0xFB is src_vccz)
_CALLS = ("s_swappc_b64", "s_call_b64")


@dataclass(frozen=True)
class Found:
    """One instruction: its byte address, mnemonic (both halves for VOPD) and encoding form
    (``""`` for the plain encodings, ``"VOPD"``, ``"VOPD, halves read each other's
    destinations"``, ``"DPP8"``, ``"DPP16"``, ``"clamp"`` for a VOP3 instruction with its clamp
    bit set, ``"omod"`` for one with an output modifier, or ``"undecodable"`` for a gfx1200
    instruction the project's decoder does not know); ``ops``: a VOPD's two operations (the
    VOP1/VOP2 mnemonics, None for an opcode LLVM 19 does not assemble)."""
    pc: int
    name: str
    form: str = ""
    size: int = 4
    ops: tuple = ()

    def label(self) -> str:
        return f"{self.name} ({self.form})" if self.form else self.name


def _vopd(words, pc: int) -> Found:
    """A VOPD word pair, named from AMD's opcode table; 12 bytes with a literal."""
    from isa.allnames import names
    from isa.vopd import BASE, fields
    w0, w1 = words[0], words[1] if len(words) > 1 else 0
    f = fields([w0, w1])
    opx, opy = f["opx"], f["opy"]
    table = names("VOPD")
    literal = (w0 & 0x1FF) == 255 or (w1 & 0x1FF) == 255 or opx in _VOPD_LITERAL_OPS or opy in _VOPD_LITERAL_OPS
    name = f"{table.get(opx, f'opx {opx}')} :: {table.get(opy, f'opy {opy}')}"
    ops = (BASE.get(opx), BASE.get(opy))

    def reads(side, other):        # a half's sources name the other's destination
        vdst = f[f"vdst{other}"]
        return f[f"src{side}0"] == 256 + vdst or (ops["xy".index(side)] != "v_mov_b32" and f[f"vsrc{side}1"] == vdst)
    form = "VOPD, halves read each other's destinations" if reads("x", "y") and reads("y", "x") else "VOPD"
    return Found(pc, name, form, 12 if literal else 8, ops)


def _dpp_size(w0: int) -> int | None:
    """Bytes of a DPP-form instruction the decoder refused: VOP1/VOP2/VOPC with a DPP dword,
    VOP3 with one (None when the word is none of these)."""
    if w0 >> 31 == 0 or w0 >> 25 in (0x3F, 0x3E):
        return 8
    if w0 >> 26 == 0x35:
        return 12
    return None


def _one(words, pc: int) -> Found | None:
    """The instruction at ``pc`` (size 0 when it cannot be sized: scanning stops there); None for
    a word that is no gfx1200 instruction."""
    if words[0] & _VOPD_MASK == _VOPD_BITS:
        return _vopd(words, pc)
    try:
        inst = decode(words, pc)
    except DecodeError as e:
        size = _dpp_size(words[0]) if "DPP" in str(e) else None
        if size is not None:
            src0 = words[0] & 0x1FF
            return Found(pc, e.mnemonic or f"{words[0]:08x}", _DPP_CODES.get(src0, "DPP"), size)
        # A gfx1200 instruction the project does not decode is refused by name; a word that is
        # no instruction at all is left to the RTL's illegal-instruction trap. Neither can be sized.
        return Found(pc, e.mnemonic, "undecodable", 0) if e.mnemonic else None
    form = "" if inst.dpp is None else "DPP8" if inst.dpp.is_dpp8 else "DPP16"
    if not form and inst.f.get("clamp"):
        form = "clamp"
    elif not form and inst.f.get("omod"):
        form = "omod"
    return Found(pc, inst.name, form, inst.size)


def _sweep(code: bytes, base: int, start: int, end: int) -> list[Found]:
    """Linear sweep of ``code`` (loaded at ``base``) over byte addresses [start, end)."""
    words = struct.unpack(f"<{len(code) // 4}I", code[:len(code) // 4 * 4])
    out, pc = [], start
    while pc < end:
        i = (pc - base) // 4
        found = _one(words[i:i + 4], pc)
        if found is not None:
            out.append(found)
        if found is None or found.size == 0:
            break
        pc += found.size
    return out


def kernel_instructions(kernel) -> list[Found]:
    """Every instruction the kernel (a ``dcu.codeobj.KernelInfo``) can execute, in address order."""
    text_end = kernel.code_base + len(kernel.code)
    end = kernel.entry + kernel.code_size if kernel.code_size else text_end
    own = _sweep(kernel.code, kernel.code_base, kernel.entry, min(end, text_end))
    if any(f.name in _CALLS for f in own):
        return _sweep(kernel.code, kernel.code_base, kernel.code_base, text_end)
    return own


def unsupported(kernel, implemented: frozenset | None = None, no_clamp: frozenset | None = None,
                no_omod: frozenset | None = None) -> list[Found]:
    """The kernel's instructions the RTL SIMD does not execute (default: ``hdl.simd.IMPLEMENTED``,
    ``hdl.simd.NO_CLAMP`` for those with ``clamp``, ``hdl.simd.NO_OMOD`` for those with
    ``omod``)."""
    from hdl import simd
    implemented = simd.IMPLEMENTED if implemented is None else implemented
    no_clamp = simd.NO_CLAMP if no_clamp is None else no_clamp
    no_omod = simd.NO_OMOD if no_omod is None else no_omod
    lacking = {"clamp": no_clamp, "omod": no_omod}

    def refused(f: Found) -> bool:
        if f.form == "VOPD":
            return not all(op in implemented for op in f.ops)
        if f.form in lacking:
            return f.name not in implemented or f.name in lacking[f.form]
        return bool(f.form) or f.name not in implemented
    return [f for f in kernel_instructions(kernel) if refused(f)]


def float_mode_users(kernel) -> list[Found]:
    """The kernel's float instructions whose results its descriptor's float mode (when not
    DEFAULT_FLOAT_MODE) changes: f32 ones for FLOAT_*_MODE_32, f16/f64 ones for *_16_64."""
    mode = kernel.float_mode
    off32 = mode & 0x33 != DEFAULT_FLOAT_MODE & 0x33
    off16 = mode & 0xCC != DEFAULT_FLOAT_MODE & 0xCC

    def affected(f: Found) -> bool:
        types = set(_FLOAT_TYPE.findall(f.name))
        return (off32 and "f32" in types) or (off16 and bool(types - {"f32"}))
    return [f for f in kernel_instructions(kernel) if affected(f)] if off32 or off16 else []


def refuse_unsupported(kernel, backend: str) -> None:
    """Raise :class:`RtlUnsupportedError` naming every instruction of ``kernel`` the RTL does not
    execute (first address and count of each), so that the launch stops before elaboration; then
    a kernel whose descriptor selects a float mode the RTL lacks (it computes in
    DEFAULT_FLOAT_MODE only) for float instructions it has."""
    _refuse_instructions(kernel, backend)
    users = float_mode_users(kernel)
    if users:
        from sim.fpmode import describe
        raise RtlUnsupportedError(
            f"kernel {kernel.name} cannot run on backend {backend!r}: its descriptor selects float mode "
            f"{kernel.float_mode:#04x} ({describe(kernel.float_mode)}) and it has {len(users)} float "
            f"instructions it affects (first {users[0].name} at 0x{users[0].pc:x}); the RTL computes only in "
            f"mode {DEFAULT_FLOAT_MODE:#04x} (round to nearest even, denormals kept; clang's default, "
            "'.amdhsa_float_denorm_mode_32 3' in assembly); backend 'model' runs it")


def _refuse_instructions(kernel, backend: str) -> None:
    bad = unsupported(kernel)
    if not bad:
        return
    first: dict[str, tuple[int, int]] = {}
    for f in bad:
        pc, n = first.get(f.label(), (f.pc, 0))
        first[f.label()] = (pc, n + 1)
    listed = ", ".join(f"{label} at 0x{pc:x}" + (f" (x{n})" if n > 1 else "") for label, (pc, n) in first.items())
    raise RtlUnsupportedError(f"kernel {kernel.name} cannot run on backend {backend!r}: the RTL SIMD does not "
                      f"execute {len(first)} of its instructions: {listed}; backend 'model' runs them")
