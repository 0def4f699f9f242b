"""The workgroup dispatcher against the model's wave initialisation and the occupancy formula.

Fake SIMDs (tests/fake_simd.py) take the launches into random free slots and end waves
after random lifetimes. Checked: every wave's ABI state equals ``sim.model.wave_inits``
(user SGPRs, ttmp7/ttmp9, EXEC, v0 in every lane), workgroups launch in the model's order,
resident waves per SIMD never exceed ``dcu.admission.occupancy`` and reach it when the grid is
large enough, CU/WGP placement, ``wg_last``, VGPR and LDS blocks in bounds and never shared,
``done`` only after the last wave ended, the counters, and a clear error for a dispatch that
could never be placed.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from dcu.admission import occupancy
from hdl.config import get_config
from hdl.top.dispatch import Dispatcher
from isa.abi import Dispatch
from sim.model import wave_inits
from sim.wave import TTMP
from tests.fake_simd import FakeDCU
from tests.lint import convert_and_lint

DEFAULT = get_config("default")


def make_dispatch(grid, block, vgprs=16, lds=0, id_dims=3, user=None):
    g = tuple(grid) + (1,) * (3 - len(grid))
    b = tuple(block) + (1,) * (3 - len(block))
    user = {0: 0x2345_6780, 1: 0x1} if user is None else user
    return Dispatch(entry=0x4_0000_1100, grid=g, block=b, vgprs=vgprs, lds_bytes=lds,
                    kernarg_addr=0x1_2345_6780, user_sgprs=user, workitem_id_dims=id_dims)


def _packed(v0: np.ndarray) -> int:
    return sum(int(x) << (32 * i) for i, x in enumerate(v0))


def check_abi(d, res):
    """Every wave's launch state is the model's, and workgroups come in the model's order."""
    gx, gy, gz = d.grid
    expected_order = [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
    by_wg, order = defaultdict(list), []
    for w in res.waves:
        if w.coords not in by_wg:
            order.append(w.coords)
        by_wg[w.coords].append(w)
    assert order == expected_order
    for wg_id in expected_order:
        inits, got = wave_inits(d, wg_id), by_wg[wg_id]
        assert len(got) == len(inits), f"workgroup {wg_id}: {len(got)} waves, the model has {len(inits)}"
        for k, (w, init) in enumerate(zip(got, inits)):
            where = f"workgroup {wg_id} wave {k}"
            assert (w.pc, w.vgprs) == (d.entry, d.vgprs), where
            assert w.exec == init["exec"], f"{where}: EXEC {w.exec:#x}, model {init['exec']:#x}"
            assert w.sgpr == [init["sgprs"].get(r, 0) for r in range(4)], where
            assert (w.ttmp7, w.ttmp9) == (init["sgprs"][TTMP + 7], init["sgprs"][TTMP + 9]), where
            if w.v0 != _packed(init["v0"]):
                lane = next(i for i in range(32) if (w.v0 >> 32 * i) & 0xFFFF_FFFF != init["v0"][i])
                raise AssertionError(f"{where}: v0 lane {lane} = {(w.v0 >> 32 * lane) & 0xFFFF_FFFF:#x}, "
                                     f"model {int(init['v0'][lane]):#x}")


def check_resources(cfg, d, wgp, res):
    """Placement, wg_last, VGPR and LDS blocks, done and the counters."""
    n_wgs = d.grid[0] * d.grid[1] * d.grid[2]
    by_wg = defaultdict(list)
    for w in res.waves:
        by_wg[w.coords].append(w)
    spc = cfg.simds_per_cu
    for coords, ws in by_wg.items():
        if not wgp:
            assert len({w.simd // spc for w in ws}) == 1, f"workgroup {coords} spans CUs in CU mode"
        for s in {w.simd for w in ws}:
            flags = [w.wg_last for w in ws if w.simd == s]
            assert flags == [0] * (len(flags) - 1) + [1], f"workgroup {coords} SIMD {s}: wg_last {flags}"
        assert len({w.lds["base"] for w in ws}) == 1, f"workgroup {coords}: waves got different LDS bases"
    for w in res.waves:
        assert w.lds is not None and w.lds["size"] == d.lds_bytes, f"wave {w.coords}: LDS allocation {w.lds}"
        lo, hi = w.lds["base"], w.lds["base"] + d.lds_bytes
        space = (0, cfg.lds_bytes_total) if wgp else \
            (w.simd // spc * cfg.lds_bytes_per_half, (w.simd // spc + 1) * cfg.lds_bytes_per_half)
        assert space[0] <= lo and hi <= space[1], f"wave {w.coords} on SIMD {w.simd}: LDS [{lo}, {hi}) outside {space}"
        assert 0 <= w.vgpr_base and w.vgpr_base + d.vgprs <= cfg.vgprs_per_simd
    # resources of waves (VGPRs) and workgroups (LDS) alive at the same time never overlap
    span = {c: (min(w.cycle for w in ws), max(w.ended_cycle for w in ws)) for c, ws in by_wg.items()}
    for i, a in enumerate(res.waves):
        for b in res.waves[i + 1:]:
            if a.simd == b.simd and b.cycle <= a.ended_cycle and a.cycle <= b.ended_cycle:
                assert a.vgpr_base + d.vgprs <= b.vgpr_base or b.vgpr_base + d.vgprs <= a.vgpr_base, \
                    f"waves {a.coords} and {b.coords} share VGPRs on SIMD {a.simd}"
    if d.lds_bytes:
        wgs = list(by_wg)
        for i, a in enumerate(wgs):
            for b in wgs[i + 1:]:
                (a0, a1), (b0, b1) = span[a], span[b]
                if b0 <= a1 and a0 <= b1:
                    la, lb = by_wg[a][0].lds["base"], by_wg[b][0].lds["base"]
                    assert la + d.lds_bytes <= lb or lb + d.lds_bytes <= la, \
                        f"workgroups {a} and {b} share LDS ({la}, {lb})"
    assert res.done_cycle is not None and res.done_cycle > max(w.ended_cycle for w in res.waves)
    c = res.counters
    assert (c["workgroups"], c["waves"]) == (n_wgs, len(res.waves))
    assert c["max_resident"] == res.max_total and c["resident"] == 0


# ---- ABI: every wave initialised as the model does it -------------------------------------
ABI_CASES = {
    "1d": ((5,), (64,), 1, False),
    "2d_partial": ((3, 2), (40, 3), 2, False),          # 120 work-items: last wave 24 lanes
    "3d_wgp": ((2, 2, 2), (5, 3, 7), 3, True),          # 105 work-items: last wave 9 lanes
    "1d_one_lane_left": ((4, 1, 2), (33,), 1, False),
    "y_not_enabled": ((3,), (16, 4), 1, False),         # v0 carries x only
    "one_item": ((3, 2, 2), (1,), 3, False),
    "full_dcu": ((2,), (8, 8, 8), 3, True),             # 16 waves fill all 16 slots
    # the v0 generator computes 4 lanes a cycle: x and y sizes below, at and above 4 (and 8)
    "narrow_x": ((2,), (2, 3, 6), 3, False),            # several x and y wraps in a cycle's lanes
    "x1_y2": ((2,), (1, 2, 24), 3, False),              # every lane wraps x, every other one y
    "x4_y3": ((1, 2), (4, 3, 5), 3, False),             # 60 items
    "x7_y5": ((2,), (7, 5, 2), 3, True),                # 70 items: last wave 6 lanes
    "x3_z_runs_on": ((1, 2), (3, 1, 11), 3, True),      # 33 items: the padding lanes' z passes the block
    "z_only": ((2,), (1, 1, 40), 3, False),
    "x8_y5": ((2,), (8, 5, 2), 3, False),               # x wraps every other cycle
    "x9_y8": ((1, 2), (9, 8, 1), 3, True),              # 72 items: room and size saturate
}


@pytest.mark.parametrize("name", ABI_CASES)
def test_abi_matches_model(name):
    grid, block, dims, wgp = ABI_CASES[name]
    d = make_dispatch(grid, block, id_dims=dims, user={0: 0xD15_0000, 1: 0x7, 2: 0x2345_6780, 3: 0x1})
    (res,) = FakeDCU(DEFAULT, seed=len(name)).run([(d, wgp)])
    assert not res.error["valid"]
    check_abi(d, res)
    check_resources(DEFAULT, d, wgp, res)


def test_abi_rdna1_1024_items():
    """A 1,024-work-item workgroup (32 waves) on one CU of the rdna1 preset."""
    cfg = get_config("rdna1")
    d = make_dispatch((2,), (32, 32), vgprs=32, lds=4096, id_dims=2)
    (res,) = FakeDCU(cfg, seed=3, life=(2, 10)).run([(d, False)])
    check_abi(d, res)
    check_resources(cfg, d, False, res)


# ---- occupancy: resident waves per SIMD reach the formula and never exceed it ---------------
OCC_CASES = {
    # name: (block, vgprs, lds, wgp, grid, limiting counter)
    "vgpr_limited": ((32,), 128, 0, False, (24,), "blocked_vgprs"),
    "slot_limited": ((64,), 16, 0, False, (20,), "blocked_slots"),
    "lds_limited_cu": ((32,), 16, 6144, False, (16,), "blocked_lds"),
    "lds_limited_wgp": ((64,), 16, 10240, True, (9,), "blocked_lds"),
}


@pytest.mark.parametrize("name", OCC_CASES)
def test_occupancy(name):
    block, vgprs, lds, wgp, grid, limit = OCC_CASES[name]
    d = make_dispatch(grid, block, vgprs=vgprs, lds=lds, id_dims=1)
    waves = -(-int(np.prod(block)) // 32)
    occ = occupancy(DEFAULT, vgprs, lds, waves, wgp)
    assert 0 < occ < DEFAULT.wave_slots or limit == "blocked_slots"
    (res,) = FakeDCU(DEFAULT, seed=11, life=(150, 250)).run([(d, wgp)])
    check_abi(d, res)
    check_resources(DEFAULT, d, wgp, res)
    assert res.max_resident == [occ] * DEFAULT.simds, f"occupancy {occ}, resident at most {res.max_resident}"
    blocked = {k: res.counters[k] for k in ("blocked_slots", "blocked_vgprs", "blocked_lds")}
    assert blocked[limit] > 0 and all(v == 0 for k, v in blocked.items() if k != limit), blocked


# ---- placement: CU mode alternates a CU's SIMDs, WGP mode spreads over all four -------------
def test_placement_cu_and_wgp():
    d = make_dispatch((4,), (128,), id_dims=1)
    cu, wgp = FakeDCU(DEFAULT, seed=5, life=(80, 100)).run([(d, False), (d, True)])
    for res, is_wgp in ((cu, False), (wgp, True)):
        check_resources(DEFAULT, d, is_wgp, res)
    first = [w.simd for w in cu.waves[:4]]
    assert first[0] // 2 == 0 and first in ([0, 1, 0, 1], [1, 0, 1, 0]), first   # CU 0, alternating
    assert {w.simd // 2 for w in cu.waves[4:8]} == {1}                           # the next one on CU 1
    assert sorted(w.simd for w in wgp.waves[:4]) == [0, 1, 2, 3]
    assert all(w.wg_last for w in wgp.waves[:4])


def test_three_wave_workgroups_fill_both_simds():
    """CU mode, 3 waves per workgroup: the second workgroup on a CU continues the round robin,
    so the CU's SIMDs end up with 3 waves each."""
    d = make_dispatch((4,), (96,), id_dims=1)
    (res,) = FakeDCU(DEFAULT, seed=9, life=(150, 160)).run([(d, False)])
    check_abi(d, res)
    check_resources(DEFAULT, d, False, res)
    assert res.max_resident == [3, 3, 3, 3]


# ---- a dispatch that can never be placed reports an error, then the next one runs ------------
def test_never_fits_reports_error():
    tiny = get_config("tiny")   # 2 slots and 128 VGPRs per SIMD, 4 KiB of LDS per half
    bad = [("slots", make_dispatch((2,), (160,)), False),      # 5 waves, a CU has 4 slots
           ("vgprs", make_dispatch((2,), (32,), vgprs=256), False),
           ("lds", make_dispatch((2,), (32,), lds=6000), False)]
    good = make_dispatch((3,), (160,), lds=6000)                # fits in WGP mode
    results = FakeDCU(tiny, seed=2).run([(d, w) for _, d, w in bad] + [(good, True)], max_cycles=400)
    for (cause, _, _), res in zip(bad, results):
        assert res.error["valid"] and res.error[cause], f"{cause}: error {res.error}"
        assert [k for k in ("slots", "vgprs", "lds") if res.error[k]] == [cause]
        assert not res.waves and res.cycles < 60   # SETUP (G cycles), then the error
    assert not results[-1].error["valid"]
    check_abi(good, results[-1])
    check_resources(tiny, good, True, results[-1])


@pytest.mark.parametrize("preset", ["default", "rdna1"])
def test_verilog_lint(preset, tmp_path):
    convert_and_lint(Dispatcher(get_config(preset)), f"dispatcher_{preset}", tmp_path)
