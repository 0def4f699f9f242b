"""The float MODE in the model (sim.fpmode, docs/model.md "Float mode"): the transcendental
unit's denormal rule, FP_DENORM flushing and the directed roundings, MODE from the kernel
descriptor and from s_round_mode / s_denorm_mode / s_setreg, the RTL's refusal of another
mode, and the decisions on clamp of -0, v_med3 of signed zeros, FP16 inline constants in
16-bit integer operands and s_bfe with a wide field."""
from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

import dcu
import isa
from dcu.backends.rtlcheck import RtlUnsupportedError, float_mode_users, unsupported
from sim import execute, fpmode
from sim.model import ExecutionError
from sim.wave import EXEC, ModelError, Wave
from tests import asmkernel, laneops
from tests.asmutil import assemble, needs_llvm

pytestmark = needs_llvm

U32 = np.uint32
ONE, MONE, HALF, TWO = 0x3F80_0000, 0xBF80_0000, 0x3F00_0000, 0x4000_0000
PINF, NINF, NZERO, DNAN = 0x7F80_0000, 0xFF80_0000, 0x8000_0000, 0xFFC0_0000
MAXF, MINN = 0x7F7F_FFFF, 0x0080_0000


def f2b(x: float) -> int:
    return int(np.float32(x).view(U32))


def run(text: str, v: dict | None = None, s: dict | None = None) -> Wave:
    """laneops.run with the engine's mode rule: an instruction executed while the wave's MODE
    is not the default runs through sim.fpmode.wrap (as sim.model does)."""
    w = Wave(0, 64, 0)
    for r, x in (v or {}).items():
        w.v[r] = np.broadcast_to(np.asarray(x, dtype=np.uint64).astype(U32), (32,))
    for code, x in (s or {}).items():
        w.s[code] = int(x) & 0xFFFF_FFFF
    w.s[EXEC] = 0xFFFF_FFFF
    for inst in isa.decode_program(assemble(text)):
        w.pc = inst.pc + inst.size
        h = execute.build(inst)
        if w.mode != fpmode.DEFAULT_MODE:
            h = fpmode.wrap(inst, h, w.mode)
        h(w, None)
    return w


def lane0(w: Wave, r: int) -> int:
    return int(w.v[r][0])


# --------------------------------------------------------------------------------------
# 1. The transcendental unit: denormal sources read as zeros, denormal results flushed
@pytest.mark.parametrize("op,x,want", [
    ("v_log_f32", 0x8000_0001, NINF), ("v_log_f32", 0x0000_0001, NINF),        # log(+-0) = -inf
    ("v_rcp_f32", 0x0000_0001, PINF), ("v_rcp_f32", 0x8040_0000, NINF),
    ("v_rcp_f32", 0x7F00_0000, 0), ("v_rcp_f32", 0xFF00_0000, NZERO),          # 2^-127: flushed
    ("v_rsq_f32", 0x0000_0001, PINF), ("v_rsq_f32", 0x807F_FFFF, NINF),
    ("v_sqrt_f32", 0x8000_0001, NZERO), ("v_sqrt_f32", 0x007F_FFFF, 0),
    ("v_exp_f32", 0x0000_0001, ONE), ("v_exp_f32", 0x8000_0001, ONE),
    ("v_exp_f32", f2b(-130.0), 0), ("v_exp_f32", f2b(-126.0), MINN),
    ("v_sin_f32", 0x8000_0001, NZERO), ("v_cos_f32", 0x0000_0003, ONE),
])
def test_f32_transcendentals_take_no_denormals(op, x, want):
    w = laneops.run(f"{op} v1, v2", v={2: x})
    assert lane0(w, 1) == want, hex(lane0(w, 1))


def test_scalar_transcendentals_follow_the_vector_rule():
    w = laneops.run("v_s_log_f32 s4, s2\nv_s_rcp_f32 s5, s3", s={2: 0x8000_0001, 3: 0x0000_0010})
    assert (w.s[4], w.s[5]) == (NINF, PINF)


def test_f16_transcendentals_keep_denormals():
    """v_rcp_f16 / v_rsq_f16 support denormals (LLVM AMDGPU); so do sqrt and log in the model."""
    h = np.float16
    den = h(2.0 ** -24)
    w = laneops.run("v_sqrt_f16 v1, v2\nv_log_f16 v3, v2\nv_rcp_f16 v4, v5",
                    v={2: int(den.view(np.uint16)), 5: int(h(2.0 ** -15).view(np.uint16))})
    assert lane0(w, 1) & 0xFFFF == int(h(2.0 ** -12).view(np.uint16))
    assert lane0(w, 3) & 0xFFFF == int(h(-24.0).view(np.uint16))
    assert lane0(w, 4) & 0xFFFF == int(h(2.0 ** 15).view(np.uint16))


