"""The SIMD's decode stage: one instruction a cycle from two ROMs (docs/simd.md).

A SIMD decodes once per issued instruction, after wave selection, so one decoder serves every
wave slot. What depends on the opcode alone is read from block RAM, and logic only extracts
fields:

* **ROM A** (``{format, opcode} -> OpRow``): the :class:`~hdl.isa_tables.OpId` and what depends
  on the encoding (``_e32`` or ``_e64``): which legality rule set applies, how many source
  fields may name the literal, where the scalar destination comes from, the address width
  rule of a memory instruction. Its address is the format's base plus the opcode field; the
  formats' opcode ranges are packed one after the other, each as long as its highest
  opcode the SIMD executes (1,916 rows for gfx1200: a 2K-row RAM).
* **ROM B** (``OpId -> PropRow``): the :class:`~hdl.isa_tables.Kind` and the operand widths
  and implicit register accesses of :func:`hdl.simd.decoder.op_properties`, which do not
  depend on the encoding.

Pipeline: the cycle a window is taken, its format is found from dword 0 bits [31:23] and
ROM A's address formed; the next cycle ROM A's row gives ROM B's address while the fields are
extracted and the legality rules checked; the cycle after, ROM B's row completes the
:data:`~hdl.layouts.DecodedInst`. A window taken at cycle *t* leaves at *t* + 2, one a cycle,
and the stage holds while ``o`` is not ready. Like :class:`hdl.simd.decoder.Decoder`, it
decodes every word as ``isa.decode`` does, field for field, and refuses what the SIMD does
not execute (``tests/test_decode.py``).
"""
from __future__ import annotations

import types

from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from isa import OPCODES, Fmt, OpInfo, by_name
from isa import operands as O
from isa.decoder import BASE_WORDS, SRC_FIELDS
from isa.dpp import CODES as DPP_CODES
from isa.legality import FIELDS, rules
from isa.vopd import BASE as VOPD_BASE, Y_ONLY as VOPD_Y_ONLY

from .encoding import (EXECUTED, FMT_LSB, SdstFrom, VaddrFrom, breaks_a_rule, encoding_rules, format_cubes,
                      op_properties, opcode_field, operand_fields, sdst_sources, vaddr_dwords, vop3_space)
from ..isa_tables import FmtId, Kind, OpId
from ..layouts import ADDR, DecodedInst, DecodeIn, DecodeOut

__all__ = ["DecodeStage", "OpRow", "PropRow", "rom_a", "rom_b"]


#: The props of :func:`op_properties` in ROM B (``vaddr_dw`` is ROM A's: it follows the encoding;
#: :func:`~hdl.simd.decoder.encoding_rules` gives ROM A the rest).
_PROPS = ("src0_dw", "src1_dw", "src2_dw", "vdst_dw", "sdst_dw", "data0_dw", "data1_dw",
          "reads_vcc", "writes_exec", "reads_scc", "writes_scc", "reads_dst")


def _rule_sets() -> list[tuple]:
    """The distinct (encoding, legality rules) of the executed opcodes, in a fixed order."""
    seen = {}
    for info in OPCODES:
        if info.name not in EXECUTED:
            continue
        for enc in [info.fmt] + ([info.vop3_fmt] if info.vop3_op is not None else []):
            key = _rule_key(info, enc)
            seen.setdefault(key, (info, enc))
    return list(seen.values())


def _rule_key(info, enc) -> tuple:
    return tuple(sorted((FIELDS[enc][r.field], r.mask, tuple(r.ranges)) for r in rules(info, enc)))


_RULES = _rule_sets()
_RULE_ID = {_rule_key(info, enc): k for k, (info, enc) in enumerate(_RULES)}

#: ROM A's row.
OpRow = data.StructLayout({
    "op": OpId,                 # NONE: an opcode the SIMD does not execute
    "rule": range(len(_RULES)),  # the legality rule set (``isa.legality``) of this encoding
    "nlit": 2,                  # source fields that may name the literal
    "lit_k": 1,                 # fmamk/fmaak: the literal is the K constant
    "sdst": SdstFrom,
    "src2_vcc": 1,              # an _e32 form that reads VCC where _e64 names src2
    "vaddr": VaddrFrom,
    "vaddr_dw": 2,
})

#: The fields of :data:`~hdl.layouts.DecodedInst` that stage 2 forms (ROM B gives the rest).
_Fields = data.StructLayout({k: f.shape for k, f in DecodedInst if k not in ("kind", *_PROPS)})

#: ROM B's row.
PropRow = data.StructLayout({"kind": Kind, **{k: DecodedInst[k].shape for k in _PROPS},
                             "ret_dw": 2})     # a returning atomic's vdst dwords, written iff th[0]


