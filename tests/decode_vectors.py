"""Instruction words for the decode stage's tests (tests/test_decode.py), and the reference
each result is compared with (``isa.decode``, field by field: :func:`compare`).

* LLVM corpus: random legal instructions for every opcode (the generator of
  tests/test_isa_roundtrip.py), assembled with llvm-mc-19 in one call.
* Bit-packed encodings: every opcode in every encoding (native and _e64) with random
  fields, literals and DPP codes; whatever ``isa.decode`` accepts must match field by field,
  whatever it rejects must be illegal.
* Random words, including foreign formats and unknown opcodes; words the RTL refuses.
* :func:`canonical`: an encoding of an opcode with fixed register operands, for the check of
  implicit accesses against the model.
"""
from __future__ import annotations

import functools
import random

import pytest
from amaranth.hdl import Shape

import isa
from isa import Fmt
from isa.decoder import VMEM_FMTS
from hdl.simd import IMPLEMENTED
from hdl.isa_tables import FmtId, Kind, OpId
from hdl.layouts import DecodedInst
from tests.bitpack import pack96

SEED = 20250614
LLVM_PER_OP = 8        # LLVM-assembled instances per opcode
PACKED_PER_ENC = 6     # bit-packed instances per opcode and encoding
FUZZ_WORDS = 1500

VCC_LO, EXEC_LO, SOFF_NONE = 106, 126, 0x7C
SOP_FMTS = (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC, Fmt.SOPK, Fmt.SOPP)
VOP_FMTS = (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC, Fmt.VOP3, Fmt.VOP3SD, Fmt.VOP3P)

_LAYOUT = [(name, f.offset, f.width, f.shape) for name, f in DecodedInst]
_ENUMS = (OpId, Kind, FmtId)


def unpack_inst(raw: int) -> dict:
    """DecodedInst bits -> {field: int or enum member}."""
    out = {}
    for name, off, width, shape in _LAYOUT:
        v = (raw >> off) & ((1 << width) - 1)
        if shape in _ENUMS:
            v = shape(v)
        elif Shape.cast(shape).signed and v >> (width - 1):
            v -= 1 << width
        out[name] = v
    return out


def dwords(words: int) -> list[int]:
    return [(words >> (32 * i)) & 0xFFFFFFFF for i in range(3)]


# ----------------------------------------------------------------------------- reference


def _dw(bits: int) -> int:
    return (bits + 31) // 32


