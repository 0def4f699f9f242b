"""VOPD (dual issue): decoding and disassembly against LLVM, and execution in the model.

Round trip: random legal VOPD instructions for every X/Y opcode pair are assembled with
llvm-mc-19 and must disassemble exactly as ``llvm-mc -disassemble`` prints them; encodings LLVM
refuses must raise DecodeError. Semantics: small programs run on the model, checked against
numpy computed here from the operations' definitions (both halves read before either writes).
"""
from __future__ import annotations

import random
import struct
import subprocess

import numpy as np
import pytest

import isa
from isa import vopd as VD
from sim.memory import GlobalMemory
from isa.abi import Dispatch
from sim.model import Model
from tests.asmutil import assemble as assemble_program
from tests.test_isa_roundtrip import LLVM_MC, MCPU, assemble, llvm_disassemble, needs_llvm, norm

SEED = 20250701
LANES = np.arange(32)


# ----------------------------------------------------------------------------- generator


def _pair_text(rng: random.Random, x: int, y: int) -> str:
    """A legal VOPD line. LLVM's bank rules: src0 of X and Y in different banks of four (index
    % 4), vsrc1 too, the destinations and the third operands (fmac's vdst, fmamk's vsrc1) in
    different banks of two (index % 2). So: src0 in banks 0/3, vsrc1 in banks 1/2, vdstx odd
    and vdsty even when a half has a third operand (else either way round); at most two scalar
    values (SGPRs, VCC of a cndmask, one literal) on the constant bus."""
    while True:
        lit = f"0x{rng.choice([0x40490FDB, 0x3F800000, 0xFFFFFFF0, 0x12345678, 5]):x}"
        scalars, parts = set(), []
        third = {VD.BASE[x], VD.BASE[y]} & {"v_fmac_f32", "v_fmamk_f32"}
        parity = 1 if third else rng.randrange(2)
        for side, code in (("x", x), ("y", y)):
            base = VD.BASE[code]
            if base == "v_cndmask_b32":
                scalars.add("vcc")
            bank0, bank1 = (0, 1) if side == "x" else (3, 2)
            kind = rng.random()
            if kind < 0.6:
                s0 = f"v{4 * rng.randrange(64) + bank0}"
            elif kind < 0.75:
                s0 = rng.choice(["s1", "s7", "s42", "vcc_lo", "exec_lo", "m0"])
                scalars.add(s0)
            elif kind < 0.9:
                s0 = rng.choice(["0", "-16", "64", "1.0", "-4.0", "0.5", "0.15915494"])
            else:
                s0 = lit
                scalars.add("lit")
            v1 = f"v{4 * rng.randrange(64) + bank1}"
            d = f"v{2 * rng.randrange(128) + (parity if side == 'x' else 1 - parity)}"
            name = "v_dual_" + base[2:]
            if base == "v_mov_b32":
                parts.append(f"{name} {d}, {s0}")
            elif base == "v_fmaak_f32":
                scalars.add("lit")
                parts.append(f"{name} {d}, {s0}, {v1}, {lit}")
            elif base == "v_fmamk_f32":
                scalars.add("lit")
                parts.append(f"{name} {d}, {s0}, {lit}, {v1}")
            else:
                parts.append(f"{name} {d}, {s0}, {v1}")
        if len(scalars) <= 2:
            return " :: ".join(parts)


def _pairs():
    return [(x, y) for x in VD.BASE if x not in VD.Y_ONLY for y in VD.BASE]


def _words(blob: bytes) -> list[int]:
    return [int.from_bytes(blob[i:i + 4], "little") for i in range(0, len(blob), 4)]


# ----------------------------------------------------------------------------- round trip


