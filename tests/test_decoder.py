"""RTL decoder (hdl/simd/decoder.py) against the Python decoder, LLVM and the model.

* LLVM corpus: random legal instructions for every opcode (the generator of
  tests/test_isa_roundtrip.py), assembled with llvm-mc-19 in one call.
* Bit-packed encodings: every opcode in every encoding (native and _e64) with random
  fields, literals and DPP codes; whatever ``isa.decode`` accepts must match field by field,
  whatever it rejects must be illegal.
* Random words, including foreign formats and unknown opcodes.
* Implicit accesses and operand widths: every ALU opcode with fixed register operands is
  run through the model (``sim.execute``) on random states; the registers, SCC, VCC and
  EXEC it reads and writes must be exactly what the decoder's fields say.
* Verilog: the converted decoder passes ``verilator --lint-only``.

All vectors of one test run through one Amaranth simulation (a testbench, no clock).
"""
from __future__ import annotations

import functools
import random
import shutil

import pytest
from amaranth.hdl import Shape
from amaranth.sim import Simulator

import isa
from isa import Fmt
from isa.decoder import VMEM_FMTS
from hdl.simd.decoder import IMPLEMENTED, Decoder
from hdl.isa_tables import FmtId, Kind, OpId
from hdl.layouts import DecodedInst
from tests.bitpack import pack96
from tests.lint import convert_and_lint

SEED = 20250614
LLVM_PER_OP = 8        # LLVM-assembled instances per opcode
PACKED_PER_ENC = 6     # bit-packed instances per opcode and encoding
FUZZ_WORDS = 1500

VCC_LO, EXEC_LO, SOFF_NONE = 106, 126, 0x7C
SOP_FMTS = (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC, Fmt.SOPK, Fmt.SOPP)
VOP_FMTS = (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC, Fmt.VOP3, Fmt.VOP3SD, Fmt.VOP3P)

# ----------------------------------------------------------------------------- simulation

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


def run_decoder(vectors: list[tuple[int, int]]) -> list[dict]:
    """Decode (words, pc) pairs in one simulation; each result has the DecodedInst fields
    plus ``next_pc`` and ``target``."""
    dut = Decoder()
    raw = []

    async def bench(ctx):
        inst = dut.inst.as_value()
        for words, pc in vectors:
            ctx.set(dut.words, words)
            ctx.set(dut.pc, pc)
            raw.append((ctx.get(inst), ctx.get(dut.next_pc), ctx.get(dut.target)))

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    out = []
    for r, next_pc, target in raw:
        d = unpack_inst(r)
        d["next_pc"], d["target"] = next_pc, target
        out.append(d)
    return out


def _dwords(words: int) -> list[int]:
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
_ALU_KINDS = ("salu", "sbranch", "valu", "vtrans", "swait", "shint", "sbarrier", "sendpgm")


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


def compare(vectors, results, intended=None, vopd: bool = False) -> tuple[int, int]:
    """Check every result against isa.decode; returns (legal, illegal) counts. ``vopd``: a VOPD
    word's result is its first half (:func:`vopd_half`), else VOPD is illegal."""
    fails, n_legal, n_illegal = [], 0, 0
    for i, ((words, pc), got) in enumerate(zip(vectors, results)):
        dws = _dwords(words)
        raw = " ".join(f"{w:08x}" for w in dws)
        target = (pc + 4 + 4 * ((dws[0] & 0xFFFF) ^ 0x8000) - 4 * 0x8000) & 0xFFFFFFFF
        next_pc = None
        if got["target"] != target and not (vopd and dws[0] >> 26 == 0b110010):   # a VOPD half's is unused
            fails.append(f"[{raw}] target {got['target']:#x} != {target:#x}")
        try:
            inst = isa.decode(dws, pc=pc)
            if vopd and inst.vopd is not None:
                inst, next_pc = vopd_half(dws, pc, False)
            if inst.dpp is not None or inst.vopd is not None:
                raise isa.DecodeError("a DPP or VOPD form: the RTL decodes it as illegal", pc, dws)
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
        skip = _FLAGS if inst.info.kind in _ALU_KINDS else ()
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