def expect(inst: isa.Inst) -> dict:
    """The DecodedInst that docs/simd.md and hdl/layouts.py specify for a decoded Inst."""
    info, fmt, f, fl = inst.info, inst.fmt, inst.f, inst.info.flags
    e = {name: 0 for name, *_ in _LAYOUT}
    e.update(valid=1, op=OpId[info.name.upper()], kind=Kind[info.kind.upper()],
             fmt=FmtId[fmt.name], size=inst.size // 4,
             has_literal=int(inst.literal is not None), literal=inst.literal or 0)
    for k in ("vdst", "abs", "neg", "opsel", "clamp", "omod", "simm16", "offset0", "offset1",
              "saddr", "sbase", "soffset", "vaddr", "data0", "data1", "th", "scope"):
        if k in f:
            e[k] = f[k]
    srcs = [0, 0, 0]
    if fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC):
        srcs[:2] = f.get("ssrc0", 0), f.get("ssrc1", 0)
    elif fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC):
        srcs[0] = f["src0"]
        if "vsrc1" in f:
            srcs[1] = 256 + f["vsrc1"]
        if fmt == Fmt.VOP2 and len(info.src_bits) == 3:
            srcs[2] = VCC_LO                       # implicit VCC of the _e32 form
    elif fmt in (Fmt.VOP3, Fmt.VOP3SD, Fmt.VOP3P):
        srcs = [f["src0"], f["src1"], f["src2"]]
    if fmt == Fmt.VOP3P:       # neg_hi, op_sel_hi in the VOP3 fields of their bits
        e["abs"], e["opsel"] = f["neg_hi"], f["opsel"] | (f["opsel_hi"] >> 2) << 3
        e["omod"] = f["opsel_hi"] & 3
    e["src0"], e["src1"], e["src2"] = srcs
    if fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPK, Fmt.VOP3SD):
        e["sdst"] = f["sdst"]
    if fmt == Fmt.SMEM:
        e["sdst"], e["offset"] = f["sdata"], f["ioffset"]
    elif fmt == Fmt.DS:
        e["vaddr"], e["offset"] = f["addr"], f["offset1"] << 8 | f["offset0"]
    elif fmt in VMEM_FMTS:
        e["data0"], e["offset"] = f["vsrc"], f["ioffset"]
    if "d16" in fl and info.kind in ("vmem_load", "ds_load"):
        e["reads_dst"] = 1                         # the other half of the VGPR is kept
    if info.fmt == Fmt.VOPC:
        e["sdst"] = EXEC_LO if "cmpx" in fl else VCC_LO if fmt == Fmt.VOPC else f["vdst"] & 0x7F
    elif "sdst" in fl:
        e["sdst"] = f["vdst"] & 0x7F
    elif fmt == Fmt.VOP2 and "carry_out" in fl:
        e["sdst"] = VCC_LO

    # operand widths
    if fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC) + VOP_FMTS:
        for i, b in enumerate(info.src_bits):
            e[f"src{i}_dw"] = _dw(b)
    if fmt in VOP_FMTS:
        if info.fmt == Fmt.VOPC or "sdst" in fl:
            e["sdst_dw"] = 1
        else:
            e["vdst_dw"] = _dw(info.dst_bits)
        if "carry_out" in fl or fmt == Fmt.VOP3SD:
            e["sdst_dw"] = 1
    elif fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPK, Fmt.SMEM):
        e["sdst_dw"] = _dw(info.dst_bits)
    elif fmt == Fmt.DS:
        e["vdst_dw"], e["vaddr_dw"] = _dw(info.dst_bits), 1
        e["data0_dw"] = _dw(info.src_bits[1]) if len(info.src_bits) > 1 else 0
        e["data1_dw"] = _dw(info.src_bits[2]) if len(info.src_bits) > 2 else 0
    elif fmt in VMEM_FMTS and info.kind != "cache":
        e["vaddr_dw"] = {Fmt.VGLOBAL: 2 if f["saddr"] == SOFF_NONE else 1,
                         Fmt.VSCRATCH: f["sve"], Fmt.VFLAT: 2}[fmt]
        e["data0_dw"] = _dw(info.src_bits[1]) if len(info.src_bits) > 1 else 0
        if info.kind == "vmem_load" or inst.returns:
            e["vdst_dw"] = _dw(info.dst_bits)
    return e


# The implicit-access flags are checked against the model (test_implicit_accesses_match_model).
_FLAGS = ("reads_vcc", "writes_exec", "reads_scc", "writes_scc", "reads_dst")
ALU_KINDS = ("salu", "sbranch", "valu", "vtrans", "swait", "shint", "sbarrier", "sendpgm")


def vopd_half(dws: list[int], pc: int, second: bool) -> tuple[isa.Inst, int]:
    """The half of VOPD ``dws`` the lean decode stage gives first (or ``second``) as the VOP1/VOP2
    instruction it performs, and its next PC (its own for the first). Both halves read before
    either writes, so X goes first unless Y reads X's destination; a pair in which each reads
    the other's destination is refused (DecodeError)."""
    inst = isa.decode(dws, pc=pc)
    hx, hy = inst.vopd

    def reads(h, vdst):
        return h.src0 == 256 + vdst or (h.info.name != "v_mov_b32" and h.vsrc1 == vdst)
    y_first = reads(hy, hx.vdst)
    if y_first and reads(hx, hy.vdst):
        raise isa.DecodeError("each VOPD half reads the other's destination", pc, dws)
    h = (hx, hy)[y_first ^ second]
    if h.info.fmt == Fmt.VOP1:
        word = 0x7E000000 | h.vdst << 17 | h.info.op << 9 | h.src0
    else:
        word = h.info.op << 25 | h.vdst << 17 | h.vsrc1 << 9 | h.src0
    half = isa.decode([word, inst.literal or 0, 0], pc=pc)
    return half, pc + inst.size if second else pc


