"""Logic depth from a mapped netlist (``dcu/fpga/depth.py``): levels per cell type, where paths
start and end, one path per end signal, and a block through Yosys (``dcu fpga --depth``)."""
from __future__ import annotations

import pytest

from dcu.fpga.depth import HARD_LEVELS, logic_depth, signal_of


def _cell(t, **conns):
    outs = {"Z", "Q", "S0", "S1", "COUT", "DO0", "DO"}
    return {"type": t, "parameters": {}, "connections": conns,
            "port_directions": {p: "output" if p in outs else "input" for p in conns}}


def _netlist(cells, ports=None):
    return {"modules": {"top": {"ports": ports or {}, "cells": cells}}}


def test_levels_by_cell_and_paths_by_end():
    cells = {
        "a_TRELLIS_FF_Q": _cell("TRELLIS_FF", CLK=[1], DI=[20], Q=[2]),
        "x_LUT4_Z": _cell("LUT4", A=[2], B="0", C=[2], D=[2], Z=[3]),
        "y_LUT4_Z": _cell("LUT4", A=[3], B=[2], C="0", D="0", Z=[4]),
        "b[0]_TRELLIS_FF_Q": _cell("TRELLIS_FF", CLK=[1], DI=[4], Q=[21]),
        "b[1]_TRELLIS_FF_Q": _cell("TRELLIS_FF", CLK=[1], DI=[3], Q=[22]),
        # a carry chain: only its first cell's logic input counts
        "s_CCU2C_1": _cell("CCU2C", A0=[2], CIN="0", COUT=[5]),
        "s_CCU2C_2": _cell("CCU2C", A0="0", CIN=[5], COUT=[8]),
        "s_CCU2C_3": _cell("CCU2C", A0="0", CIN=[8], S0=[6]),
        "c_TRELLIS_FF_Q": _cell("TRELLIS_FF", CLK=[1], DI=[6], Q=[23]),
        # a wide multiplexer from its slice's LUT: no level; through its select: one
        "m_PFUMX_Z": _cell("PFUMX", ALUT=[3], BLUT=[3], C0="0", Z=[7]),
        "d_TRELLIS_FF_Q": _cell("TRELLIS_FF", CLK=[1], DI=[7], Q=[24]),
        # a block RAM's read data starts a path at HARD_LEVELS
        "r_DP16KD_DO0": _cell("DP16KD", CLKA=[1], ADA0=[2], DO0=[12]),
        "e_LUT4_Z": _cell("LUT4", A=[12], B="0", C="0", D="0", Z=[13]),
        "e_TRELLIS_FF_Q": _cell("TRELLIS_FF", CLK=[1], DI=[13], CE=[3], Q=[25]),
        # the ports are not timed: an input to an output is no path; an input beside a register
        # leaves the register's path
        "o_LUT4_Z": _cell("LUT4", A=[10], B="0", C="0", D="0", Z=[11]),
        "p_LUT4_Z": _cell("LUT4", A=[10], B=[10], C=[10], D=[24], Z=[14]),
        "p_TRELLIS_FF_Q": _cell("TRELLIS_FF", CLK=[1], DI=[14], Q=[26]),
    }
    ports = {"clk": {"direction": "input", "bits": [1]}, "i": {"direction": "input", "bits": [10]},
             "o": {"direction": "output", "bits": [11]}}
    r = logic_depth(_netlist(cells, ports), "top", paths=10)
    by_end = {p["to"]: p for p in r["paths"]}
    assert r["levels"] == HARD_LEVELS + 1 == by_end["e (TRELLIS_FF DI)"]["levels"]
    assert by_end["e (TRELLIS_FF DI)"]["from"] == "r (DP16KD)"
    # a bus's bits are one path: b[0]'s is the deeper one (two LUTs)
    b = [p for p in r["paths"] if p["to"].startswith("b[")]
    assert len(b) == 1 and b[0]["levels"] == 2 and b[0]["from"] == "a (TRELLIS_FF)"
    assert [s[:2] for s in b[0]["through"]] == [["x", "LUT4"], ["y", "LUT4"]]
    assert by_end["c (TRELLIS_FF DI)"]["levels"] == 1
    assert by_end["d (TRELLIS_FF DI)"]["levels"] == 1
    assert by_end["p (TRELLIS_FF DI)"]["levels"] == 1 and by_end["p (TRELLIS_FF DI)"]["from"] == "d (TRELLIS_FF)"
    assert not [p for p in r["paths"] if "input" in p["from"] or "output" in p["to"]]
    assert [p["levels"] for p in r["paths"]] == sorted((p["levels"] for p in r["paths"]), reverse=True)
    assert len(logic_depth(_netlist(cells, ports), "top", paths=2)["paths"]) == 2
    # a combinational unit's depth: its inputs start paths and its outputs end them
    timed = {p["to"]: p for p in logic_depth(_netlist(cells, ports), "top", paths=20, ports=True)["paths"]}
    assert timed["<output o>"]["levels"] == 1 and timed["<output o>"]["from"] == "<input i>"
    assert timed["p (TRELLIS_FF DI)"]["levels"] == 1


