"""``ooo``: the out-of-order return experiment on the whole DCU (backend rtl): a wave that hits
in the L0 against a wave chasing pointers through memory, under each return order, and its
plot."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from firmware_tests.manifest import get, path
from hdl.config import get_config

from ..admission import check_kernel
from ..launch import load_program
from ..prepare import launch_dims, prepare
from ..backends.rtl import RtlSession
from ..timeline import draw_text, write_png
from . import BUILD, RESULTS


class _TracedDCU:
    """Backend ``rtl``'s DCU (a :class:`dcu.backends.rtl.RtlSession`: the same host and memory model)
    plus a monitor of the vector memory requests the two VecMemUnits accept. One simulator
    per configuration, reset for each dispatch."""

    def __init__(self, config, watchdog_cycles: int = 50_000):
        self.config = config
        self.session = RtlSession(config, watchdog_cycles=watchdog_cycles)
        dcu = self.session.dcu
        ports = [(c * config.simds_per_cu + k, v.req[k]) for c, v in enumerate(dcu.vmem)
                 for k in range(config.simds_per_cu)]
        watched = []
        for _, p in ports:
            watched += [p.valid & p.ready, p.payload.wave, p.payload.addr[:64]]
        self.accesses: list = []

        async def monitor(ctx):          # one sample per cycle: about 1% of the DCU's own cost
            self.accesses = accesses = []
            cycle = 0
            async for _, _, *v in ctx.tick().sample(*watched):
                cycle += 1
                for i, (simd, _) in enumerate(ports):
                    if v[3 * i]:
                        accesses.append((cycle, simd, v[3 * i + 1], v[3 * i + 2]))

        self.session.sim.add_process(monitor)

    def run(self, kernel, grid, block, args, *, latency, seed=0, reorder=True, max_cycles=200_000):
        """One dispatch; -> (prepared dispatch, cycles, counters, accesses [(cycle, simd, wave
        slot, lane-0 address)], seconds)."""
        check_kernel(self.config, kernel, launch_dims(block))
        prep = prepare(kernel, grid, block, args)
        res = self.session.run(prep, kernel, bool(kernel.wgp_mode), latency=latency, seed=seed, reorder=reorder,
                               max_cycles=max_cycles, progress=False)
        return prep, res.cycles, res.counters, self.accesses, res.seconds


def _xy_alone_kernel(test):
    """The experiment's kernel with wave Y leaving right after the barrier: no chase and no
    flag, so wave X runs its unchanged loop alone until ``cap`` iterations."""
    src = Path(path(test)).read_text()
    mark = "\t; ---------------- wave Y: pointer chase\n"
    if src.count(mark) != 1:
        raise RuntimeError(f"ooo: cannot find wave Y's section in {path(test)}")
    out = BUILD / f"{test.kernel}_alone.s"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(src.replace(mark, mark + "\ts_endpgm                                 ; (bench: X alone)\n"))
    return load_program(out).kernel(test.kernel)


def _xy_run(dcu, test, kernel, args, latency):
    """One run; -> dict of X's and Y's accesses (cycles) and the kernel's outputs."""
    prep, cycles, counters, acc, seconds = dcu.run(kernel, test.grid, test.block, args, latency=latency)
    chain_alloc, x_alloc = prep.buffers[0][0], prep.buffers[1][0]
    ys = [c for c, s, w, a in acc if chain_alloc.base <= a < chain_alloc.end]
    xs = [c for c, s, w, a in acc if x_alloc.base <= a < x_alloc.end]
    x_waves = {(s, w) for c, s, w, a in acc if x_alloc.base <= a < x_alloc.end}
    y_waves = {(s, w) for c, s, w, a in acc if chain_alloc.base <= a < chain_alloc.end}
    out = prep.read_back()[2]
    return {"cycles": cycles, "seconds": round(seconds, 1), "x": xs, "y": ys, "count": int(out[2]),
            "out": out, "buffers": prep.read_back(), "x_waves": sorted(x_waves), "y_waves": sorted(y_waves),
            "counters": counters}


def _rate(times, per_iter):
    """X's loads per cycle in its loop, the first (cold: its lines miss) iteration left out:
    loads of iterations 2..n-1 over the cycles from iteration 2's first load to iteration n's."""
    starts = times[per_iter::per_iter]
    if len(starts) < 2:
        raise RuntimeError("ooo: X made too few iterations to measure its rate")
    return per_iter * (len(starts) - 1) / (starts[-1] - starts[0])