def compare(vectors, results, intended=None) -> tuple[int, int]:
    """Check every result against isa.decode; returns (legal, illegal) counts. A VOPD word's
    result is its first half (:func:`vopd_half`)."""
    fails, n_legal, n_illegal = [], 0, 0
    for i, ((words, pc), got) in enumerate(zip(vectors, results)):
        dws = dwords(words)
        raw = " ".join(f"{w:08x}" for w in dws)
        target = (pc + 4 + 4 * ((dws[0] & 0xFFFF) ^ 0x8000) - 4 * 0x8000) & 0xFFFFFFFF
        next_pc = None
        if got["target"] != target and dws[0] >> 26 != 0b110010:   # a VOPD half's is unused
            fails.append(f"[{raw}] target {got['target']:#x} != {target:#x}")
        try:
            inst = isa.decode(dws, pc=pc)
            if inst.vopd is not None:
                inst, next_pc = vopd_half(dws, pc, False)
            if inst.dpp is not None:
                raise isa.DecodeError("a DPP form: the RTL decodes it as illegal", pc, dws)
            if inst.name not in IMPLEMENTED:
                raise isa.DecodeError("the SIMD does not execute it: the RTL decodes it as illegal", pc, dws)
        except isa.DecodeError as err:
            n_illegal += 1
            bad = {k: got[k] for k in ("valid", "illegal", "op", "kind")}
            if bad != {"valid": 0, "illegal": 1, "op": OpId.NONE, "kind": Kind.ILLEGAL}:
                fails.append(f"[{raw}] ({err}) should be illegal: {bad}")
            continue
        n_legal += 1
        exp = expect(inst)
        # ALU flags are checked against the model; memory ops have none
        skip = _FLAGS if inst.info.kind in ALU_KINDS else ()
        diff = {k: (got[k], v) for k, v in exp.items() if k not in skip and got[k] != v}
        next_pc = (pc + inst.size) & 0xFFFFFFFF if next_pc is None else next_pc
        if got["next_pc"] != next_pc:
            diff["next_pc"] = (got["next_pc"], next_pc)
        if intended is not None and intended[i] != inst.name:
            diff["intended op"] = (inst.name, intended[i])
        if diff:
            fails.append(f"[{raw}] {isa.disassemble(inst)}: " + ", ".join(
                f"{k} rtl {g!r} != {e!r}" for k, (g, e) in diff.items()))
    assert not fails, f"{len(fails)}/{len(vectors)} mismatches:\n" + "\n".join(fails[:40])
    return n_legal, n_illegal


# ----------------------------------------------------------------------------- encodings

# dword-0 prefix (mask, value) and opcode field (lsb, width) per format (ISA guide's microcode formats)
_ENC = {
    Fmt.SOP2: (0xC0000000, 0x80000000, 23, 7), Fmt.SOPK: (0xF0000000, 0xB0000000, 23, 5),
    Fmt.SOP1: (0xFF800000, 0xBE800000, 8, 8), Fmt.SOPC: (0xFF800000, 0xBF000000, 16, 7),
    Fmt.SOPP: (0xFF800000, 0xBF800000, 16, 7), Fmt.SMEM: (0xFC000000, 0xF4000000, 13, 6),
    Fmt.VOP1: (0xFE000000, 0x7E000000, 9, 8), Fmt.VOP2: (0x80000000, 0x00000000, 25, 6),
    Fmt.VOPC: (0xFE000000, 0x7C000000, 17, 8), Fmt.VOP3: (0xFC000000, 0xD4000000, 16, 10),
    Fmt.VOP3SD: (0xFC000000, 0xD4000000, 16, 10), Fmt.DS: (0xFC000000, 0xD8000000, 18, 8),
    Fmt.VOP3P: (0xFF000000, 0xCC000000, 16, 7),
    Fmt.VGLOBAL: (0xFF000000, 0xEE000000, 14, 8), Fmt.VSCRATCH: (0xFF000000, 0xED000000, 14, 8),
    Fmt.VFLAT: (0xFF000000, 0xEC000000, 14, 8),
}
# source operand fields: (dword, lsb, width)
_SRC_POS = {
    Fmt.SOP1: [(0, 0, 8)], Fmt.SOP2: [(0, 0, 8), (0, 8, 8)], Fmt.SOPC: [(0, 0, 8), (0, 8, 8)],
    Fmt.VOP1: [(0, 0, 9)], Fmt.VOP2: [(0, 0, 9)], Fmt.VOPC: [(0, 0, 9)],
    Fmt.VOP3: [(1, 0, 9), (1, 9, 9), (1, 18, 9)], Fmt.VOP3SD: [(1, 0, 9), (1, 9, 9), (1, 18, 9)],
    Fmt.VOP3P: [(1, 0, 9), (1, 9, 9), (1, 18, 9)],
}
_DPP = (0xE9, 0xEA, 0xFA, 0xFB)


