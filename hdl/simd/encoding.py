"""The gfx1200 encoding as the decode stage (:mod:`hdl.simd.decode`) builds it into ROMs and
field logic.

Everything opcode-specific is generated at elaboration time from ``isa.OPCODES`` and the
Python decoder's rules (``isa.decoder``): the format patterns of dword 0 and the opcode field
positions (from ``isa.decoder.fmt_of`` and ``raw_op``), the VOP3 opcode space (the native
VOP3/VOP3SD opcodes and the ``_e64`` forms of VOP1/VOP2/VOPC), the per-opcode properties
(:func:`op_properties`), the encoding's rules (:func:`encoding_rules`), the operand fields of
each format (:func:`operand_fields`) and the legality rules of ``isa.legality`` (which the
model's decoder applies too). Adding an opcode to ``isa/opcodes.py`` adds it once the SIMD
executes it (:data:`EXECUTED`).

Literal rule (as ``isa.decode``): a literal dword follows the base encoding when one of the
first ``len(info.src_bits)`` source fields of the format is 255, or for fmamk/fmaak (K).
"""
from __future__ import annotations

import re

from amaranth.hdl import C, Cat, Const, Mux, Value, unsigned
from amaranth.lib import data, enum

from isa import OPCODES, Fmt, OpInfo
from isa import operands as O
from isa.legality import FIELDS, rules
# The Python decoder's own tables, so that both decoders follow one set of rules.
from isa.decoder import SRC_FIELDS, VMEM_FMTS, fmt_of, raw_op

from .executed import IMPLEMENTED as EXECUTED

__all__ = ["EXECUTED", "FMT_LSB", "op_properties", "format_cubes", "opcode_field", "vop3_space", "breaks_a_rule",
           "operand_fields", "SdstFrom", "VaddrFrom", "encoding_rules", "sdst_sources", "vaddr_dwords"]

FMT_LSB = 23        # the format is a function of dword 0 bits [31:23]


def format_cubes() -> dict[Fmt, list[str]]:
    """Disjoint ``Case`` patterns on dword 0 bits [31:23] for each implemented format.

    Classifies all 512 values with the Python decoder's own ``fmt_of`` and merges them into
    don't-care cubes along a binary decision tree, so that no two patterns overlap (Verilator
    flags overlapping ``casez`` items). VOPD and foreign formats are left out: illegal.
    """
    width = 32 - FMT_LSB
    cls = [fmt_of(v << FMT_LSB) for v in range(1 << width)]
    cls = [None if f == Fmt.VOPD else f for f in cls]
    cubes: dict[Fmt, list[str]] = {}

    def walk(prefix: str) -> None:
        free = width - len(prefix)
        base = int(prefix, 2) << free if prefix else 0
        kinds = set(cls[base:base + (1 << free)])
        if len(kinds) == 1:
            fmt = kinds.pop()
            if fmt is not None:
                cubes.setdefault(fmt, []).append(prefix + "-" * free)
            return
        walk(prefix + "0")
        walk(prefix + "1")

    walk("")
    return cubes


def opcode_field(fmt: Fmt) -> tuple[int, int]:
    """(lsb, width) of the opcode field of dword 0, probed from ``isa.decoder.raw_op``."""
    width = raw_op(fmt, 0xFFFFFFFF).bit_length()
    lsb = next(b for b in range(32) if raw_op(fmt, 1 << b) == 1)
    assert raw_op(fmt, ((1 << width) - 1) << lsb) == (1 << width) - 1
    return lsb, width


_VALU_FMTS = (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC, Fmt.VOP3, Fmt.VOP3SD, Fmt.VOP3P)
_VOP3_FMTS = (Fmt.VOP3, Fmt.VOP3SD)

# SALU ops that leave SCC alone (RDNA 4 ISA guide): everything else in SOP2 writes SCC.
_SOP2_KEEPS_SCC = re.compile(r"^s_(bfm|mul|cselect|pack|add_nc|sub_nc)_|_f32$")