def ooo(tests=("wave_xy_asm", "wave_xy_u8_asm"), K: int = 32, latency: int = 200, cap_alone: int = 48,
        png: bool = True, out_dir: str | os.PathLike | None = None) -> dict:
    """The seed's experiment on the DCU (backend rtl, preset default): wave Y chases K pointers
    (each load a miss to memory of fixed ``latency``), wave X loops over loads that hit, until
    Y is done. For return_order ``in_order`` and ``per_wave``: X's accesses over Y's; and X
    alone (Y leaves at once; X runs ``cap_alone`` iterations) as the baseline of X's rate.
    With ``png``, the plot goes to ``out_dir/ooo.png`` (default bench/results), beside the
    results file :func:`dcu.bench.run` writes."""
    base = get_config("default")
    if base.return_order != "per_wave":
        raise RuntimeError("ooo: the default preset's return order is not per_wave")
    dcus = {order: _TracedDCU(base.replace(return_order=order)) for order in ("in_order", "per_wave")}
    rows, all_runs, waves = [], {}, {}

    def copy(args):
        return [a.copy() if isinstance(a, np.ndarray) else a for a in args]

    for name in tests:
        test = get(name)
        per_iter = 8 if "u8" in name else 4
        kernel = load_program(path(test)).kernel(test.kernel)
        args = test.make_args(np.random.default_rng(0))
        args[3] = np.uint32(K)
        runs = {}
        for order in ("in_order", "per_wave"):
            runs[order] = r = _xy_run(dcus[order], test, kernel, copy(args), latency)
            test.check(copy(args), r["buffers"])           # the manifest's own check of the results
        alone_args = copy(args)
        alone_args[4] = np.uint32(cap_alone)
        # the default preset is per_wave: the same simulator, reset
        runs["alone"] = r = _xy_run(dcus["per_wave"], test, _xy_alone_kernel(test), alone_args, latency)
        if r["count"] != cap_alone or r["y"]:
            raise RuntimeError(f"ooo {name} alone: X made {r['count']} iterations (cap {cap_alone}), "
                               f"Y {len(r['y'])} loads")
        alone_rate = _rate(r["x"], per_iter)
        for order in ("in_order", "per_wave", "alone"):
            r = runs[order]
            xs, ys = r["x"], r["y"]
            x_acc = per_iter * r["count"]
            if len(xs) != x_acc:
                raise RuntimeError(f"ooo {name} {order}: the monitor saw {len(xs)} X loads, the kernel counted {x_acc}")
            if order != "alone" and len(ys) != K:
                raise RuntimeError(f"ooo {name} {order}: the monitor saw {len(ys)} Y loads, K = {K}")
            rate = _rate(xs, per_iter)
            step = (ys[-1] - ys[0]) / (K - 1) if order != "alone" and K > 1 else None
            c = r["counters"]
            rows.append({"kernel": name, "return_order": order if order != "alone" else "X alone (Y leaves)",
                         "K": K if order != "alone" else 0, "x_iterations": r["count"], "x_accesses": x_acc,
                         "x_per_y": round(x_acc / K, 2) if order != "alone" else None,
                         "alone_x_per_y": round(alone_rate * step, 2) if step else None,
                         "x_per_y_vs_alone": round(x_acc / K / (alone_rate * step), 3) if step else None,
                         "y_cycles_per_access": round(step, 1) if step else None,
                         "x_loads_per_kcycle": round(1000 * rate, 1),
                         "x_rate_vs_alone": round(rate / alone_rate, 3),
                         "cycles": r["cycles"], "sim_seconds": r["seconds"],
                         "l0_hits": c.get("vmem0.hits", 0) + c.get("vmem1.hits", 0),
                         "l0_misses": c.get("vmem0.misses", 0) + c.get("vmem1.misses", 0)})
            all_runs[(name, order)] = r
            waves[f"{name} {order}"] = {"x": r["x_waves"], "y": r["y_waves"]}
    per_wave = {r["kernel"]: {"rate": r["x_rate_vs_alone"], "x_per_y": r["x_per_y_vs_alone"]}
                for r in rows if r["return_order"] == "per_wave"}
    result = {"benchmark": "ooo", "rows": rows,
              "per_wave_x_vs_alone": per_wave,
              "goal": "per_wave: X makes >= 90% of its alone figure, both its rate and its accesses per Y access "
                      "(in_order: X waits behind Y's misses)",
              "met": all(min(v.values()) >= 0.9 for v in per_wave.values()),
              "config": {"preset": "default", "memory_latency": latency, "reorder": True, "K": K,
                         "cap_alone": cap_alone, "waves (simd, slot)": waves},
              "note": "backend rtl's DCU (hdl/top/dcu.py, built as dcu.backends.rtl does) with dcu.memmodel.PyMemory "
                      f"at a fixed latency of {latency} cycles (the rtl default is a random (8, 32)), so each of Y's "
                      "loads (one chain node per 128-byte line, K distinct lines) misses the L0; X's xbuf lines stay "
                      "in it. "
                      "Accesses: the global loads the VecMemUnits accept, recorded per cycle by a monitor process "
                      "(X's count equals 4 (u8: 8) * out[2] and Y's K, checked; the manifest's check passes). "
                      "x_per_y: X's accesses / K (the seed's figure). x_loads_per_kcycle: X's rate in its loop "
                      "without its first (cold) iteration: loads of iterations 2..n-1 per 1,000 cycles from "
                      "iteration 2's first load to iteration n's. Baseline 'X alone': the same kernel with Y ending "
                      "right after the barrier (no chase, no flag; build/bench/*_alone.s), so X runs its unchanged "
                      f"loop, LDS flag poll included, for cap = {cap_alone} iterations while no other wave uses "
                      "memory; alone_x_per_y: that rate times the row's Y cycles per chase step, i.e. X's accesses "
                      "per Y access had Y's misses not slowed X; x_per_y_vs_alone: x_per_y / alone_x_per_y (below 1 "
                      "also because x_per_y counts X's cold first iteration and the loop's lag in seeing Y's flag). "
                      "x_rate_vs_alone: the row's X rate / the alone rate."}
    if png:
        out = RESULTS if out_dir is None else Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        _ooo_png(out / "ooo.png", all_runs, latency, K)
        result["plot"] = "ooo.png beside this file (cumulative loads over cycles per run: X blue, Y red)"
    return result


