"""``kernels``: every firmware kernel on the whole DCU, its cycles, IPC and counters, checked
against its golden output and the model's instruction counts."""
from __future__ import annotations

import time

from firmware_tests.manifest import TESTS

from ..backends import verilator
from ..admission import ResourceError
from ..firmware import issue_mismatches, run_firmware
from ..backends.rtl import RtlError
from ..backends.rtlcheck import RtlUnsupportedError


def _compiled_backend() -> str:
    """``verilator`` when it can build here, else ``rtl`` (Amaranth's simulator)."""
    return "verilator" if verilator.available() else "rtl"


_KERNEL_COUNTERS = ("valu_busy", "stall.dependency", "stall.loadcnt", "stall.storecnt", "stall.dscnt",
                    "stall.kmcnt", "stall.barrier", "stall.fetch", "stall.structural")


def kernels(config: str = "tiny", backend: str | None = None, seed: int = 0) -> dict:
    """Every firmware kernel the preset holds on the whole DCU: cycles, wave-instructions
    (and the model's count), IPC (over the four SIMDs) and the main counters summed over the
    SIMDs, checked against the golden output on the way. ``backend``: ``verilator`` when it
    can build here, else ``rtl`` (on one reused simulator)."""
    backend = backend or _compiled_backend()
    rows, skipped, failed, t0 = [], [], [], time.perf_counter()
    for t in TESTS:
        try:
            res = run_firmware(t, backend=backend, config=config, memory_seed=seed,
                               **({"reuse": True} if backend == "rtl" else {}))
        except (ResourceError, RtlUnsupportedError) as e:
            skipped.append(f"{t.name}: {e}")
            continue
        except RtlError as e:           # the DCU stopped it: a failure of the row, not the table
            failed.append(f"{t.name}: {e}")
            continue
        r = res.run.report
        problems = res.mismatches + issue_mismatches(t, config, r)
        if problems:
            failed.append(f"{t.name}: {'; '.join(problems)}")
        c = r.counters
        simds = sorted({k.split(".")[0] for k in c if k.startswith("simd")})
        total = {name: sum(c[f"{s}.{name}"] for s in simds) for name in _KERNEL_COUNTERS}
        rows.append({"kernel": t.name, "cycles": r.cycles, "instructions": r.instructions, "checked": not problems,
                     "ipc": round(r.instructions / r.cycles, 3),
                     **{k.replace("stall.", ""): v for k, v in total.items()},
                     "lds_conflicts": c["lds.conflict_cycles0"] + c["lds.conflict_cycles1"],
                     "l0_hits": c["vmem0.hits"] + c["vmem1.hits"], "l0_misses": c["vmem0.misses"] + c["vmem1.misses"],
                     "scache_miss": c["scache.misses"], "icache_miss": c["icache.misses"],
                     "max_resident": c["dispatch.max_resident"]})
    return {"benchmark": "kernels", "backend": backend, "config": config, "memory_seed": seed,
            "note": "checked: outputs equal the golden ones, and the instructions issued (by group), waves and "
                    "workgroups equal the model's (dcu.firmware.issue_mismatches; tests/test_dcu.py's "
                    "checks); counters summed over the four SIMDs",
            "seconds": round(time.perf_counter() - t0, 1), "failed": failed, "skipped": skipped, "rows": rows}