def _formats() -> list[tuple[Fmt, int, int, list]]:
    """(format, ROM A base, rows, [(opcode, OpInfo, encoding)]) per format, packed."""
    out, base = [], 0
    for fmt in format_cubes():
        if fmt == Fmt.VOP3:
            ops = sorted(vop3_space().items(), key=lambda kv: kv[0])
        else:
            ops = sorted(((i.op, i) for i in OPCODES if i.fmt == fmt), key=lambda kv: kv[0])
        ops = [(code, info, info.vop3_fmt if fmt == Fmt.VOP3 else fmt)
               for code, info in ops if info.name in EXECUTED]
        rows = max((code for code, _, _ in ops), default=-1) + 1
        out.append((fmt, base, rows, ops))
        base += rows
    return out


_FORMATS = _formats()


def _op_row(info, enc) -> dict:
    rules_ = encoding_rules(info, enc)
    return {"op": OpId[info.name.upper()], "rule": _RULE_ID[_rule_key(info, enc)],
            **{k: v for k, v in rules_.items() if k in OpRow.members}}


def rom_a() -> list[int]:
    """ROM A's rows as integers (:data:`OpRow`), every format's opcodes at its base."""
    rows = [0] * sum(n for _, _, n, _ in _FORMATS)
    for _, base, _, ops in _FORMATS:
        for code, info, enc in ops:
            rows[base + code] = OpRow.const(_op_row(info, enc)).as_value().value
    return rows


def rom_b() -> list[int]:
    """ROM B's rows as integers (:data:`PropRow`), by OpId."""
    rows = [0] * (1 << OpId.as_shape().width)
    for info in OPCODES:
        if info.name in EXECUTED:
            props = op_properties(info, info.fmt)
            row = {"kind": Kind[info.kind.upper()], **{k: props[k] for k in _PROPS},
                   "ret_dw": encoding_rules(info, info.fmt)["ret_dw"]}
            rows[OpId[info.name.upper()].value] = PropRow.const(row).as_value().value
    return rows