def _ooo_png(file, runs, latency, K):
    """Cumulative loads over cycles, one panel per run ({(kernel, order): run}): X blue (full
    scale: the most X loads of any run), Y red (full scale K), from each run's first load."""
    W, PH, PAD, LEFT = 900, 120, 24, 40
    keys = list(runs)
    t0 = {k: min(runs[k]["x"] + runs[k]["y"]) for k in keys}
    span = max(max(runs[k]["x"] + runs[k]["y"]) - t0[k] for k in keys) + 1
    xmax = max(len(runs[k]["x"]) for k in keys)
    img = np.full((PAD + len(keys) * (PH + PAD) + 8, W, 3), 255, np.uint8)
    draw_text(img, LEFT, 6, f"ooo: cumulative global loads over cycles, memory latency {latency}, K {K}.  "
                            f"blue: X (full scale {xmax}), red: Y (full scale {K}), ticks every 1000 cycles")
    plot_w = W - LEFT - 10
    for i, key in enumerate(keys):
        top = PAD + i * (PH + PAD)
        img[top:top + PH, LEFT:LEFT + plot_w] = 245
        img[top + PH - 1, LEFT:LEFT + plot_w] = 120
        img[top:top + PH, LEFT] = 120
        label = key[1] if key[1] != "alone" else "X alone"
        draw_text(img, LEFT + 4, top + 3, f"{key[0]}  {label}: X {len(runs[key]['x'])} loads, Y {len(runs[key]['y'])}")
        for times, full, colour in ((runs[key]["y"], K, (200, 30, 30)), (runs[key]["x"], xmax, (30, 60, 200))):
            for n, t in enumerate(times, 1):
                x = LEFT + int((t - t0[key]) * (plot_w - 1) / span)
                y = top + PH - 2 - int(n * (PH - 14) / full)
                img[max(y - 1, top):y + 2, x:x + 2] = colour
        for c in range(0, span, 1000):
            x = LEFT + int(c * (plot_w - 1) / span)
            img[top + PH:top + PH + 4, x] = 80
            if c % 5000 == 0:
                draw_text(img, x - 2, top + PH + 6, str(c))
    write_png(file, img)