@needs_llvm
def test_roundtrip_every_pair():
    """Every X/Y pair, several operand mixes each: isa text == LLVM text, size, halves."""
    rng = random.Random(SEED)
    cases = [((x, y), _pair_text(rng, x, y)) for x, y in _pairs() for _ in range(4)]
    blobs = assemble([t for _, t in cases])
    ref = llvm_disassemble(blobs)
    fails = []
    for ((x, y), text), blob, want in zip(cases, blobs, ref):
        inst = isa.decode(_words(blob) + [0xDEADBEEF], pc=0x40)
        got = isa.disassemble(inst)
        if norm(got) != norm(want) or inst.size != len(blob) or inst.info.kind != "valu" \
                or (inst.vopd[0].code, inst.vopd[1].code) != (x, y):
            fails.append(f"{text!r} [{blob.hex()}]: {got!r} != llvm {want!r} (size {inst.size})")
    assert len(cases) == 4 * 12 * 15
    assert not fails, "\n".join(fails[:30])


def _llvm_accepts(words: list[int]) -> bool:
    src = " ".join(f"0x{b:02x}" for b in struct.pack(f"<{len(words)}I", *words)) + "\n"
    p = subprocess.run([LLVM_MC, *MCPU, "-disassemble"], input=src, capture_output=True, text=True)
    return "invalid instruction encoding" not in p.stderr


def _raw(opx, opy, vsrcx1=2, vsrcy1=5, srcx0=257, srcy0=260):
    return [0xC8000000 | opx << 22 | opy << 17 | vsrcx1 << 9 | srcx0,
            1 << 17 | vsrcy1 << 9 | srcy0]


@needs_llvm
def test_invalid_encodings_rejected_like_llvm():
    """Opcodes outside LLVM 19's gfx1200 VOPD set (dot2acc 12/13, 14/15, Y 19..31), an X-only
    use of a Y-only opcode, a mov half with a vsrc1 field and DPP source codes."""
    bad = [_raw(12, 4), _raw(13, 4), _raw(14, 4), _raw(15, 4), _raw(3, 12), _raw(3, 19),
           _raw(3, 31), _raw(8, 4, vsrcx1=3), _raw(3, 8, vsrcy1=1), _raw(3, 4, srcx0=0xFA),
           _raw(3, 4, srcy0=0xE9)]
    for words in bad:
        assert not _llvm_accepts(words), [hex(w) for w in words]
        with pytest.raises(isa.DecodeError):
            isa.decode(words)
    good = _raw(8, 16, vsrcx1=0)
    assert _llvm_accepts(good)
    assert isa.disassemble(isa.decode(good)) == \
        "v_dual_mov_b32 v0, v1 :: v_dual_add_nc_u32 v3, v4, v5"


def test_vdsty_low_bit_and_literal():
    # vdstx = 255 (odd): vdsty = 2 * 127 + 0; one literal shared by fmaak (K) and src0
    i = isa.decode([0xC84401FF | 2 << 9, 0xFFFE0104, 0x40490FDB])
    assert (i.vopd[0].vdst, i.vopd[1].vdst) == (255, 254)
    assert i.size == 12 and i.literal == 0x40490FDB
    assert i.name == "v_dual_fmaak_f32 :: v_dual_fmamk_f32"
    with pytest.raises(isa.DecodeError):           # the literal dword is missing
        isa.decode([0xC84401FF, 0xFFFE0104])


# ----------------------------------------------------------------------------- semantics


def run(text, block=32, vgprs=16):
    model = Model(GlobalMemory(), assemble_program(text + "\ns_endpgm"), 0)
    model.run(Dispatch(entry=0, grid=(1, 1, 1), block=(block, 1, 1), vgprs=vgprs, lds_bytes=0))
    return model


def f32(x) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.uint32)


_SETUP = """
v_cvt_f32_u32 v2, v0
v_add_nc_u32 v8, 3, v0
v_cvt_f32_u32 v3, v8
v_mul_f32 v5, 0.5, v3
v_sub_nc_u32 v8, 40, v0
v_cvt_f32_u32 v1, v8
"""


def _setup_values():
    """v1 = 40 - lane, v2 = lane, v3 = lane + 3, v5 = (lane + 3) / 2 (float32)."""
    lane = LANES.astype(np.float32)
    return (np.float32(40) - lane, lane, lane + 3, (lane + 3) * np.float32(0.5))


