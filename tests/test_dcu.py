"""The whole DCU (hdl/top/dcu.py) in Amaranth's simulator: backend ``rtl``.

* Firmware kernels run on the DCU and on the model: outputs equal the golden functions, and
  the instructions the four SIMDs issued equal the model's count, group by group.
* Errors stop the dispatch with a report naming the cause, SIMD, wave and PC (or lane and
  address) and lose no buffer: an illegal instruction, a vector access outside memory, and
  a barrier wait that can never complete (the watchdog).
* The DCU converts to Verilog and lints: tests/test_verilator.py lints the Verilog it compiles
  (the DCU with its memory), so the minutes of conversion are spent once.

Building a DCU simulator costs 30–50 s; CI runs a cross-section, ``-m slow`` runs every
firmware kernel on the ``default`` and ``tiny`` presets, on one reused simulator
(``dcu.backends.rtl.RtlSession``) per preset and test process.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import dcu
from dcu.admission import ResourceError, check_kernel
from dcu.backends.rtl import RtlError
from dcu.launch import LaunchUnsupported
from firmware_tests.manifest import TESTS, get
from dcu.firmware import issue_mismatches, run_firmware
from hdl.config import get_config
from hdl.top.barrier import WorkgroupBarrier
from hdl.top.dcu import DCU
from hdl.top.dispatch import Dispatcher
from tests.asmutil import needs_llvm
from tests.lint import convert_and_lint

pytestmark = needs_llvm

# (the waveform test below runs vector_add_asm on ``tiny``)
CI_FIRMWARE = [("lds_reduce_asm", "default")]


def _check(name: str, config: str, **options):
    test = get(name)
    rtl = run_firmware(test, backend="rtl", config=config, **options)
    assert rtl.ok, rtl.describe()
    assert not (bad := issue_mismatches(test, config, rtl.run.report)), bad
    return rtl.run.report


@pytest.mark.parametrize("name,config", CI_FIRMWARE, ids=[f"{n}-{c}" for n, c in CI_FIRMWARE])
def test_firmware_on_dcu(name, config):
    report = _check(name, config)
    assert report.cycles > 0


def test_firmware_run_writes_its_waveform_and_timeline(tmp_path):
    """The waveform, its GTKWave view and the timeline of a run (on ``tiny``: a ``default``
    DCU's waveform costs its run several times over)."""
    vcd, png = tmp_path / "run.vcd", tmp_path / "run.png"
    report = _check("vector_add_asm", "tiny", vcd=str(vcd), timeline=str(png))
    assert report.cycles > 0
    gtkw = (tmp_path / "run.gtkw").read_text()
    assert "simd0" in gtkw and "wave0" in gtkw and "op" in gtkw
    assert "S_ENDPGM" in vcd.read_text()          # decoded instruction names in the dump
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _all_cases():
    cases = []
    for t in TESTS:
        if t.name.startswith("lds_stride_s") and t.name not in ("lds_stride_s1_asm", "lds_stride_s32_asm"):
            continue
        for config in ("default", "tiny"):
            cases.append(pytest.param(t.name, config, id=f"{t.name}-{config}", marks=pytest.mark.slow))
    return cases


@pytest.mark.parametrize("name,config", _all_cases())
def test_every_firmware_kernel_on_dcu(name, config):
    try:
        _check(name, config, reuse=True)   # one simulator per preset and test process
    except (ResourceError, LaunchUnsupported) as e:   # refused before launch: too big, or not executable
        pytest.skip(str(e))


def test_rdna1_preset_runs_a_kernel():
    """RDNA 1 (Navi 10) sizes: 20 wave slots and 1,024 VGPRs per SIMD, 64 KiB LDS halves,
    in-order return queues (about 3 minutes: a 1-Mbit register file per SIMD)."""
    _check("vector_add_asm", "rdna1")


@pytest.mark.parametrize("config", ["fpga", "tiny"])
def test_one_transcendental_unit_shared_by_the_simds(config):
    """The SIMDs take turns on one transcendental unit (hdl/simd/transshare.py): a kernel whose
    waves issue transcendental instructions on every SIMD gives the golden results and the
    model's counts. ``fpga`` has the banked register file; on ``tiny`` (the wide one) an
    instruction the unit does not take at once waits in EX."""
    report = _check("transcendental_asm", config)
    assert all(report.counters[f"simd{s}.issued.trans"] > 0 for s in range(4)), report.counters


ONE_SLOT = get_config("tiny").replace(name="tiny-1slot", wave_slots=1)


def test_one_wave_slot_per_simd(tmp_path):
    """``wave_slots=1``, the least wave state a SIMD can have: its wave fields are still a bit
    wide (``config.wave_ids``), so the blocks sized by wave slots convert and lint. Two-wave
    workgroups spread over a CU's two SIMDs give the golden results and the model's counts on
    every SIMD; a workgroup of more waves than the CU's two slots is refused before launch."""
    config = ONE_SLOT
    convert_and_lint(Dispatcher(config), "dispatcher", tmp_path)
    convert_and_lint(WorkgroupBarrier(config), "barrier", tmp_path)
    report = _check("divergence_cl", config)
    assert all(report.counters[f"simd{s}.issued.valu"] > 0 for s in range(4)), report.counters
    with pytest.raises(ResourceError, match=r"2 SIMDs x 1: 1 slot,"):
        run_firmware(get("lds_reduce_asm"), backend="rtl", config=config)


@pytest.mark.slow
def test_one_wave_slot_dcu_converts_and_lints(tmp_path):
    """The whole one-slot DCU in Verilog (about 20 minutes on 2 cores)."""
    convert_and_lint(DCU(ONE_SLOT), "dcu", tmp_path)


def test_session_reset_leaves_nothing_of_the_previous_dispatch():
    """A reused simulator (``RtlSession``) gives a dispatch exactly what a new one would: a
    kernel run before and after another one counts the same cycles and counters and
    writes the same output, though the other kernel ran its own code through the same
    instruction, scalar and L0 caches in between."""
    from dcu.prepare import launch_dims, prepare
    from dcu.backends.rtl import RtlSession
    from dcu.firmware import HERE
    from hdl.config import get_config
    cfg = get_config("tiny")
    session = RtlSession(cfg)

    def run(name):
        test = get(name)
        kernel = dcu.load_program(HERE / test.source, wgp=test.wgp).kernel(test.kernel)
        args = test.make_args(np.random.default_rng(0))
        prep = prepare(kernel, test.grid, test.block, args)
        check_kernel(cfg, kernel, launch_dims(test.block))
        res = session.run(prep, kernel, bool(kernel.wgp_mode), progress=False)
        return res, prep.read_back()

    first, out_first = run("vector_add_asm")
    other, _ = run("scalar_loads_asm")
    again, out_again = run("vector_add_asm")
    assert other.cycles != first.cycles
    assert (again.cycles, again.counters) == (first.cycles, first.counters)
    assert all(np.array_equal(a, b) for a, b in zip(out_first, out_again) if isinstance(a, np.ndarray))


def test_reused_hosttop_counts_what_a_new_one_does():
    """The DCU with the RTL memory model (``memory="rtl"``), reused: built with an empty
    memory, each dispatch's image written into it before the dispatch. A kernel run first,
    and again after another kernel, counts the cycles and counters of a HostTop built with
    that kernel's image as its memory's contents, and writes the golden output."""
    from dcu.backends.rtl import SESSIONS
    opts = dict(backend="rtl", config="tiny", memory="rtl", memory_seed=3, progress=False)

    def run(name, **kw):
        res = run_firmware(get(name), **opts, **kw)
        assert res.ok, res.describe()
        return res.run.report

    fresh = run("vector_add_asm")
    first = run("vector_add_asm", reuse=True)
    sessions = dict(SESSIONS)     # the HostTop that served it (another test may have built it)
    other, again = run("scalar_loads_asm", reuse=True), run("vector_add_asm", reuse=True)
    assert SESSIONS == sessions   # served the other two as well
    assert other.cycles != first.cycles
    for r in (first, again):
        assert (r.cycles, r.counters) == (fresh.cycles, fresh.counters)


# ---------------------------------------------------------------------------- errors
HEADER = "\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx1200\"\n\t.text\n\t.globl k\n\t.p2align 8\n\t.type k,@function\nk:\n"
TRAILER = """
\t.section .rodata,"a",@progbits
\t.p2align 6, 0x0
\t.amdhsa_kernel k
\t\t.amdhsa_group_segment_fixed_size 0
\t\t.amdhsa_kernarg_size 16
\t\t.amdhsa_user_sgpr_count 2
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t\t.amdhsa_wavefront_size32 1
\t\t.amdhsa_system_sgpr_workgroup_id_x 1
\t\t.amdhsa_next_free_vgpr 8
\t\t.amdhsa_next_free_sgpr 16
\t\t.amdhsa_workgroup_processor_mode 0
\t.end_amdhsa_kernel
"""


# the error tests share one tiny DCU simulator (``reuse=True``) in one test process
ERRORS = pytest.mark.xdist_group("dcu_tiny_errors")


def asm_kernel(tmp_path, body: str):
    """Kernel ``k`` of ``body`` between :data:`HEADER` and :data:`TRAILER`, assembled in ``tmp_path``."""
    p = tmp_path / "k.s"
    p.write_text(HEADER + body + TRAILER)
    return dcu.load_program(p).kernel("k")


def store_then(tail: str) -> str:
    """Every lane stores lane + 1 to out[lane], waits, then runs ``tail``."""
    return f"""
\ts_load_b64 s[4:5], s[0:1], 0x0
\tv_lshlrev_b32 v1, 2, v0
\tv_add_nc_u32 v2, 1, v0
\ts_wait_kmcnt 0
\tglobal_store_b32 v1, v2, s[4:5]
\ts_wait_storecnt 0
{tail}
\ts_endpgm
"""


@ERRORS
def test_illegal_instruction_names_wave_pc_and_words(tmp_path):
    k = asm_kernel(tmp_path, store_then("\t.long 0xffffffff"))
    out = np.zeros(32, np.uint32)
    with pytest.raises(RtlError, match=r"illegal instruction at SIMD \d, wave slot \d, "
                                       r"PC 0x[0-9a-f]+: .*ffffffff") as e:
        dcu.launch(k, 1, 32, [out], backend="rtl", config="tiny", reuse=True)
    # the stores before the bad word reached memory and come back with the error
    assert np.array_equal(e.value.buffers[0], np.arange(1, 33))


@ERRORS
def test_unsupported_instruction_names_unit_pc_and_words(tmp_path, monkeypatch):
    """An instruction the SIMD does not execute (clamp on the transcendental v_exp_f32) stops
    the wave with cause UNSUPPORTED: the DCU keeps no words, the host reads them at the
    latched PC and names the unit (the check before launch is bypassed)."""
    from dcu.launch import image_base
    from dcu.backends.rtlcheck import kernel_instructions
    import dcu.backends.rtlcheck
    monkeypatch.setattr(dcu.backends.rtlcheck, "refuse_unsupported", lambda kernel, backend: None)
    k = asm_kernel(tmp_path, store_then("\tv_exp_f32_e64 v3, v2 clamp"))
    at = next(f for f in kernel_instructions(k) if f.name == "v_exp_f32")
    pc = image_base() + at.pc
    words = [int.from_bytes(k.code[at.pc - k.code_base:][i:i + 4], "little") for i in (0, 4)]
    assert words == [0xD5A58003, 0x00000102]      # llvm-mc-19: v_exp_f32_e64 v3, v2 clamp
    out = np.zeros(32, np.uint32)
    with pytest.raises(RtlError) as e:
        dcu.launch(k, 1, 32, [out], backend="rtl", config="tiny", reuse=True)
    assert re.search(rf"unsupported instruction at SIMD \d, wave slot \d, PC {pc:#x}: the RTL's "
                     r"transcendental unit does not execute v_exp_f32_e64 v3, v2 clamp \(dwords d5a58003 00000102\)$",
                     str(e.value)), str(e.value)
    f = e.value.fault
    assert (e.value.category, f.pc, f.instruction) == \
        ("unsupported", pc, "v_exp_f32_e64 v3, v2 clamp (dwords d5a58003 00000102)")
    assert f.what == "an instruction the RTL's transcendental unit does not execute"
    assert np.array_equal(e.value.buffers[0], np.arange(1, 33))


@ERRORS
def test_an_error_stops_requests_in_flight(tmp_path):
    """Atomics still on their way to memory when an illegal instruction stops the DCU are
    applied at most once: the stopped DCU requests nothing more (the backend watches its
    port for some cycles after the stop)."""
    k = asm_kernel(tmp_path, """
\ts_load_b64 s[4:5], s[0:1], 0x0
\tv_lshlrev_b32 v1, 2, v0
\tv_add_nc_u32 v2, 1, v0
\ts_wait_kmcnt 0
""" + "\tglobal_atomic_add_u32 v1, v2, s[4:5]\n" * 16 + "\t.long 0xffffffff\n")
    out = np.zeros(32, np.uint32)
    with pytest.raises(RtlError, match="illegal instruction") as e:
        dcu.launch(k, 1, 32, [out], backend="rtl", config="tiny", reuse=True)
    assert "after it stopped" not in str(e.value)
    got = e.value.buffers[0].astype(np.int64)
    assert all(v % (lane + 1) == 0 and v // (lane + 1) <= 16 for lane, v in enumerate(got)), got


@ERRORS
def test_memory_fault_names_lane_and_address(tmp_path):
    # lane 5 adds 16 MiB to its address: far outside every buffer
    k = asm_kernel(tmp_path, store_then("""\tv_cmp_eq_u32 vcc_lo, 5, v0
\tv_cndmask_b32 v3, 0, 0x1000000, vcc_lo
\tv_add_nc_u32 v1, v1, v3
\tglobal_store_b32 v1, v2, s[4:5]
\ts_wait_storecnt 0"""))
    out = np.zeros(32, np.uint32)
    with pytest.raises(RtlError, match=r"memory fault at SIMD \d, wave slot \d, lane 5: address 0x[0-9a-f]+") as e:
        dcu.launch(k, 1, 32, [out], backend="rtl", config="tiny", reuse=True)
    assert np.array_equal(e.value.buffers[0], np.arange(1, 33))


@ERRORS
def test_barrier_that_never_completes_trips_the_watchdog(tmp_path):
    # s_barrier_wait without a signal: the wave can never pass it
    k = asm_kernel(tmp_path, store_then("\ts_barrier_wait -1"))
    out = np.zeros(32, np.uint32)
    with pytest.raises(RtlError,
                       match=r"watchdog: no instruction issued for 2000 cycles.*\n.*SIMD \d slot \d: PC") as e:
        dcu.launch(k, 1, 32, [out], backend="rtl", config="tiny", watchdog_cycles=2000, reuse=True)
    assert np.array_equal(e.value.buffers[0], np.arange(1, 33))
