"""What a waveform of the DCU shows first: the traces of the GTKWave save file written beside
every ``--vcd`` dump, grouped per SIMD and per wave slot, then the LDS, L0s and dispatcher.

Enum-shaped signals (the executing instruction's ``OpId``, the dispatcher's state) appear
in GTKWave by name: Amaranth writes them to the VCD as strings.
"""
from __future__ import annotations

__all__ = ["gtkw_traces"]


def _simd_traces(simd, wave_slots: int) -> dict:
    tr = simd.trace
    ex = tr["ex"]
    group = {"issue": [tr["issue"], tr["sel"]],
             "executing": [ex.valid, ex.wave, ex.pc, ex.inst.op]}
    for w in range(wave_slots):
        group[f"wave{w}"] = [tr["resident"][w], tr["pc"][w], tr["exec"][w][:32], tr["loadcnt"][w],
                             tr["storecnt"][w], tr["dscnt"][w], tr["kmcnt"][w]]
    group["ports"] = [simd.vmem_req.valid, simd.vmem_resp.valid, simd.lds_req.valid, simd.lds_resp.valid,
                      simd.smem_req.valid, simd.smem_resp.valid, simd.bar_wait, simd.ended]
    return group


def gtkw_traces(dcu) -> dict:
    """Trace groups for ``Simulator.write_vcd(..., traces=gtkw_traces(dcu))``."""
    traces = {"dcu": [dcu.busy, dcu.done, dcu.error.valid, dcu.error.cause]}
    for s, simd in enumerate(dcu.simds):
        traces[f"simd{s}"] = _simd_traces(simd, dcu.config.wave_slots)
    traces["lds"] = [dcu.lds.accesses, dcu.lds.bank_cycles, dcu.lds.conflict_cycles] + \
        [p.valid for p in dcu.lds.req]
    for c, v in enumerate(dcu.vmem):
        traces[f"l0_cu{c}"] = [v.counters, v.mem.valid, v.mem_resp.valid]
    traces["dispatcher"] = [dcu.dispatcher.busy, dcu.dispatcher.counters, dcu.dispatcher.slot_live]
    traces["memory"] = [dcu.mem.valid, dcu.mem.ready, dcu.mem.payload.kind, dcu.mem.payload.addr,
                        dcu.mem_resp.valid]
    return traces
