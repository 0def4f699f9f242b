"""DPP16 / DPP8 source forms and the cross-lane permutations: decoding and disassembly against
LLVM, execution in the model.

* Which opcodes have DPP forms: ``isa.dpp.supports`` against what llvm-mc-19 disassembles.
* Random DPP16/DPP8 encodings of every such opcode (_e32 and _e64 forms, random controls and
  modifiers) print exactly as ``llvm-mc -disassemble``; DPP assembly text round-trips.
* Semantics: small programs on the model against lane permutations computed here by hand from
  the definitions (RDNA 4 ISA guide; LLVM's DPP modifier syntax) with plain Python loops.
"""
from __future__ import annotations

import random
import re
import struct
import subprocess

import numpy as np
import pytest

import isa
from isa import Fmt
from isa import dpp as D
from sim.memory import GlobalMemory
from isa.abi import Dispatch
from sim.model import ExecutionError, Model
from tests.asmutil import assemble as assemble_program
from tests.test_isa_roundtrip import LLVM_MC, MCPU, assemble, llvm_disassemble, needs_llvm, norm

SEED = 20250702
NOP = 0xBF800000                          # s_nop 0: keeps LLVM in step after a refused word
LANES = list(range(32))
VCC_LO, EXEC_LO = 106, 126


# ----------------------------------------------------------------------------- LLVM oracle


def llvm_each(instances: list[list[int]]) -> list[tuple[str, int] | None]:
    """LLVM's (text, size in bytes) of each instance (dwords), or None where it refuses the
    first dword. One llvm-mc call: each instance on its own line, followed by s_nop words
    that what a refused instance leaves behind cannot run past."""
    lines = [" ".join(f"0x{b:02x}" for b in struct.pack(f"<{len(ws) + 6}I", *ws, *[NOP] * 6))
             for ws in instances]
    p = subprocess.run([LLVM_MC, *MCPU, "-disassemble", "-show-encoding"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True)
    refused = {int(m.group(1)) - 1 for m in re.finditer(r"<stdin>:(\d+):1: warning", p.stderr)}
    decoded = []
    for ln in p.stdout.splitlines():
        m = re.match(r"\s*(\S.*?)\s*; encoding: \[([^\]]*)\]", ln)
        if m:
            decoded.append((m.group(1), bytes(int(b, 16) for b in m.group(2).split(","))))
    out, k = [], 0
    for i, ws in enumerate(instances):
        if i in refused:
            out.append(None)
            continue
        first = struct.pack("<I", ws[0])
        while decoded[k][1][:4] != first:       # skip the s_nops and any leftovers
            k += 1
        out.append((decoded[k][0], len(decoded[k][1])))
        k += 1
    return out


# ----------------------------------------------------------------------------- encodings

_CTRLS = ([*range(0x100), *range(0x101, 0x110), *range(0x111, 0x120), *range(0x121, 0x130),
           0x140, 0x141, *range(0x150, 0x170)])


def _nmods(info) -> int:
    return next((int(f[-1]) for f in info.flags if f.startswith("mods")), 0)


def _dpp_word(rng, code: int, e32_mods: int = 0, regs: int = 256) -> int:
    """A DPP dword: random VGPR (below ``regs``) and controls; for _e32 DPP16, neg/abs on the
    first ``e32_mods`` sources."""
    word = rng.randrange(regs)
    if code != D.DPP16:
        return word | rng.getrandbits(24) << 8
    word |= rng.choice(_CTRLS) << 8 | rng.getrandbits(2) << 18 | rng.getrandbits(8) << 24
    for i in range(e32_mods):
        word |= rng.getrandbits(2) << (20 + 2 * i)
    return word


def _scalar_or_vgpr(rng) -> int:
    x = rng.random()
    if x < 0.5:
        return 256 + rng.randrange(256)
    if x < 0.75:
        return rng.randrange(106)
    return rng.choice([*range(128, 209), *range(240, 249)])


def _e32(info, rng, code: int) -> list[int]:
    reg = 128 if 16 in info.src_bits or info.dst_bits == 16 else 256   # fake16 _e32: v0..v127
    vdst, vsrc1 = rng.randrange(reg), rng.randrange(reg)
    mods = _nmods(info) if "neg" in info.flags and code == D.DPP16 else 0
    if info.fmt == Fmt.VOP1:
        w0 = 0x7E000000 | info.op << 9 | vdst << 17
    elif info.fmt == Fmt.VOP2:
        w0 = info.op << 25 | vdst << 17 | vsrc1 << 9
    else:
        w0 = 0x7C000000 | info.op << 17 | vsrc1 << 9
    return [w0 | code, _dpp_word(rng, code, min(mods, len(info.src_bits)), reg)]


def _e64(info, rng, code: int) -> list[int]:
    fl, n = info.flags, len(info.src_bits)
    sd = info.vop3_fmt == Fmt.VOP3SD
    op = info.op if info.fmt in (Fmt.VOP3, Fmt.VOP3SD) else info.vop3_op
    if info.fmt == Fmt.VOPC:
        vdst = EXEC_LO if "cmpx" in fl else rng.randrange(107)
    else:
        vdst = rng.randrange(256)
    w0 = 0xD4000000 | op << 16 | vdst
    srcs = [code] + [_scalar_or_vgpr(rng) for _ in range(n - 1)] + [0] * (3 - n)
    if info.name.startswith("v_cndmask_b") or ("carry_out" in fl and info.fmt == Fmt.VOP2):
        srcs[2] = rng.randrange(106)                 # the lane-mask SGPR
    if sum(s < 106 for s in srcs[1:]) > 2:
        srcs[1] = 256 + rng.randrange(256)
    w1 = srcs[0] | srcs[1] << 9 | srcs[2] << 18
    nm = min(_nmods(info), n)
    if "neg" in fl:
        w1 |= rng.getrandbits(nm) << 29
    if sd:
        w0 |= rng.randrange(106) << 8
    elif "abs" in fl:
        w0 |= rng.getrandbits(nm) << 8
    if "clamp" in fl:
        w0 |= rng.getrandbits(1) << 15
    if "omod" in fl:
        w1 |= rng.getrandbits(2) << 27
    if "opsel" in fl:
        w0 |= rng.getrandbits(n) << 11 | rng.getrandbits(1) << 14
    return [w0, w1, _dpp_word(rng, code)]


def _forms(info):
    """(tag, encoder) of the DPP-capable encodings an opcode has: _e32 and/or _e64."""
    out = []
    if info.fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC):
        out.append(("e32", _e32))
    if info.vop3_fmt is not None:
        out.append(("e64", _e64))
    return out


