"""The RTL SIMD32 in Amaranth's simulator, in lock step with the reference model.

* Firmware kernels that one SIMD can hold run with randomized memory latency and
  out-of-order scalar returns, every issued PC and register write checked against the model.
* Constrained-random ALU and branch programs over random register values (seeds are
  reproducible and printed on failure).
* The SIMD converts to Verilog and passes Verilator's lint.
"""
from __future__ import annotations

import os
import random

import numpy as np
import pytest

from firmware_tests.manifest import TESTS
from firmware_tests.runner import HERE, compare
from hdl.config import get_config
from tests.asmutil import needs_llvm
from dcu.lockstep import SimdRun
from tests.lint import convert_and_lint

pytestmark = needs_llvm
CONFIG = get_config("default")


def _fits_one_simd(test, kernel) -> str | None:
    """Why a firmware test cannot run on a single SIMD of the default preset (None if it can)."""
    threads = int(np.prod(test.block))
    waves = -(-threads // 32)
    if waves > CONFIG.wave_slots:
        return f"a workgroup of {waves} waves needs more than {CONFIG.wave_slots} slots"
    alloc = -(-kernel.vgpr_alloc // CONFIG.vgpr_granule) * CONFIG.vgpr_granule
    if alloc * waves > CONFIG.vgprs_per_simd:
        return f"{waves} waves of {alloc} VGPRs exceed {CONFIG.vgprs_per_simd}"
    if kernel.group_segment_size > CONFIG.lds_bytes_per_half:
        return "LDS exceeds one half"
    if test.wgp:
        return "WGP mode spans two CUs"
    return None


# A cross-section that runs in CI on one simulated SIMD (every kind of instruction and wait);
# every other firmware test runs under -m slow.
CI_FIRMWARE = ("vector_add_cl", "saxpy_asm", "int_alu_cl", "float_ops_cl", "divergence_cl", "transcendental_cl",
               "lds_reduce_asm", "partial_wait_asm", "scalar_loads_asm")


def _firmware_cases():
    cases = []
    for t in TESTS:
        if t.name.startswith("lds_stride_s") and t.name not in ("lds_stride_s1_asm", "lds_stride_s33_asm"):
            continue   # one unit stride and one odd stride stand for the sweep here
        cases.append(pytest.param(t, id=t.name, marks=[pytest.mark.slow]))
    return cases


def _simd_run_for(test, seed=7):
    """A SimdRun of a firmware test with its inputs, or a reason it cannot run on one SIMD."""
    import dcu
    kernel = dcu.load_program(HERE / test.source, wgp=test.wgp).kernel(test.kernel)
    why = _fits_one_simd(test, kernel)
    if why:
        return None, None, why
    args = test.make_args(np.random.default_rng(0))
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    order_dependent = "ooo" in test.tags or ("atomic" in test.tags and test.check is not None)
    run = SimdRun(kernel, test.grid, test.block, args, CONFIG, latency=(1, 12), seed=seed, order_dependent=order_dependent)
    return run, inputs, None


def _check_outputs(test, inputs, out):
    bad = []
    for idx, expected in test.golden(inputs).items():
        bad += compare(expected, out[idx], test.ulp_tol, f"{test.name}: argument {idx}")
    assert not bad, "\n".join(bad)
    if test.check is not None:
        test.check(inputs, out)


@pytest.mark.parametrize("test", _firmware_cases())
def test_firmware_on_one_simd(test):
    run, inputs, why = _simd_run_for(test)
    if why:
        pytest.skip(why)
    _check_outputs(test, inputs, run.run())


def test_firmware_cross_section_on_one_simd():
    """The CI set, one dispatch after another on one simulated SIMD (one elaboration)."""
    from firmware_tests.manifest import get
    jobs = [(get(name),) + _simd_run_for(get(name)) for name in CI_FIRMWARE]
    assert not [j for j in jobs if j[3]], [f"{j[0].name}: {j[3]}" for j in jobs if j[3]]
    runs = [j[1] for j in jobs]
    runs[0].run(more=runs[1:])
    for test, run, inputs, _ in jobs:
        _check_outputs(test, inputs, run.prep.read_back())
        assert run.instructions > 0


# ---- constrained-random programs -----------------------------------------------------------
SREGS = list(range(4, 24))
VREGS = list(range(1, 16))

SALU_T = [
    "s_add_co_u32 {sd}, {s}, {s}", "s_sub_co_u32 {sd}, {s}, {s}", "s_add_co_i32 {sd}, {s}, {s}",
    "s_add_co_ci_u32 {sd}, {s}, {s}", "s_mul_i32 {sd}, {s}, {s}", "s_mul_hi_u32 {sd}, {s}, {s}",
    "s_lshl_b32 {sd}, {s}, {s}", "s_lshr_b32 {sd}, {s}, {s}", "s_ashr_i32 {sd}, {s}, {s}",
    "s_and_b32 {sd}, {s}, {s}", "s_or_b32 {sd}, {s}, {s}", "s_xor_b32 {sd}, {s}, {s}", "s_and_not1_b32 {sd}, {s}, {s}",
    "s_min_i32 {sd}, {s}, {s}", "s_max_u32 {sd}, {s}, {s}", "s_cselect_b32 {sd}, {s}, {s}",
    "s_bfe_u32 {sd}, {s}, {s}", "s_bfe_i32 {sd}, {s}, {s}", "s_lshl2_add_u32 {sd}, {s}, {s}",
    "s_not_b32 {sd}, {s}", "s_brev_b32 {sd}, {s}", "s_bcnt1_i32_b32 {sd}, {s}", "s_ctz_i32_b32 {sd}, {s}",
    "s_clz_i32_u32 {sd}, {s}", "s_sext_i32_i8 {sd}, {s}", "s_abs_i32 {sd}, {s}", "s_mov_b32 {sd}, {s}",
    "s_cmp_eq_u32 {s}, {s}", "s_cmp_lt_i32 {s}, {s}", "s_cmp_ge_u32 {s}, {s}", "s_bitcmp1_b32 {s}, {s}",
    "s_lshl_b64 {sd64}, {s64}, {s}", "s_and_b64 {sd64}, {s64}, {s64}", "s_add_nc_u64 {sd64}, {s64}, {s64}",
    "s_movk_i32 {sd}, {k16}", "s_addk_co_i32 {sd}, {k16}",
]
VALU_T = [
    "v_add_nc_u32 {vd}, {a}, {v}", "v_sub_nc_u32 {vd}, {a}, {v}", "v_subrev_nc_u32 {vd}, {a}, {v}",
    "v_mul_lo_u32 {vd}, {a}, {v}", "v_mul_hi_u32 {vd}, {a}, {v}", "v_mul_hi_i32 {vd}, {a}, {v}",
    "v_mul_u32_u24 {vd}, {a}, {v}", "v_mul_i32_i24 {vd}, {a}, {v}", "v_mad_u32_u24 {vd}, {v}, {v}, {v}",
    "v_add3_u32 {vd}, {v}, {v}, {v}", "v_xad_u32 {vd}, {v}, {v}, {v}", "v_lshl_or_b32 {vd}, {v}, {v}, {v}",
    "v_and_b32 {vd}, {a}, {v}", "v_or_b32 {vd}, {a}, {v}", "v_xor_b32 {vd}, {a}, {v}", "v_not_b32 {vd}, {a}",
    "v_lshlrev_b32 {vd}, {a}, {v}", "v_lshrrev_b32 {vd}, {a}, {v}", "v_ashrrev_i32 {vd}, {a}, {v}",
    "v_bfe_u32 {vd}, {v}, {v}, {v}", "v_bfe_i32 {vd}, {v}, {v}, {v}", "v_bfi_b32 {vd}, {v}, {v}, {v}",
    "v_bfrev_b32 {vd}, {a}", "v_bcnt_u32_b32 {vd}, {v}, {v}", "v_alignbit_b32 {vd}, {v}, {v}, {v}",
    "v_min_i32 {vd}, {a}, {v}", "v_max_u32 {vd}, {a}, {v}", "v_med3_i32 {vd}, {v}, {v}, {v}",
    "v_mov_b32 {vd}, {a}", "v_cndmask_b32 {vd}, {a}, {v}, vcc_lo",
    "v_cmp_gt_u32 vcc_lo, {a}, {v}", "v_cmp_lt_i32 vcc_lo, {a}, {v}", "v_cmp_ne_u32 {sd}, {v}, {v}",
    "v_add_co_u32 {vd}, vcc_lo, {v}, {v}", "v_add_co_ci_u32 {vd}, vcc_lo, {a}, {v}, vcc_lo",
    "v_sub_co_u32 {vd}, {sd}, {v}, {v}", "v_mad_co_u64_u32 {vd64}, {sd}, {v}, {v}, {v64}",
    "v_lshlrev_b64 {vd64}, {a}, {v64}", "v_readfirstlane_b32 {sd}, {v}", "v_readlane_b32 {sd}, {v}, {sl}",
    "v_writelane_b32 {vd}, {s}, {sl}",
    "v_add_f32 {vd}, {a}, {v}", "v_mul_f32 {vd}, {a}, {v}", "v_fma_f32 {vd}, {v}, {v}, {v}",
    "v_fmac_f32 {vd}, {a}, {v}", "v_max_num_f32 {vd}, {a}, {v}", "v_cvt_f32_i32 {vd}, {a}",
    "v_cvt_u32_f32 {vd}, {a}", "v_floor_f32 {vd}, {a}", "v_cmp_lt_f32 vcc_lo, {a}, {v}",
]


def random_program(seed: int, length: int = 40) -> str:
    """A random straight-line-and-branches gfx1200 program with no memory instructions.

    Operands are random registers, inline constants and literals (at most one literal per
    instruction, as the encoding allows); branches skip forward, loops count down, and
    EXEC is narrowed by compares and restored.
    """
    r = random.Random(seed)
    literal_used = [False]

    def lit_or(alt):
        if literal_used[0]:
            return alt()
        literal_used[0] = True
        return hex(r.getrandbits(32))

    def sreg():
        return f"s{r.choice(SREGS)}"

    def s():
        c = r.random()
        return sreg() if c < 0.7 else (str(r.randint(-16, 64)) if c < 0.85 else lit_or(sreg))

    def s64():
        n = r.choice(SREGS[::2])
        return f"s[{n}:{n + 1}]"

    def v():
        return f"v{r.choice(VREGS)}"

    def v64():
        n = r.choice(VREGS[:-1])
        return f"v[{n}:{n + 1}]"

    def a():
        c = r.random()
        return v() if c < 0.6 else (sreg() if c < 0.8 else (str(r.randint(-16, 64)) if c < 0.9 else lit_or(v)))

    def fill(t):
        literal_used[0] = False
        fields = {"sd": f"s{r.choice(SREGS)}", "sd64": s64(), "s64": s64(), "k16": str(r.randint(-32768, 32767)),
                  "vd": v(), "vd64": v64(), "v64": v64()}
        out, rest = "", t
        while "{" in rest:   # each placeholder draws afresh, so two {s} may differ
            pre, _, tail = rest.partition("{")
            key, _, rest = tail.partition("}")
            out += pre + (fields[key] if key in fields else {"s": s, "v": v, "a": a, "sl": sreg}[key]())
        return out + rest

    lines = [f"s_mov_b32 s{k}, {hex(r.getrandbits(32))}" for k in SREGS]
    lines += [f"v_mad_u32_u24 v{k}, s{r.choice(SREGS)}, v0, s{r.choice(SREGS)}" for k in VREGS]
    label = 0
    i = 0
    while i < length:
        c = r.random()
        if c < 0.08:     # forward branch over a few instructions
            skip = [fill(r.choice(SALU_T + VALU_T)) for _ in range(r.randint(1, 4))]
            lines += [fill("s_cmp_lt_u32 {s}, {s}"), f"s_cbranch_scc1 .Lf{label}"] + skip + [f".Lf{label}:"]
            label += 1
            i += len(skip) + 2
        elif c < 0.13:   # divergence: EXEC from a compare, then restore
            body = [fill(r.choice(VALU_T[:30])) for _ in range(r.randint(1, 4))]
            lines += [fill("v_cmp_gt_u32 vcc_lo, {a}, {v}"), "s_and_saveexec_b32 s30, vcc_lo",
                      f"s_cbranch_execz .Le{label}"] + body + [f".Le{label}:", "s_or_b32 exec_lo, exec_lo, s30"]
            label += 1
            i += len(body) + 4
        elif c < 0.17:   # a short counted loop
            body = [fill(r.choice(SALU_T[:20] + VALU_T[:30])) for _ in range(r.randint(1, 3))]
            lines += [f"s_mov_b32 s31, {r.randint(1, 4)}", f".Ll{label}:"] + body + \
                     ["s_add_co_i32 s31, s31, -1", "s_cmp_lg_u32 s31, 0", f"s_cbranch_scc1 .Ll{label}"]
            label += 1
            i += len(body) + 4
        else:
            lines.append(fill(r.choice(SALU_T + VALU_T)))
            i += 1
    return "\n".join(lines)


RANDOM_PROGRAMS = int(os.environ.get("DCU_RANDOM_PROGRAMS", "100"))


def _kernel_from_asm(tmp_path, name: str, body: str):
    import dcu
    src = tmp_path / f"{name}.s"
    src.write_text(f""".text
.globl {name}
.p2align 8
.type {name},@function
{name}:
{body}
  s_endpgm
.rodata
.p2align 6
.amdhsa_kernel {name}
  .amdhsa_next_free_vgpr 24
  .amdhsa_next_free_sgpr 40
  .amdhsa_wavefront_size32 1
  .amdhsa_workgroup_processor_mode 0
.end_amdhsa_kernel
""")
    return dcu.load_program(src).kernel(name)


def test_random_programs_match_the_model_in_lock_step(tmp_path):
    # every program is its own kernel of two waves (one partial), run one after another on one SIMD
    runs = [SimdRun(_kernel_from_asm(tmp_path, f"rnd{seed}", random_program(seed)), (1,), (48,), [], CONFIG, seed=seed)
            for seed in range(RANDOM_PROGRAMS)]
    try:
        runs[0].run(more=runs[1:])
    except AssertionError as e:
        raise AssertionError(f"{e}\n(reproduce with tests.test_simd.random_program(seed))") from e
    assert sum(r.instructions for r in runs) > 40 * RANDOM_PROGRAMS


def test_simd_converts_to_verilog_and_lints(tmp_path):
    from hdl.simd import SIMD
    convert_and_lint(SIMD(get_config("tiny")), "simd", tmp_path, extra_flags=("-Wno-UNOPTFLAT",))