def test_a_combinational_loop_is_an_error():
    cells = {"p_LUT4_Z": _cell("LUT4", A=[3], Z=[2]), "q_LUT4_Z": _cell("LUT4", A=[2], Z=[3]),
             "f_TRELLIS_FF_Q": _cell("TRELLIS_FF", DI=[3], Q=[4])}
    with pytest.raises(ValueError, match="combinational loop"):
        logic_depth(_netlist(cells), "top")
    # paths that split and meet again are no loop: the longer branch counts
    diamond = {"a_TRELLIS_FF_Q": _cell("TRELLIS_FF", DI=[9], Q=[1]), "x_LUT4_Z": _cell("LUT4", A=[1], Z=[2]),
               "y_LUT4_Z": _cell("LUT4", A=[2], Z=[3]), "z_LUT4_Z": _cell("LUT4", A=[2], B=[3], Z=[4]),
               "e_TRELLIS_FF_Q": _cell("TRELLIS_FF", DI=[4], Q=[5])}
    assert logic_depth(_netlist(diamond), "top")["levels"] == 3


def test_signal_of_a_yosys_cell_name():
    assert signal_of("\\idgen.tid_x0[7]_TRELLIS_FF_Q_DI_LUT4_Z") == "idgen.tid_x0[7]"
    assert signal_of("cur_base[1]_TRELLIS_FF_Q_DI_LUT4_Z_D_MULT18X18D_P1") == "cur_base[1]"
    assert signal_of("$abc$123$auto") == "$abc$123$auto"


def test_depth_of_a_block_through_yosys():
    """``dcu fpga --block barrier --depth``: the synthesized barrier's paths, saved and reused
    for the same RTLIL."""
    import dcu.fpga.flow as fpga
    out = "build/fpga/test/depth"
    res = fpga.depth_block("barrier", "fpga", out_dir=out, paths=3, quiet=True)
    d = res["depth"]
    assert res["rc"] == 0 and d["cells"] >= res["ecp5"]["lut4"] + res["ecp5"]["ff"] > 0
    assert 0 < len(d["paths"]) <= 3 and d["levels"] == d["paths"][0]["levels"] >= 2
    assert d["unknown"] == {}
    assert len(d["paths"][0]["through"]) >= d["levels"]
    assert not (fpga.PROJECT / out / "fpga_barrier.pnr_in.json").exists()
    assert fpga.depth_block("barrier", "fpga", out_dir=out, paths=3, reuse_result=True)["reused"]
    assert "reused" not in fpga.depth_block("barrier", "fpga", out_dir=out, paths=4, quiet=True, reuse_result=True)
