"""gfx1200 instruction decoder: raw dwords -> Inst (the RDNA 4 ISA guide's microcode formats)."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Sequence

from .opcodes import Fmt, OpInfo, lookup
from . import dpp as D
from . import operands as O
from . import vopd as VD
from .legality import unsupported, violation
from .disasm import disassemble


class DecodeError(Exception):
    """Undecodable instruction. The message names the PC, the raw dwords and,
    if the opcode is a known gfx1200 opcode this project does not implement, its mnemonic."""

    def __init__(self, msg: str, pc: int = 0, words: Sequence[int] = (), mnemonic: str | None = None):
        self.pc, self.words, self.mnemonic = pc, tuple(words), mnemonic
        raw = " ".join(f"{w:08x}" for w in words)
        text = f"pc 0x{pc:x}: {msg} [{raw}]"
        if mnemonic:
            text += f" ({mnemonic})"
        super().__init__(text)


@dataclass(frozen=True)
class Inst:
    info: OpInfo
    fmt: Fmt                     # encoding actually used (Fmt.VOP3/VOP3SD for an _e64 form)
    pc: int                      # byte address
    words: tuple[int, ...]       # raw dwords including any literal
    size: int                    # bytes
    literal: int | None          # 32-bit literal (source code 255, or fmamk/fmaak K)
    f: dict = field(hash=False, compare=False)   # raw fields (see isa/__init__.py)
    dpp: D.Dpp | None = None     # DPP16/DPP8 source form (src0 field holds the DPP code)
    vopd: tuple[VD.Half, VD.Half] | None = None  # VOPD: the X and Y operations

    @property
    def name(self) -> str:
        return self.info.name

    def __repr__(self) -> str:
        return f"<Inst 0x{self.pc:x}: {disassemble(self)} [{' '.join(f'{w:08x}' for w in self.words)}]>"

    @property
    def is_e64(self) -> bool:
        """True for the VOP3/VOP3SD encoding of a VOP1/VOP2/VOPC op."""
        return self.fmt != self.info.fmt and self.fmt in (Fmt.VOP3, Fmt.VOP3SD)

    @property
    def returns(self) -> bool:
        """Memory atomics: the instruction writes the pre-op value back to vdst.
        DS atomics return iff the opcode is a _rtn_ one; global atomics iff th[0] is set
        (LLVM prints th:TH_ATOMIC_RETURN)."""
        if "returns" in self.info.flags:
            return True
        return "th_return" in self.info.flags and bool(self.f.get("th", 0) & 1)

    @property
    def next_pc(self) -> int:
        return self.pc + self.size

    def branch_target(self) -> int | None:
        """Target byte address of s_branch / s_cbranch_*."""
        if self.info.kind != "sbranch" or self.fmt != Fmt.SOPP:
            return None
        return self.pc + 4 + 4 * _sext(self.f["simm16"], 16)


def _sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


# the three 96-bit vector memory encodings share one layout; dword 0 bits [31:24] tell them apart
_VMEM_PREFIX = {0xEC: Fmt.VFLAT, 0xED: Fmt.VSCRATCH, 0xEE: Fmt.VGLOBAL}
VMEM_FMTS = tuple(_VMEM_PREFIX.values())


def fmt_of(w0: int) -> Fmt | None:
    """The encoding format of an instruction whose first dword is ``w0`` (None: no gfx1200 format)."""
    top7 = w0 >> 25
    if top7 == 0x3F:
        return Fmt.VOP1
    if top7 == 0x3E:
        return Fmt.VOPC
    if not w0 >> 31:
        return Fmt.VOP2
    if w0 >> 30 == 0b10:
        t9 = w0 >> 23
        if t9 == 0b101111101:
            return Fmt.SOP1
        if t9 == 0b101111110:
            return Fmt.SOPC
        if t9 == 0b101111111:
            return Fmt.SOPP
        if w0 >> 28 == 0b1011:
            return Fmt.SOPK
        return Fmt.SOP2
    t6 = w0 >> 26
    if t6 == 0b110101:
        return Fmt.VOP3
    if t6 == 0b110110:
        return Fmt.DS
    if t6 == 0b111101:
        return Fmt.SMEM
    if w0 >> 24 == 0xCC:
        return Fmt.VOP3P
    if t6 == 0b110010:
        return Fmt.VOPD
    return _VMEM_PREFIX.get(w0 >> 24)


# dwords of each format before any literal, DPP or DPP8 dword
BASE_WORDS = {Fmt.SOP1: 1, Fmt.SOP2: 1, Fmt.SOPK: 1, Fmt.SOPC: 1, Fmt.SOPP: 1, Fmt.VOP1: 1,
               Fmt.VOP2: 1, Fmt.VOPC: 1, Fmt.VOP3: 2, Fmt.VOP3SD: 2, Fmt.SMEM: 2, Fmt.DS: 2,
               Fmt.VGLOBAL: 3, Fmt.VSCRATCH: 3, Fmt.VFLAT: 3, Fmt.VOPD: 2}


BASE_WORDS[Fmt.VOP3P] = 2


def raw_op(fmt: Fmt, w0: int) -> int:
    """The opcode field of ``fmt``'s first dword ``w0``."""
    if fmt == Fmt.SOP2:
        return (w0 >> 23) & 0x7F
    if fmt == Fmt.SOPK:
        return (w0 >> 23) & 0x1F
    if fmt == Fmt.SOP1:
        return (w0 >> 8) & 0xFF
    if fmt in (Fmt.SOPC, Fmt.SOPP):
        return (w0 >> 16) & 0x7F
    if fmt == Fmt.SMEM:
        return (w0 >> 13) & 0x3F
    if fmt == Fmt.VOP1:
        return (w0 >> 9) & 0xFF
    if fmt == Fmt.VOP2:
        return (w0 >> 25) & 0x3F
    if fmt == Fmt.VOPC:
        return (w0 >> 17) & 0xFF
    if fmt in (Fmt.VOP3, Fmt.VOP3SD):
        return (w0 >> 16) & 0x3FF
    if fmt == Fmt.VOP3P:
        return (w0 >> 16) & 0x7F
    if fmt == Fmt.DS:
        return (w0 >> 18) & 0xFF
    if fmt in VMEM_FMTS:
        return (w0 >> 14) & 0xFF
    return -1