def encodings(info: isa.OpInfo) -> list[tuple[Fmt, int]]:
    """(format, opcode) of every encoding of an opcode: native and, if any, _e64."""
    out = [(info.fmt, info.op)]
    if info.fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC) and info.vop3_op is not None:
        out.append((info.vop3_fmt, info.vop3_op))
    return out


def _put(dws: list[int], pos, value: int) -> None:
    d, lsb, width = pos
    m = ((1 << width) - 1) << lsb
    dws[d] = (dws[d] & ~m) | ((value << lsb) & m)


def encode(fmt: Fmt, op: int, dws: list[int]) -> int:
    """Force the prefix and opcode of `fmt` onto three dwords of other bits."""
    mask, value, lsb, width = _ENC[fmt]
    opmask = ((1 << width) - 1) << lsb
    dws = list(dws)
    dws[0] = (dws[0] & ~mask & ~opmask) | value | (op << lsb)
    return pack96(dws)


def _clear_reserved(info: isa.OpInfo, fmt: Fmt, dws: list[int]) -> None:
    """Make each field ``isa.legality`` constrains pass its rules: the next value up that does."""
    from isa.legality import FIELDS, rules
    by_field: dict[str, list] = {}
    for r in rules(info, fmt):
        by_field.setdefault(r.field, []).append(r)
    for field, rs in by_field.items():
        d, lsb, width = FIELDS[fmt][field]
        v = dws[d] >> lsb & ((1 << width) - 1)
        for k in range(1 << width):
            value = (v + k) & ((1 << width) - 1)
            if not any(r.broken_by(value) for r in rs):
                _put(dws, (d, lsb, width), value)
                break


def packed_vectors(rng: random.Random) -> tuple[list, list]:
    """Every opcode in every encoding with random fields; biased towards literals, DPP codes,
    saddr/soffset 'none'."""
    vecs, names = [], []
    for info in isa.OPCODES:
        for fmt, op in encodings(info):
            for k in range(PACKED_PER_ENC):
                dws = [rng.getrandbits(32) for _ in range(3)]
                for pos in _SRC_POS.get(fmt, ()):
                    x = rng.random()
                    if x < 0.25:
                        _put(dws, pos, 255)
                    elif x < 0.3:
                        _put(dws, pos, rng.choice(_DPP))
                if fmt in (Fmt.VGLOBAL, Fmt.VSCRATCH) and rng.random() < 0.5:
                    _put(dws, (0, 0, 7), SOFF_NONE)
                if fmt == Fmt.SMEM and rng.random() < 0.5:
                    _put(dws, (1, 25, 7), SOFF_NONE)
                if k % 2:
                    _clear_reserved(info, fmt, dws)     # else a random field bit mostly breaks a rule
                vecs.append((encode(fmt, op, dws), rng.getrandbits(30) << 2))
                names.append(info.name)
    return vecs, names



@functools.cache
def llvm_vectors():
    rt = pytest.importorskip("tests.test_isa_roundtrip")
    fmts = tuple(f for g in rt.GROUPS.values() for f in g)
    cases = rt.build_cases(fmts, seed=SEED, per_op=LLVM_PER_OP)
    blobs = rt.assemble([t for _, t in cases])          # one llvm-mc call
    rng = random.Random(SEED)
    vecs = []
    for blob in blobs:
        dws = [int.from_bytes(blob[i:i + 4], "little") for i in range(0, len(blob), 4)]
        dws += [rng.getrandbits(32) for _ in range(3 - len(dws))]   # junk after the inst
        vecs.append((pack96(dws), rng.getrandbits(30) << 2))
    return vecs, [info.name for info, _ in cases]


_FOREIGN_TOP = [0xC8, 0xC9, 0xCC, 0xCD, 0xCE, 0xEC, 0xED, 0xC4, 0xD0, 0xE4, 0xF8, 0xF0, 0xFC,
                0xFF, 0xE0, 0xC0]


