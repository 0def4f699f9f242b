"""The shared bit-vector blocks of ``hdl/bitops.py``: the priority encoder and the two round
robins, against their definitions in Python for every mask and last position of a few widths,
and the trees on random values.
"""
from __future__ import annotations

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from hdl.bitops import first_set, mux_tree, onehot_or, popcount, rr_grant, rr_pick, tree_max, tree_or


def lowest_after(mask: int, last: int, n: int) -> int | None:
    """The round robin's definition: the first set bit after ``last``, wrapping; None if none."""
    for k in range(1, n + 1):
        i = (last + k) % n
        if mask >> i & 1:
            return i
    return None


def evaluate(m: Module, inputs: dict, outputs: dict, cases):
    """Set ``inputs`` to each case's values and return the ``outputs`` read back."""
    seen = []

    async def bench(ctx):
        for case in cases:
            for name, sig in inputs.items():
                ctx.set(sig, case[name])
            seen.append({name: ctx.get(sig) for name, sig in outputs.items()})

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    return seen


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_round_robins(n):
    m = Module()
    mask, last = Signal(n), Signal(range(n))
    grant, pick = rr_grant(m, mask, last, "g")
    rr = rr_pick(m, mask, last, "r")
    first = first_set(m, mask, "f")
    cases = [{"mask": x, "last": y} for x in range(1 << n) for y in range(n)]
    seen = evaluate(m, {"mask": mask, "last": last},
                    {"grant": grant, "pick": pick, "rr": rr, "first": first}, cases)
    for case, got in zip(cases, seen):
        x, y = case["mask"], case["last"]
        want = lowest_after(x, y, n)
        assert got["grant"] == (0 if want is None else 1 << want), (x, y, got)
        if want is not None:
            assert got["pick"] == want and got["rr"] == want, (x, y, got)
            assert got["first"] == (x & -x).bit_length() - 1, (x, got)


def test_trees():
    rng = random.Random(7)
    m = Module()
    vals = [Signal(6, name=f"v{i}") for i in range(5)]
    conds = [Signal(name=f"c{i}") for i in range(5)]
    index = Signal(3)
    outs = {"or": tree_or(vals), "max": tree_max(vals), "pop": popcount(vals[0]),
            "sel": mux_tree(index, vals), "onehot": onehot_or(conds, [4, 0, 2, 7, 2], 8)}
    sigs = {}
    for name, value in outs.items():
        sigs[name] = Signal(len(value), name=name)
        m.d.comb += sigs[name].eq(value)
    inputs = {**{f"v{i}": v for i, v in enumerate(vals)}, **{f"c{i}": c for i, c in enumerate(conds)},
              "index": index}
    cases = [{**{f"v{i}": rng.randrange(64) for i in range(5)},
              **{f"c{i}": rng.randrange(2) for i in range(5)}, "index": rng.randrange(8)} for _ in range(200)]
    for case, got in zip(cases, evaluate(m, inputs, sigs, cases)):
        v = [case[f"v{i}"] for i in range(5)]
        c = [case[f"c{i}"] for i in range(5)]
        expect_or = 0
        for x in v:
            expect_or |= x
        assert got["or"] == expect_or
        assert got["max"] == max(v)
        assert got["pop"] == bin(v[0]).count("1")
        assert got["sel"] == (v[case["index"]] if case["index"] < 5 else 0)
        assert got["onehot"] == sum({1 << b for b, on in zip([4, 0, 2, 7, 2], c) if on})