class DecodeStage(wiring.Component):
    """Decode one gfx1200 instruction a cycle, two cycles after it is taken.

    Parameters
    ----------
    tag_width : int
        Width of the tag carried with each instruction (the wave slot).
    pc_width : int
        Width of the byte PCs.

    Attributes
    ----------
    i : In(stream.Signature(DecodeIn(tag_width)))
        The instruction window. Taken when ``o`` is ready or the stage is not full.
    o : Out(stream.Signature(DecodeOut(tag_width)))
        The decoded instruction (:data:`~hdl.layouts.DecodedInst`; when ``illegal``,
        ``op`` is ``NONE``, ``kind`` ``ILLEGAL`` and the other fields unspecified), its PC, its
        fall-through PC (``pc + 4 * size``), the branch target ``pc + 4 + 4 * simm16`` and the tag.
    """

    def __init__(self, tag_width: int = 1, pc_width: int = ADDR):
        self.tag_width, self.pc_width = tag_width, pc_width
        super().__init__({"i": In(stream.Signature(DecodeIn(tag_width, pc_width))),
                          "o": Out(stream.Signature(DecodeOut(tag_width, pc_width)))})

    def elaborate(self, platform):
        m = Module()
        tw, pw = self.tag_width, self.pc_width
        rows_a = rom_a()
        m.submodules.rom_a = ra = memory.Memory(shape=OpRow.size, depth=1 << ceil_log2(len(rows_a)), init=rows_a)
        rows_b = rom_b()
        m.submodules.rom_b = rb = memory.Memory(shape=PropRow.size, depth=len(rows_b), init=rows_b)
        port_a, port_b = ra.read_port(), rb.read_port()

        # the pipeline moves when its last stage is empty or taken
        s2 = Signal(data.StructLayout({"valid": 1, "known": 1, "fmt": FmtId, "nbase": 2, "dpp_chk": 1,
                                       "dual": 1, "vsize": 2, **DecodeIn(tw, pw).members}))
        s3 = Signal(data.StructLayout({"valid": 1, "inst": _Fields, "th0": 1, "pc": pw,
                                       "next_pc": pw, "target": pw, "tag": tw, "dual": 1, "second": 1}))
        move = ~s3.valid | self.o.ready
        m.d.comb += [self.i.ready.eq(move), port_a.en.eq(move), port_b.en.eq(move)]

        # stage 1: a VOPD half as its VOP1/VOP2 instruction; the format and ROM A's address
        # from dword 0
        ip = self.i.payload
        dual, vsize, in_words = Signal(), Signal(2), Signal(96)
        m.d.comb += [dual.eq(ip.words[26:32] == _VOPD), in_words.eq(ip.words)]
        with m.If(dual):
            m.d.comb += _vopd_half(m, ip.words, ip.second, in_words, vsize)
        w0 = in_words[:32]
        # one adder and one compare after the format's select, not one per format
        fmt_id, nbase, dpp_chk = Signal(FmtId), Signal(2), Signal()
        code, base, rows = Signal(10), Signal(range(len(rows_a) + 1)), Signal(range(1025))
        with m.Switch(w0[FMT_LSB:32]):
            for fmt, fbase, frows, _ in _FORMATS:
                with m.Case(*format_cubes()[fmt]):
                    lsb, width = opcode_field(fmt)
                    m.d.comb += [code.eq(w0[lsb:lsb + width]), base.eq(fbase), rows.eq(frows),
                                 fmt_id.eq(FmtId[fmt.name]), nbase.eq(BASE_WORDS[fmt]),
                                 dpp_chk.eq("src0" in SRC_FIELDS.get(fmt, ()))]
        known = code < rows
        m.d.comb += port_a.addr.eq(base + code)
        with m.If(move):
            m.d.sync += [s2.valid.eq(self.i.valid), s2.known.eq(known), s2.fmt.eq(fmt_id), s2.nbase.eq(nbase),
                         s2.dpp_chk.eq(dpp_chk), s2.words.eq(in_words), s2.pc.eq(ip.pc), s2.tag.eq(ip.tag),
                         s2.second.eq(ip.second & dual), s2.dual.eq(dual), s2.vsize.eq(vsize)]

        # stage 2: ROM A's row; fields, literal, legality; ROM B's address
        a = OpRow(port_a.data)
        m.d.comb += port_b.addr.eq(a.op)
        words = (s2.words[:32], s2.words[32:64], s2.words[64:])
        inst = Signal(_Fields)
        src = types.SimpleNamespace(src0=Signal(9), src1=Signal(9), src2=Signal(9))
        m.d.comb += inst.fmt.eq(s2.fmt)
        with m.Switch(s2.fmt):
            for fmt, _, _, _ in _FORMATS:
                with m.Case(FmtId[fmt.name]):
                    m.d.comb += operand_fields(fmt, inst, src, *words)
        self._encoding_rules(m, a, inst, s2, words)
        src2 = Mux(a.src2_vcc, O.VCC_LO, src.src2)
        bad = Signal()
        with m.Switch(a.rule):
            for k, (info, enc) in enumerate(_RULES):
                with m.Case(k):
                    m.d.comb += bad.eq(breaks_a_rule(info, enc, words))
        eq255 = Cat(src.src0 == O.LITERAL, src.src1 == O.LITERAL, src2 == O.LITERAL)
        litsel = Mux(a.nlit == 0, 0, Mux(a.nlit == 1, 1, Mux(a.nlit == 2, 3, 7)))
        has_lit = a.lit_k | (litsel & eq255).any()
        dpp = s2.dpp_chk & ~a.lit_k & Cat(*(src.src0 == code for code in DPP_CODES)).any()
        w0, w1, w2 = words
        valid, size = Signal(), Signal(2)
        m.d.comb += [valid.eq(s2.known & (a.op != OpId.NONE) & ~bad & ~dpp), size.eq(s2.nbase + has_lit)]
        m.d.comb += [inst.src0.eq(src.src0), inst.src1.eq(src.src1), inst.src2.eq(src2),
                     inst.has_literal.eq(has_lit), inst.size.eq(size),
                     inst.literal.eq(Mux(has_lit, Mux(s2.nbase[1], w2, w1), 0)),
                     inst.op.eq(a.op), inst.valid.eq(valid), inst.illegal.eq(~valid)]
        with m.If(move):
            m.d.sync += [s3.valid.eq(s2.valid), s3.inst.eq(inst), s3.th0.eq(w1[20]), s3.pc.eq(s2.pc),
                         s3.next_pc.eq(Mux(s2.dual, Mux(s2.second, s2.pc + Cat(C(0, 2), s2.vsize), s2.pc),
                                           s2.pc + Cat(C(0, 2), size))),
                         s3.target.eq(s2.pc + 4 + (w0[0:16].as_signed() << 2)), s3.tag.eq(s2.tag),
                         s3.dual.eq(s2.dual), s3.second.eq(s2.second)]

        # stage 3: ROM B's row completes the instruction
        b, out = PropRow(port_b.data), self.o.payload
        m.d.comb += [getattr(out.inst, k).eq(getattr(s3.inst, k)) for k, _ in _Fields]
        m.d.comb += [self.o.valid.eq(s3.valid), out.pc.eq(s3.pc), out.next_pc.eq(s3.next_pc),
                     out.target.eq(s3.target), out.tag.eq(s3.tag), out.dual.eq(s3.dual), out.second.eq(s3.second)]
        with m.If(s3.inst.valid):
            m.d.comb += [out.inst.kind.eq(b.kind)] + [getattr(out.inst, k).eq(getattr(b, k)) for k in _PROPS]
            with m.If(b.ret_dw != 0):
                m.d.comb += out.inst.vdst_dw.eq(Mux(s3.th0, b.ret_dw, 0))
        with m.Else():
            m.d.comb += [out.inst.op.eq(OpId.NONE), out.inst.kind.eq(Kind.ILLEGAL)]
        return m

    @staticmethod
    def _encoding_rules(m, a, inst, s2, words):
        """What ROM A's row says the encoding changes: the scalar destination, VOP3SD and the
        address width."""
        w0, w1, _ = words
        with m.Switch(a.sdst):
            for k, v in sdst_sources(w0).items():
                with m.Case(k):
                    m.d.comb += inst.sdst.eq(v)
        with m.If(a.sdst == SdstFrom.VOP3SD):
            m.d.comb += [inst.fmt.eq(FmtId.VOP3SD), inst.abs.eq(0), inst.opsel.eq(0)]
        m.d.comb += inst.vaddr_dw.eq(vaddr_dwords(a.vaddr, a.vaddr_dw, w0, w1))