def _fields(fmt: Fmt, w: Sequence[int]) -> dict:
    w0 = w[0]
    if fmt == Fmt.SOP2:
        return {"sdst": (w0 >> 16) & 0x7F, "ssrc0": w0 & 0xFF, "ssrc1": (w0 >> 8) & 0xFF}
    if fmt == Fmt.SOPK:
        return {"sdst": (w0 >> 16) & 0x7F, "simm16": w0 & 0xFFFF}
    if fmt == Fmt.SOP1:
        return {"sdst": (w0 >> 16) & 0x7F, "ssrc0": w0 & 0xFF}
    if fmt == Fmt.SOPC:
        return {"ssrc0": w0 & 0xFF, "ssrc1": (w0 >> 8) & 0xFF}
    if fmt == Fmt.SOPP:
        return {"simm16": w0 & 0xFFFF}
    if fmt == Fmt.VOP1:
        return {"vdst": (w0 >> 17) & 0xFF, "src0": w0 & 0x1FF}
    if fmt == Fmt.VOP2:
        return {"vdst": (w0 >> 17) & 0xFF, "src0": w0 & 0x1FF, "vsrc1": (w0 >> 9) & 0xFF}
    if fmt == Fmt.VOPC:
        return {"src0": w0 & 0x1FF, "vsrc1": (w0 >> 9) & 0xFF}
    w1 = w[1]
    if fmt == Fmt.SMEM:
        return {"sdata": (w0 >> 6) & 0x7F, "sbase": w0 & 0x3F, "soffset": (w1 >> 25) & 0x7F,
                "ioffset": _sext(w1 & 0xFFFFFF, 24), "th": (w0 >> 23) & 3, "scope": (w0 >> 21) & 3}
    if fmt in (Fmt.VOP3, Fmt.VOP3SD):
        f = {"vdst": w0 & 0xFF, "src0": w1 & 0x1FF, "src1": (w1 >> 9) & 0x1FF,
             "src2": (w1 >> 18) & 0x1FF, "neg": (w1 >> 29) & 7, "omod": (w1 >> 27) & 3,
             "clamp": (w0 >> 15) & 1}
        if fmt == Fmt.VOP3:
            f["abs"] = (w0 >> 8) & 7
            f["opsel"] = (w0 >> 11) & 0xF
        else:
            f["sdst"] = (w0 >> 8) & 0x7F
        return f
    if fmt == Fmt.VOP3P:      # op_sel_hi: source i's bit i (w1[28:27], w0[14]); neg = neg_lo
        return {"vdst": w0 & 0xFF, "src0": w1 & 0x1FF, "src1": (w1 >> 9) & 0x1FF,
                "src2": (w1 >> 18) & 0x1FF, "neg": (w1 >> 29) & 7, "neg_hi": (w0 >> 8) & 7,
                "opsel": (w0 >> 11) & 7, "opsel_hi": ((w1 >> 27) & 3) | ((w0 >> 12) & 4),
                "clamp": (w0 >> 15) & 1}
    if fmt == Fmt.DS:
        return {"offset0": w0 & 0xFF, "offset1": (w0 >> 8) & 0xFF, "vdst": (w1 >> 24) & 0xFF,
                "data1": (w1 >> 16) & 0xFF, "data0": (w1 >> 8) & 0xFF, "addr": w1 & 0xFF}
    if fmt in VMEM_FMTS:
        w2 = w[2]
        return {"vdst": w1 & 0xFF, "vsrc": (w1 >> 23) & 0xFF, "vaddr": w2 & 0xFF,
                "saddr": w0 & 0x7F, "ioffset": _sext(w2 >> 8, 24), "th": (w1 >> 20) & 7,
                "scope": (w1 >> 18) & 3, "sve": (w1 >> 17) & 1, "nv": (w0 >> 7) & 1}
    raise AssertionError(fmt)