# Decoder-internal intermediate values (one signal, so the simulator updates it at once).
_Temp = data.StructLayout({
    "src0": unsigned(9), "src1": unsigned(9), "src2": unsigned(9),
    "litsel": unsigned(3),       # which of src0..src2 may name the literal (code 255)
    "lit_k": 1,                  # fmamk/fmaak: the literal is the K constant
    "nbase": unsigned(2),        # dwords before the literal
    "dpp_chk": 1,                # src0 must not be a DPP/SDWA code
    "bad": 1,                    # a field breaks a rule of isa.legality
})


def _dw(bits: int) -> int:
    return (bits + 31) // 32


def op_properties(info: OpInfo, enc: Fmt) -> dict:
    """Constant ``DecodedInst`` fields of one opcode in one encoding.

    Parameters
    ----------
    info : isa.OpInfo
        The opcode.
    enc : isa.Fmt
        The encoding actually used: ``info.fmt``, or ``info.vop3_fmt`` for the ``_e64`` form
        of a VOP1/VOP2/VOPC opcode.

    Returns
    -------
    dict
        Field name -> Python value for the fields that do not depend on operand bits
        (``src*_dw``, ``vdst_dw``, ``sdst_dw``, ``data*_dw`` and the implicit-access flags).
        Operand-dependent widths (VGLOBAL ``vaddr_dw``, returning atomics) are set by
        :class:`Decoder` itself.
    """
    name, fl = info.name, info.flags
    p = dict.fromkeys(("src0_dw", "src1_dw", "src2_dw", "vdst_dw", "sdst_dw", "vaddr_dw",
                       "data0_dw", "data1_dw"), 0)
    if enc in _VALU_FMTS or enc in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC):
        for i, bits in enumerate(info.src_bits[:3]):
            p[f"src{i}_dw"] = _dw(bits)
    if enc in _VALU_FMTS:
        if info.fmt == Fmt.VOPC or "sdst" in fl or enc == Fmt.VOP3SD or "carry_out" in fl:
            p["sdst_dw"] = 1             # lane mask, carry-out or readlane result
        if info.fmt != Fmt.VOPC and "sdst" not in fl:
            p["vdst_dw"] = _dw(info.dst_bits)
    elif enc in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPK, Fmt.SMEM):
        p["sdst_dw"] = _dw(info.dst_bits)
    elif enc == Fmt.DS:
        p["vdst_dw"] = _dw(info.dst_bits)
        p["vaddr_dw"] = 1
        for i, bits in enumerate(info.src_bits[1:3]):
            p[f"data{i}_dw"] = _dw(bits)
    elif enc in VMEM_FMTS:
        if info.kind == "vmem_load":
            p["vdst_dw"] = _dw(info.dst_bits)
        if len(info.src_bits) > 1:
            p["data0_dw"] = _dw(info.src_bits[1])
    p["reads_vcc"] = int(("reads_vcc" in fl and info.fmt == Fmt.VOP3)
                         or name.startswith("s_cbranch_vcc"))
    p["writes_exec"] = int("cmpx" in fl or "saveexec" in fl)
    p["reads_scc"] = int("reads_scc" in fl or name.startswith("s_cbranch_scc"))
    p["writes_scc"] = int(
        enc == Fmt.SOPC
        or (enc == Fmt.SOP2 and not _SOP2_KEEPS_SCC.search(name))
        or (enc == Fmt.SOP1 and ("saveexec" in fl or name.startswith(("s_not_", "s_abs_",
                                                                       "s_bcnt"))))
        or (enc == Fmt.SOPK and name.startswith(("s_addk_", "s_cmpk_"))))
    p["reads_dst"] = int(
        "mac" in fl or "writelane" in fl
        or ("d16" in fl and info.kind in ("vmem_load", "ds_load"))   # merged into half a VGPR
        or (enc in _VALU_FMTS and info.dst_bits == 16)      # merged into half a VGPR
        or name.startswith(("s_cmov", "s_bitset", "s_addk_", "s_mulk_")))
    return p


class SdstFrom(enum.Enum, shape=3):
    """Where a scalar destination that is not the format's ``sdst`` field comes from."""
    FIELD = 0       # the format's field (SOP, SMEM), or none
    VOP3SD = 1      # dword 0 bits [14:8]
    EXEC = 2        # v_cmpx: EXEC_LO
    VCC = 3         # VOPC and carry-out _e32 forms: VCC_LO
    LOW = 4         # dword 0 bits [6:0]: VOPC _e64, v_readlane/readfirstlane _e64
    VOP1 = 5        # dword 0 bits [23:17]: v_readfirstlane _e32