_VOPD = 0b110010        # VOPD: dword 0 bits [31:26]
_VOPD_MOV = 8           # v_dual_mov_b32 (its vsrc1 field must be 0)


def _vopd_ops(y: bool) -> dict[int, OpInfo]:
    """The VOPD opcodes of one side (X: 4 bits, Y: 5) and the VOP1/VOP2 operations they perform."""
    return {code: by_name(name) for code, name in VOPD_BASE.items() if y or code not in VOPD_Y_ONLY}


def _vopd_half(m, words, second, out, vsize):
    """Drive ``out`` with the VOP1/VOP2 ``_e32`` instruction (dword 0, the literal, 0) of the half
    of VOPD ``words`` presented now, and ``vsize`` with the VOPD's dwords (``isa.vopd``).

    Both halves read their operands before either writes: X goes first unless Y reads X's
    destination (then Y does). A pair in which each reads the other's destination, an opcode
    LLVM 19 does not assemble, a DPP source code, or ``v_dual_mov_b32`` with a vsrc1 field,
    becomes an illegal word."""
    w0, w1, w2 = words[:32], words[32:64], words[64:]
    vdstx, vdsty = w1[24:32], Cat(~w1[24], w1[17:24])
    side = {"x": (w0[22:26], w0[0:9], w0[9:17], vdstx), "y": (w0[17:22], w1[0:9], w1[9:17], vdsty)}

    def reads(s, vdst):
        op, src0, vsrc1, _ = side[s]
        return (src0 == Cat(vdst, C(1, 1))) | ((vsrc1 == vdst) & (op != _VOPD_MOV))
    y_first = reads("y", vdstx)
    is_y = Mux(second, ~y_first, y_first)
    op, src0, vsrc1, vdst = (Mux(is_y, y, x) for x, y in zip(side["x"], side["y"]))
    lit_ops = [c for c, i in _vopd_ops(True).items() if "literal_k" in i.flags]
    has_lit = (side["x"][1] == O.LITERAL) | (side["y"][1] == O.LITERAL) | \
        Cat(*(side[s][0] == c for s in "xy" for c in lit_ops)).any()
    m.d.comb += vsize.eq(2 + has_lit)
    word = Signal(32)
    with m.Switch(op):
        for code, info in _vopd_ops(True).items():
            with m.Case(code):
                if info.fmt == Fmt.VOP1:
                    m.d.comb += word.eq(Cat(src0, C(info.op, 8), vdst, C(0b0111111, 7)))
                else:
                    m.d.comb += word.eq(Cat(src0, vsrc1, vdst, C(info.op, 6), C(0, 1)))

    def ok(s):
        code, src0_, vsrc1_, _ = side[s]
        known = Cat(*(code == c for c in _vopd_ops(s == "y"))).any()
        dpp = Cat(*(src0_ == c for c in DPP_CODES)).any()
        return known & ~dpp & ((code != _VOPD_MOV) | (vsrc1_ == 0))
    bad = ~ok("x") | ~ok("y") | (y_first & reads("x", vdsty))
    return [out.eq(Mux(bad, C(0xFFFF_FFFF, 96), Cat(word, w2, C(0, 32))))]