def _encodings(info: isa.OpInfo) -> list[tuple[Fmt, int]]:
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
        for fmt, op in _encodings(info):
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


# ----------------------------------------------------------------------------- tests


def test_implemented_is_what_the_simd_executes():
    from hdl.simd import IMPLEMENTED as executed
    assert IMPLEMENTED == executed and IMPLEMENTED <= {o.name for o in isa.OPCODES}


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


@pytest.mark.skipif(shutil.which("llvm-mc-19") is None,
                    reason="llvm-mc-19 not found: apt-get install -y llvm-19 (Debian 12)")
def test_llvm_corpus():
    """LLVM-assembled instructions of every opcode decode exactly like isa.decode."""
    vecs, names = llvm_vectors()
    assert set(names) == {o.name for o in isa.OPCODES}
    legal, illegal = compare(vecs, run_decoder(vecs), intended=names)
    assert illegal == sum(n not in IMPLEMENTED for n in names)
    print(f"{legal} LLVM-assembled vectors")


def test_packed_encodings():
    """Every opcode in every encoding, random fields: RTL == isa.decode, or both reject."""
    vecs, names = packed_vectors(random.Random(SEED))
    results = run_decoder(vecs)
    legal, illegal = compare(vecs, results)
    seen = {r["op"] for r in results if r["valid"]}
    assert seen == {OpId[n.upper()] for n in IMPLEMENTED}
    # illegal: opcodes the SIMD does not execute, DPP sources, random fields breaking a rule
    executed = sum(n in IMPLEMENTED for n in names)
    assert illegal > 0 and legal > 0.6 * executed
    print(f"{legal} legal, {illegal} illegal bit-packed vectors")


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


def test_random_words():
    """Random words, mostly with a known format prefix and a random opcode."""
    vecs = random_word_vectors()
    legal, illegal = compare(vecs, run_decoder(vecs))
    assert legal > 100 and illegal > 500       # random fields mostly break an isa.legality rule
    print(f"{legal} legal, {illegal} illegal random words")


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
# isa.decode decodes these, the RTL (which executes neither VOPD nor DPP forms) rejects them
RTL_ILLEGAL_WORDS = {
    "VOPD": 0xC8000000,
    "VOP1 v_mov_b32 DPP16 src0": 0x7E0202FA,
    "VOP2 v_add_nc_u32 DPP8 src0": 0x4A0206E9,
    "VOP3 v_fma_f32 DPP16 src0": 0xD6130000 | (0x000000FA << 32),
}


def test_illegal_words():
    vecs = [(w, 0) for w in ILLEGAL_WORDS.values()]
    for name, (words, _) in zip(ILLEGAL_WORDS, vecs):
        with pytest.raises(isa.DecodeError):
            isa.decode(_dwords(words))
    for words in RTL_ILLEGAL_WORDS.values():
        isa.decode(_dwords(words))
    vecs += [(w, 0) for w in RTL_ILLEGAL_WORDS.values()]
    results = run_decoder(vecs)
    bad = [n for n, r in zip([*ILLEGAL_WORDS, *RTL_ILLEGAL_WORDS], results) if not r["illegal"]
           or r["valid"] or r["op"] != OpId.NONE]
    assert not bad
    legal, illegal = compare(vecs, results)
    assert illegal == len(vecs)


# ----------------------------------------------------------------------------- model oracle

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


# registers whose value is perturbed to find out what an instruction reads: the operands
# above, the dword after each, and a few bystanders
_PROBE_SGPRS = (0, 4, 5, 8, 9, 12, 13, 20, 21, 22, 23, 30, 31, 77, 105, 125)
_PROBE_VGPRS = (0, 4, 5, 8, 9, 12, 13, 20, 21, 22, 23, 31)


_SPECIAL = (0, 0, 0, 0, 0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x3F800000, 0x7FC00000)