@needs_llvm
def test_y_reads_the_register_x_writes_before_the_write():
    """X writes v1, Y reads v1: Y sees v1 as it was before the instruction."""
    v1, v2, v3, v5 = _setup_values()
    m = run(_SETUP + "v_dual_add_f32 v1, v2, v3 :: v_dual_mul_f32 v4, v1, v5")
    w = m.last_waves[0]
    assert (w.v[1] == f32(v2 + v3)).all()
    assert (w.v[4] == f32(v1 * v5)).all()          # the old v1, not v2 + v3
    # six setup instructions, the VOPD as one VALU instruction, s_endpgm
    assert m.stats.instructions == 8 and m.stats.by_kind["valu"] == 7
    assert m.stats.by_name["v_dual_add_f32 :: v_dual_mul_f32"] == 1


@needs_llvm
def test_swap_through_two_movs():
    w = run("v_mov_b32 v1, 11\nv_add_nc_u32 v2, 100, v0\n"
            "v_dual_mov_b32 v2, v1 :: v_dual_mov_b32 v1, v2").last_waves[0]
    assert (w.v[2] == 11).all() and (w.v[1] == 100 + LANES).all()


@needs_llvm
def test_fmaak_fmamk_share_the_literal_and_fmac_accumulates():
    """Integer-valued operands: the fused results are exact, so float32 numpy is the golden."""
    v1, v2, v3, v5 = _setup_values()
    text = _SETUP + ("v_mov_b32 v6, 2.0\n"
                     "v_dual_fmaak_f32 v0, v2, v3, 0x40400000 :: v_dual_fmamk_f32 v7, v5, 0x40400000, v3\n"
                     "v_dual_fmac_f32 v6, v2, v3 :: v_dual_mul_f32 v9, v5, v1")
    w = run(text).last_waves[0]
    three = np.float32(3)
    assert (w.v[0] == f32(v2 * v3 + three)).all()
    assert (w.v[7] == f32(v5 * three + v3)).all()
    assert (w.v[6] == f32(v2 * v3 + np.float32(2))).all()
    assert (w.v[9] == f32(v5 * v1)).all()


@needs_llvm
def test_cndmask_reads_vcc_and_integer_y_ops():
    text = ("v_lshlrev_b32 v3, 1, v0\nv_mov_b32 v1, 7\nv_mov_b32 v6, 5\n"
            "v_cmp_gt_u32 vcc_lo, 10, v0\n"
            "v_dual_cndmask_b32 v4, v1, v6 :: v_dual_lshlrev_b32 v5, v0, v3\n"
            "v_dual_max_num_f32 v8, 1.0, v1 :: v_dual_and_b32 v9, 6, v3\n"
            "v_dual_min_num_f32 v10, 1.0, v1 :: v_dual_add_nc_u32 v11, -1, v3")
    w = run(text).last_waves[0]
    assert (w.v[4] == np.where(LANES < 10, 5, 7)).all()        # VCC set: vsrc1, else src0
    assert (w.v[5] == ((2 * LANES).astype(np.uint64) << LANES.astype(np.uint64)) % 2**32).all()
    # v1 = 7 is a tiny denormal as a float: max(1.0, it) = 1.0, min = it
    assert (w.v[8] == f32(1.0)).all() and (w.v[10] == 7).all()
    assert (w.v[9] == (2 * LANES) & 6).all() and (w.v[11] == (2 * LANES - 1) % 2**32).all()


@needs_llvm
def test_inactive_lanes_keep_their_values():
    text = "v_mov_b32 v1, 1\nv_mov_b32 v2, 2\nv_dual_mov_b32 v1, 9 :: v_dual_mov_b32 v2, 8"
    w = run(text, block=20).last_waves[0]
    assert (w.v[1] == np.where(LANES < 20, 9, 0)).all()
    assert (w.v[2] == np.where(LANES < 20, 8, 0)).all()