class VaddrFrom(enum.Enum, shape=2):
    """The rule for ``vaddr_dw``."""
    FIXED = 0       # the rule's ``vaddr_dw``
    GLOBAL = 1      # ``vaddr_dw`` with saddr "off", else one dword (a 32-bit offset to saddr)
    SCRATCH = 2     # one dword iff the sve bit (dword 1 bit 17) is set


def encoding_rules(info: OpInfo, enc: Fmt) -> dict:
    """What an opcode's encoding decides beyond :func:`op_properties`: ``nlit`` (source fields
    that may name the literal), ``lit_k`` (fmamk/fmaak: the literal is K), ``sdst``
    (:class:`SdstFrom`), ``src2_vcc`` (an _e32 form reads VCC where _e64 names src2),
    ``vaddr`` (:class:`VaddrFrom`) with ``vaddr_dw``, and ``ret_dw`` (a returning atomic's
    destination dwords, written iff th[0]; else 0)."""
    fl = info.flags
    e32 = enc == info.fmt and enc in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC)
    sdst = SdstFrom.VOP3SD if enc == Fmt.VOP3SD else SdstFrom.FIELD
    if info.fmt == Fmt.VOPC:
        sdst = SdstFrom.EXEC if "cmpx" in fl else SdstFrom.VCC if e32 else SdstFrom.LOW
    elif "sdst" in fl:
        sdst = SdstFrom.VOP1 if enc == Fmt.VOP1 else SdstFrom.LOW
    elif e32 and "carry_out" in fl:
        sdst = SdstFrom.VCC
    rules_ = {"nlit": min(len(SRC_FIELDS.get(enc, ())), len(info.src_bits)), "lit_k": int("literal_k" in fl),
              "sdst": sdst, "src2_vcc": int(e32 and len(info.src_bits) == 3), "vaddr": VaddrFrom.FIXED,
              "vaddr_dw": op_properties(info, enc)["vaddr_dw"], "ret_dw": 0}
    if enc in VMEM_FMTS and info.kind != "cache":
        rules_["vaddr"] = {Fmt.VGLOBAL: VaddrFrom.GLOBAL, Fmt.VSCRATCH: VaddrFrom.SCRATCH}.get(enc, VaddrFrom.FIXED)
        rules_["vaddr_dw"] = _dw(info.src_bits[0])
        rules_["ret_dw"] = _dw(info.dst_bits) if "th_return" in fl else 0
    return rules_


def sdst_sources(w0) -> dict:
    """The scalar destination for each :class:`SdstFrom` but ``FIELD``, from dword 0."""
    return {SdstFrom.VOP3SD: w0[8:15], SdstFrom.EXEC: C(O.EXEC_LO, 7), SdstFrom.VCC: C(O.VCC_LO, 7),
            SdstFrom.LOW: w0[0:7], SdstFrom.VOP1: w0[17:24]}


def vaddr_dwords(vaddr, vaddr_dw, w0, w1):
    """``vaddr_dw`` by the :class:`VaddrFrom` rule ``vaddr`` (a constant or a signal)."""
    return Mux(vaddr == VaddrFrom.GLOBAL, Mux(w0[0:7] == O.SOFFSET_NONE, vaddr_dw, 1),
               Mux(vaddr == VaddrFrom.SCRATCH, w1[17], vaddr_dw))


def vop3_space() -> dict[int, OpInfo]:
    """VOP3 opcode -> OpInfo over native VOP3/VOP3SD ops and the _e64 forms of VOP1/2/C."""
    space: dict[int, OpInfo] = {}
    for info in OPCODES:
        code = info.op if info.fmt in _VOP3_FMTS else info.vop3_op
        if code is None:
            continue
        assert code not in space, (info.name, space.get(code))
        space[code] = info
    return space


def _in_ranges(v, ranges) -> Value:
    """Whether ``v`` lies in one of the inclusive ``ranges``: a bit of a constant table, which
    maps to a few LUTs where each bound would be a carry chain."""
    top = (1 << len(v)) - 1
    table = sum(1 << x for lo, hi in ranges for x in range(lo, min(hi, top) + 1))
    if table in (0, (1 << (top + 1)) - 1):
        return C(table != 0, 1)
    return Const(table, top + 1).bit_select(v, 1)