# --------------------------------------------------------------------------------------
# 2. FP_DENORM flushing
def test_flush_source_and_result_f32():
    """s_denorm_mode 0xc: f32 FLUSH_SRC_DST, f16/f64 kept."""
    den, nden = 0x0040_0000, 0x8040_0000
    w = run("s_denorm_mode 0xc\n"
            "v_mul_f32 v1, v2, 0.5\nv_add_f32 v3, v4, 0\nv_max_num_f32 v5, v2, 0\n"
            "v_floor_f32 v6, v4\nv_mov_b32 v7, v2\nv_cmp_eq_f32 vcc_lo, v2, 0\n"
            "v_cmp_class_f32 s10, v2, 0x80\nv_mul_f16 v8, v9, 1.0\nv_fract_f32 v10, v4",
            v={2: den, 4: nden, 9: 0x0200})
    assert [lane0(w, r) for r in (1, 3, 5, 6, 7)] == [0, 0, 0, NZERO, den]
    assert w.s[106] == 0xFFFF_FFFF           # denormal == 0 once flushed
    assert w.s[10] == 0xFFFF_FFFF            # v_cmp_class sees the +denormal (never flushed)
    assert lane0(w, 8) & 0xFFFF == 0x0200    # f16 denormals still kept
    assert lane0(w, 10) == 0                 # fract(-0) = +0 (kept: fract(-tiny) = 0x3f7fffff)


def test_flush_only_results_or_only_sources():
    den = 0x0040_0000
    w = run("s_denorm_mode 0xd\nv_mul_f32 v1, v2, 2.0\nv_mul_f32 v3, v2, 0.5", v={2: den})
    assert (lane0(w, 1), lane0(w, 3)) == (MINN, 0)          # sources kept, result flushed
    w = run("s_denorm_mode 0xe\nv_mul_f32 v1, v2, 2.0\nv_mul_f32 v3, v4, 0.5", v={2: den, 4: MINN})
    assert (lane0(w, 1), lane0(w, 3)) == (0, den)           # sources flushed, results kept


def test_flush_f16_and_f64():
    w = run("s_denorm_mode 0x3\nv_mul_f16 v1, v2, 1.0\nv_mul_f32 v3, v4, 1.0\n"
            "v_mul_f64 v[6:7], v[8:9], 1.0\nv_cvt_f16_f32 v10, v11",
            v={2: 0x0200, 4: 0x0040_0000, 8: 1, 9: 0, 11: f2b(2.0 ** -20)})
    assert lane0(w, 1) & 0xFFFF == 0 and lane0(w, 3) == 0x0040_0000
    assert (lane0(w, 6), lane0(w, 7)) == (0, 0)
    assert lane0(w, 10) & 0xFFFF == 0        # 2^-20 is an f16 denormal: flushed result


def test_descriptor_mode_reaches_the_waves(tmp_path):
    """A kernel assembled with .amdhsa_float_denorm_mode_32 0 flushes f32 denormals; the same
    kernel in clang's mode keeps them. The RTL backends refuse the first before elaboration."""
    body = """  s_load_b64 s[2:3], s[0:1], 0x0
  v_mov_b32 v1, 0x400000
  v_mul_f32 v1, 0.5, v1
  v_lshlrev_b32 v0, 2, v0
  s_wait_kmcnt 0x0
  global_store_b32 v0, v1, s[2:3]
  s_endpgm"""
    src = asmkernel.source("k", body).replace(".amdhsa_float_denorm_mode_32 3",
                                               ".amdhsa_float_denorm_mode_32 0")
    (tmp_path / "k.s").write_text(src)
    flush = dcu.load_program(tmp_path / "k.s").kernel("k")
    keep = asmkernel.load(tmp_path, "keep", body)
    assert (flush.float_mode, keep.float_mode) == (0xC0, 0xF0)
    for kernel, want in ((flush, 0), (keep, 0x0020_0000)):
        out = np.zeros(32, U32)
        assert dcu.launch(kernel, 1, 32, [out]).buffers[0].tolist() == [want] * 32
    assert [f.name for f in float_mode_users(flush)] == ["v_mul_f32"] and float_mode_users(keep) == []
    with pytest.raises(RtlUnsupportedError, match=r"float mode 0xc0 .*v_mul_f32 at 0x"):
        dcu.launch(flush, 1, 32, [np.zeros(32, U32)], backend="rtl", config="tiny")


