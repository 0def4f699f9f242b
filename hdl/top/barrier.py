"""The DCU-wide workgroup barrier (docs/dcu.md, "Dispatcher and barriers").

A workgroup's waves may sit on any of the four SIMDs (WGP mode, or two SIMDs of a CU).
Each SIMD, built with ``external_barrier=True``, reports the slots that executed
``s_barrier_signal`` and wait (``bar_wait``); this unit releases them all in one strobe
once every live wave of their workgroup waits. A wave that has ended counts as arrived,
and a workgroup still being launched (the dispatcher's ``open_wg``) never completes, since
its missing waves have not arrived.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from ..bitops import onehot_or, popcount
from ..config import DCUConfig
from .dispatch import OpenLayout, resident_workgroups

__all__ = ["WorkgroupBarrier", "BarrierCounters"]

BarrierCounters = data.StructLayout({"barriers": 32, "wait_cycles": 32})


class WorkgroupBarrier(wiring.Component):
    """Completes ``s_barrier_signal`` / ``s_barrier_wait`` across the DCU's SIMDs.

    Slot ``k = simd * wave_slots + slot``. Each cycle, per resident workgroup id ``g``:
    complete when some live wave of ``g`` waits, none that is live and not ending this
    cycle is still running, and ``g`` is not open. The release strobe is registered: it
    comes the cycle after the last wave arrives, and for that cycle the released slots'
    ``bar_wait`` (still high until the SIMD sees the strobe) is not counted again.

    Parameters
    ----------
    config : DCUConfig

    Members
    -------
    slot_live : In(simds * wave_slots)
        The slot holds a wave (from :class:`hdl.top.dispatch.Dispatcher`).
    slot_wg : In(ArrayLayout(range(resident_workgroups), simds * wave_slots))
        Each slot's resident-workgroup id (from the dispatcher).
    open_wg : In(hdl.top.dispatch.OpenLayout)
        The workgroup being launched (from the dispatcher).
    bar_wait : In(wave_slots), one per SIMD
        The slot executed ``s_barrier_signal`` and waits for its release.
    ended : In(wave_slots), one per SIMD
        Strobe: the slot's wave has finished.
    bar_release : Out(wave_slots), one per SIMD
        One-cycle strobe releasing those slots.
    counters : Out(BarrierCounters)
        ``barriers``: workgroup barriers completed; ``wait_cycles``: the sum over cycles of
        the waves waiting in that cycle. Never cleared (they count since reset).
    """

    def __init__(self, config: DCUConfig):
        self.config = config
        S, W, G = config.simds, config.wave_slots, resident_workgroups(config)
        super().__init__({
            "slot_live": In(S * W),
            "slot_wg": In(data.ArrayLayout(range(G), S * W)),
            "open_wg": In(OpenLayout(config)),
            "bar_wait": In(W).array(S),
            "ended": In(W).array(S),
            "bar_release": Out(W).array(S),
            "counters": Out(BarrierCounters),
        })

    def elaborate(self, platform):
        cfg = self.config
        S, W, G = cfg.simds, cfg.wave_slots, resident_workgroups(cfg)
        N = S * W
        m = Module()

        released = Signal(N)                  # the strobe being sent this cycle
        waiting_raw = Cat(*self.bar_wait)
        live = Signal(N)
        waiting, running = Signal(N), Signal(N)
        wg = [self.slot_wg[i] for i in range(N)]
        has_wait, blocked = Signal(G), Signal(G)
        opened = Mux(self.open_wg.valid, (Const(1, G) << self.open_wg.wg)[:G], 0)
        complete = Signal(G)
        c = self.counters
        n_complete, n_waiting = Signal(range(G + 1)), Signal(range(N + 1))
        # not forced to 0 while no wave waits (they are 0 then, or unused): Yosys cannot see
        # that such a gate is redundant, and it cost a fifth of the unit's LUTs
        m.d.comb += [live.eq(self.slot_live & ~Cat(*self.ended)),
                     waiting.eq(live & waiting_raw & ~released),
                     running.eq(live & ~(waiting_raw & ~released)),
                     has_wait.eq(onehot_or([waiting[i] for i in range(N)], wg, G)),
                     blocked.eq(onehot_or([running[i] for i in range(N)], wg, G)),
                     complete.eq(has_wait & ~blocked & ~opened),
                     n_complete.eq(popcount(complete)), n_waiting.eq(popcount(waiting_raw & self.slot_live))]
        m.d.sync += [c.barriers.eq(c.barriers + n_complete), c.wait_cycles.eq(c.wait_cycles + n_waiting)]
        release = Cat(*[waiting[i] & complete.bit_select(wg[i], 1) for i in range(N)])
        m.d.sync += released.eq(release)
        m.d.comb += [self.bar_release[s].eq(released[s * W:(s + 1) * W]) for s in range(S)]
        return m
