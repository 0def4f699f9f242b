"""The RTL SIMD32 (:class:`~hdl.simd.simd.SIMD`) in Amaranth's simulator, in lock step with
the reference model.

* Firmware kernels that one SIMD can hold run with randomized memory latency and
  out-of-order scalar returns, every issued PC and register write checked against the model,
  on the default preset (32 lanes) and the fpga preset (4 lanes: 8 cycles per VALU instruction).
* Constrained-random ALU and branch programs over random register values (seeds are
  reproducible and printed on failure).
* Directed tests of the DCU-facing interfaces: ``perf`` counters against the model's
  instruction counts and the issue rules, ``ended``, the barrier ports, sub-dword scalar loads
  at exact byte addresses, ``error``.
* The SIMD converts to Verilog and passes Verilator's lint (32 lanes; 16 and 8 with requests
  in rows; the fpga preset's SIMD as built).
"""
from __future__ import annotations

import os
import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from firmware_tests.manifest import TESTS
from dcu.firmware import compare, program
from hdl.config import get_config
from hdl.simd.scalar import PipeError
from hdl.simd.scalar_float import SCALAR_FLOAT
from hdl.simd.simd import SIMD
from isa import Fmt
from tests.asmutil import needs_llvm
from dcu.backends.lockstep import Divergence, SimdRun
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
    if alloc * cfg.wave_slots > cfg.vgprs_per_simd:     # SimdRun gives every slot a wave's VGPRs
        return f"{cfg.wave_slots} slots of {alloc} VGPRs exceed {cfg.vgprs_per_simd}"
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
    """Why the SIMD cannot execute the kernel (instructions it lacks, a float mode), or None."""
    from dcu.backends.rtlcheck import float_mode_users, unsupported
    bad = unsupported(kernel)
    if bad:
        return "the SIMD does not execute " + ", ".join(sorted({f.label() for f in bad}))
    if float_mode_users(kernel):
        return f"float mode {kernel.float_mode:#04x}"
    return None


def _simd_run_for(test, cfg, seed=7, **options):
    """A SimdRun of a firmware test with its inputs, or a reason it cannot run on one SIMD."""
    kernel = program(test).kernel(test.kernel)
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


def _valu_read_cycles(info, cfg) -> int:
    """Cycles a VALU instruction reads its rows (``perf.valu_busy``): one a row, two with a
    64-bit operand or result or packed halves (the integer lane's two passes), each half of a
    VOPD its own rows (docs/simd.md, "Lean SIMD")."""
    wide = any(b == 64 for b in info.src_bits) or (info.dst_bits == 64 and info.fmt != Fmt.VOPC)
    return cfg.valu_cycles * (2 if wide or info.fmt in (Fmt.VOPD, Fmt.VOP3P) else 1)


def _check_perf(run):
    """Counters every run must satisfy: issued = the model's instruction counts per group
    (unless the run is order dependent), each resident cycle either issues (an instruction, or
    a VOPD's first half, which counts with its second) or stalls once, and the VALU is busy
    for the row reads of the VALU instructions issued (the scalar float ones included: they
    run on its lane 0)."""
    perf = run.perf
    if not run.order_dependent:
        assert perf["issued"] == run.model_issued()
    assert sum(perf["issued"].values()) == run.instructions
    first_halves = sum(n for info, n in run.issued_ops.items() if info.fmt == Fmt.VOPD)
    assert sum(perf["stall"].values()) + run.instructions + first_halves == run.resident_cycles
    assert perf["valu_busy"] == sum(n * _valu_read_cycles(info, run.config)
                                    for info, n in run.issued_ops.items()
                                    if info.kind == "valu" or info.name in SCALAR_FLOAT)
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


CHAIN = 12        # VALU instructions after the first


