"""The RTL SIMD32 in Amaranth's simulator, in lock step with the reference model.

* Firmware kernels that one SIMD can hold run with randomized memory latency and
  out-of-order scalar returns, every issued PC and register write checked against the model,
  on the default preset (32 lanes) and the fpga preset (4 lanes: 8 cycles per VALU instruction).
* Constrained-random ALU and branch programs over random register values (seeds are
  reproducible and printed on failure).
* Directed tests of the DCU-facing interfaces: ``perf`` counters against the model's
  instruction counts and the documented stall rule, ``ended``, the external barrier,
  sub-dword scalar loads at exact byte addresses, ``error.cause``.
* The SIMD converts to Verilog and passes Verilator's lint (32, 16 and 8 lanes; 4 lanes with
  the banked register files; the fpga preset's SIMD as built, shared integer datapath included).
"""
from __future__ import annotations

import dataclasses
import os
import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from firmware_tests.manifest import TESTS
from dcu.firmware import HERE, compare
from hdl.config import get_config
from isa import Fmt
from tests.asmutil import needs_llvm
from dcu.backends.lockstep import SimdRun
from tests.lint import convert_and_lint

pytestmark = needs_llvm
PRESETS = ("default", "fpga")


def _fits_one_simd(test, kernel, cfg) -> str | None:
    """Why a firmware test cannot run on a single SIMD of ``cfg`` (None if it can)."""
    threads = int(np.prod(test.block))
    waves = -(-threads // 32)
    if waves > cfg.wave_slots:
        return f"a workgroup of {waves} waves needs more than {cfg.wave_slots} slots"
    alloc = -(-kernel.vgpr_alloc // cfg.vgpr_granule) * cfg.vgpr_granule
    if alloc * waves > cfg.vgprs_per_simd:
        return f"{waves} waves of {alloc} VGPRs exceed {cfg.vgprs_per_simd}"
    if kernel.group_segment_size > cfg.lds_bytes_per_half:
        return "LDS exceeds one half"
    if test.wgp:
        return "WGP mode spans two CUs"
    return None


# Cross-sections that run in CI on one simulated SIMD (every kind of instruction and wait);
# every other firmware test runs under -m slow. The 4-lane set is smaller: VALU instructions
# take eight cycles there.
CI_FIRMWARE = {
    # one kernel per unit class; the whole DCU runs the others (tests/test_dcu.py, test_verilator.py)
    "default": ("int_alu_cl", "float_ops_cl", "divergence_cl", "transcendental_cl", "partial_wait_asm"),
    "fpga": ("vector_add_cl", "int_alu_cl", "float_ops_cl", "transcendental_cl", "partial_wait_asm"),
}


def _firmware_cases():
    cases = []
    for preset in PRESETS:
        for t in TESTS:
            if t.name.startswith("lds_stride_s") and t.name not in ("lds_stride_s1_asm", "lds_stride_s33_asm"):
                continue   # one unit stride and one odd stride stand for the sweep here
            cases.append(pytest.param(t, preset, id=f"{preset}-{t.name}", marks=[pytest.mark.slow]))
    return cases


def _rtl_refuses(kernel) -> str | None:
    """Why the SIMD cannot execute the kernel (instructions the RTL lacks), or None."""
    from dcu.backends.rtlcheck import RtlUnsupportedError, refuse_unsupported
    try:
        refuse_unsupported(kernel, "rtl")
    except RtlUnsupportedError as e:
        return str(e)
    return None


def _simd_run_for(test, cfg, seed=7, **options):
    """A SimdRun of a firmware test with its inputs, or a reason it cannot run on one SIMD."""
    import dcu
    kernel = dcu.load_program(HERE / test.source, wgp=test.wgp, vopd=False).kernel(test.kernel)
    why = _fits_one_simd(test, kernel, cfg) or _rtl_refuses(kernel)
    if why:
        return None, None, why
    args = test.make_args(np.random.default_rng(0))
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    order_dependent = "ooo" in test.tags or ("atomic" in test.tags and test.check is not None)
    run = SimdRun(kernel, test.grid, test.block, args, cfg, latency=(1, 12), seed=seed,
                  order_dependent=order_dependent, **options)
    return run, inputs, None


def _check_outputs(test, inputs, out):
    bad = []
    for idx, expected in test.golden(inputs).items():
        bad += compare(expected, out[idx], test.ulp_tol, f"{test.name}: argument {idx}")
    assert not bad, "\n".join(bad)
    if test.check is not None:
        test.check(inputs, out)


def _valu_ex_cycles(info, cfg) -> int:
    """EX cycles of a VALU instruction (docs/simd.md): valu_cycles, twice that when it writes
    a 64-bit VGPR result (the low and the high register take a cycle each)."""
    wide = info.fmt != Fmt.VOPC and "sdst" not in info.flags and info.dst_bits == 64
    return cfg.valu_cycles * (2 if wide else 1)


def _check_perf(run):
    """Counters every run must satisfy: issued = the model's instruction counts per group
    (unless the run is order dependent), each resident cycle either issues (one or two
    instructions) or stalls once, and the VALU is busy for the EX cycles of the VALU instructions issued."""
    perf = run.perf
    if not run.order_dependent:
        assert perf["issued"] == run.model_issued()
    assert sum(perf["issued"].values()) == run.instructions
    assert sum(perf["stall"].values()) + run.issue_cycles == run.resident_cycles
    assert run.issue_cycles + run.dual_issue_cycles == run.instructions
    assert perf["valu_busy"] == sum(n * _valu_ex_cycles(info, run.config)
                                    for info, n in run.issued_ops.items() if info.kind == "valu")
    assert run.ended == sum(len(evs) > 0 for evs in run.events.values())


@pytest.mark.parametrize("test,preset", _firmware_cases())
def test_firmware_on_one_simd(test, preset):
    run, inputs, why = _simd_run_for(test, get_config(preset))
    if why:
        pytest.skip(why)
    _check_outputs(test, inputs, run.run())
    _check_perf(run)


@pytest.mark.parametrize("preset", PRESETS)
def test_firmware_cross_section_on_one_simd(preset):
    """The CI set, one dispatch after another on one simulated SIMD (one elaboration)."""
    from firmware_tests.manifest import get
    cfg = get_config(preset)
    jobs = [(get(name),) + _simd_run_for(get(name), cfg) for name in CI_FIRMWARE[preset]]
    assert not [j for j in jobs if j[3]], [f"{j[0].name}: {j[3]}" for j in jobs if j[3]]
    runs = [j[1] for j in jobs]
    runs[0].run(more=runs[1:])
    for test, run, inputs, _ in jobs:
        _check_outputs(test, inputs, run.prep.read_back())
        assert run.instructions > 0
        _check_perf(run)


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
    "v_mbcnt_lo_u32_b32 {vd}, {a}, {v}", "v_mbcnt_hi_u32_b32 {vd}, {a}, {v}",
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


def _kernel_from_asm(tmp_path, name: str, body: str, buffers: int = 0):
    """A one-dimensional kernel from ``body`` (s_endpgm appended) taking ``buffers`` global
    buffer arguments, whose addresses s[0:1] (the kernarg pointer) leads to."""
    import dcu
    args = "".join(f"""
      - .address_space: global
        .name: buf{k}
        .offset: {8 * k}
        .size: 8
        .value_kind: global_buffer""" for k in range(buffers))
    src = tmp_path / f"{name}.s"
    src.write_text(f""".amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
.amdhsa_code_object_version 5
.text
.globl {name}
.p2align 8
.type {name},@function
{name}:
{body}
  s_endpgm
.rodata
.p2align 6
.amdhsa_kernel {name}
  .amdhsa_kernarg_size {8 * buffers}
  .amdhsa_user_sgpr_count 2
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_next_free_vgpr 24
  .amdhsa_next_free_sgpr 40
  .amdhsa_wavefront_size32 1
  .amdhsa_workgroup_processor_mode 0
  .amdhsa_float_denorm_mode_32 3
.end_amdhsa_kernel
.amdgpu_metadata
---
amdhsa.kernels:
  - .args:{args if buffers else " []"}
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: {8 * buffers}
    .max_flat_workgroup_size: 64
    .name: {name}
    .private_segment_fixed_size: 0
    .sgpr_count: 42
    .symbol: {name}.kd
    .vgpr_count: 24
    .wavefront_size: 32
amdhsa.target: amdgcn-amd-amdhsa--gfx1200
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
""")
    return dcu.load_program(src).kernel(name)


@pytest.mark.parametrize("preset,count", [
    ("default", RANDOM_PROGRAMS // 2),
    ("fpga", RANDOM_PROGRAMS // 4),
    pytest.param("default", RANDOM_PROGRAMS, marks=pytest.mark.slow, id="default-all"),
    pytest.param("fpga", RANDOM_PROGRAMS, marks=pytest.mark.slow, id="fpga-all"),
])
def test_random_programs_match_the_model_in_lock_step(tmp_path, preset, count):
    # every program is its own kernel of two waves (one partial), run one after another on one SIMD
    cfg = get_config(preset)
    runs = [SimdRun(_kernel_from_asm(tmp_path, f"rnd{seed}", random_program(seed)), (1,), (48,), [], cfg, seed=seed)
            for seed in range(count)]
    try:
        runs[0].run(more=runs[1:])
    except AssertionError as e:
        raise AssertionError(f"{e}\n(reproduce with tests.test_simd.random_program(seed))") from e
    assert sum(r.instructions for r in runs) > 40 * count
    for run in runs:
        _check_perf(run)


# ---- directed tests of the counters, the barrier ports and scalar loads ----------------------
# Each is one wave with memory latency 1; the tests run several on one simulated SIMD.
def _one_wave(tmp_path, name, body, cfg, buffers=(), **options):
    return SimdRun(_kernel_from_asm(tmp_path, name, body, len(buffers)), (1,), (32,), list(buffers), cfg,
                   latency=(1, 1), **options)


CHAIN = 12        # dependent VALU instructions after the first
INDEPENDENT = 10  # independent VALU instructions


def _chain(tmp_path, cfg):
    """Each VALU instruction that reads the previous one's result issues max(valu_dep_latency,
    valu_cycles) cycles after it (and at least valu_stages + 1), and s_endpgm
    max(valu_dep_latency, valu_cycles + valu_stages) cycles after the last one (the cycle
    after its last write; with 4 lanes the cycles after EX differ): the cycles between
    count as dependency stalls. A launch holds the wave for four cycles."""
    run = _one_wave(tmp_path, "chain", "\n".join(["v_mov_b32 v1, v0"] + ["v_add_nc_u32 v1, v1, v0"] * CHAIN), cfg)
    staged = cfg.valu_stages - 1    # cycles from EX to the writes
    lat = max(cfg.valu_dep_latency, cfg.valu_cycles, staged + 2 if staged else 1)
    end = max(cfg.valu_dep_latency, cfg.valu_cycles + 1 + staged)

    def check():
        p = run.perf
        assert p["issued"]["valu"] == CHAIN + 1 and p["issued"]["other"] == 1
        assert p["valu_busy"] == (CHAIN + 1) * cfg.valu_cycles
        assert p["stall"]["dependency"] == CHAIN * (lat - 1) + end - 1
        assert p["stall"]["structural"] == 0
        assert p["stall"]["held"] == 4
        issues = run.valu_cycles
        assert [b - a for a, b in zip(issues, issues[1:])] == [lat] * CHAIN
    return run, check


def _independent(tmp_path, cfg):
    """Independent VALU instructions issue every valu_cycles cycles; the cycles between are
    structural stalls (the VALU is busy with the previous one's lane groups)."""
    run = _one_wave(tmp_path, "indep", "\n".join(f"v_mov_b32 v{k + 1}, v0" for k in range(INDEPENDENT)), cfg)

    def check():
        p = run.perf
        issues = run.valu_cycles
        assert [b - a for a, b in zip(issues, issues[1:])] == [cfg.valu_cycles] * (INDEPENDENT - 1)
        assert p["stall"]["structural"] == (INDEPENDENT - 1) * (cfg.valu_cycles - 1)
        assert p["stall"]["dependency"] == max(cfg.valu_dep_latency, cfg.valu_cycles + cfg.valu_stages) - 1   # s_endpgm
    return run, check


def _barrier(tmp_path, cfg, delay=0, **options):
    """One wave: s_barrier_signal executes the cycle after issue and bar_wait rises the cycle
    after that; inside the SIMD the barrier completes then (2 stall cycles). With an external
    barrier released ``delay`` cycles after bar_wait is first seen (0: in that same cycle),
    s_barrier_wait issues the cycle after the release: 2 + delay stall cycles."""
    run = _one_wave(tmp_path, f"bar{delay}", "s_barrier_signal -1\ns_barrier_wait 0xffff", cfg,
                    barrier_delay=(delay, delay), **options)

    def check():
        assert run.perf["stall"]["barrier"] == 2 + delay
        assert run.perf["issued"]["other"] == 3
    return run, check


def _scalar_loads(tmp_path, cfg):
    """s_load_u8/i8/u16/i16 at odd offsets (immediate and SGPR), a u16 and a b32 load at
    misaligned addresses (the ISA ignores the address bits below the access size); every
    loaded SGPR is checked against the model in lock step, the stored values against the ISA."""
    body = """
s_load_b64 s[2:3], s[0:1], 0x0
s_load_b64 s[4:5], s[0:1], 0x8
s_wait_kmcnt 0
s_mov_b32 s6, 0xd
s_load_u8 s8, s[2:3], 0x1
s_load_i8 s9, s[2:3], 0x7
s_load_u16 s10, s[2:3], 0x6
s_load_i16 s11, s[2:3], 0xa
s_load_u16 s12, s[2:3], 0x3
s_load_b32 s13, s[2:3], 0x5
s_load_u8 s14, s[2:3], s6 offset:0x0
s_load_i16 s15, s[2:3], s6 offset:0x1
s_wait_kmcnt 0
""" + "\n".join(f"v_writelane_b32 v1, s{8 + k}, {k}" for k in range(8)) + """
v_lshlrev_b32 v2, 2, v0
s_mov_b32 exec_lo, 0xff
global_store_b32 v2, v1, s[4:5]"""
    src = np.array([0x81, 0xF2, 0x13, 0x94, 0x35, 0xA6, 0xB7, 0xC8, 0x59, 0x6A, 0x7B, 0x8C, 0x9D, 0xAE, 0xBF, 0x10],
                   dtype=np.uint8)
    run = _one_wave(tmp_path, "sload", body, cfg, buffers=(src, np.zeros(32, np.uint32)))

    def check():
        u16 = src.view("<u2")
        want = [src[1], np.int8(src[7]), u16[3], np.int16(u16[5]), u16[1], src[4:8].view("<u4")[0], src[13],
                np.int16(u16[7])]
        assert [int(x) for x in run.prep.read_back()[1][:8]] == [int(x) & 0xFFFF_FFFF for x in want]
    return run, check


def _dual_issue(tmp_path, cfg):
    """Two waves looping over eight independent VALU instructions and three scalar ones
    (counter, compare, branch): the scalar pipe issues one wave's SALU instructions and
    branches in cycles the main pipe issues the other's VALU instructions, so the run takes
    fewer issue cycles than instructions (the bench checks that the two pipes never pick
    the same wave)."""
    loop = ["s_mov_b32 s4, 6", ".Lloop:"] + [f"v_add_nc_u32 v{k + 1}, v{k + 1}, v0" for k in range(8)] + [
        "s_add_co_i32 s4, s4, -1", "s_cmp_lg_u32 s4, 0", "s_cbranch_scc1 .Lloop"]
    run = SimdRun(_kernel_from_asm(tmp_path, "dual", "\n".join(loop)), (1,), (64,), [], cfg, latency=(1, 1))

    def check():
        p = run.perf
        assert p["issued"]["valu"] == 2 * 6 * 8 and p["issued"]["salu"] == 2 * (1 + 6 * 2)
        assert p["issued"]["branch"] == 2 * 6
        assert run.dual_issue_cycles > 0 and run.issue_cycles < run.instructions
    return run, check


def _loop_line(tmp_path, cfg):
    """One wave looping over a body of three instruction lines, 4 and then 12 times: the loop
    line (the backward branch's target fetched ahead) refills the buffer when the branch is
    taken, so an iteration costs one stall cycle (the branch resolving), not a refetch."""
    def loop(n):
        body = [f"v_add_nc_u32 v{1 + k % 8}, v{1 + k % 8}, v0" for k in range(40)]
        text = "\n".join([f"s_mov_b32 s4, {n}", ".Lloop:", *body, "s_add_co_i32 s4, s4, -1", "s_cmp_lg_u32 s4, 0",
                          "s_cbranch_scc1 .Lloop"])
        return SimdRun(_kernel_from_asm(tmp_path, f"loop{n}", text), (1,), (32,), [], cfg, latency=(1, 1))
    short, long = loop(4), loop(12)

    def check():
        stalls = [r.perf["stall"]["fetch"] for r in (short, long)]
        assert (short.perf["issued"]["branch"], long.perf["issued"]["branch"]) == (4, 12)
        assert (stalls[1] - stalls[0]) <= 8, f"fetch stalls {stalls}: more than one per extra iteration"
    return [(short, lambda: None), (long, check)]


def _run_all(jobs):
    runs = [run for run, _ in jobs]
    runs[0].run(more=runs[1:])
    for run, check in jobs:
        _check_perf(run)
        check()


@pytest.mark.parametrize("preset", PRESETS)
def test_counters_stalls_and_scalar_loads(tmp_path, preset):
    cfg = get_config(preset)
    _run_all([f(tmp_path, cfg) for f in (_chain, _independent, _barrier, _scalar_loads, _dual_issue)]
             + _loop_line(tmp_path, cfg))


def test_external_barrier_lets_the_dcu_release_waves(tmp_path):
    """With ``external_barrier`` the bench completes barriers: lds_reduce_asm (a workgroup of
    four waves synchronising through LDS) released 0-3 cycles after its last wave signals,
    then single waves released in the first cycle bar_wait is seen and 20 cycles later."""
    from firmware_tests.manifest import get
    cfg = get_config("default")
    test = get("lds_reduce_asm")
    reduce, inputs, why = _simd_run_for(test, cfg, external_barrier=True)
    assert why is None, why
    jobs = [(reduce, lambda: _check_outputs(test, inputs, reduce.prep.read_back())),
            _barrier(tmp_path, cfg, 0, external_barrier=True), _barrier(tmp_path, cfg, 20, external_barrier=True)]
    _run_all(jobs)
    assert reduce.perf["stall"]["barrier"] > 0


#: (instruction, the destination's value before it, its value after it in lane l): 16-bit
#: integer operands read an inline constant's 16-bit form zero-extended, FP16 for a float
#: (docs/model.md, "Inline constants in 16-bit operands"); op_sel picks the zero high half
INLINE16 = [
    ("v_add_nc_u16 {d}, v0, 1.0", 0xFFFF_FFFF, lambda l: 0xFFFF_0000 | (0x3C00 + l)),
    ("v_add_nc_u16 {d}, v0, -1 op_sel:[0,1,0]", 0, lambda l: l),
    ("v_add_nc_u16 {d}, -1, v0", 0, lambda l: (0xFFFF + l) & 0xFFFF),
    ("v_sub_nc_u16 {d}, -16, v0 op_sel:[1,0,0]", 0, lambda l: -l & 0xFFFF),
    ("v_mad_u16 {d}, v0, 2.0, 0.5", 0, lambda l: (0x4000 * l + 0x3800) & 0xFFFF),
    ("v_mad_u16 {d}, v0, 0.5, 1.0 op_sel:[0,1,0,1]", 0x1234_5678, lambda l: 0x3C00_5678),
    ("v_mad_u32_u16 {d}, v0, 1.0, 4.0", 0, lambda l: 0x3C00 * l + 0x4080_0000),   # src2 is 32-bit
    ("v_mad_i32_i16 {d}, v0, -2.0, -1", 0, lambda l: (-0x4000 * l - 1) & 0xFFFF_FFFF),
    ("v_sub_nc_i16 {d}, 0.15915494, v0 op_sel:[0,0,1]", 0x1234_5678, lambda l: ((0x3118 - l) << 16) | 0x5678),
    ("v_xor_b16 {d}, 0.5, v0", 0, lambda l: 0x3800 ^ l),
    ("v_lshlrev_b16 {d}, 1, -2.0", 0, lambda l: 0x8000),
    ("v_not_b16 {d}, 1.0", 0xABCD_0000, lambda l: 0xABCD_C3FF),
    ("v_cvt_u32_u16 {d}, -1.0", 0, lambda l: 0xBC00),
    ("v_cvt_i32_i16 {d}, -4.0", 0, lambda l: 0xFFFF_C400),
    ("v_add_nc_u16 {d}, v0, 0x1234 op_sel:[0,1,0]", 0, lambda l: l),     # a literal: its dword's high half
]


def test_inline_constants_in_16_bit_integer_operands(tmp_path):
    """16-bit integer ops with float and integer inline constants, in lock step with the
    model; the stored results are checked against the values of ``INLINE16``."""
    cfg = get_config("default")
    body = ["s_load_b64 s[4:5], s[0:1], 0x0", "s_wait_kmcnt 0", "v_lshlrev_b32 v20, 2, v0"]
    for k, (inst, old, _) in enumerate(INLINE16):
        body += [f"v_mov_b32 v1, {hex(old)}", inst.format(d="v1"), f"global_store_b32 v20, v1, s[4:5] offset:{128 * k}"]
    run = _one_wave(tmp_path, "inline16", "\n".join(body), cfg, buffers=(np.zeros(32 * len(INLINE16), np.uint32),))

    def check():
        got = run.prep.read_back()[0].reshape(len(INLINE16), 32)
        for (inst, _, want), row in zip(INLINE16, got):
            assert [int(x) for x in row] == [want(l) for l in range(32)], inst
    _run_all([(run, check)])


#: (instruction, its result in lane l) with v0 = l, v2 = 0x8000_0021 + l, v3 = 0x0003_0040 + l
#: and the destination's old value 0x0000_003F: v_mad_*16 adds src2 (a VGPR, read beside the
#: old destination it merges into), v_cndmask_b32_e64 applies abs/neg (bit 31) to its sources.
MODS_AND_MERGES = [
    ("v_mad_u16 {d}, v0, 0x12, v3", lambda l: 0x12 * l + 0x40 + l),
    ("v_mad_i16 {d}, v0, -3, v3 op_sel:[0,0,1,1]", lambda l: ((-3 * l + 3) & 0xFFFF) << 16 | 0x3F),
    ("v_mad_u32_u16 {d}, v0, 0x12, v3", lambda l: 0x12 * l + 0x0003_0040 + l),
    ("v_cndmask_b32_e64 {d}, -v2, v3, s6", lambda l: 0x0003_0040 + l if l % 2 else 0x21 + l),
    ("v_cndmask_b32_e64 {d}, |v2|, -|v3|, s6", lambda l: 0x8003_0040 + l if l % 2 else 0x21 + l),
    ("v_cndmask_b32_e64 {d}, v3, -v0, s6", lambda l: 0x8000_0000 + l if l % 2 else 0x0003_0040 + l),
]


@pytest.mark.parametrize("preset", PRESETS)
def test_sixteen_bit_merges_and_cndmask_source_modifiers(tmp_path, preset):
    """v_mad_u16/v_mad_i16 with a VGPR src2 (the old destination is read too, for the half it
    keeps) and abs/neg on v_cndmask_b32_e64's sources, in lock step with the model; the stored
    results are checked against ``MODS_AND_MERGES``."""
    body = ["s_load_b64 s[4:5], s[0:1], 0x0", "s_wait_kmcnt 0", "v_lshlrev_b32 v20, 2, v0",
            "s_mov_b32 s6, 0xAAAAAAAA", "v_add_nc_u32 v2, 0x80000021, v0", "v_add_nc_u32 v3, 0x30040, v0"]
    for k, (inst, _) in enumerate(MODS_AND_MERGES):
        body += ["v_mov_b32 v1, 0x3f", inst.format(d="v1"), f"global_store_b32 v20, v1, s[4:5] offset:{128 * k}"]
    out = np.zeros(32 * len(MODS_AND_MERGES), np.uint32)
    run = _one_wave(tmp_path, "mods", "\n".join(body), get_config(preset), buffers=(out,))

    def check():
        got = run.prep.read_back()[0].reshape(len(MODS_AND_MERGES), 32)
        for (inst, want), row in zip(MODS_AND_MERGES, got):
            assert [int(x) for x in row] == [want(l) & 0xFFFF_FFFF for l in range(32)], inst
    _run_all([(run, check)])


CALL = """s_load_b64 s[4:5], s[0:1], 0x0
s_wait_kmcnt 0
v_lshlrev_b32 v20, 2, v0
v_mov_b32 v1, 1
s_getpc_b64 s[10:11]
.Lhere:
s_add_co_u32 s10, s10, .Lsub-.Lhere
s_add_co_ci_u32 s11, s11, 0
s_swappc_b64 s[12:13], s[10:11]
v_add_nc_u32 v1, 4, v1
s_getpc_b64 s[14:15]
s_sub_co_u32 s16, s12, s14
s_sub_co_ci_u32 s17, s13, s15
v_mov_b32 v2, s16
v_mov_b32 v3, s17
global_store_b32 v20, v1, s[4:5]
global_store_b32 v20, v2, s[4:5] offset:128
global_store_b32 v20, v3, s[4:5] offset:256
s_endpgm
.Lsub:
v_lshlrev_b32 v1, 1, v1
s_setpc_b64 s[12:13]"""


@pytest.mark.parametrize("preset", PRESETS)
def test_call_and_return_through_registers(tmp_path, preset):
    """s_getpc_b64 gives the next instruction's address, s_swappc_b64 jumps to a register
    pair and leaves its return address, s_setpc_b64 returns: the subroutine doubles v1 (1 -> 2,
    then + 4 after the return), and the return address is 8 bytes before the second getpc's."""
    out = np.zeros(3 * 32, np.uint32)
    run = _one_wave(tmp_path, "call", CALL, get_config(preset), buffers=(out,))

    def check():
        got = run.prep.read_back()[0].reshape(3, 32)
        assert [int(x) for x in got[0]] == [6] * 32
        assert [int(x) for x in got[1]] == [0xFFFF_FFF8] * 32
        assert [int(x) for x in got[2]] == [0xFFFF_FFFF] * 32     # the 64-bit difference is -8
    _run_all([(run, check)])


def test_illegal_instruction_stops_the_wave_with_its_cause():
    """A word that is no instruction: error.valid with cause ILLEGAL_INSTRUCTION, the slot,
    PC and raw dword; the wave never ends, and the word counts as an issued "other"."""
    from hdl.simd import SIMD, ErrorCause
    words = [0xBF800000, 0xFFFFFFFF, 0xBFB00000, 0]         # s_nop 0, garbage, s_endpgm
    base = 0x1000
    dut = SIMD(get_config("tiny"))

    async def bench(ctx):
        for port in (dut.fetch_req, dut.smem_req, dut.vmem_req, dut.lds_req):
            ctx.set(port.ready, 1)
        ctx.set(dut.launch.payload, {"pc": base, "exec": 0xFFFF_FFFF, "wg_last": 1})
        ctx.set(dut.launch.valid, 1)
        await ctx.tick().until(dut.launch.ready)
        ctx.set(dut.launch.valid, 0)
        for cycle in range(200):
            if ctx.get(dut.fetch_req.valid):
                addr = ctx.get(dut.fetch_req.payload.addr)
                data = sum(words[(addr - base) // 4 + j] << (32 * j) for j in range(4)) if addr == base else 0
                ctx.set(dut.fetch_resp.payload, {"wave": ctx.get(dut.fetch_req.payload.wave), "data": data,
                                                  "epoch": ctx.get(dut.fetch_req.payload.epoch),
                                                  "target": ctx.get(dut.fetch_req.payload.target)})
                ctx.set(dut.fetch_resp.valid, 1)
            else:
                ctx.set(dut.fetch_resp.valid, 0)
            assert not ctx.get(dut.ended)
            if ctx.get(dut.error.valid):
                break
            await ctx.tick()
        else:
            raise AssertionError("watchdog: no error reported within 200 cycles")
        err = ctx.get(dut.error)
        assert err.cause == ErrorCause.ILLEGAL_INSTRUCTION
        assert (err.wave, err.pc, err.words & 0xFFFF_FFFF) == (0, base + 4, 0xFFFF_FFFF)
        assert ctx.get(dut.perf.issued.other) == 2
        for _ in range(20):   # stopped: it neither issues nor ends
            await ctx.tick()
            assert not ctx.get(dut.ended) and not ctx.get(dut.idle)
        assert ctx.get(dut.perf.issued.other) == 2

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("lanes,regfile", [(32, "wide"), pytest.param(16, "wide", marks=pytest.mark.slow),
                                           pytest.param(8, "wide", marks=pytest.mark.slow),
                                           pytest.param(4, "banked", marks=pytest.mark.slow)])
def test_simd_converts_to_verilog_and_lints(tmp_path, lanes, regfile):
    from hdl.simd import SIMD
    cfg = dataclasses.replace(get_config("tiny"), lanes=lanes, regfile=regfile,
                              coalesce_lanes=lanes if regfile == "banked" else 32)
    convert_and_lint(SIMD(cfg), "simd", tmp_path, extra_flags=("-Wno-UNOPTFLAT",))


def test_fpga_simd_converts_to_verilog_and_lints(tmp_path):
    """The fpga preset's SIMD as built: 4 lanes, banked register files, the shared integer
    datapath, the shared multiplier and request register."""
    from hdl.simd import SIMD
    convert_and_lint(SIMD(get_config("fpga")), "simd", tmp_path, extra_flags=("-Wno-UNOPTFLAT",))