def _valu():
    return [i for i in isa.OPCODES if i.kind in ("valu", "vtrans")]


# ----------------------------------------------------------------------------- decoding


@needs_llvm
def test_dpp_capable_opcodes_match_llvm():
    """isa.dpp.supports(info) iff llvm-mc-19 disassembles that opcode's DPP16 and DPP8 forms;
    isa.decode accepts exactly those. (v_fmamk/fmaak_f32 are left out: their src0 field is
    read as a plain operand whatever its value, by isa.decode and the RTL decoder alike.)"""
    rng = random.Random(SEED)
    cases = [(info, tag, code, enc(info, rng, code)) for info in _valu()
             if "literal_k" not in info.flags
             for tag, enc in _forms(info) for code in (D.DPP16, D.DPP8)]
    texts = llvm_each([ws for *_, ws in cases])
    wrong = []
    for (info, tag, code, ws), text in zip(cases, texts):
        try:
            isa.decode(ws)
            ours = True
        except isa.DecodeError:
            ours = False
        if (text is not None) != D.supports(info) or ours != D.supports(info):
            wrong.append(f"{info.name} {tag} 0x{code:x}: llvm {'accepts' if text else 'refuses'},"
                         f" supports() {D.supports(info)}, isa.decode {ours}")
    assert not wrong, "\n".join(wrong)


