"""Field rules a gfx1200 instruction word must pass once its format and opcode are known.

``isa.decode`` refuses a word that breaks a rule (``isa.decoder.check``): it is no
instruction, LLVM 19's disassembler (``llvm-mc -mcpu=gfx1200 -disassemble``) rejects it or
prints an ``/*Invalid register*/`` or ``/*Invalid immediate*/`` operand. A few rules
(``named``) refuse words LLVM decodes but the project does not execute as LLVM reads them.
tests/test_illegal_encodings.py checks every rule against LLVM over every opcode (each field
bit set alone) and every operand code.

* operand codes the RDNA 4 ISA guide reserves (209-232, 249; LDS_DIRECT 254 and the DPP/SDWA
  codes where they cannot appear); a 64-bit scalar operand at VCC_HI, M0 or EXEC_HI; a VGPR
  range past v255;
* fields an operation does not use must be 0: a VOP3/VOP3P source field and its modifier bits
  beyond the opcode's sources, DS data/vdst fields and bit 17, VOP3P bit 23, ``sve`` outside
  scratch, the operand fields of ``v_nop``/``v_pipeflush``, the ``simm16`` of operand-less SOPP
  ops; ``saddr`` of FLAT and of the cache invalidations is ``off``; VOP3 clamp/omod only where
  the opcode has them;
* register classes: a VALU scalar destination is an SGPR code; lane reads read a VGPR, lane
  selects and carry-ins name none; SMEM destinations fit the SGPRs (and, ``named``, are
  aligned).

Not a rule: a 16-bit VOP1/VOP2/VOPC (``_e32``) operand at v128-v255 names the high half of
v(N-128) (RDNA 4 ISA guide, true16), which the model executes; LLVM 19 decodes it only with
``-mattr=+real-true16``.

Each rule is a :class:`Rule` on one field, so that the RTL decoder (hdl/simd/decoder.py) builds the
same checks from :func:`rules` as hardware.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from .opcodes import Fmt, OpInfo
from . import operands as O

__all__ = ["Rule", "FIELDS", "rules", "field_value", "violation", "unsupported"]

_VOP3_FIELDS = {"vdst": (0, 0, 8), "abs": (0, 8, 3), "opsel": (0, 11, 4), "clamp": (0, 15, 1),
                "src0": (1, 0, 9), "src1": (1, 9, 9), "src2": (1, 18, 9), "omod": (1, 27, 2),
                "neg": (1, 29, 3)}
_VMEM_FIELDS = {"saddr": (0, 0, 7), "sve": (1, 17, 1)}
#: (dword, lsb, width) of each field a rule can name, per encoding
FIELDS = {
    Fmt.SOP1: {"ssrc0": (0, 0, 8), "sdst": (0, 16, 7)},
    Fmt.SOP2: {"ssrc0": (0, 0, 8), "ssrc1": (0, 8, 8), "sdst": (0, 16, 7)},
    Fmt.SOPC: {"ssrc0": (0, 0, 8), "ssrc1": (0, 8, 8)},
    Fmt.SOPK: {"sdst": (0, 16, 7), "simm16": (0, 0, 16)},
    Fmt.SOPP: {"simm16": (0, 0, 16)},
    Fmt.SMEM: {"sdata": (0, 6, 7)},
    Fmt.VOP1: {"src0": (0, 0, 9), "vdst": (0, 17, 8)},
    Fmt.VOP2: {"src0": (0, 0, 9), "vsrc1": (0, 9, 8), "vdst": (0, 17, 8)},
    Fmt.VOPC: {"src0": (0, 0, 9), "vsrc1": (0, 9, 8)},
    Fmt.VOP3: _VOP3_FIELDS,
    Fmt.VOP3SD: {k: v for k, v in _VOP3_FIELDS.items() if k not in ("abs", "opsel")},
    Fmt.VOP3P: {**{k: v for k, v in _VOP3_FIELDS.items() if k != "omod"}, "neg_hi": (0, 8, 3),
                "opsel": (0, 11, 3), "bit23": (0, 23, 1)},
    Fmt.DS: {"bit17": (0, 17, 1), "data0": (1, 8, 8), "data1": (1, 16, 8), "vdst": (1, 24, 8)},
    Fmt.VGLOBAL: _VMEM_FIELDS, Fmt.VSCRATCH: _VMEM_FIELDS, Fmt.VFLAT: _VMEM_FIELDS,
}


@dataclass(frozen=True)
class Rule:
    """Field ``field`` must avoid ``ranges`` (inclusive (lo, hi) pairs) and have no bit of
    ``mask`` set. ``named``: LLVM decodes such a word; the project refuses it by name."""
    field: str
    why: str
    ranges: tuple[tuple[int, int], ...] = ()
    mask: int = 0
    named: bool = False

    def broken_by(self, value: int) -> bool:
        return bool(value & self.mask) or any(lo <= value <= hi for lo, hi in self.ranges)


def _zero(field: str, why: str, mask: int = -1) -> Rule:
    return Rule(field, why, mask=mask & 0xFFFF)


def _runs(values) -> tuple[tuple[int, int], ...]:
    """Sorted integers as inclusive ranges."""
    out: list[list[int]] = []
    for v in sorted(values):
        if out and v == out[-1][1] + 1:
            out[-1][1] = v
        else:
            out.append([v, v])
    return tuple((a, b) for a, b in out)


_RESERVED = ((209, 232), (249, 249))
_DPP = ((233, 234), (250, 250))                        # DPP8, DPP8 FI, DPP16 (SDWA 249 is reserved)
_PAIR_BAD = (O.VCC_HI, O.M0, O.EXEC_HI)                # cannot start a 64-bit scalar operand
_VOP3_LIKE = (Fmt.VOP3, Fmt.VOP3SD, Fmt.VOP3P)
_NO_OPERAND_SOPP = frozenset({"s_wait_idle", "s_code_end", "s_barrier_leave", "s_icache_inv",
                              "s_endpgm_saved", "s_wakeup", "s_ttracedata"})
_NO_OPERAND_VALU = frozenset({"v_nop", "v_pipeflush"})
_SGPR_SRC0 = frozenset({"s_setpc_b64", "s_movrels_b32", "s_movrels_b64", "s_rfe_b64"})
_VGPR_SRC0 = frozenset({"v_movrels_b32", "v_movrelsd_b32", "v_movrelsd_2_b32", "v_swap_b32", "v_swaprel_b32",
                        "v_permlane64_b32", "v_permlane16_b32", "v_permlanex16_b32", "v_permlane16_var_b32",
                        "v_permlanex16_var_b32"})
_LANE_READS = frozenset({"v_readlane_b32", "v_readfirstlane_b32"})
# codes LLVM also decodes as the lane read of v_readlane/v_readfirstlane, or as a lane mask
_LANE_READ_ODD = frozenset({O.NULL, *range(235, 240), *range(251, 255)})
_ODD_SDST = frozenset({*range(235, 240), *range(251, 254)})
# sources that name no VGPR (lane selects, the written value of v_writelane)
_SCALAR_SRCS = {"v_writelane_b32": (0, 1), "v_readlane_b32": (1,), "v_permlane16_b32": (1, 2),
                "v_permlanex16_b32": (1, 2)}


def _source_rules(field: str, bits: int, scalar: bool, first: bool) -> list[Rule]:
    """Codes a source operand field of the given width must avoid."""
    bad = list(_RESERVED)
    if scalar or not first:
        bad += _DPP
    if scalar or bits == 64:
        bad.append((254, 254))                         # LDS_DIRECT
    if bits == 64:
        bad += [(c, c) for c in _PAIR_BAD]
    if bits > 32 and not scalar:
        bad.append((512 - bits // 32 + 1, 511))        # a VGPR range past v255
    return [Rule(field, f"operand code outside the {bits}-bit source operands", tuple(sorted(bad)))]


def _sources(info: OpInfo, fmt: Fmt) -> list[tuple[str, int]]:
    """(field, width) of each source operand field the opcode reads in this encoding."""
    n = len(info.src_bits)
    if fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC):
        return list(zip(("ssrc0", "ssrc1"), info.src_bits))
    if fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC):
        return [("src0", info.src_bits[0])] if n else []
    if fmt in _VOP3_LIKE:
        return [(f"src{i}", b) for i, b in enumerate(info.src_bits[:3])]
    return []


def _operand_rules(info: OpInfo, fmt: Fmt, dpp: bool) -> list[Rule]:
    scalar = fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC)
    out = []
    for i, (field, bits) in enumerate(_sources(info, fmt)):
        if not (dpp and i == 0):
            out += _source_rules(field, bits, scalar, i == 0)
    if fmt in (Fmt.VOP2, Fmt.VOPC) and len(info.src_bits) > 1 and info.src_bits[1] > 32:
        out.append(Rule("vsrc1", "a VGPR range past v255", ((256 - info.src_bits[1] // 32 + 1, 255),)))
    if fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPK) and info.dst_bits == 64:
        out.append(Rule("sdst", "a 64-bit destination at VCC_HI, M0 or EXEC_HI", tuple((c, c) for c in _PAIR_BAD)))
    if info.name in _SGPR_SRC0:
        out.append(Rule("ssrc0", "the source must be an SGPR pair", ((128, 255),)))
    return out


def _unused_rules(info: OpInfo, fmt: Fmt) -> list[Rule]:
    n = len(info.src_bits)
    out = []
    if fmt in _VOP3_LIKE:
        why = "bits of a source the opcode does not have"
        out += [_zero(f"src{i}", why) for i in range(n, 3)]
        out += [_zero("neg", why, 7 << n & 7)]
        if fmt == Fmt.VOP3:
            out.append(_zero("abs", why, 7 << n & 7))
        if fmt == Fmt.VOP3P:
            out += [_zero("bit23", "reserved bit 23 of VOP3P"), _zero("neg_hi", why, 7 << n & 7)]
        if fmt == Fmt.VOP3P or "opsel" in info.flags or "fi_bc" in info.flags:
            out.append(_zero("opsel", why, 7 << n & 7))
    if fmt == Fmt.DS:
        out.append(_zero("bit17", "reserved bit 17 of DS"))
        why = "a data or vdst field the opcode does not use"
        out += [_zero(k, why) for k, unused in (("data0", n < 2), ("data1", n < 3), ("vdst", not info.dst_bits))
                if unused]
    if fmt in (Fmt.VGLOBAL, Fmt.VFLAT):
        out.append(_zero("sve", "sve outside scratch"))
        if fmt == Fmt.VFLAT or info.kind == "cache":
            out.append(Rule("saddr", "saddr is not off", ((0, O.SOFFSET_NONE - 1), (O.SOFFSET_NONE + 1, 127))))
    if info.name in _NO_OPERAND_SOPP:
        out.append(_zero("simm16", "simm16 of an operand-less instruction"))
    if info.name in _NO_OPERAND_VALU:
        out.append(_zero("vdst", "an operand field of an operand-less instruction"))
        if fmt != Fmt.VOP1:
            out.append(_zero("src0", "an operand field of an operand-less instruction"))
    if fmt in (Fmt.VOP3, Fmt.VOP3SD):
        if "clamp" not in info.flags:
            out.append(_zero("clamp", "clamp on an opcode without it"))
        if "omod" not in info.flags:
            out.append(_zero("omod", "omod on an opcode without it"))
    return out


def _class_rules(info: OpInfo, fmt: Fmt, dpp: bool) -> list[Rule]:
    fl, name, out = info.flags, info.name, []
    sdst_why = "a scalar destination code that is no SGPR"
    if fmt == Fmt.VOP1 and "sdst" in fl:
        out.append(Rule("vdst", sdst_why, ((128, 255),)))
    if fmt in (Fmt.VOP3, Fmt.VOP3SD) and not dpp:
        if (info.fmt == Fmt.VOPC and "cmpx" not in fl) or "sdst" in fl:
            out.append(Rule("vdst", sdst_why, _runs(set(range(128, 256)) - _ODD_SDST)))
            if info.fmt == Fmt.VOPC:
                out.append(Rule("vdst", "a lane-mask destination the project does not support",
                                _runs(_ODD_SDST), named=True))
        scalar_srcs = range(len(info.src_bits)) if name.startswith("v_s_") else _SCALAR_SRCS.get(name, ())
        out += [Rule(f"src{i}", "a VGPR where the opcode takes a scalar operand", ((256, 511),)) for i in scalar_srcs]
        carry_in = name.startswith("v_cndmask") or (info.fmt == Fmt.VOP2 and "reads_vcc" in fl)
        if carry_in and len(info.src_bits) == 3:
            out.append(Rule("src2", "the carry/condition source is no SGPR", ((128, 511),)))
    if name in _LANE_READS:
        out.append(Rule("src0", "the lane read is not a VGPR", _runs(set(range(256)) - _LANE_READ_ODD)))
    elif name in _VGPR_SRC0 and not dpp:
        out.append(Rule("src0", "src0 is not a VGPR", ((0, 255),)))
    if fmt == Fmt.SMEM and info.dst_bits:
        n = info.dst_bits // 32
        out.append(Rule("sdata", f"sdata cannot hold {n} dwords",
                        _runs(c for c in range(128) if not _sdata_fits(c, n))))
        if n > 1:
            out.append(Rule("sdata", "a misaligned SGPR destination range is not supported",
                            mask=(2 if n == 2 else 4) - 1, named=True))
    if fmt == Fmt.SMEM and ("prefetch" in name or "probe" in name):
        out.append(Rule("sdata", "the sdata immediate of a probe or prefetch is above 31", ((32, 127),)))
    if fmt == Fmt.VGLOBAL:
        out.append(Rule("saddr", "saddr is no 64-bit scalar address", tuple((c, c) for c in _PAIR_BAD)))
    if fmt == Fmt.VSCRATCH:
        out.append(Rule("saddr", "saddr is no scalar address", ((O.EXEC_HI, O.EXEC_HI),)))
    return out


def _sdata_fits(code: int, n: int) -> bool:
    """An SMEM destination of n dwords at ``code`` (LLVM reads a misaligned one aligned down)."""
    if code == O.NULL or n == 1:
        return code <= O.NULL
    code -= code % (2 if n == 2 else 4)
    if code <= O.SGPR_MAX:
        return code + n - 1 <= O.SGPR_MAX
    return (code == O.VCC_LO and n == 2) or (O.TTMP0 <= code and code + n - 1 < O.TTMP0 + 16)


def _unused_vop3_mods(info: OpInfo, fmt: Fmt) -> list[Rule]:
    """VOP3 neg/abs on a source the opcode's flags give no such modifier: LLVM decodes some
    (on the 16-bit integer ops, v_ldexp); the model does not execute them."""
    if fmt not in (Fmt.VOP3, Fmt.VOP3SD):
        return []
    fl = info.flags
    nmods = next((int(x[-1]) for x in fl if x.startswith("mods")), 0)
    why = "a source modifier the opcode does not have is not supported"
    out = [Rule("neg", why, mask=7 & ~((1 << nmods) - 1 if "neg" in fl else 0), named=True)]
    if fmt == Fmt.VOP3:
        out.append(Rule("abs", why, mask=7 & ~((1 << nmods) - 1 if "abs" in fl else 0), named=True))
    return out


@functools.lru_cache(maxsize=None)
def rules(info: OpInfo, fmt: Fmt, dpp: bool = False) -> tuple[Rule, ...]:
    """Every rule of ``info`` in encoding ``fmt`` (``dpp``: src0 holds a DPP code)."""
    return tuple(_operand_rules(info, fmt, dpp) + _unused_rules(info, fmt) + _class_rules(info, fmt, dpp)
                 + ([] if dpp else _unused_vop3_mods(info, fmt)))


def field_value(fmt: Fmt, field: str, words) -> int:
    d, lsb, width = FIELDS[fmt][field]
    return words[d] >> lsb & ((1 << width) - 1)


def _broken(inst, named: bool) -> str | None:
    for r in rules(inst.info, inst.fmt, inst.dpp is not None):
        if r.named == named and r.broken_by(field_value(inst.fmt, r.field, inst.words)):
            return f"{r.why} ({r.field} = {field_value(inst.fmt, r.field, inst.words)})"
    return None


def violation(inst) -> str | None:
    """Why the decoded ``inst`` (an ``isa.Inst``) is no gfx1200 instruction, or None."""
    return _broken(inst, False)


def unsupported(inst) -> str | None:
    """Why LLVM decodes ``inst`` but the project refuses it, or None."""
    return _broken(inst, True)