def breaks_a_rule(info: OpInfo, enc: Fmt, words):
    """1 when a field of the instruction breaks a rule of ``isa.legality`` (the model's decoder
    refuses such a word)."""
    bad = []
    for r in rules(info, enc):
        d, lsb, width = FIELDS[enc][r.field]
        v = words[d][lsb:lsb + width]
        if r.mask & ((1 << width) - 1):
            bad.append((v & (r.mask & ((1 << width) - 1))).any())
        if r.ranges:
            bad.append(_in_ranges(v, r.ranges))
    return Cat(*bad).any() if bad else C(0, 1)


def operand_fields(fmt, inst, t, w0, w1, w2) -> list:
    """Operand fields of one format (isa.decoder._fields): statements on ``inst`` and on ``t.src0``,
    ``t.src1``, ``t.src2`` (the 9-bit source codes)."""
    if fmt == Fmt.SOP2:
        return [t.src0.eq(w0[0:8]), t.src1.eq(w0[8:16]), inst.sdst.eq(w0[16:23])]
    if fmt == Fmt.SOPK:
        return [inst.sdst.eq(w0[16:23]), inst.simm16.eq(w0[0:16])]
    if fmt == Fmt.SOP1:
        return [t.src0.eq(w0[0:8]), inst.sdst.eq(w0[16:23])]
    if fmt == Fmt.SOPC:
        return [t.src0.eq(w0[0:8]), t.src1.eq(w0[8:16])]
    if fmt == Fmt.SOPP:
        return [inst.simm16.eq(w0[0:16])]
    if fmt == Fmt.SMEM:
        return [inst.sdst.eq(w0[6:13]), inst.sbase.eq(w0[0:6]), inst.soffset.eq(w1[25:32]),
                inst.offset.eq(w1[0:24].as_signed()), inst.th.eq(w0[23:25]),
                inst.scope.eq(w0[21:23])]
    if fmt == Fmt.VOP1:
        return [inst.vdst.eq(w0[17:25]), t.src0.eq(w0[0:9])]
    if fmt in (Fmt.VOP2, Fmt.VOPC):
        vsrc1 = Cat(w0[9:17], C(1, 1))          # VGPR code 256 + v
        out = [t.src0.eq(w0[0:9]), t.src1.eq(vsrc1)]
        return out + ([inst.vdst.eq(w0[17:25])] if fmt == Fmt.VOP2 else [])
    if fmt == Fmt.VOP3:
        return [inst.vdst.eq(w0[0:8]), t.src0.eq(w1[0:9]), t.src1.eq(w1[9:18]),
                t.src2.eq(w1[18:27]), inst.neg.eq(w1[29:32]), inst.omod.eq(w1[27:29]),
                inst.clamp.eq(w0[15]), inst.abs.eq(w0[8:11]), inst.opsel.eq(w0[11:15])]
    if fmt == Fmt.VOP3P:        # neg_hi and op_sel_hi in the VOP3 fields of their bits
        return [inst.vdst.eq(w0[0:8]), t.src0.eq(w1[0:9]), t.src1.eq(w1[9:18]),
                t.src2.eq(w1[18:27]), inst.neg.eq(w1[29:32]), inst.clamp.eq(w0[15]),
                inst.abs.eq(w0[8:11]), inst.opsel.eq(w0[11:15]), inst.omod.eq(w1[27:29])]
    if fmt == Fmt.DS:
        return [inst.offset0.eq(w0[0:8]), inst.offset1.eq(w0[8:16]),
                inst.offset.eq(w0[0:16]), inst.vdst.eq(w1[24:32]), inst.data1.eq(w1[16:24]),
                inst.data0.eq(w1[8:16]), inst.vaddr.eq(w1[0:8])]
    if fmt in VMEM_FMTS:
        return [inst.vdst.eq(w1[0:8]), inst.data0.eq(w1[23:31]), inst.vaddr.eq(w2[0:8]),
                inst.saddr.eq(w0[0:7]), inst.offset.eq(w2[8:32].as_signed()),
                inst.th.eq(w1[20:23]), inst.scope.eq(w1[18:20])]
    raise AssertionError(fmt)