@needs_llvm
def test_random_dpp_encodings_print_like_llvm():
    rng = random.Random(SEED + 1)
    cases = [(info, enc(info, rng, code)) for info in _valu() if D.supports(info)
             for _, enc in _forms(info) for code in (D.DPP16, D.DPP16, D.DPP8_FI, D.DPP8)]
    texts = llvm_each([ws for _, ws in cases])
    fails = []
    for (info, ws), ref in zip(cases, texts):
        raw = " ".join(f"{w:08x}" for w in ws)
        if ref is None or ref[1] != 4 * len(ws):
            fails.append(f"[{raw}] {info.name}: llvm refuses the generated encoding ({ref})")
            continue
        text = ref[0]
        inst = isa.decode(ws + [0xDEADBEEF])
        mine = isa.disassemble(inst)
        if norm(mine) != norm(text) or inst.size != 4 * len(ws) or inst.name != info.name:
            fails.append(f"[{raw}] {mine!r} != llvm {text!r}")
    assert len(cases) > 1000
    assert not fails, f"{len(fails)}/{len(cases)}:\n" + "\n".join(fails[:30])


_ASM = """
v_mov_b32_dpp v7, v5 row_share:0 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_add_nc_u32_dpp v5, v5, v5 row_shl:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_min_i32_dpp v3, v3, v3 row_shr:8 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v4, v4 dpp8:[0,1,2,3,0,0,0,0]
v_mov_b32_dpp v1, v2 dpp8:[7,6,5,4,3,2,1,0] fi:1
v_mov_b32_dpp v5, v11 row_half_mirror row_mask:0xa bank_mask:0x5 bound_ctrl:1
v_mov_b32_dpp v6, v11 row_xmask:1 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v1, v2 row_ror:3 row_mask:0x3 bank_mask:0x1 bound_ctrl:1 fi:1
v_add_f32_dpp v1, -v2, |v3| row_mirror row_mask:0xf bank_mask:0xf
v_add_f32_e64_dpp v1, -v2, |v3| clamp mul:2 row_mirror row_mask:0xf bank_mask:0xf
v_add_f32_e64_dpp v1, v2, s3 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_fma_f32_e64_dpp v1, v2, v3, v4 dpp8:[0,0,0,0,0,0,0,0]
v_cmp_eq_u32 vcc_lo, v1, v2 row_shl:1 row_mask:0xf bank_mask:0xf
v_cmpx_eq_u32_e64_dpp v1, v2 row_shl:1 row_mask:0xf bank_mask:0xf
v_cndmask_b32_dpp v1, v2, v3, vcc_lo row_shl:1 row_mask:0xf bank_mask:0xf
v_cndmask_b32_e64_dpp v1, v2, v3, s4 row_shl:1 row_mask:0xf bank_mask:0xf
v_add_co_ci_u32_dpp v1, vcc_lo, v2, v3, vcc_lo row_shl:1 row_mask:0xf bank_mask:0xf
v_add_co_u32_e64_dpp v42, vcc_lo, v2, v2 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_add3_u32_e64_dpp v1, v2, v3, v4 row_share:3 row_mask:0xf bank_mask:0xf
v_add_nc_u16_e64_dpp v1, v2, v3 op_sel:[1,1,1] row_xmask:15 row_mask:0xf bank_mask:0xf
v_permlanex16_b32 v8, v7, 0, 0 op_sel:[0,1]
v_permlane16_b32 v1, v2, s3, 0x1234 op_sel:[1,0]
v_permlane16_var_b32 v1, v2, v3 op_sel:[1,1]
ds_swizzle_b32 v13, v11 offset:swizzle(SWAP,1)
ds_swizzle_b32 v13, v11 offset:swizzle(BITMASK_PERM,"01pi0")
ds_swizzle_b32 v13, v11 offset:0xe005
ds_bpermute_b32 v6, v8, v1 offset:16
ds_permute_b32 v10, v8, v9
"""


@needs_llvm
def test_assembly_round_trip():
    """DPP and permutation text (much of it as clang-19 emits it for ockl's sub-group
    functions and the DPP builtins) assembles to what isa decodes and prints back."""
    lines = [ln for ln in _ASM.strip().splitlines()]
    blobs = assemble(lines)
    for line, blob, ref in zip(lines, blobs, llvm_disassemble(blobs)):
        words = [int.from_bytes(blob[i:i + 4], "little") for i in range(0, len(blob), 4)]
        inst = isa.decode(words + [0])
        assert inst.size == len(blob), line
        assert norm(isa.disassemble(inst)) == norm(ref), line