def test_a_refused_rounding_names_wave_and_pc(tmp_path):
    src = asmkernel.source("r", "  v_rcp_f32 v1, v0\n  s_endpgm").replace(
        ".amdhsa_float_denorm_mode_32 3", ".amdhsa_float_denorm_mode_32 3\n    .amdhsa_float_round_mode_32 1")
    (tmp_path / "r.s").write_text(src)
    kernel = dcu.load_program(tmp_path / "r.s").kernel("r")
    assert kernel.float_mode == 0xF1
    with pytest.raises(ExecutionError,
                       match=r"wave 0 at PC 0x[0-9a-f]+: v_rcp_f32_e32 .*: v_rcp_f32: round toward \+inf"):
        dcu.launch(kernel, 1, 32, [])


def test_mode_instructions_are_refused_by_the_rtl(tmp_path):
    kernel = asmkernel.load(tmp_path, "m", "  s_round_mode 0x3\n  s_denorm_mode 0xc\n  s_endpgm")
    assert [f.name for f in unsupported(kernel)] == ["s_round_mode", "s_denorm_mode"]


def test_getreg_setreg_mode():
    w = run("s_round_mode 0x3\ns_getreg_b32 s5, hwreg(HW_REG_MODE, 0, 8)\n"
            "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 0xc\ns_getreg_b32 s6, hwreg(HW_REG_MODE, 4, 4)\n"
            "s_setreg_b32 hwreg(HW_REG_MODE, 0, 2), s3", s={3: 1})
    assert (w.s[5], w.s[6], w.mode) == (0xF3, 0xC, 0xC1)
    with pytest.raises(ModelError, match="MODE bits 0x100"):
        run("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 8, 1), 1")
    with pytest.raises(ModelError, match="hardware register 2"):
        run("s_getreg_b32 s5, hwreg(HW_REG_STATUS)")


# --------------------------------------------------------------------------------------
# Directed rounding: independent exact reference
def round_f32(v: Fraction, mode: int) -> int:
    """float32 bits of the exact rational v rounded in mode (0 RNE, 1 +inf, 2 -inf, 3 zero);
    a zero v is a zero sum of nonzero addends: -0 toward -inf, else +0 (IEEE 754)."""
    if v == 0:
        return NZERO if mode == 2 else 0
    neg = v < 0
    a = -v if neg else v
    e = max(a.numerator.bit_length() - a.denominator.bit_length() + 1, -125)
    while Fraction(2) ** (e - 1) > a and e > -125:
        e -= 1
    q = a / Fraction(2) ** (e - 24)                       # significand scaled to 24 bits
    n, rem = divmod(q.numerator, q.denominator)
    frac = Fraction(rem, q.denominator)
    up = {0: frac > Fraction(1, 2) or (frac == Fraction(1, 2) and n & 1),
          1: frac > 0 and not neg, 2: frac > 0 and neg, 3: False}[mode]
    n += up
    value = Fraction(n) * Fraction(2) ** (e - 24)
    if value >= Fraction(2) ** 128:
        to_inf = mode == 0 or (mode == 1 and not neg) or (mode == 2 and neg)
        bits = PINF if to_inf else MAXF
    else:
        bits = int(np.float32(float(value)).view(U32))     # exact: value is a float32
    return bits | (0x8000_0000 if neg else 0)


def exact(b: int) -> Fraction:
    return Fraction(float(np.uint32(b).view(np.float32)))


