"""Data layouts shared between the SIMD's units.

Only the decoder's output lives here so far: :data:`DecodedInst`, produced by
:class:`hdl.decoder.Decoder` and carried through the instruction buffer and issue
stages. A register of this layout reset to zero reads as an empty slot
(``valid = 0, illegal = 0``).
"""
from __future__ import annotations

from amaranth.hdl import signed, unsigned
from amaranth.lib import data

from .isa_tables import FmtId, Kind, OpId

__all__ = ["DecodedInst"]

#: One decoded gfx1200 instruction (docs/simd.md, "decoder").
#:
#: Fields a format does not have are 0. Register-number conventions:
#:
#: * ``src0``/``src1``/``src2``: 9-bit source operand codes (``isa.operands``): 0–255 scalar
#:   codes, 256–511 VGPRs. SOP sources are the 8-bit codes; VOP2/VOPC ``vsrc1`` becomes
#:   ``256 + v``; the implicit VCC carry-in / select of the ``_e32`` forms of
#:   ``v_cndmask_b32`` and ``v_{add,sub,subrev}_co_ci_u32`` becomes ``src2 = 106`` (VCC_LO),
#:   so ``_e32`` and ``_e64`` forms look the same. Code 255 means "the literal".
#:   ``srcN_dw`` is the width of source N in dwords, 0 when the instruction does not read it.
#: * ``vdst``: the raw 8-bit VGPR destination field (VOP1/VOP2/VOP3/DS/VGLOBAL);
#:   ``vdst_dw`` dwords written there (0 = no VGPR is written).
#: * ``sdst``: 7-bit SGPR code of the scalar destination: SOP sdst, SMEM sdata, VOP3SD sdst,
#:   the lane mask of VOPC (``_e32``: 106 = VCC_LO; ``v_cmpx_*``: 126 = EXEC_LO), the carry-out
#:   of ``_e32`` ``v_*_co_ci_u32`` (106), and the destination of ``v_readlane_b32`` /
#:   ``v_readfirstlane_b32``; ``sdst_dw`` dwords written there (0 = none; up to 16).
#: * Memory: ``vaddr`` (DS ``addr``, VGLOBAL ``vaddr``) with ``vaddr_dw`` (VGLOBAL: 2 when
#:   ``saddr`` is 0x7C "off", else 1), ``data0``/``data1`` (VGLOBAL data is ``data0``) with
#:   ``data0_dw``/``data1_dw``, ``offset`` (SMEM/VGLOBAL ioffset sign-extended; DS
#:   ``offset1:offset0``), ``sbase`` (SGPR pair index: register ``2 * sbase``), ``soffset`` and
#:   ``saddr`` (0x7C = none).
#:
#: Implicit register accesses (not visible in the operand fields above):
#: ``reads_vcc`` (``v_div_fmas_f32``, ``s_cbranch_vcc*``), ``writes_exec`` (``v_cmpx_*``,
#: saveexec/wrexec), ``reads_scc`` / ``writes_scc`` (SALU, ``s_cbranch_scc*``) and
#: ``reads_dst`` (the old destination is an input: MAC ops, ``v_writelane_b32``, 16-bit VALU
#: results and d16 loads merged into half a VGPR, ``s_cmov*``, ``s_bitset*``, ``s_addk``/``s_mulk``/
#: ``s_cmovk``).
DecodedInst = data.StructLayout({
    "valid": 1,                  # a legal instruction was decoded
    "illegal": 1,                # the words are not an instruction this core implements
    "op": OpId,                  # OpId.NONE when illegal
    "kind": Kind,                # Kind.ILLEGAL when illegal
    "fmt": FmtId,                # encoding used (VOP3/VOP3SD for an _e64 form)
    "size": unsigned(2),         # dwords, literal included (1-3)
    "src0": unsigned(9),
    "src1": unsigned(9),
    "src2": unsigned(9),
    "vdst": unsigned(8),
    "sdst": unsigned(7),
    "literal": unsigned(32),     # the literal dword (0 when there is none)
    "has_literal": 1,
    "abs": unsigned(3),          # VOP3 input modifiers, bit i for source i
    "neg": unsigned(3),
    "opsel": unsigned(4),
    "clamp": 1,
    "omod": unsigned(2),
    "simm16": unsigned(16),      # SOPK / SOPP immediate
    "offset": signed(24),
    "offset0": unsigned(8),
    "offset1": unsigned(8),
    "saddr": unsigned(7),
    "sbase": unsigned(6),
    "soffset": unsigned(7),
    "vaddr": unsigned(8),
    "data0": unsigned(8),
    "data1": unsigned(8),
    "th": unsigned(3),           # cache temporal hint (SMEM: 2 bits)
    "scope": unsigned(2),
    # operand widths in dwords for the scoreboard (0 = operand not used)
    "src0_dw": unsigned(2),
    "src1_dw": unsigned(2),
    "src2_dw": unsigned(2),
    "vdst_dw": unsigned(3),
    "sdst_dw": unsigned(5),
    "vaddr_dw": unsigned(2),
    "data0_dw": unsigned(3),
    "data1_dw": unsigned(3),
    # implicit register accesses
    "reads_vcc": 1,
    "writes_exec": 1,
    "reads_scc": 1,
    "writes_scc": 1,
    "reads_dst": 1,
})