# which fields hold source operand codes that may be 255 (literal), per format
SRC_FIELDS = {Fmt.SOP1: ("ssrc0",), Fmt.SOP2: ("ssrc0", "ssrc1"), Fmt.SOPC: ("ssrc0", "ssrc1"),
               Fmt.VOP1: ("src0",), Fmt.VOP2: ("src0",), Fmt.VOPC: ("src0",),
               Fmt.VOP3: ("src0", "src1", "src2"), Fmt.VOP3SD: ("src0", "src1", "src2")}


SRC_FIELDS[Fmt.VOP3P] = ("src0", "src1", "src2")


# formats this decoder does not implement: (prefix mask, prefix value, name, op shift, op width)
_FOREIGN = [(0xFC000000, 0xC4000000, "VBUFFER", 14, 8),
            (0xFC000000, 0xD0000000, "VIMAGE", 14, 8), (0xFC000000, 0xE4000000, "VSAMPLE", 14, 8),
            (0xFF000000, 0xCD000000, "VINTERP", 16, 5), (0xFF000000, 0xCE000000, "VDSDIR", 20, 2),
            (0xFC000000, 0xC8000000, "VOPD", 0, 0), (0xFC000000, 0xF8000000, "VEXPORT", 0, 0)]


def _foreign(w0: int) -> tuple[str, int]:
    for mask, val, name, shift, width in _FOREIGN:
        if w0 & mask == val:
            return name, (w0 >> shift) & ((1 << width) - 1) if width else -1
    return "", -1


# encodings the decoder does not implement: their size in dwords (RDNA 4 ISA guide, "Microcode Formats")
_FOREIGN_DWORDS = {"VBUFFER": 3, "VIMAGE": 3, "VSAMPLE": 3, "VINTERP": 2, "VDSDIR": 1, "VOPD": 2, "VEXPORT": 2}
_VOPD_LITERAL_OPS = (1, 2)           # v_dual_fmaak_f32, v_dual_fmamk_f32