def test_dpp_fields():
    # v_mov_b32_dpp v1, v2 row_ror:3 row_mask:0x3 bank_mask:0x1 bound_ctrl:1 fi:1
    i = isa.decode([0x7E0202FA, 0x310D2302])
    assert i.dpp == D.Dpp(vsrc0=2, ctrl=0x123, fi=1, bound_ctrl=1, row_mask=3, bank_mask=1)
    # v_mov_b32_dpp v1, v2 dpp8:[7,6,5,4,3,2,1,0] fi:1
    i = isa.decode([0x7E0202EA, 0x05397702])
    assert i.dpp.is_dpp8 and i.dpp.sel == (7, 6, 5, 4, 3, 2, 1, 0) and i.dpp.fi == 1
    # the raw src0 field keeps the DPP code (tools tell the form from it)
    assert i.f["src0"] == D.DPP8_FI
    with pytest.raises(isa.DecodeError):           # DPP dword missing
        isa.decode([0x7E0202FA])


# ----------------------------------------------------------------------------- semantics


def run(text, block=32, vgprs=24, user=None):
    model = Model(GlobalMemory(), assemble_program(text + "\ns_endpgm"), 0)
    model.run(Dispatch(entry=0, grid=(1, 1, 1), block=(block, 1, 1), vgprs=vgprs, lds_bytes=0,
                       user_sgprs=user or {}))
    return model.last_waves[0]


def dpp16_source(ctrl: int, lane: int) -> int | None:
    """The lane ``lane`` reads under a DPP16 control, None when it lies outside the row."""
    row, i = lane - lane % 16, lane % 16
    if ctrl <= 0xFF:
        return lane - lane % 4 + (ctrl >> (2 * (lane % 4)) & 3)
    kind, n = ctrl & 0x1F0, ctrl & 0xF
    if kind == 0x100:
        return lane + n if i + n < 16 else None
    if kind == 0x110:
        return lane - n if i - n >= 0 else None
    if kind == 0x120:
        return row + (i - n) % 16
    if kind == 0x150:
        return row + n
    if kind == 0x160:
        return row + (i ^ n)
    return {0x140: row + 15 - i, 0x141: lane - lane % 8 + 7 - lane % 8}[ctrl]


