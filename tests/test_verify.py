"""dcu.verify: random whole-DCU programs, the model against a backend.

* The generator (on the model): programs assemble, use only what the target executes, end,
  and are the same for the same seed; every opcode of the pools has a template LLVM takes;
  the waits it inserts use partial counters.
* The shrinker: against a copy of the model whose v_xor_b32 is broken, a failing program
  shrinks to a few instructions that still fail and include v_xor_b32.
* A campaign of 200 programs on Verilator (the ``fpga`` build of tests/test_verilator.py).
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from dcu.backends import verilator as vl
from dcu.verify.gen import Op, Waits, generate, pools
from dcu.verify.run import campaign, check, fails_on, kernel_of, model_runner
from dcu.verify.shrink import shrink, size, write_reproducer
from tests.asmutil import needs_llvm

pytestmark = needs_llvm


def test_same_seed_same_program_and_seeds_differ():
    a, b, c = generate(7), generate(7), generate(8)
    assert a.source() == b.source()
    assert a.source() != c.source()
    assert all(np.array_equal(x, y) for x, y in zip(a.inputs(), b.inputs()))


def test_programs_use_only_what_the_rtl_executes(tmp_path):
    from dcu.backends.rtlcheck import unsupported
    for seed in range(6):
        kernel = kernel_of(generate(seed), tmp_path)
        assert unsupported(kernel) == [], seed


@pytest.mark.parametrize("target", ["rtl", "model"])
def test_every_opcode_of_the_pools_assembles(tmp_path, target):
    """Eight random instances of every opcode the generator draws from, in one kernel: LLVM
    takes each template's operands and modifiers."""
    import random

    from dcu.verify import gen
    from dcu.launch import load_program
    r = random.Random(1)
    p = pools(target)
    lines = []
    for _ in range(8):
        lines += [gen.salu_op(r, i).text for i in p.salu + p.exec_ops]
        lines += [gen.valu_op(r, i, p.no_clamp).text for i in p.valu + p.vopc + p.cmpx]
        lines += [gen.global_op(r, i, False).text for i in p.gload + p.gstore + p.gatomic]
        lines += [gen.ds_op(r, i, False).text for i in p.ds]
        lines += [gen.smem_op(r, i).text for i in p.smem]
    prog = generate(0, target, length=1)
    src = prog.source().replace("  s_endpgm", "\n".join("  " + x for x in lines) + "\n  s_endpgm")
    (tmp_path / "all.s").write_text(src)
    assert load_program(tmp_path / "all.s").kernel("verify").code_size > 4 * len(lines)
    assert len(p.valu) > 100 and p.gatomic and p.ds and p.smem


def test_waits_use_partial_counters():
    w = Waits()
    load = lambda d: Op(f"global_load_b32 {d}", writes=frozenset({d}), counter="load")
    out = []
    for op in (load("v2"), load("v3"), load("v4"), Op("v_mov_b32 v5, v3", reads=frozenset({"v3"}))):
        out += w.before(op)
        w.after(op)
    assert out == ["s_wait_loadcnt 1"]      # v3's load and older done, v4's may still be in flight
    assert w.before(Op("v_add v6, v4", reads=frozenset({"v4"}))) == ["s_wait_loadcnt 0"]
    store = Op("global_store_b32", counter="store")
    w.after(store)
    assert w.before(load("v7")) == ["s_wait_storecnt 0"]


def _sgprs(line: str) -> set[int]:
    """The SGPR numbers an instruction line names (``s7``, ``s[20:35]``)."""
    regs = {int(n) for n in re.findall(r"\bs(\d+)\b", line)}
    for lo, hi in re.findall(r"\bs\[(\d+):(\d+)\]", line):
        regs |= set(range(int(lo), int(hi) + 1))
    return regs


def test_no_instruction_touches_a_scalar_load_destination_before_its_wait():
    """What a scalar load writes is neither read nor written before ``s_wait_kmcnt``: the
    structures' own instructions (a loop's trip count from a random SGPR) wait too, so a
    program's result does not depend on the load's latency."""
    checked = 0
    for seed in range(200):
        pending = set()
        for line in generate(seed, "rtl").source("verify").splitlines():
            text = line.strip()
            if text.startswith("s_wait_kmcnt"):
                pending = set()
            elif text.startswith("s_load_"):
                assert not pending & _sgprs(text), (seed, text)
                pending |= _sgprs(text.split(",")[0])
            elif pending and text and not text.startswith((".", "//")):
                assert not pending & _sgprs(text), (seed, text, sorted(pending))
                checked += 1
    assert checked > 500