def encoding_size(words) -> int:
    """Bytes an instruction occupies judged by its encoding format alone: the format's size, plus
    a literal dword when a source field holds the literal code. A listing steps over words the
    decoder rejects by this, and so stays in step with the instruction stream."""
    words = [int(w) & 0xFFFFFFFF for w in words]
    fmt = fmt_of(words[0])
    if fmt == Fmt.VOPD:
        w1 = words[1] if len(words) > 1 else 0
        literal = (words[0] & 0x1FF) == O.LITERAL or (w1 & 0x1FF) == O.LITERAL or \
            (words[0] >> 22) & 0xF in _VOPD_LITERAL_OPS or (words[0] >> 17) & 0x1F in _VOPD_LITERAL_OPS
        return 4 * (2 + literal)
    if fmt is None:
        return 4 * _FOREIGN_DWORDS.get(_foreign(words[0])[0], 1)
    n = BASE_WORDS[fmt]
    if fmt in SRC_FIELDS and len(words) >= n and any(_fields(fmt, words).get(k) == O.LITERAL
                                                      for k in SRC_FIELDS[fmt]):
        n += 1
    return 4 * n


_DPP_CODES = D.CODES     # DPP8, DPP8 with fetch-inactive, DPP16 (0xFB is src_vccz)
_DPP_FMTS = (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC, Fmt.VOP3, Fmt.VOP3SD)


def _unknown_name(fmt_name: str, op: int) -> str | None:
    """Mnemonic of a gfx1200 opcode that this project does not implement (None if unknown)."""
    try:
        from .allnames import names
    except ImportError:       # pragma: no cover
        return None
    return names(fmt_name).get(op) or _LLVM_ONLY_NAMES.get((fmt_name, op))


# gfx1200 words LLVM 19 decodes that AMD's opcode tables do not name
_LLVM_ONLY_NAMES = {("SOP1", 87): "s_wakeup_barrier", ("SOPP", 19): "s_singleuse_vdst",
                    ("VOP2", 0): "v_illegal", ("VEXPORT", -1): "export"}


def decode(words: Sequence[int], pc: int = 0) -> Inst:
    """Decode the instruction whose first dword is words[0] (at byte address pc)."""
    words = [int(w) & 0xFFFFFFFF for w in words[:4]]     # accepts numpy integers too
    if not words:
        raise DecodeError("no instruction dword (truncated input)", pc, ())
    w0 = words[0]
    fmt = fmt_of(w0)
    if fmt == Fmt.VOPD:
        return _decode_vopd(words, pc)
    if fmt is None:
        fname, fop = _foreign(w0)
        raise DecodeError(f"unsupported {fname or 'unknown'} encoding"
                          + (f" (opcode {fop})" if fop >= 0 else ""), pc, words[:2],
                          _unknown_name(fname, fop))
    op = raw_op(fmt, w0)
    info = lookup(fmt, op)
    nbase = BASE_WORDS[fmt]
    if info is None:
        name = _unknown_name(fmt.value, op)
        what = "unimplemented" if name else "unknown"
        raise DecodeError(f"{what} {fmt.value} opcode {op} (0x{op:x})", pc, words[:nbase], name)
    if fmt == Fmt.VOP3 and (info.fmt == Fmt.VOP3SD or "carry_out" in info.flags):
        fmt = Fmt.VOP3SD
    if len(words) < nbase:
        raise DecodeError(f"truncated {fmt.value} instruction: needs {nbase} dwords, got "
                          f"{len(words)}", pc, words, info.name)
    f = _fields(fmt, words)
    nsrc = len(info.src_bits)
    if fmt in _DPP_FMTS and f["src0"] in _DPP_CODES and "literal_k" not in info.flags:
        return check(_decode_dpp(info, fmt, f, words, pc, nbase))
    if fmt in SRC_FIELDS and f.get("src0") in _DPP_CODES and "literal_k" not in info.flags:
        raise DecodeError(f"{info.name}: DPP/SDWA-style source 0x{f['src0']:x} is not supported",
                          pc, words[:nbase + 1], info.name)
    need_lit = "literal_k" in info.flags or any(
        f[k] == O.LITERAL for k in SRC_FIELDS.get(fmt, ())[:max(nsrc, 1) if nsrc else 0])
    literal = None
    n = nbase
    if need_lit:
        if len(words) < nbase + 1:
            raise DecodeError(f"truncated {fmt.value} instruction: literal dword missing", pc,
                              words, info.name)
        literal = words[nbase] & 0xFFFFFFFF
        n += 1
    return check(Inst(info, fmt, pc, tuple(w & 0xFFFFFFFF for w in words[:n]), 4 * n, literal, f))