@pytest.mark.parametrize("mode", [1, 2, 3])
def test_directed_rounding_matches_exact_reference(mode):
    rng = random.Random(mode)
    a, b, c = ([rng.getrandbits(32) & 0xBFFF_FFFF | 0x0080_0000 for _ in range(32)] for _ in range(3))
    a[0], b[0], c[0] = MAXF, MAXF, MAXF                    # overflow
    a[1], b[1], c[1] = 0x0080_0001, 0x3F00_0001, 0x0000_0000  # below the normal range
    w = run(f"s_round_mode {mode:#x}\nv_add_f32 v4, v1, v2\nv_mul_f32 v5, v1, v2\nv_fma_f32 v6, v1, v2, v3\n"
            "v_sub_f32 v7, v1, v2", v={1: a, 2: b, 3: c})
    for i in range(32):
        x, y, z = exact(a[i]), exact(b[i]), exact(c[i])
        assert int(w.v[4][i]) == round_f32(x + y, mode), (i, hex(a[i]), hex(b[i]))
        assert int(w.v[5][i]) == round_f32(x * y, mode), (i, hex(a[i]), hex(b[i]))
        assert int(w.v[6][i]) == round_f32(x * y + z, mode), (i, hex(a[i]), hex(b[i]), hex(c[i]))
        assert int(w.v[7][i]) == round_f32(x - y, mode), (i, hex(a[i]), hex(b[i]))


def test_directed_rounding_cases():
    tiny = f2b(2.0 ** -30)
    w = run("s_round_mode 0x2\nv_sub_f32 v1, v2, v2\nv_add_f32 v3, 0, 0\nv_add_f32 v4, v5, v6",
            v={2: ONE, 5: MONE, 6: 0x8000_0000 | tiny})
    assert (lane0(w, 1), lane0(w, 3), lane0(w, 4)) == (NZERO, 0, 0xBF80_0001)  # x - x = -0 toward -inf
    w = run("s_round_mode 0x1\nv_cvt_f32_i32 v1, v2\nv_mul_f32 v3, 1, 0.5\nv_ldexp_f32 v4, 1.0, -150",
            v={2: (1 << 24) + 1})
    assert (lane0(w, 1), lane0(w, 3), lane0(w, 4)) == (0x4B80_0001, 1, 1)
    w = run("s_round_mode 0x4\nv_cvt_f16_f32 v1, v2\nv_add_f16 v3, 1.0, v4\nv_add_f32 v5, 1.0, v6",
            v={2: f2b(1.0 + 2.0 ** -12), 4: 0x0001, 6: tiny})   # f16/f64 toward +inf only
    assert (lane0(w, 1) & 0xFFFF, lane0(w, 3) & 0xFFFF, lane0(w, 5)) == (0x3C01, 0x3C01, ONE)
    w = run("s_round_mode 0xc\nv_add_f64 v[2:3], 1.0, v[4:5]", v={4: 0, 5: 0xBC30_0000})  # 1 - 2^-60
    assert (lane0(w, 2), lane0(w, 3)) == (0xFFFF_FFFF, 0x3FEF_FFFF)
    w = run("s_round_mode 0x3\nv_cvt_f32_f64 v1, v[4:5]\ns_round_mode 0x0\nv_cvt_f32_f64 v2, v[4:5]",
            v={4: 0x1040_0000, 5: 0x3FF0_0000})             # 1 + 2^-24 + 2^-30: f32 rounding field
    assert (lane0(w, 1), lane0(w, 2)) == (ONE, ONE + 1)


def test_unimplemented_rounding_is_refused():
    with pytest.raises(ModelError, match=r"v_rcp_f32: round toward \+inf \(f32 FP_ROUND 1\)"):
        run("s_round_mode 0x1\nv_rcp_f32 v1, v2")
    with pytest.raises(ModelError, match=r"v_sqrt_f16: round toward zero \(f16/f64 FP_ROUND 3\)"):
        run("s_round_mode 0xc\nv_sqrt_f16 v1, v2")
    run("s_round_mode 0xc\nv_rcp_f32 v1, v2\nv_min_num_f16 v3, v4, v5")       # unaffected or exact
    with pytest.raises(ModelError, match=r"v_fma_mix_f32: FP_DENORM 0xc"):
        run("s_denorm_mode 0xc\nv_fma_mix_f32 v1, v2, v3, v4")
    with pytest.raises(ModelError, match=r"v_add_f64: omod with FP64 result denormals flushed"):
        run("s_denorm_mode 0x3\nv_add_f64_e64 v[0:1], v[2:3], v[4:5] mul:2")


# --------------------------------------------------------------------------------------
# 3. Disputed items
def test_clamp_keeps_negative_zero():
    """LLVM constant-folds the clamp of -0.0 to -0.0 (llc-19: fmed3(-0, 0, 1) -> 0x80000000)."""
    w = run("v_add_f32_e64 v1, v2, v2 clamp\nv_add_f32_e64 v3, v4, v4 clamp\nv_add_f16_e64 v5, v6, v6 clamp",
            v={2: NZERO, 4: MONE, 6: 0x8000})
    assert (lane0(w, 1), lane0(w, 3), lane0(w, 5) & 0xFFFF) == (NZERO, 0, 0x8000)


