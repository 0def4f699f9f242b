"""What a campaign exercised: opcodes by operand kind (SGPR, VGPR, inline constant, literal,
modifiers) and by lanes active when they executed (none, one, some, all: the model counts
them), the structures, and the RTL's events (perf counters: LDS bank conflicts, L0 and scalar
cache hits and misses, barriers, memory requests in flight, wait stalls). The gaps are what
the target executes that no program covered."""
from __future__ import annotations

import re
from collections import Counter

from isa.opcodes import OPCODES

from .gen import Block, Program, executable, pools

__all__ = ["program_coverage", "merge", "EVENTS"]

LANE_BUCKETS = ("none", "one", "some", "all")
# RTL counters summed over units, by event
EVENTS = {
    "lds bank conflict cycles": ("lds.conflict_cycles",),
    "L0 hits": ("vmem.hits",), "L0 misses": ("vmem.misses",),
    "global atomics": ("vmem.atomics",),
    "scalar cache hits": ("scache.hits",), "scalar cache misses": ("scache.misses",),
    "barriers": ("barrier.barriers",), "barrier wait cycles": ("barrier.wait_cycles",),
    "most requests in flight": ("vmem.rq_max",),
    "loadcnt stall cycles": ("stall.loadcnt",), "storecnt stall cycles": ("stall.storecnt",),
    "dscnt stall cycles": ("stall.dscnt",), "kmcnt stall cycles": ("stall.kmcnt",),
}


def _unit_free(name: str) -> str:
    """A counter's name without its unit's number (``vmem1.hits`` -> ``vmem.hits``,
    ``lds.conflict_cycles0`` -> ``lds.conflict_cycles``)."""
    return re.sub(r"\d+$", "", re.sub(r"^([a-z_]+)\d+\.", r"\1.", name))


def _event_values(counters: dict) -> dict:
    out = {}
    for event, keys in EVENTS.items():
        vals = [v for k, v in counters.items() if any(_unit_free(k).endswith(key) for key in keys)]
        if vals:
            out[event] = max(vals) if event.startswith("most") else sum(vals)
    return out


CALL_OPS = ("s_swappc_b64", "s_setpc_b64")     # the call structure's, seen when the model ran them


def program_coverage(prog: Program, lanes: dict, counters: dict) -> dict:
    ops: dict = {}
    for op in prog.ops():
        e = ops.setdefault(op.name, {"operands": set(), "lanes": set()})
        e["operands"] |= set(op.operands)
    for name, seen in lanes.items():
        if name in ops or name in CALL_OPS:
            ops.setdefault(name, {"operands": set(), "lanes": set()})["lanes"] |= seen
    structures = Counter(n.kind for top in prog.body for n in top.nodes() if isinstance(n, Block))
    return {"ops": {k: {"operands": sorted(v["operands"]), "lanes": sorted(v["lanes"])} for k, v in ops.items()},
            "structures": dict(structures), "events": _event_values(counters),
            "shape": f"{prog.layout.groups}x{prog.layout.waves}"}


def _expected_operands(info) -> set:
    if info.kind not in ("valu", "vtrans", "salu") or info.fmt.value == "SOPK":
        return set()
    exp = {"inline", "literal"} if info.src_bits else set()
    exp |= {"sgpr"} if info.src_bits else set()
    if info.kind != "salu":
        exp |= {"vgpr"} if info.src_bits else set()
        exp |= {m for m in ("abs", "neg", "omod") if m in info.flags}
    return exp


def merge(parts: list[dict], target: str) -> dict:
    """One campaign's coverage from its programs' (or from campaigns' merged coverage), with
    the gaps."""
    ops: dict = {}
    events: Counter = Counter()
    structures: Counter = Counter()
    shapes: Counter = Counter()
    for p in parts:
        for name, v in p.get("ops", {}).items():
            e = ops.setdefault(name, {"operands": set(), "lanes": set(), "programs": 0})
            e["operands"] |= set(v["operands"])
            e["lanes"] |= set(v["lanes"])
            e["programs"] += v.get("programs", 1)
        for k, v in p.get("events", {}).items():
            events[k] = max(events[k], v) if k.startswith("most") else events[k] + v
        structures.update(p.get("structures", {}))
        if "shape" in p:
            shapes[p["shape"]] += 1
        shapes.update(p.get("shapes", {}))
    pool = pools(target)
    generated = pool.generated()
    infos = {i.name: i for i in OPCODES}
    never = sorted(generated - set(ops))
    operand_gaps = {}
    for name in sorted(generated & set(ops)):
        missing = _expected_operands(infos[name]) - ops[name]["operands"]
        if missing:
            operand_gaps[name] = sorted(missing)
    lane_gaps = {n: sorted(set(LANE_BUCKETS) - ops[n]["lanes"]) for n in sorted(ops)
                 if n in generated and set(LANE_BUCKETS) - ops[n]["lanes"]}
    not_generated = sorted(executable(target) - generated)
    return {
        "opcodes_generated": len(generated), "opcodes_covered": len(generated) - len(never),
        "ops": {k: {"operands": sorted(v["operands"]), "lanes": sorted(v["lanes"]), "programs": v["programs"]}
                for k, v in sorted(ops.items())},
        "structures": dict(structures), "shapes": dict(shapes), "events": dict(events),
        "gaps": {"never_generated": never, "operand_kinds": operand_gaps, "lanes": lane_gaps,
                 "executable_not_generated": not_generated,
                 "events_never_seen": sorted(k for k in EVENTS if not events.get(k))},
    }