def check(inst: Inst) -> Inst:
    """``inst``, unless a field breaks a rule of isa/legality.py: a DecodeError then, naming the
    opcode when LLVM decodes the word but the project refuses that form."""
    why = violation(inst)
    if why:
        raise DecodeError(f"{inst.name}: {why}", inst.pc, inst.words)
    why = unsupported(inst)
    if why:
        raise DecodeError(f"{inst.name}: {why}", inst.pc, inst.words, inst.name)
    return inst


def _decode_vopd(words: list[int], pc: int) -> Inst:
    """A VOPD instruction (isa/vopd.py): two dwords, and the literal if either half uses one."""
    if len(words) < 2:
        raise DecodeError("truncated VOPD instruction: needs 2 dwords", pc, words)
    f = VD.fields(words)
    try:
        x, y = VD.halves(f)
    except ValueError as e:
        from .allnames import names
        raise DecodeError(str(e), pc, words[:2], names("VOPD").get(f["opx"])) from None
    n, literal = 2, None
    if x.uses_literal or y.uses_literal:
        if len(words) < 3:
            raise DecodeError("truncated VOPD instruction: literal dword missing", pc, words)
        n, literal = 3, words[2]
    return Inst(VD.pair_info(x.code, y.code), Fmt.VOPD, pc, tuple(words[:n]), 4 * n, literal, f,
                vopd=(x, y))


def _decode_dpp(info: OpInfo, fmt: Fmt, f: dict, words: list[int], pc: int, nbase: int) -> Inst:
    """A VALU instruction whose src0 is a DPP code: the DPP dword follows the base encoding.
    The checks are the encodings llvm-mc-19 refuses to disassemble."""
    n = nbase + 1
    def bad(why: str):
        return DecodeError(f"{info.name}: {why}", pc, words[:n], info.name)
    if not D.supports(info):
        raise bad(f"DPP source 0x{f['src0']:x} on an opcode without a DPP form")
    if len(words) < n:
        raise bad("truncated: DPP dword missing")
    vop3 = fmt in (Fmt.VOP3, Fmt.VOP3SD)
    dpp = D.parse(words[nbase], f["src0"], vop3)
    nsrc = len(info.src_bits)
    if vop3:
        unused = [f[f"src{i}"] for i in range(nsrc, 3)]
        if any(unused) or f["neg"] >> nsrc or f.get("abs", 0) >> nsrc:
            raise bad("operand or modifier bits set for a source the opcode does not have")
        if O.LITERAL in (f["src1"], f["src2"]):
            raise bad("a literal operand with DPP")
    elif not dpp.is_dpp8:
        nmods = next((int(x[-1]) for x in info.flags if x.startswith("mods")), 0)
        if (dpp.neg | dpp.abs) >> nmods:
            raise bad("DPP neg/abs bits on a source without modifiers")
    return Inst(info, fmt, pc, tuple(words[:n]), 4 * n, None, f, dpp=dpp)


def decode_program(code: bytes, base: int = 0) -> list[Inst]:
    """Linear sweep over a code blob (little-endian dwords) starting at byte address `base`."""
    if len(code) % 4:
        raise DecodeError(f"code size {len(code)} is not a multiple of 4", base, ())
    words = struct.unpack(f"<{len(code) // 4}I", code)
    out: list[Inst] = []
    i = 0
    while i < len(words):
        inst = decode(words[i:i + 4], base + 4 * i)
        out.append(inst)
        i += inst.size // 4
    return out