def test_med3_compares_as_floats():
    """Pseudocode: max3(-0, +0, -1) = +0 == S0 (-0) as floats, so D = max_num(+0, -1) = +0."""
    w = run("v_med3_num_f32 v1, v2, v3, v4\nv_med3_num_f16 v5, v6, v7, v8",
            v={2: NZERO, 3: 0, 4: MONE, 6: 0x8000, 7: 0, 8: 0xBC00})
    assert (lane0(w, 1), lane0(w, 5) & 0xFFFF) == (0, 0)


def test_float_inline_constants_in_16_bit_integer_operands_are_fp16():
    w = run("v_add_nc_u16 v1, v2, 1.0\nv_add_nc_u16 v3, v2, 0.15915494\nv_mul_lo_u16 v4, v2, -4.0",
            v={2: 5})
    assert (lane0(w, 1), lane0(w, 3), lane0(w, 4)) == (0x3C05, 0x311D, (5 * 0xC400) & 0xFFFF)


def _bfe_golden(s0: int, s1: int, w: int) -> int:
    """The pseudocode with unbounded integers: tmp = (S0 >> offset) & ((1 << width) - 1), then
    signext_from_bit(tmp, width), truncated to w bits."""
    off, width = s1 & (w - 1), (s1 >> 16) & 0x7F
    x = s0 - (1 << w) if s0 >> (w - 1) else s0
    tmp = (x >> off) & ((1 << width) - 1)
    if width and tmp >> (width - 1) & 1:
        tmp -= 1 << width
    return tmp & ((1 << w) - 1)


@pytest.mark.parametrize("s0,off,width", [(0x8000_0010, 4, 40), (0x8000_0010, 0, 32),
                                          (0x7FFF_FFF0, 4, 127), (0x1234_5678, 8, 24)])
def test_s_bfe_i32_wide_field(s0, off, width):
    s1 = off | width << 16
    w = run("s_bfe_i32 s4, s2, s3", s={2: s0, 3: s1})
    assert w.s[4] == _bfe_golden(s0, s1, 32)
    assert w.scc == int(w.s[4] != 0)


def test_s_bfe_i64_wide_field():
    s0, s1 = 0x8000_0000_0000_1234, 8 | 64 << 16
    w = run("s_bfe_i64 s[4:5], s[2:3], s6", s={2: s0 & 0xFFFF_FFFF, 3: s0 >> 32, 6: s1})
    assert w.s[4] | w.s[5] << 32 == _bfe_golden(s0, s1, 64) == 0xFF80_0000_0000_0012


def test_opencl_denorms_are_zero_division(tmp_path):
    """clang's -cl-denorms-are-zero kernel (FLOAT_DENORM_MODE_32 0) with a correctly rounded
    division switches denormals on with s_denorm_mode 15 around the FMAs and back with 12: the
    model's result is the flush-to-zero quotient of flushed operands, bit for bit."""
    (tmp_path / "d.cl").write_text("kernel void d(global const float *a, global const float *b, "
                                   "global float *o) { int i = get_global_id(0); o[i] = a[i] / b[i]; }")
    kernel = dcu.load_program(tmp_path / "d.cl", options=["-cl-denorms-are-zero",
                                                          "-cl-fp32-correctly-rounded-divide-sqrt"]).kernel("d")
    assert kernel.float_mode == 0xC0
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal(128).astype(np.float32) for _ in range(2))
    a[:8], b[:8] = 2.0 ** -130, 3.0                # denormal dividend
    a[8:16], b[8:16] = 2.0 ** -120, 2.0 ** 10      # denormal quotient
    a[16:24], b[16:24] = 2.0 ** -100, 2.0 ** -130  # denormal divisor
    a[24:32], b[24:32] = 1.5, 2.0 ** 127           # quotient below 2^-126 through the scaling

    def ftz(x):
        x = np.asarray(x, np.float32).copy()
        tiny = np.abs(x) < np.float32(2.0 ** -126)
        x[tiny] = np.copysign(np.float32(0), x[tiny])
        return x
    with np.errstate(all="ignore"):
        want = ftz(ftz(a) / ftz(b))
    got = dcu.launch(kernel, 4, 32, [a, b, np.zeros(128, np.float32)]).buffers[2]
    assert got.view(U32).tolist() == want.view(U32).tolist()