def _up(n: int) -> int:
    """``n`` rounded up to a whole number of the front end's four-cycle turns: a wave's next
    instruction reaches issue four cycles after this one at the earliest, and one that must
    wait is offered again four cycles later."""
    return -(-n // 4) * 4


def _valu_run(tmp_path, cfg):
    """One wave's VALU instructions, each reading the one before: the next issues once the
    pipe has read the last row (``valu_cycles`` after) and five cycles after (the reads are
    not transparent): held at issue for a cycle or until the pipe's last rows, replayed at the
    front end's next turn when the pipe is further from free (``valu_cycles`` 8 or more, a
    multiple of four); s_endpgm once the last row is written (five cycles after the last
    read). The VALU reads a row a cycle."""
    run = _one_wave(tmp_path, "chain", "\n".join(["v_mov_b32 v1, v0"] + ["v_add_nc_u32 v1, v1, v0"] * CHAIN), cfg)
    P = cfg.valu_cycles

    def check():
        p = run.perf
        assert p["issued"]["valu"] == CHAIN + 1 and p["issued"]["other"] == 1
        assert p["valu_busy"] == (CHAIN + 1) * P
        issues = [c for c, _, _ in run.issue_log]
        assert [b - a for a, b in zip(issues, issues[1:])] == [max(5, P)] * CHAIN + [_up(P + 5)]
    return run, check


def _salu_run(tmp_path, cfg):
    """One wave's SALU instructions, each reading the one before: one every four cycles (a
    one-pass result is written two cycles after issue)."""
    run = _one_wave(tmp_path, "salu", "\n".join(["s_mov_b32 s4, 1"] + ["s_add_co_u32 s4, s4, s4"] * 8), cfg)

    def check():
        issues = [c for c, _, _ in run.issue_log]
        assert run.perf["issued"]["salu"] == 9
        assert [b - a for a, b in zip(issues, issues[1:])] == [4] * 9
    return run, check


def _barrier(tmp_path, cfg, delay=0):
    """One wave: s_barrier_signal raises bar_wait the cycle after it issues; the bench releases
    the wave ``delay`` cycles after it first sees it (0: that same cycle), and s_barrier_wait
    issues at the wave's first turn after the release: four cycles after the signal when the
    release comes before, else the turn after it; the turns it waits count as barrier stalls."""
    run = _one_wave(tmp_path, f"bar{delay}", "s_barrier_signal -1\ns_barrier_wait 0xffff", cfg,
                    barrier_delay=(delay, delay))

    def check():
        (signal, _, _), (wait, _, _), _ = run.issue_log
        assert run.releases == [signal + 1 + delay]
        assert wait - signal == _up(delay + 2) and wait > run.releases[0]
        assert (run.perf["stall"]["barrier"] > 0) == (delay > 2)
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


def _run_all(jobs):
    runs = [run for run, _ in jobs]
    runs[0].run(more=runs[1:])
    for run, check in jobs:
        _check_perf(run)
        check()


@pytest.mark.parametrize("preset", PRESETS)
def test_counters_stalls_and_scalar_loads(tmp_path, preset):
    cfg = get_config(preset)
    _run_all([_valu_run(tmp_path, cfg), _salu_run(tmp_path, cfg), _barrier(tmp_path, cfg, 0),
              _barrier(tmp_path, cfg, 20), _scalar_loads(tmp_path, cfg)])


def test_barrier_releases_a_workgroup(tmp_path):
    """The bench acts as the DCU's barrier: lds_reduce_asm (a workgroup of four waves
    synchronising through LDS) released 0-3 cycles after its last live wave signals."""
    from firmware_tests.manifest import get
    test = get("lds_reduce_asm")
    reduce, inputs, why = _simd_run_for(test, get_config("default"))
    assert why is None, why
    _run_all([(reduce, lambda: _check_outputs(test, inputs, reduce.prep.read_back()))])
    assert reduce.perf["stall"]["barrier"] > 0 and reduce.releases


#: (instruction, the destination's value before it, its value after it in lane l): 16-bit
#: integer operands read an inline constant's 16-bit form zero-extended, FP16 for a float
#: (docs/model.md, "Inline constants in 16-bit operands"); op_sel picks the zero high half
INLINE16 = [
    ("v_add_nc_u16 {d}, v0, 1.0", 0xFFFF_FFFF, lambda l: 0xFFFF_0000 | (0x3C00 + l)),
    ("v_add_nc_u16 {d}, v0, -1 op_sel:[0,1,0]", 0, lambda l: l),
    ("v_add_nc_u16 {d}, -1, v0", 0, lambda l: (0xFFFF + l) & 0xFFFF),
    ("v_sub_nc_u16 {d}, -16, v0 op_sel:[1,0,0]", 0, lambda l: -l & 0xFFFF),
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
#: and the destination's old value 0x0000_003F: v_mad_u32_u16 adds a VGPR src2,
#: v_cndmask_b32_e64 applies abs/neg (bit 31) to its sources.
MODS_AND_SRC2 = [
    ("v_mad_u32_u16 {d}, v0, 0x12, v3", lambda l: 0x12 * l + 0x0003_0040 + l),
    ("v_cndmask_b32_e64 {d}, -v2, v3, s6", lambda l: 0x0003_0040 + l if l % 2 else 0x21 + l),
    ("v_cndmask_b32_e64 {d}, |v2|, -|v3|, s6", lambda l: 0x8003_0040 + l if l % 2 else 0x21 + l),
    ("v_cndmask_b32_e64 {d}, v3, -v0, s6", lambda l: 0x8000_0000 + l if l % 2 else 0x0003_0040 + l),
]


@pytest.mark.parametrize("preset", PRESETS)
def test_vgpr_src2_and_cndmask_source_modifiers(tmp_path, preset):
    """v_mad_u32_u16 with a VGPR src2 and abs/neg on v_cndmask_b32_e64's sources, in lock step
    with the model; the stored results are checked against ``MODS_AND_SRC2``."""
    body = ["s_load_b64 s[4:5], s[0:1], 0x0", "s_wait_kmcnt 0", "v_lshlrev_b32 v20, 2, v0",
            "s_mov_b32 s6, 0xAAAAAAAA", "v_add_nc_u32 v2, 0x80000021, v0", "v_add_nc_u32 v3, 0x30040, v0"]
    for k, (inst, _) in enumerate(MODS_AND_SRC2):
        body += ["v_mov_b32 v1, 0x3f", inst.format(d="v1"), f"global_store_b32 v20, v1, s[4:5] offset:{128 * k}"]
    out = np.zeros(32 * len(MODS_AND_SRC2), np.uint32)
    run = _one_wave(tmp_path, "mods", "\n".join(body), get_config(preset), buffers=(out,))

    def check():
        got = run.prep.read_back()[0].reshape(len(MODS_AND_SRC2), 32)
        for (inst, want), row in zip(MODS_AND_SRC2, got):
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


# scalar float: SALU float opcodes and v_s_* on the vector pipe's lane 0, each result used at
# once by the next instruction (the wave waits for it), stored from s[10:33] to out[0:24]
SCALAR_FLOAT_ASM = """s_load_b64 s[2:3], s[0:1], 0x0
s_wait_kmcnt 0
s_mov_b32 s10, 0x3fc00000
s_add_f32 s11, s10, 2.0
s_sub_f32 s12, s11, 0.5
s_mul_f32 s13, s12, s11
s_fmac_f32 s13, s10, 4.0
s_fmaak_f32 s14, s10, s11, 0x40490fdb
s_fmamk_f32 s15, s10, 0x3e800000, s12
v_add_f32 v5, s15, v0
s_max_num_f32 s16, s12, s13
s_min_num_f32 s17, s12, -4.0
s_cvt_f32_i32 s18, -7
s_cvt_i32_f32 s19, s14
s_cvt_u32_f32 s20, s13
s_floor_f32 s21, s14
s_ceil_f32 s22, s14
s_trunc_f32 s23, s17
s_rndne_f32 s24, s15
v_s_rcp_f32 s25, s11
v_s_rsq_f32 s26, s13
v_s_sqrt_f32 s27, s13
v_s_exp_f32 s28, s10
v_s_log_f32 s29, -s13
s_cmp_lt_f32 s10, s11
s_cselect_b32 s30, 1, 2
s_cmp_gt_f32 s10, s11
s_cselect_b32 s31, 3, 4
s_mov_b32 s33, 0x7fc00000
s_cmp_u_f32 s33, s10
s_cselect_b32 s32, 5, 6
s_cmp_neq_f32 s33, s33
s_addc_u32 s33, s33, 0
v_mov_b32 v2, 0
""" + "\n".join(f"v_mov_b32 v1, s{10 + k}\nglobal_store_b32 v2, v1, s[2:3] offset:{4 * k}" for k in range(24)) + """
v_lshlrev_b32 v3, 2, v0
global_store_b32 v3, v5, s[2:3] offset:96"""


@pytest.mark.parametrize("preset", PRESETS)
def test_scalar_float_on_lane_0(tmp_path, preset):
    """SALU float opcodes (sum, product, fused multiply-adds, min/max, conversions, rounding,
    compares to SCC) and the scalar transcendentals give the model's SGPRs; the VALU
    instruction among them sees its scalar source and leaves no other lane written."""
    out = np.zeros(24 + 32, np.uint32)
    run = _one_wave(tmp_path, "sfloat", SCALAR_FLOAT_ASM, get_config(preset), buffers=(out,))

    def check():
        got, want = run.prep.read_back()[0], run.model_prep.read_back()[0]
        f = got[:24].view(np.float32)
        assert (f[1], f[2], f[3], f[6], f[8]) == (3.5, 3.0, 16.5, 16.5, -7.0)   # s11, s12, s13, max, cvt
        assert list(got[20:24]) == [1, 4, 5, 0x7FC00001]       # lt, not gt, unordered, NaN != NaN
        assert np.array_equal(got, want), [(k, hex(a), hex(b)) for k, (a, b) in enumerate(zip(got, want)) if a != b]
    _run_all([(run, check)])


VOPD = """v_cvt_f32_u32 v1, v0
v_mov_b32 v2, 2.0
v_mov_b32 v9, 0.5
v_dual_add_f32 v4, v1, v2 :: v_dual_mul_f32 v3, v0, v9
v_dual_mov_b32 v6, v3 :: v_dual_sub_f32 v5, v4, v1
v_dual_fmac_f32 v1, v2, v2 :: v_dual_mov_b32 v8, v1"""


@pytest.mark.parametrize("preset", PRESETS)
def test_vopd_halves_in_lock_step(tmp_path, preset):
    """VOPD instructions issue as their two halves (the last one Y first: it reads X's
    destination), each half's rows checked against the model's VOPD; a VOPD counts once, and
    its halves read their rows each."""
    run = SimdRun(_kernel_from_asm(tmp_path, "vopd", VOPD), (1,), (64,), [], get_config(preset), seed=3)

    def check():
        assert run.perf["issued"]["valu"] == 2 * 6
        assert run.perf["valu_busy"] == 2 * (3 + 2 * 3) * get_config(preset).valu_cycles
    _run_all([(run, check)])


WRITES = """s_load_b64 s[4:5], s[0:1], 0x0
s_wait_kmcnt 0
s_add_co_u32 s6, s4, 3
v_lshlrev_b32 v2, 2, v0
v_cmp_gt_u32 vcc_lo, 7, v0
v_rcp_f32 v3, v0
v_dual_mov_b32 v6, v2 :: v_dual_add_f32 v7, v3, v3
global_load_b32 v4, v2, s[4:5]
s_wait_loadcnt 0"""

#: (instruction, how its record is falsified, the divergence reported): each kind of write
#: the bench attributes, and the issued PC
FALSIFIED = [
    ("s_load_b64", lambda ev: ev["sgprs"].__setitem__(4, ev["sgprs"][4] ^ 1), r"s4 loaded"),
    ("s_add_co_u32", lambda ev: ev["sgprs"].__setitem__(6, ev["sgprs"][6] ^ 1), r"s6 = "),
    ("s_add_co_u32", lambda ev: ev.__setitem__("scc", 1 - ev["scc"]), r"scc = "),
    ("v_lshlrev_b32", lambda ev: ev["vgprs"][2].__setitem__(5, ev["vgprs"][2][5] ^ 1), r"v2 lane 5 = "),
    ("v_cmp_gt_u32", lambda ev: ev["sgprs"].__setitem__(106, ev["sgprs"][106] ^ 1), r"vcc_lo = "),
    ("v_rcp_f32", lambda ev: ev["vgprs"][3].__setitem__(31, ev["vgprs"][3][31] ^ 1), r"v3 lane 31 = "),
    ("v_dual_mov_b32", lambda ev: ev["vgprs"][7].__setitem__(3, ev["vgprs"][7][3] ^ 1), r"v7 lane 3 = "),
    ("global_load_b32", lambda ev: ev["vgprs"][4].__setitem__(9, ev["vgprs"][4][9] ^ 1), r"v4 lane 9 = "),
    ("s_wait_loadcnt", lambda ev: ev.__setitem__("pc", ev["pc"] + 4), r"issued PC"),
]


@pytest.mark.parametrize("name,falsify,report", FALSIFIED, ids=[f"{n}-{r.split()[0]}" for n, _, r in FALSIFIED])
def test_the_bench_reports_a_wrong_write(tmp_path, name, falsify, report):
    """The model's record of one instruction falsified: the bench stops at that instruction,
    naming it and the register (scalar load, SALU result and SCC, VALU row, lane mask, a
    transcendental's result, a VOPD's second half, a load's result; the PC issued)."""
    run = _one_wave(tmp_path, "writes", WRITES, get_config("tiny"), buffers=(np.arange(32, dtype=np.uint32),))
    [evs] = run.events.values()
    ev = next(e for e in evs if e["inst"].name.startswith(name))
    falsify(ev)
    with pytest.raises(Divergence, match=report) as e:
        run.run()
    assert name in str(e.value)


def test_illegal_instruction_stops_the_wave_with_its_cause():
    """A word that is no instruction: ``error`` holds the slot, PC and cause ILLEGAL; the word
    does not issue (s_nop before it does, as "other"), and the wave neither ends nor issues
    again but stays resident."""
    words = [0xBF800000, 0xFFFFFFFF, 0xBFB00000, 0]         # s_nop 0, garbage, s_endpgm
    base = 0x1000
    cfg = get_config("tiny")
    dut = SIMD(cfg)

    async def bench(ctx):
        for port in (dut.fetch_req, dut.smem_req, dut.vmem_req, dut.lds_req):
            ctx.set(port.ready, 1)
        ctx.set(dut.launch.payload, {"pc": base, "exec": 0xFFFF_FFFF, "wg_last": 1})
        ctx.set(dut.launch.valid, 1)
        await ctx.tick().until(dut.launch.ready)
        ctx.set(dut.launch.valid, 0)
        lines = []                      # requested lines, each offered until taken
        for cycle in range(200):
            if ctx.get(dut.fetch_req.valid):
                q = dut.fetch_req.payload
                lines.append({"wave": ctx.get(q.wave), "epoch": ctx.get(q.epoch), "target": ctx.get(q.target),
                              "data": sum(w << (32 * j) for j, w in enumerate(words))
                              if ctx.get(q.addr) == base else 0})
            ctx.set(dut.fetch_resp.valid, bool(lines))
            if lines:
                ctx.set(dut.fetch_resp.payload, lines[0])
                if ctx.get(dut.fetch_resp.ready):
                    lines.pop(0)
            assert not ctx.get(dut.ended)
            if ctx.get(dut.error.valid):
                break
            await ctx.tick()
        else:
            raise AssertionError("watchdog: no error reported within 200 cycles")
        err = ctx.get(dut.error)
        assert (err.cause, err.wave, err.pc) == (PipeError.ILLEGAL, 0, base + 4)
        assert ctx.get(dut.perf.issued.other) == 1
        for _ in range(20):   # stopped: it neither issues nor ends
            await ctx.tick()
            assert not ctx.get(dut.ended) and not ctx.get(dut.idle) and ctx.get(dut.waves[0].resident)
        assert ctx.get(dut.perf.issued.other) == 1 and ctx.get(dut.error) == err

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


def test_an_unexecuted_instruction_stops_the_run(tmp_path):
    """v_mad_u16 (which the SIMD does not decode) stops its wave: the bench reports it
    as a divergence with the wave, the cause and the instruction."""
    run = _one_wave(tmp_path, "mad16", "v_mov_b32 v1, v0\nv_mad_u16 v2, v0, v1, v0", get_config("fpga"))
    with pytest.raises(Divergence, match=r"illegal, at PC 0x[0-9a-f]+ \(v_mad_u16 v2, v0, v1, v0\)"):
        run.run()


def _rows_config(lanes: int):
    """The tiny preset with ``lanes`` lanes: requests and return beats in rows of them."""
    return get_config("tiny").replace(lanes=lanes, shared_mem_request=True, coalesce_in_place=True,
                                      lds_in_place=True, request_in_rows=True, coalesce_lanes=lanes, lds_banks=lanes)


@pytest.mark.parametrize("lanes", [32, pytest.param(16, marks=pytest.mark.slow),
                                   pytest.param(8, marks=pytest.mark.slow)])
def test_simd_converts_to_verilog_and_lints(tmp_path, lanes):
    cfg = get_config("tiny") if lanes == 32 else _rows_config(lanes)
    convert_and_lint(SIMD(cfg), "simd", tmp_path)


def test_fpga_simd_converts_to_verilog_and_lints(tmp_path):
    """The fpga preset's SIMD as built: 4 lanes, the shared multiplier, requests in rows."""
    convert_and_lint(SIMD(get_config("fpga")), "simd", tmp_path)