def random_word_vectors() -> list[tuple[int, int]]:
    """Random words, mostly with a known format prefix and a random opcode, with their PCs."""
    rng = random.Random(SEED + 1)
    vecs = []
    fmts = list(_ENC)
    for i in range(FUZZ_WORDS):
        dws = [rng.getrandbits(32) for _ in range(3)]
        x = rng.random()
        if x < 0.7:
            fmt = rng.choice(fmts)
            words = encode(fmt, rng.getrandbits(_ENC[fmt][3]), dws)
        elif x < 0.9:
            dws[0] = (dws[0] & 0x00FFFFFF) | rng.choice(_FOREIGN_TOP) << 24
            words = pack96(dws)
        else:
            words = pack96(dws)
        vecs.append((words, rng.getrandbits(30) << 2))
    return vecs


ILLEGAL_WORDS = {
    "VOP3P op 0x7f": 0xCC7F0000,
    "FLAT": 0xEC000000,
    "all ones": 0xFFFFFFFF,
    "SOP1 op 0xff": 0xBE80FF00,
    "SOPP op 0x7f": 0xBFFF0000,
    "SOPK op 3": 0xB1800000,
    "VOP3 op 0x3ff": 0xD7FF0000,
    "SMEM op 0x3f": 0xF407E000,
    "DS op 0xfd": 0xDBF40000,
    "VGLOBAL op 0xff": 0xEE3FC000,
}
# isa.decode decodes these, the RTL (which does not execute DPP forms) rejects them
RTL_ILLEGAL_WORDS = {
    "VOP1 v_mov_b32 DPP16 src0": 0x7E0202FA,
    "VOP2 v_add_nc_u32 DPP8 src0": 0x4A0206E9,
    "VOP3 v_fma_f32 DPP16 src0": 0xD6130000 | (0x000000FA << 32),
}


# fixed register operands: sources s4/s8/s12 or v4/v8/v12, destinations s20/v20, VOP3SD and
# VOPC-e64 scalar destination s30
_SRC_REGS = (4, 8, 12)


def canonical(info: isa.OpInfo, fmt: Fmt, op: int, rng: random.Random) -> int:
    """An encoding of `info` in `fmt` whose register operands are the fixed ones above."""
    dws = [0, rng.getrandbits(32), rng.getrandbits(32)]
    name = info.name
    if fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC):
        for pos, r in zip(_SRC_POS[fmt], _SRC_REGS):
            _put(dws, pos, r)
        if fmt != Fmt.SOPC:
            _put(dws, (0, 16, 7), 20)
    elif fmt == Fmt.SOPK:
        _put(dws, (0, 16, 7), 20)
        _put(dws, (0, 0, 16), rng.getrandbits(16))
    elif fmt == Fmt.SOPP:
        _put(dws, (0, 0, 16), rng.getrandbits(16))
    elif fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC):
        _put(dws, (0, 0, 9), 256 + 4)
        _put(dws, (0, 9, 8), 8)
        _put(dws, (0, 17, 8), 20)
    else:                                   # VOP3 / VOP3SD, no modifiers
        dws[1] = 0
        srcs = [256 + r for r in _SRC_REGS]
        if name in ("v_readlane_b32", "v_writelane_b32"):
            srcs[1] = 8                     # lane select is scalar
        if name in ("v_permlane16_b32", "v_permlanex16_b32"):
            srcs[1:] = [8, 12]              # lane selects are scalar
        if name == "v_writelane_b32":
            srcs[0] = 4
        if "reads_vcc" in info.flags and info.fmt == Fmt.VOP2:
            srcs[2] = 12                    # mask / carry-in SGPR of the _e64 form
        for pos, s in zip(_SRC_POS[fmt], srcs):
            _put(dws, pos, s)
        _put(dws, (0, 0, 8), EXEC_LO if "cmpx" in info.flags else
             30 if info.fmt == Fmt.VOPC else 20)
        if fmt == Fmt.VOP3SD:
            _put(dws, (0, 8, 7), 30)
    _clear_reserved(info, fmt, dws)          # e.g. the simm16 of an operand-less SOPP op
    return encode(fmt, op, dws)