def _state(rng, valu: bool, style: int):
    """A random wave. Style bit 0: sparse values (mostly zeros, then ones, sign bits, NaNs)
    instead of random ones; bit 1: equal source operands. Both make compares, zero tests and
    absorbed addends flip when one operand changes."""
    import numpy as np
    from sim.wave import Wave
    w = Wave(0, 32, 0x1000)
    nrng = np.random.default_rng(rng.getrandbits(64))
    if style & 1:
        w.s = [rng.choice(_SPECIAL) for _ in range(128)]
        w.v[:] = nrng.choice(np.array(_SPECIAL, dtype=np.uint32), size=w.v.shape)
    else:
        w.s = [rng.getrandbits(32) for _ in range(128)]
        w.v[:] = nrng.integers(0, 1 << 32, size=w.v.shape, dtype=np.uint32)
    if style & 2:
        for a, b in ((4, 8), (4, 12), (5, 9), (5, 13)):
            w.s[b] = w.s[a]
            w.v[b] = w.v[a]
    w.s[124] = 0                            # null
    if valu:
        w.s[EXEC_LO] = 0xFFFFFFFF           # all lanes, so every lane of vdst is written
    w.scc = rng.getrandbits(1)
    return w


def _clone(w):
    import copy
    c = copy.copy(w)
    c.s, c.v = list(w.s), w.v.copy()
    return c


def _run(h, w):
    c = _clone(w)
    h(c, None)
    return c


def _same(a, b) -> bool:
    return a.s == b.s and a.scc == b.scc and a.pc == b.pc and (a.v == b.v).all()