def test_programs_end_and_cover_the_structures():
    """Model against model: every program ends without a fault, the two runs agree, and the
    campaign saw every structure and several shapes."""
    report = campaign(12, seed=40, backend="model", jobs=1)
    assert report["failed"] == 0, report["failures"]
    cov = report["coverage"]
    assert set(cov["structures"]) >= {"if", "exec", "skip", "sloop", "vloop", "barrier"}
    assert len(cov["shapes"]) >= 3 and report["instructions"] > 12 * 100
    assert cov["opcodes_covered"] > 100
    assert {"none", "some", "all"} <= set().union(*(set(v["lanes"]) for v in cov["ops"].values()))


def test_model_target_programs_run_on_the_model():
    """Programs with the opcodes only the model executes (f16, f64, scalar float ...) end."""
    report = campaign(6, seed=200, backend="model", jobs=1, target="model")
    assert report["failed"] == 0, report["failures"]


def _broken_xor(w, inst):
    """A wrong v_xor_b32: bit 4 of every active lane's result flipped."""
    from sim.wave import EXEC
    lanes = np.array([(int(w.s[EXEC]) >> i) & 1 for i in range(32)], np.uint32)
    w.v[inst.f["vdst"]] ^= lanes << 4


def test_shrinker_reduces_a_broken_xor_to_a_small_program(tmp_path, monkeypatch):
    broken = model_runner({"v_xor_b32": _broken_xor})
    prog = next(p for p in (generate(s, length=30) for s in range(100))
                if any(o.name == "v_xor_b32" for o in p.ops()) and check(p, broken)["mismatches"])
    small = shrink(prog, fails_on(broken))
    names = [o.name for o in small.ops()]
    assert "v_xor_b32" in names
    assert size(small) <= 4 < size(prog), names
    assert (small.layout.groups, small.layout.waves) == (1, 1)
    mism = check(small, broken)["mismatches"]
    assert mism and "expected" in mism[0]
    assert check(small, model_runner())["mismatches"] == []       # the intact model agrees
    path = write_reproducer(small, tmp_path, mism, backend="model")
    text = path.read_text()
    assert "v_xor_b32" in text and f"dcu run {path.name}" in text
    # the header's command runs it: the output is the intact model's
    from dcu.cli import main
    cmd = text.splitlines()[1].split("dcu run ", 1)[1].replace("OUT", str(tmp_path / "out")).split()
    monkeypatch.chdir(tmp_path)
    assert main(["run", *cmd, "-q"]) == 0
    expected = model_runner()(kernel_of(small, tmp_path), small).buffers[0]
    assert np.array_equal(np.load(tmp_path / "out" / "arg0.npy"), expected)


def test_cli_runs_a_campaign_and_writes_the_report(tmp_path, capsys):
    from dcu.cli import main
    out = tmp_path / "r.json"
    assert main(["verify", "--backend", "model", "--programs", "2", "--seed", "5", "-q", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["programs"] == 2 and report["passed"] == 2 and report["seeds"] == [5, 6]
    assert "gaps" in report["coverage"]
    assert "2 passed, 0 failed" in capsys.readouterr().out


def test_a_campaign_in_parts_merges_into_the_whole():
    from dcu.verify.run import merge_reports
    whole = campaign(4, seed=20, backend="model", length=8)
    parts = merge_reports([campaign(2, seed=20, backend="model", length=8),
                           campaign(2, seed=22, backend="model", length=8)])
    for key in ("seeds", "programs", "passed", "failed", "instructions", "failures"):
        assert parts[key] == whole[key], key
    assert parts["coverage"] == whole["coverage"]
    with pytest.raises(ValueError):
        merge_reports([whole, {**whole, "backend": "rtl"}])


@pytest.mark.skipif(not vl.available(), reason=vl.INSTALL_HINT)
@pytest.mark.xdist_group("verilator")
def test_campaign_on_verilator_matches_the_model():
    """200 programs of 12 random instructions (and their structures) on the compiled ``fpga``
    DCU (tests/test_verilator.py's build) against the model: memory, every wave's registers
    and LDS, instructions by issue group (about 170 s of CPU, the simulation's included)."""
    from tests.test_verilator import PRESET
    report = campaign(200, seed=1000, backend="verilator", jobs=1, config=PRESET, length=12)
    assert report["failed"] == 0, json.dumps(report["failures"][:5], indent=1)
    events = report["coverage"]["events"]
    assert events.get("barriers") and events.get("L0 misses") and events.get("lds bank conflict cycles")