def dpp16_expect(ctrl, src, old, active, bound_ctrl=0, fi=0, row_mask=0xF, bank_mask=0xF):
    """v_mov_b32_dpp's result lane by lane, written out from the rules."""
    out = []
    for lane in LANES:
        s = dpp16_source(ctrl, lane)
        valid = s is not None and (fi or s in active)
        enabled = lane in active and row_mask >> (lane // 16) & 1 and \
            bank_mask >> (lane % 16 // 4) & 1
        if enabled and valid:
            out.append(src[s])
        elif enabled and bound_ctrl:
            out.append(0)
        else:
            out.append(old[lane])
    return out


_SRC = [1000 + 7 * lane for lane in LANES]       # v2 in the programs below
_OLD = [5 + lane for lane in LANES]              # v3 before the DPP move
_PROLOGUE = "v_mul_u32_u24 v2, 7, v0\nv_add_nc_u32 v2, 0x3e8, v2\nv_add_nc_u32 v3, 5, v0\n"


@needs_llvm
@pytest.mark.parametrize("ctrl", [0x1B, 0xE4, 0x00, 0x101, 0x104, 0x10F, 0x111, 0x118, 0x121,
                                  0x12F, 0x140, 0x141, 0x150, 0x15D, 0x161, 0x16F])
@pytest.mark.parametrize("bc", [0, 1])
def test_dpp16_controls(ctrl, bc):
    """Every kind of control, with lanes 25..31 inactive (some sources invalid)."""
    text = _PROLOGUE + f"v_mov_b32_dpp v3, v2 {D.ctrl_text(ctrl)} row_mask:0xf bank_mask:0xf" + \
        (" bound_ctrl:1" if bc else "")
    w = run(text, block=25)
    active = set(range(25))
    old = [_OLD[i] if i in active else 0 for i in LANES]
    assert list(w.v[3]) == dpp16_expect(ctrl, _SRC, old, active, bound_ctrl=bc)


@needs_llvm
def test_dpp16_explicit_permutations():
    """A few results written out in full, independent of any formula."""
    w = run(_PROLOGUE + "v_mov_b32_dpp v4, v0 row_mirror row_mask:0xf bank_mask:0xf\n"
            "v_mov_b32_dpp v5, v0 row_half_mirror row_mask:0xf bank_mask:0xf\n"
            "v_mov_b32_dpp v6, v0 row_share:5 row_mask:0xf bank_mask:0xf\n"
            "v_mov_b32_dpp v7, v0 row_ror:4 row_mask:0xf bank_mask:0xf\n"
            "v_mov_b32_dpp v8, v0 quad_perm:[3,3,0,1] row_mask:0xf bank_mask:0xf")
    assert list(w.v[4]) == [*range(15, -1, -1), *range(31, 15, -1)]
    assert list(w.v[5]) == [7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,
                            23, 22, 21, 20, 19, 18, 17, 16, 31, 30, 29, 28, 27, 26, 25, 24]
    assert list(w.v[6]) == [5] * 16 + [21] * 16
    assert list(w.v[7]) == [12, 13, 14, 15, *range(0, 12), 28, 29, 30, 31, *range(16, 28)]
    assert list(w.v[8][:8]) == [3, 3, 0, 1, 7, 7, 4, 5]


@needs_llvm
@pytest.mark.parametrize("row_mask,bank_mask", [(0x1, 0xF), (0x2, 0x5), (0xF, 0xA), (0x0, 0xF)])
def test_dpp16_row_and_bank_masks(row_mask, bank_mask):
    text = _PROLOGUE + (f"v_mov_b32_dpp v3, v2 quad_perm:[1,0,3,2] row_mask:0x{row_mask:x} "
                        f"bank_mask:0x{bank_mask:x}")
    w = run(text)
    assert list(w.v[3]) == dpp16_expect(0xB1, _SRC, _OLD, set(LANES), row_mask=row_mask,
                                        bank_mask=bank_mask)


@needs_llvm
@pytest.mark.parametrize("fi", [0, 1])
def test_fetch_inactive(fi):
    """row_shr:1 with only lanes 0..15 but 4 active: lane 5 reads the inactive lane 4 only
    with fi:1 (with fi:0 it is invalid and bound_ctrl:1 makes it 0)."""
    text = (_PROLOGUE + "s_mov_b32 exec_lo, 0xffef\n"
            "v_mov_b32_dpp v3, v2 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1"
            + (" fi:1" if fi else "") + "\ns_mov_b32 exec_lo, -1")
    w = run(text)
    active = set(range(16)) - {4}
    assert list(w.v[3]) == dpp16_expect(0x111, _SRC, _OLD, active, bound_ctrl=1, fi=fi)
    assert w.v[3][5] == (_SRC[4] if fi else 0)


@needs_llvm
@pytest.mark.parametrize("fi", [0, 1])
def test_dpp8(fi):
    sel = [3, 0, 7, 7, 1, 2, 6, 5]
    text = (_PROLOGUE + "s_mov_b32 exec_lo, 0x7fffff7f\n"
            f"v_mov_b32_dpp v3, v2 dpp8:[{','.join(map(str, sel))}]" + (" fi:1" if fi else ""))
    w = run(text)
    active = set(LANES) - {7, 31}
    want = []
    for lane in LANES:
        s = lane - lane % 8 + sel[lane % 8]
        want.append((_SRC[s] if fi or s in active else 0) if lane in active else _OLD[lane])
    assert list(w.v[3]) == want


@needs_llvm
def test_e32_modifiers_and_vop3_dpp():
    """v_add_f32_dpp with -src0 and |src1|; v_add3_u32_e64_dpp (src1 an SGPR);
    v_cmp_gt_u32 (VOPC) DPP into VCC; v_add_co_u32_e64_dpp's carry-out."""
    text = ("v_cvt_f32_u32 v1, v0\nv_sub_nc_u32 v4, 3, v0\nv_cvt_f32_i32 v2, v4\n"
            "v_add_f32_dpp v5, -v1, |v2| row_shl:1 row_mask:0xf bank_mask:0xf bound_ctrl:1\n"
            "s_mov_b32 s7, 100\n"
            "v_add3_u32_e64_dpp v6, v0, s7, v0 row_mirror row_mask:0xf bank_mask:0xf\n"
            "v_cmp_gt_u32 vcc_lo, v0, v0 quad_perm:[1,1,1,1] row_mask:0xf bank_mask:0xf\n"
            "s_mov_b32 s8, vcc_lo\n"
            "v_bfrev_b32 v7, 1\n"
            "v_add_co_u32_e64_dpp v8, s9, v7, v0 row_share:15 row_mask:0xf bank_mask:0xf")
    w = run(text)
    f = np.float32
    want5 = [(-f(l + 1) if l % 16 < 15 else -f(0)) + abs(f(3 - l)) for l in LANES]
    assert list(w.v[5].view(np.float32)) == want5
    mirror = [15 - l % 16 + l // 16 * 16 for l in LANES]
    assert list(w.v[6]) == [mirror[l] + 100 + l for l in LANES]
    assert w.s[8] == sum(1 << l for l in LANES if l - l % 4 + 1 > l)
    # v7 = 0x80000000 in every lane; row_share:15 reads lane 15 / 31 of v7: a carry when
    # 0x80000000 + lane >= 2^32, never; then the sum is 0x80000000 + lane
    assert list(w.v[8]) == [0x80000000 + l for l in LANES] and w.s[9] == 0


@needs_llvm
def test_invalid_dpp_ctrl_is_a_model_error():
    with pytest.raises(ExecutionError, match="dpp_ctrl 0x130 is not valid"):
        run(".long 0x7E0202FA, 0xFF013002")


# ockl's sub_group_reduce_add for int (clang-19 -O2, gfx1200), then sub_group_scan_inclusive_add
# (the scan reads its input from v14 here)
_REDUCE = """
v_add_nc_u32_dpp v5, v5, v5 row_shl:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_add_nc_u32_dpp v5, v5, v5 row_shl:2 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_add_nc_u32_dpp v5, v5, v5 row_shl:4 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_add_nc_u32_dpp v5, v5, v5 row_shl:8 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_mov_b32_dpp v7, v5 row_share:0 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_permlanex16_b32 v8, v7, 0, 0 op_sel:[0,1]
v_add_nc_u32_e32 v7, v8, v7
"""
_SCAN = """
v_mbcnt_lo_u32_b32 v9, -1, 0
v_bfe_i32 v11, v9, 4, 1
v_add_nc_u32_dpp v5, v14, v14 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_add_nc_u32_dpp v5, v5, v5 row_shr:2 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_add_nc_u32_dpp v5, v5, v5 row_shr:4 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_add_nc_u32_dpp v10, v5, v5 row_shr:8 row_mask:0xf bank_mask:0xf bound_ctrl:1
v_permlanex16_b32 v12, v10, -1, -1 op_sel:[0,1]
v_and_b32_e32 v11, v11, v12
v_add_nc_u32_e32 v10, v11, v10
"""


@needs_llvm
@pytest.mark.parametrize("block", [32, 27])
def test_ockl_subgroup_reduce_and_scan(block):
    """The instruction sequences clang emits for sub_group_reduce_add / scan_inclusive_add:
    every active lane gets the sum over the active lanes / over active lanes <= itself."""
    x = [37 * l - 500 for l in LANES]
    text = ("v_mul_u32_u24 v5, 37, v0\nv_subrev_nc_u32 v5, 0x1f4, v5\nv_mov_b32 v14, v5\n"
            + _REDUCE + _SCAN)
    w = run(text, block=block)
    act = range(block)
    assert [int(v) for v in w.v[7][:block]] == [sum(x[:block]) % 2**32] * block
    assert [int(v) for v in w.v[10][:block]] == [sum(x[:l + 1]) % 2**32 for l in act]


# ----------------------------------------------------------------------------- permutations


@needs_llvm
@pytest.mark.parametrize("op_sel", ["", " op_sel:[1,0]", " op_sel:[0,1]", " op_sel:[1,1]"])
@pytest.mark.parametrize("cross", [False, True])
def test_permlane16(op_sel, cross):
    sel = [(5 * i + 3) % 16 for i in range(16)]
    lo = sum(s << (4 * i) for i, s in enumerate(sel[:8]))
    hi = sum(s << (4 * i) for i, s in enumerate(sel[8:]))
    name = "v_permlanex16_b32" if cross else "v_permlane16_b32"
    text = (_PROLOGUE + f"s_mov_b32 s0, 0x{lo:x}\ns_mov_b32 s1, 0x{hi:x}\n"
            "s_mov_b32 exec_lo, 0xfffeffbf\n"
            f"{name} v3, v2, s0, s1{op_sel}\ns_mov_b32 exec_lo, -1")
    w = run(text)
    fi, bc = "[1," in op_sel, ",1]" in op_sel
    active = set(LANES) - {6, 16}
    want = []
    for lane in LANES:
        row = lane // 16
        src = 16 * ((1 - row) if cross else row) + sel[lane % 16]
        if lane not in active:
            want.append(_OLD[lane])
        elif fi or src in active:
            want.append(_SRC[src])
        else:
            want.append(0 if bc else _OLD[lane])
    assert list(w.v[3]) == want


@needs_llvm
def test_permlane16_var():
    text = (_PROLOGUE + "v_mul_u32_u24 v4, 11, v0\n"
            "v_permlanex16_var_b32 v3, v2, v4 op_sel:[1,0]")
    w = run(text)
    assert list(w.v[3]) == [_SRC[16 * (1 - l // 16) + (11 * l) % 16] for l in LANES]


@needs_llvm
@pytest.mark.parametrize("offset,src", [
    ("swizzle(SWAP,1)", lambda l: l ^ 1),
    ("swizzle(SWAP,16)", lambda l: l ^ 16),
    ("swizzle(REVERSE,8)", lambda l: l ^ 7),
    ("swizzle(BROADCAST,4,3)", lambda l: (l & ~3) | 3),
    ('swizzle(BITMASK_PERM,"01pi0")', lambda l: 0b01000 | (l & 4) | (~l & 2)),
    ("swizzle(QUAD_PERM,2,0,3,1)", lambda l: (l & ~3) | [2, 0, 3, 1][l & 3]),
])
def test_ds_swizzle(offset, src):
    w = run(_PROLOGUE + "s_mov_b32 exec_lo, 0xfffffffb\n"
            f"ds_swizzle_b32 v3, v2 offset:{offset}\ns_wait_dscnt 0\ns_mov_b32 exec_lo, -1")
    want = [_OLD[l] if l == 2 else (0 if src(l) == 2 else _SRC[src(l)]) for l in LANES]
    assert list(w.v[3]) == want


@needs_llvm
def test_ds_permute_and_bpermute():
    """Lane l names lane (3 l + 1) % 32 (a byte address, times 4, plus 32 wrapping); lane 9 is
    inactive: bpermute reads 0 from it; permute does not send from it."""
    text = (_PROLOGUE + "v_mul_u32_u24 v4, 12, v0\nv_add_nc_u32 v4, 0x84, v4\n"
            "s_mov_b32 exec_lo, 0xfffffdff\n"
            "ds_bpermute_b32 v5, v4, v2 offset:0\n"
            "ds_permute_b32 v6, v4, v2\ns_wait_dscnt 0\ns_mov_b32 exec_lo, -1")
    w = run(text)
    dst = [(3 * l + 1) % 32 for l in LANES]              # (12 l + 132) / 4 = 3 l + 33
    active = set(LANES) - {9}
    assert list(w.v[5]) == [0 if l == 9 else (_SRC[dst[l]] if dst[l] in active else 0)
                            for l in LANES]
    sent = {dst[l]: _SRC[l] for l in sorted(active)}     # the highest sender wins
    assert list(w.v[6]) == [0 if l == 9 else sent.get(l, 0) for l in LANES]