def _observe(inst, handler, rng, trials=32) -> dict:
    """What the model reads and writes, from runs on random and perturbed states."""
    valu = inst.info.kind in ("valu", "vtrans")
    obs = {"sgprs_written": set(), "vgprs_written": set(), "writes_scc": False,
           "reads_scc": False, "reads_vcc": False, "reads_dst": False,
           "reads": set(), "dst_regs": None}
    for trial in range(trials):
        base = _state(rng, valu, trial % 4)       # every (style, delta) pair twice
        delta = (0x5A5A5A5A, 1, 0x80000000, 0xFFFFFFFF)[trial // 4 % 4]
        if rng.random() < 0.3:
            base.s[VCC_LO] = 0              # s_cbranch_vcc* see both outcomes
        out = _run(handler, base)
        obs["sgprs_written"] |= {i for i in range(128) if out.s[i] != base.s[i]}
        obs["vgprs_written"] |= {i for i in range(len(out.v)) if (out.v[i] != base.v[i]).any()}
        obs["writes_scc"] |= out.scc != base.scc

        def reads(file: str, reg: int, delta: int) -> bool:
            """Does the result depend on register `reg`? XOR `delta` into it first. A
            non-reader either overwrites it (result == out) or leaves it alone (result ==
            out with the same change)."""
            p, o = _clone(base), _clone(out)
            regs_p, regs_o = (p.s, o.s) if file == "s" else (p.v, o.v)
            regs_p[reg] ^= delta
            regs_o[reg] ^= delta
            r = _run(handler, p)
            return not _same(r, out) and not _same(r, o)

        # SCC: a non-writer copies it through, so compare the rest of the state
        p = _clone(base)
        p.scc ^= 1
        q = _run(handler, p)
        rest_differs = q.s != out.s or q.pc != out.pc or not (q.v == out.v).all()
        wrote = out.scc != base.scc or q.scc != p.scc
        obs["reads_scc"] |= rest_differs or (wrote and q.scc != out.scc)
        # VCC: also make it zero / non-zero for s_cbranch_vcc*
        obs["reads_vcc"] |= reads("s", VCC_LO, base.s[VCC_LO] or 0xFFFFFFFF)
        for reg in _PROBE_SGPRS:
            if reads("s", reg, delta):
                obs["reads"].add(("s", reg))
        for reg in _PROBE_VGPRS:
            if reads("v", reg, delta):
                obs["reads"].add(("v", reg))
    return obs


def _check_against_model(inst, rtl: dict, obs: dict) -> list[str]:
    errs = []
    valu = inst.info.kind in ("valu", "vtrans")
    # scalar registers written: sdst range, EXEC
    want_s = set(range(rtl["sdst"], rtl["sdst"] + rtl["sdst_dw"]))
    if rtl["writes_exec"]:
        want_s.add(EXEC_LO)
    if obs["sgprs_written"] | _HALF_WRITTEN.get(inst.name, set()) != want_s:
        errs.append(f"writes SGPRs {sorted(obs['sgprs_written'])}, decoder says {sorted(want_s)}")
    want_v = set(range(rtl["vdst"], rtl["vdst"] + rtl["vdst_dw"]))
    if obs["vgprs_written"] != want_v:
        errs.append(f"writes VGPRs {sorted(obs['vgprs_written'])}, decoder says {sorted(want_v)}")
    if obs["writes_scc"] != bool(rtl["writes_scc"]):
        errs.append(f"writes SCC {obs['writes_scc']}, decoder says {rtl['writes_scc']}")
    if obs["reads_scc"] != bool(rtl["reads_scc"]):
        errs.append(f"reads SCC {obs['reads_scc']}, decoder says {rtl['reads_scc']}")
    # registers read: the sources (with their widths) and, if reads_dst, the destination
    want_r = set()
    for i in range(3):
        code, n = rtl[f"src{i}"], rtl[f"src{i}_dw"]
        for k in range(n):
            if code >= 256:
                want_r.add(("v", code - 256 + k))
            elif code + k < 108:
                want_r.add(("s", code + k))
    reads_vcc = bool(rtl["reads_vcc"]) or any(("s", r) in want_r for r in (VCC_LO, 107))
    want_r -= {("s", VCC_LO), ("s", 107)}
    if rtl["reads_dst"] and not inst.name.startswith("s_cmov"):
        # (s_cmov*: the SALU reads the old destination to write it back when SCC = 0; the
        # model just skips the write, so the read is not observable there)
        if valu and rtl["vdst_dw"]:
            want_r |= {("v", rtl["vdst"] + k) for k in range(rtl["vdst_dw"])}
        else:
            want_r |= {("s", rtl["sdst"] + k) for k in range(rtl["sdst_dw"])}
    got_r = set(obs["reads"]) | _UNOBSERVABLE.get(inst.name, set())
    if got_r != want_r:
        errs.append(f"reads {sorted(got_r)}, decoder says {sorted(want_r)}")
    if obs["reads_vcc"] != reads_vcc:
        errs.append(f"reads VCC {obs['reads_vcc']}, decoder says {reads_vcc}")
    return errs


# operands an opcode encodes but cannot depend on: mbcnt_hi counts lanes 32-63 of its mask
# operand, which a wave32 does not have
_UNOBSERVABLE = {"v_mbcnt_hi_u32_b32": {("v", 4)}}
# v_trig_preop_f64 reads only the exponent of its double S0, not the low dword v4; the low
# dwords of these doubles decide the result only for values random states do not reach
# (inf against NaN, integer parts beyond 2^20)
_UNOBSERVABLE.update({"v_trig_preop_f64": {("v", 4)}, "v_cvt_i32_f64": {("v", 4)},
                      "v_cvt_u32_f64": {("v", 4)}, "v_cmp_class_f64": {("v", 4)},
                      "v_cmpx_class_f64": {("v", 4)}})
_UNOBSERVABLE.update({f"v_{c}_{k}_f64": {("v", 4), ("v", 8)} for c in ("cmp", "cmpx") for k in "ou"})
# destinations only partly changed: s_bitset0/1_b64 set or clear one bit of s[20:21]
_HALF_WRITTEN = {"s_bitset0_b64": {20, 21}, "s_bitset1_b64": {20, 21}}

# ops the model runs only with a scheduler context (barriers) or with hidden state (PC)
_NO_ORACLE = {"s_barrier_signal", "s_barrier_signal_isfirst", "s_barrier_wait", "s_endpgm"}


def test_implicit_accesses_match_model():
    """For every SALU/VALU/branch opcode in every encoding, the registers the model reads and
    writes are exactly those named by the decoder's operand fields and widths plus its
    implicit-access flags (reads_vcc, writes_exec, reads_scc, writes_scc, reads_dst)."""
    execute = pytest.importorskip("sim.execute")
    rng = random.Random(SEED + 2)
    items = []
    for info in isa.OPCODES:
        if info.kind not in _ALU_KINDS or info.fmt == Fmt.SMEM or info.name not in IMPLEMENTED:
            continue        # (SMEM hints: no effect; the RTL decodes what the SIMD executes)
        for fmt, op in _encodings(info):
            items.append((info, canonical(info, fmt, op, rng)))
    vecs = [(w, 0x1000) for _, w in items]
    results = run_decoder(vecs)
    fails, checked, skipped = [], 0, []
    for (info, words), rtl in zip(items, results):
        inst = isa.decode(_dwords(words), pc=0x1000)
        assert inst.name == info.name and rtl["op"] == OpId[info.name.upper()]
        if info.name in _NO_ORACLE or info.name not in execute.IMPLEMENTED:
            skipped.append(info.name)
            continue
        try:
            handler = execute.build(inst)
        except execute.ModelError:
            skipped.append(info.name)
            continue
        # a generator per opcode and encoding: adding opcodes leaves the others' states alone
        obs = _observe(inst, handler, random.Random(f"{SEED}:{info.name}:{inst.fmt.name}"))
        errs = _check_against_model(inst, rtl, obs)
        checked += 1
        if errs:
            fails.append(f"{isa.disassemble(inst)}: " + "; ".join(errs))
    assert not fails, f"{len(fails)}/{checked} disagree with the model:\n" + "\n".join(fails[:40])
    assert checked > 450, (checked, sorted(set(skipped)))
    print(f"{checked} opcode encodings checked against the model; skipped {sorted(set(skipped))}")


# ----------------------------------------------------------------------------- Verilog


def test_verilog_lint(tmp_path):
    """The decoder converts to Verilog that Verilator lints cleanly."""
    text = convert_and_lint(Decoder(), "decoder", tmp_path)
    for port in ("words", "pc", "inst", "next_pc", "target"):
        assert f" {port};" in text or f" {port}," in text or f"{port}\n" in text, port
    print(f"decoder.v: {len(text.splitlines())} lines, verilator lint clean")


def test_is_branch_word_matches_the_python_decoder():
    """``is_branch_word`` (the SIMD's loop-line scan) is true exactly for the dwords that
    ``isa.decode`` reads as a SOPP branch (``s_branch`` / ``s_cbranch_*``, not ``s_setpc``
    and the other SOP1 jumps): every opcode's encodings with random fields, and random dwords."""
    from amaranth.hdl import Module, Signal
    from hdl.simd.decoder import is_branch_word
    rng = random.Random(SEED)
    words = [encode(fmt, op, [rng.getrandbits(32) for _ in range(3)]) & 0xFFFF_FFFF
             for info in isa.OPCODES for fmt, op in _encodings(info) for _ in range(4)]
    words += [rng.getrandbits(32) for _ in range(2000)]

    def is_branch(w):
        try:
            info = isa.decode([w, 0, 0]).info
            return info.kind == "sbranch" and info.fmt == Fmt.SOPP
        except isa.DecodeError:
            return False
    want = [is_branch(w) for w in words]
    assert sum(want) >= 7 * 4
    m, d, out = Module(), Signal(32), Signal()
    m.d.comb += out.eq(is_branch_word(d))
    got = []

    async def bench(ctx):
        for w in words:
            ctx.set(d, w)
            got.append(bool(ctx.get(out)))
    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    assert got == want
