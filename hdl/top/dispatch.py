"""The workgroup dispatcher of the DCU (docs/dcu.md, "Dispatcher and barriers").

It walks the grid in the model's order (x fastest, then y, then z), splits each workgroup
into ``ceil(threads / 32)`` waves and places a workgroup only when all of its waves fit:
a wave slot and a block of VGPRs on each wave's SIMD, and a block of LDS for the
workgroup. Workgroups that do not fit wait, in order, until ``ended`` frees resources.
Every wave starts with the gfx1200 ABI state the model gives it (LLVM AMDGPUUsage,
"Initial Kernel Execution State"; ``sim.model.wave_inits``): user SGPRs s0..s3, the
workgroup id in ttmp9 / ttmp7, EXEC = its valid lanes, and v0 = x | y << 10 | z << 20 of
each lane's work-item.

Resources are fixed-size blocks of the dispatch's own sizes, so one kernel per dispatch
packs perfectly: ``min(wave_slots, vgprs_per_simd // vgprs)`` VGPR blocks per SIMD (a
wave holds one), and ``lds_bytes`` blocks in each CU's half of the LDS (CU mode) or in
the whole LDS (WGP mode). Resident waves per SIMD thus reach ``dcu.admission.occupancy``.
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from ..bitops import first_set, onehot_or, popcount, rr_pick, tree_max
from ..config import MAX_VGPRS_PER_WAVE, MAX_WORKGROUP_SIZE, WAVE_SIZE, DCUConfig
from ..layouts import ADDR, LANES, LaunchLayout

__all__ = ["Dispatcher", "DispatchLayout", "LdsAllocLayout", "DispatchCounters", "DispatchError",
           "OpenLayout", "resident_workgroups", "dispatch_fields", "USER_SGPRS", "ID_LANES_PER_CYCLE"]

USER_SGPRS = 4            # s0..s3: what a wave launch carries (hdl.layouts.LaunchLayout)
ID_LANES_PER_CYCLE = 4    # work-item ids computed per cycle: 8 cycles per wave
MAX_WAVES = -(-MAX_WORKGROUP_SIZE // WAVE_SIZE)


def resident_workgroups(cfg: DCUConfig) -> int:
    """Workgroups that can be resident at once (each holds at least one wave slot)."""
    return cfg.simds * cfg.wave_slots


def DispatchLayout(cfg: DCUConfig) -> data.StructLayout:
    """One kernel dispatch (see :func:`dispatch_fields` for filling it from the launcher)."""
    dim = range(MAX_WORKGROUP_SIZE + 1)
    return data.StructLayout({
        "pc": ADDR,                                            # entry point
        "user_sgpr": data.ArrayLayout(32, USER_SGPRS),         # s0..s3 (kernarg pointer, ...)
        "grid": data.StructLayout({"x": 32, "y": 16, "z": 16}),  # workgroups per dimension
        "block": data.StructLayout({"x": dim, "y": dim, "z": dim}),  # work-items per dimension
        "id_dims": range(4),                                   # v0 fields enabled: 1 = x, 2 = x/y, 3
        "vgprs": range(MAX_VGPRS_PER_WAVE + 1),                # per wave, rounded to the granule
        "lds_bytes": range(cfg.lds_bytes_total + 1),           # per workgroup
        "wgp": 1,                                              # WGP mode
    })


def LdsAllocLayout(cfg: DCUConfig) -> data.StructLayout:
    """The LDS window of a wave just launched: bytes ``[base, base + size)`` of the DCU's LDS
    (half ``c`` is ``[c * lds_bytes_per_half, (c + 1) * lds_bytes_per_half)``)."""
    return data.StructLayout({"simd": range(cfg.simds), "wave": range(cfg.wave_ids),
                              "base": range(cfg.lds_bytes_total), "size": range(cfg.lds_bytes_total + 1)})


def OpenLayout(cfg: DCUConfig) -> data.StructLayout:
    """The workgroup whose waves are being launched (its barrier cannot complete yet)."""
    return data.StructLayout({"valid": 1, "wg": range(resident_workgroups(cfg))})


def DispatchCounters(cfg: DCUConfig) -> data.StructLayout:
    """Per-dispatch counters (cleared when a dispatch starts). ``blocked_*``: cycles the next
    workgroup waited while that resource was short (on at least one CU in CU mode)."""
    n = range(cfg.simds * cfg.wave_slots + 1)
    return data.StructLayout({"workgroups": 32, "waves": 32, "resident": n, "max_resident": n,
                              "blocked_slots": 32, "blocked_vgprs": 32, "blocked_lds": 32})


#: ``valid``: a workgroup cannot be placed even with the DCU empty; the other bits say which
#: resources are short (``slots``: the workgroup has more waves than the CU, or the DCU in
#: WGP mode, has slots; ``vgprs``: ... than fit its VGPRs; ``lds``: it needs more LDS than
#: a half, or the whole LDS in WGP mode).
DispatchError = data.StructLayout({"valid": 1, "slots": 1, "vgprs": 1, "lds": 1})


def dispatch_fields(d, wgp: bool) -> dict:
    """The :func:`DispatchLayout` field values of a launcher dispatch (``isa.abi.Dispatch``
    or anything with its attributes), for ``DispatchLayout(cfg).const(...)``.

    Raises
    ------
    ValueError
        When the ABI needs a non-zero user SGPR beyond s3, which a wave launch cannot carry.
    """
    extra = {r: v for r, v in d.user_sgprs.items() if r >= USER_SGPRS and v}
    if extra:
        raise ValueError(f"user SGPRs beyond s{USER_SGPRS - 1} must be zero, got {extra}")
    return {"pc": d.entry, "user_sgpr": [d.user_sgprs.get(r, 0) & 0xFFFF_FFFF for r in range(USER_SGPRS)],
            "grid": dict(zip("xyz", d.grid)), "block": dict(zip("xyz", d.block)),
            "id_dims": d.workitem_id_dims, "vgprs": d.vgprs,
            # whole dwords: the LDS maps windows onto 4-byte banks
            "lds_bytes": -(-d.lds_bytes // 4) * 4, "wgp": int(wgp)}


class _State(enum.Enum, shape=3):
    IDLE = 0
    SETUP = 1    # count the VGPR and LDS blocks that fit
    PLACE = 2    # wait until the workgroup fits; take its LDS block and workgroup id
    QUOTA = 3    # share its waves among the SIMDs (one wave per cycle)
    OFFER = 4    # launch its waves
    DRAIN = 5    # everything launched: wait for the last waves to end


class Dispatcher(wiring.Component):
    """Splits a grid into workgroups and waves and launches them into the four SIMDs.

    Placement: in CU mode a workgroup's waves share one CU (the CUs taken in turn among
    those where it fits), in WGP mode all SIMDs. Each of its waves goes to the SIMD of that
    set with the most room left, ties in round-robin order: alternating while the SIMDs are
    balanced, filling the one with room when they are not. The waves are launched back to
    back in wave order, ``wg_last`` on each SIMD's last one.

    Parameters
    ----------
    config : DCUConfig

    Members
    -------
    start : In(stream of DispatchLayout)
        A dispatch; taken when idle. At most 1,024 work-items per workgroup (the launch
        API checks it); an empty grid or block is done at once.
    launch : Out(stream of hdl.layouts.LaunchLayout), one per SIMD
    launched_slot : In(range(wave_slots)), one per SIMD
        The slot a launch went to, valid in the cycle it is accepted.
    ended : In(wave_slots), one per SIMD
        Strobe: slot ``i``'s wave has finished and its resources are free. It must come no
        later than the first cycle the slot can take a new launch.
    lds_alloc : Out(stream of LdsAllocLayout)
        The LDS window of each wave, the cycle after its launch (even when it uses no LDS:
        ``size`` 0); no launch is offered while one is waiting.
    wgp : Out(1)
        The dispatch runs in WGP mode.
    busy, done : Out(1)
        ``done``: every workgroup was launched and every wave has ended; held until the next
        dispatch starts.
    error : Out(DispatchError)
        A workgroup can never be placed: the dispatch stops (``busy`` falls), held until the
        next dispatch starts.
    counters : Out(DispatchCounters)
    slot_live : Out(simds * wave_slots)
        Bit ``simd * wave_slots + slot``: that slot holds a wave of this dispatch.
    slot_wg : Out(ArrayLayout(range(resident_workgroups), simds * wave_slots))
        The resident-workgroup id (the ``wg`` it was launched with) of each slot.
    open_wg : Out(OpenLayout)
        The workgroup whose waves are being launched.
    """

    def __init__(self, config: DCUConfig):
        if resident_workgroups(config) > 256:
            raise ValueError("the launch's wg field holds resident workgroup ids up to 255")
        self.config = config
        S, W, WID, G = config.simds, config.wave_slots, config.wave_ids, resident_workgroups(config)
        super().__init__({
            "start": In(stream.Signature(DispatchLayout(config))),
            "launch": Out(stream.Signature(LaunchLayout(config))).array(S),
            "launched_slot": In(range(WID)).array(S),
            "ended": In(W).array(S),
            "lds_alloc": Out(stream.Signature(LdsAllocLayout(config))),
            "wgp": Out(1),
            "busy": Out(1),
            "done": Out(1),
            "error": Out(DispatchError),
            "counters": Out(DispatchCounters(config)),
            "slot_live": Out(S * W),
            "slot_wg": Out(data.ArrayLayout(range(G), S * W)),
            "open_wg": Out(OpenLayout(config)),
        })

    def elaborate(self, platform):
        cfg = self.config
        S, W, WID, G, C = cfg.simds, cfg.wave_slots, cfg.wave_ids, resident_workgroups(cfg), cfg.cus
        SPC = cfg.simds_per_cu
        P = SPC * W                       # LDS blocks per half in CU mode
        half, total = cfg.lds_bytes_per_half, cfg.lds_bytes_total
        m = Module()

        state = Signal(_State)
        d = Signal(DispatchLayout(cfg))
        m.d.comb += [self.busy.eq(state != _State.IDLE), self.wgp.eq(d.wgp),
                     self.start.ready.eq(state == _State.IDLE)]

        # registered with the dispatch: its two multipliers would otherwise lead every path that
        # asks whether a workgroup fits
        threads = Signal(range(MAX_WORKGROUP_SIZE + 1))
        nw = Signal(range(MAX_WAVES + 1))      # waves per workgroup
        m.d.comb += nw.eq((threads + WAVE_SIZE - 1) >> 5)

        # ---- resource state --------------------------------------------------------------
        live = self.slot_live
        slot_vblk = Signal(data.ArrayLayout(range(WID), S * W))   # VGPR block of each slot
        vfree = Array(Signal(W, name=f"vfree{s}") for s in range(S))   # free VGPR blocks
        vvalid = Signal(W)                     # VGPR blocks that fit the SIMD
        lvalid = Signal(G)                     # LDS blocks that fit (per half / whole LDS)
        lds_free = Signal(G)                   # CU mode: CU c owns bits [c * P, (c + 1) * P)
        wg_used = Signal(G)                    # resident-workgroup ids in use
        wg_lds = Signal(data.ArrayLayout(range(G), G))   # LDS block of each workgroup id
        opened = self.open_wg
        caps = [Signal(range(W + 1), name=f"cap{s}") for s in range(S)]   # waves SIMD s can take
        m.d.comb += [caps[s].eq(popcount(vfree[s])) for s in range(S)]

        # ---- the workgroup and wave being launched -----------------------------------------
        wgx, wgy, wgz = Signal(32), Signal(16), Signal(16)
        k = Signal(range(MAX_WAVES))           # wave index within the workgroup
        rem = Signal(range(MAX_WORKGROUP_SIZE + 1))   # work-items from wave k on
        cur_base = Signal(range(total))
        allowed = Signal(S)
        q = Array(Signal(range(W + 1), name=f"quota{s}") for s in range(S))   # waves left per SIMD
        left = Signal(range(MAX_WAVES + 1))    # waves still to share out in QUOTA
        ptr = Array(Signal(range(S), name=f"rr{g}") for g in range(C + 1))  # per CU; [C]: WGP
        grp = Signal(range(C + 1))
        lp = Signal(range(S))                  # launch round robin
        last_cu = Signal(range(C))

        # ---- v0 of the next wave, generated after the last one is launched ---------------------
        v0_take = Signal()
        v0, v0_full = self._idgen(m, self.start.payload, nw, self.start.valid & self.start.ready, v0_take)

        # ---- placement check -------------------------------------------------------------
        cu_cap = [sum(caps[c * SPC + i] for i in range(SPC)) for c in range(C)]
        pool = [Const(((1 << P) - 1) << (c * P), G) for c in range(C)]
        cu_short_caps = Cat(*[cap < nw for cap in cu_cap])
        cu_short_lds = Cat(*[~(lds_free & pool[c]).any() for c in range(C)])
        all_short_caps = sum(caps) < nw
        all_short_lds = ~lds_free.any()
        fit_cu = ~cu_short_caps & ~cu_short_lds
        cu = rr_pick(m, fit_cu, last_cu, "cu")
        fit = Mux(d.wgp, ~all_short_caps & ~all_short_lds, fit_cu.any())
        short_caps = Mux(d.wgp, all_short_caps, cu_short_caps.any())
        short_lds = Mux(d.wgp, all_short_lds, cu_short_lds.any())
        vgpr_bound = ~vvalid[W - 1]            # fewer VGPR blocks than slots: VGPRs limit
        cu_pool = Signal(G)
        m.d.comb += cu_pool.eq(Array(pool)[cu])
        blk = first_set(m, Mux(d.wgp, lds_free, lds_free & cu_pool), "ldsblk")
        wid = first_set(m, ~wg_used, "wgid")
        # the LDS base is formed in QUOTA from the placed workgroup's block and CU (``last_cu`` in
        # CU mode), both registered, not behind the placement decision: a multiplier after the fit checks
        placed_blk = wg_lds[opened.wg]
        base = Mux(d.wgp, placed_blk * d.lds_bytes, last_cu * half + (placed_blk - last_cu * P) * d.lds_bytes)
        placing = (state == _State.PLACE) & fit

        # ---- launch ----------------------------------------------------------------------
        # each wave to the SIMD with the most room left (ties in turn): balanced as resources allow
        room = [Signal(range(W + 1), name=f"room{s}") for s in range(S)]
        m.d.comb += [room[s].eq(Mux(allowed[s], caps[s] - q[s], 0)) for s in range(S)]
        most = tree_max(room)
        pick = rr_pick(m, Cat(*[(r == most) & (r != 0) for r in room]), ptr[grp], "quota")
        sel = rr_pick(m, Cat(*[q[s] != 0 for s in range(S)]), lp, "simd")
        # the VGPR block offered stays put while the launch waits (ended waves may free a lower one)
        vb_first = first_set(m, vfree[sel], "vblk")
        vb_hold, vb_held, vb = Signal(range(WID)), Signal(), Signal(range(WID))
        m.d.comb += vb.eq(Mux(vb_held, vb_hold, vb_first))
        offering = (state == _State.OFFER) & ~self.lds_alloc.valid & v0_full
        ready = Array(self.launch[s].ready for s in range(S))
        fire = offering & ready[sel]
        with m.If(offering):
            m.d.sync += [vb_hold.eq(vb), vb_held.eq(~fire)]
        slot = Signal(range(WID))
        m.d.comb += slot.eq(Array(self.launched_slot)[sel])
        exec_ = Mux(rem >= WAVE_SIZE, Const(0xFFFF_FFFF, 32), (Const(1, 33) << rem[:5]) - 1)
        for s in range(S):
            p = self.launch[s].payload
            m.d.comb += [self.launch[s].valid.eq(offering & (sel == s)),
                         p.pc.eq(d.pc), p.vgpr_base.eq(vb * d.vgprs), p.vgprs.eq(d.vgprs),
                         p.wg.eq(opened.wg), p.wg_last.eq(q[sel] == 1), p.exec.eq(exec_),
                         p.sgpr.eq(d.user_sgpr), p.ttmp7.eq(Cat(wgy, wgz)), p.ttmp9.eq(wgx),
                         p.v0.eq(v0)]
        m.d.comb += v0_take.eq(fire)
        wg_complete = fire & (k + 1 == nw)
        with m.If(fire):
            m.d.sync += k.eq(Mux(wg_complete, 0, k + 1))

        # ---- resources freed by ended waves and finished workgroups ------------------------
        ended_all = Cat(*self.ended)
        gone = Signal(S * W)
        m.d.comb += gone.eq(ended_all & live)
        fire_bit = Mux(fire, (Const(1, S * W) << (sel * W + slot))[:S * W], 0)
        m.d.sync += live.eq((live & ~ended_all) | fire_bit)
        # (the wide ORs are combinational signals: evaluated when their inputs change, not every cycle)
        taken = Signal(W)
        m.d.comb += taken.eq(Mux(fire, (Const(1, W) << vb)[:W], 0))
        for s in range(S):
            freed = Signal(W, name=f"vfreed{s}")
            m.d.comb += freed.eq(onehot_or([gone[s * W + i] for i in range(W)],
                                           [slot_vblk[s * W + i] for i in range(W)], W))
            m.d.sync += vfree[s].eq((vfree[s] | freed) & ~Mux(sel == s, taken, 0))
        occupied = onehot_or([live[i] for i in range(S * W)], [self.slot_wg[i] for i in range(S * W)], G)
        open_mask = Mux(opened.valid, (Const(1, G) << opened.wg)[:G], 0)
        fin, lds_freed = Signal(G), Signal(G)  # workgroups whose last wave has ended; their LDS
        m.d.comb += [fin.eq(wg_used & ~occupied & ~open_mask),
                     lds_freed.eq(onehot_or([fin[g] for g in range(G)], [wg_lds[g] for g in range(G)], G))]
        m.d.sync += [wg_used.eq((wg_used & ~fin) | Mux(placing, (Const(1, G) << wid)[:G], 0)),
                     lds_free.eq((lds_free | lds_freed) & ~Mux(placing, (Const(1, G) << blk)[:G], 0))]

        # ---- counters --------------------------------------------------------------------
        cnt = self.counters
        m.d.comb += cnt.resident.eq(popcount(live))
        m.d.sync += cnt.max_resident.eq(Mux(cnt.resident > cnt.max_resident, cnt.resident, cnt.max_resident))

        # ---- control ---------------------------------------------------------------------
        steps = Signal(range(G + 1))
        acc_v = Signal(range(G * MAX_VGPRS_PER_WAVE + 1))
        acc_l = Signal(range(G * (total + 1) + 1))
        next_v, next_l = acc_v + d.vgprs, acc_l + d.lds_bytes

        with m.If(self.lds_alloc.ready):
            m.d.sync += self.lds_alloc.valid.eq(0)

        with m.Switch(state):
            with m.Case(_State.IDLE):
                with m.If(self.start.valid):
                    blk_dims = self.start.payload.block
                    m.d.sync += [d.eq(self.start.payload), state.eq(_State.SETUP), steps.eq(0),
                                 threads.eq(blk_dims.x * blk_dims.y * blk_dims.z),
                                 acc_v.eq(0), acc_l.eq(0), self.done.eq(0), self.error.eq(0),
                                 cnt.workgroups.eq(0), cnt.waves.eq(0), cnt.max_resident.eq(0),
                                 cnt.blocked_slots.eq(0), cnt.blocked_vgprs.eq(0), cnt.blocked_lds.eq(0)]
            with m.Case(_State.SETUP):
                # block j fits when (j + 1) * size <= space: one block per cycle, no divider
                with m.If(steps != G):
                    m.d.sync += [acc_v.eq(next_v), acc_l.eq(next_l), steps.eq(steps + 1),
                                 lvalid.eq(Cat(lvalid[1:], next_l <= Mux(d.wgp, total, half)))]
                with m.If(steps < W):
                    m.d.sync += vvalid.eq(Cat(vvalid[1:], next_v <= cfg.vgprs_per_simd))
                with m.If(steps == G):
                    empty = (nw == 0) | (d.grid.x == 0) | (d.grid.y == 0) | (d.grid.z == 0)
                    m.d.sync += [vfree[s].eq(vvalid) for s in range(S)]
                    m.d.sync += [ptr[g].eq(S - 1) for g in range(C + 1)]
                    m.d.sync += [lds_free.eq(Mux(d.wgp, lvalid, Cat(*[lvalid[:P]] * C))),
                                 wgx.eq(0), wgy.eq(0), wgz.eq(0), rem.eq(threads),
                                 last_cu.eq(C - 1), state.eq(Mux(empty, _State.DRAIN, _State.PLACE))]
            with m.Case(_State.PLACE):
                with m.If(fit):
                    g = Mux(d.wgp, C, cu)
                    m.d.sync += [opened.valid.eq(1), opened.wg.eq(wid), wg_lds[wid].eq(blk),
                                 last_cu.eq(Mux(d.wgp, last_cu, cu)),
                                 allowed.eq(Mux(d.wgp, (1 << S) - 1, Const((1 << SPC) - 1, S) << (cu * SPC))),
                                 grp.eq(g), lp.eq(ptr[g]), left.eq(nw), state.eq(_State.QUOTA)]
                    m.d.sync += [q[s].eq(0) for s in range(S)]
                with m.Else():
                    m.d.sync += [cnt.blocked_slots.eq(cnt.blocked_slots + (short_caps & ~vgpr_bound)),
                                 cnt.blocked_vgprs.eq(cnt.blocked_vgprs + (short_caps & vgpr_bound)),
                                 cnt.blocked_lds.eq(cnt.blocked_lds + short_lds)]
                    with m.If(~wg_used.any()):   # nothing resident, and still it does not fit
                        m.d.sync += [self.error.valid.eq(1), self.error.slots.eq(short_caps & ~vgpr_bound),
                                     self.error.vgprs.eq(short_caps & vgpr_bound),
                                     self.error.lds.eq(short_lds), state.eq(_State.IDLE)]
            with m.Case(_State.QUOTA):
                m.d.sync += [q[pick].eq(q[pick] + 1), ptr[grp].eq(pick), left.eq(left - 1), cur_base.eq(base)]
                with m.If(left == 1):
                    m.d.sync += state.eq(_State.OFFER)
            with m.Case(_State.OFFER):
                with m.If(fire):
                    idx = sel * W + slot
                    m.d.sync += [self.slot_wg[idx].eq(opened.wg), slot_vblk[idx].eq(vb),
                                 q[sel].eq(q[sel] - 1), lp.eq(sel), rem.eq(rem - WAVE_SIZE),
                                 cnt.waves.eq(cnt.waves + 1),
                                 self.lds_alloc.valid.eq(1), self.lds_alloc.payload.simd.eq(sel),
                                 self.lds_alloc.payload.wave.eq(slot), self.lds_alloc.payload.base.eq(cur_base),
                                 self.lds_alloc.payload.size.eq(d.lds_bytes)]
                    with m.If(wg_complete):
                        last_x, last_y = wgx + 1 == d.grid.x, wgy + 1 == d.grid.y
                        m.d.sync += [cnt.workgroups.eq(cnt.workgroups + 1), opened.valid.eq(0),
                                     rem.eq(threads),
                                     wgx.eq(Mux(last_x, 0, wgx + 1)),
                                     wgy.eq(Mux(last_x, Mux(last_y, 0, wgy + 1), wgy)),
                                     wgz.eq(wgz + (last_x & last_y))]
                        with m.If(last_x & last_y & (wgz + 1 == d.grid.z)):
                            m.d.sync += state.eq(_State.DRAIN)
                        with m.Else():
                            m.d.sync += state.eq(_State.PLACE)
            with m.Case(_State.DRAIN):
                with m.If(~wg_used.any()):
                    m.d.sync += [self.done.eq(1), state.eq(_State.IDLE)]
        return m

    def _idgen(self, m, start, nw, restart, take):
        """v0 of the waves of a workgroup in launch order, into one 1,024-bit register,
        ``ID_LANES_PER_CYCLE`` lanes a cycle from a registered base position: each lane's
        position is computed from the base and its constant offset alone (no lane waits for
        another), see :func:`_lane_position`. Positions continue from wave to wave (x wraps at
        the block's x size into y, y into z; z is not wrapped, as in the model, so the padding
        lanes of a partial last wave continue the count) and restart at 0 after wave
        ``nw - 1``: every workgroup's waves are the same. ``start`` is the dispatch that
        ``restart`` accepts. The register holds a wave until ``take`` (its launch), in whose
        cycle the next wave's first lanes are written; with one wave per workgroup it is kept.
        Returns the register and whether it holds a whole wave. Its own fragment: its signals
        change every cycle while it runs, the dispatcher's rarely."""
        PL, steps = ID_LANES_PER_CYCLE, LANES // ID_LANES_PER_CYCLE
        mg = Module()
        m.submodules.idgen = mg
        # per dispatch: the last x and y, the block size and the room at a workgroup's first
        # work-item, both at most PL (what the lanes of one cycle can reach)
        blk = start.block
        x_end, y_end = Signal(10, name="x_end"), Signal(10, name="y_end")
        size_x, size_y = Signal(range(PL + 1), name="size_x"), Signal(range(PL + 1), name="size_y")
        room0_x, room0_y = Signal(range(PL + 1), name="room0_x"), Signal(range(PL + 1), name="room0_y")
        en_y, en_z = Signal(name="en_y"), Signal(name="en_z")   # v0 fields the kernel enabled
        # the base: the position of the cycle's first lane, and its room: the lanes after it
        # before x (y) wraps, at most PL (z < 1,024: a workgroup has at most 1,024 work-items)
        bx, by, bz = Signal(10, name="base_x"), Signal(10, name="base_y"), Signal(10, name="base_z")
        room_x, room_y = Signal(range(PL + 1), name="room_x"), Signal(range(PL + 1), name="room_y")
        cyc = Signal(range(steps))
        wave = Signal(range(MAX_WAVES))
        out, full = Signal(32 * LANES), Signal()

        pos = [(bx, by, bz)] + [_lane_position(mg, p, (bx, by, bz), (room_x, room_y), (size_x, size_y))
                                for p in range(1, PL + 1)]
        lanes = [Cat(x, Mux(en_y, y, 0), Mux(en_z, z, 0), Const(0, 2)) for x, y, z in pos[:PL]]
        nx, ny, nz = pos[PL]
        last, wg_end = cyc == steps - 1, wave + 1 == nw
        step = ~restart & (nw != 0) & (~full | take & (nw != 1))
        with mg.If(take & (nw != 1)):   # one wave per workgroup: its v0 serves them all
            mg.d.sync += full.eq(0)
        with mg.If(restart):
            first_x, first_y = _at_most(blk.x - 1, PL), _at_most(blk.y - 1, PL)
            mg.d.sync += [x_end.eq(blk.x - 1), y_end.eq(blk.y - 1),
                          size_x.eq(_at_most(blk.x, PL)), size_y.eq(_at_most(blk.y, PL)),
                          room0_x.eq(first_x), room0_y.eq(first_y), room_x.eq(first_x), room_y.eq(first_y),
                          en_y.eq(start.id_dims >= 2), en_z.eq(start.id_dims >= 3),
                          bx.eq(0), by.eq(0), bz.eq(0), cyc.eq(0), wave.eq(0), full.eq(0)]
        with mg.Elif(step):
            mg.d.sync += [out.word_select(cyc, 32 * PL).eq(Cat(*lanes)), cyc.eq(Mux(last, 0, cyc + 1))]
            with mg.If(last & wg_end):
                mg.d.sync += [bx.eq(0), by.eq(0), bz.eq(0), room_x.eq(room0_x), room_y.eq(room0_y)]
            with mg.Else():
                mg.d.sync += [bx.eq(nx), by.eq(ny), bz.eq(nz),
                              room_x.eq(_at_most(x_end - nx, PL)), room_y.eq(_at_most(y_end - ny, PL))]
            with mg.If(last):
                mg.d.sync += [full.eq(1), wave.eq(Mux(wg_end, 0, wave + 1))]
        return out, full


def _at_most(v, n):
    return Mux(v >= n, n, v)


def _small_divmod(m, q, d, n, name):
    """``(q // d, q % d)`` for ``q < n`` and ``1 <= d <= n``: a table of a few bits, read as
    one constant word select per output (no process shared by the two)."""
    w = max(1, (n - 1).bit_length())          # bits of q, and of each entry
    index = Cat(q[:w], d)
    div_t = mod_t = 0
    for i in range(1 << len(index)):
        qq, dd = i & ((1 << w) - 1), i >> w
        if qq < n and 1 <= dd <= n:
            div_t |= (qq // dd) << (i * w)
            mod_t |= (qq % dd) << (i * w)
    div, mod = Signal(range(n), name=f"{name}_div"), Signal(range(n), name=f"{name}_mod")
    size = w << len(index)
    m.d.comb += [div.eq(Const(div_t, size).word_select(index, w)),
                 mod.eq(Const(mod_t, size).word_select(index, w))]
    return div, mod


def _wrap(m, adv, room, size, n, name):
    """Advancing ``adv`` (at most ``n``) work-items from a coordinate with ``room`` positions
    left before it wraps (at most ``n``) in a dimension of ``size`` (at most ``n``): whether
    it wraps, how many times, and the coordinate after the wrap (small: below ``n``)."""
    wraps = Signal(name=f"{name}_wraps")
    m.d.comb += wraps.eq(adv > room)
    div, mod = _small_divmod(m, adv - room - 1, size, n, name)
    count = Signal(range(n + 1), name=f"{name}_count")
    m.d.comb += count.eq(Mux(wraps, div + 1, 0))
    return wraps, count, mod


def _lane_position(m, p, base, room, size):
    """The position ``p`` work-items after the base (``p <= ID_LANES_PER_CYCLE``), from the
    base's registers and ``p`` alone: x is ``x0 + p`` until x's room runs out, then the
    remainder within the block's x size; the x wraps advance y the same way from ``y0``, and
    the y wraps advance z. ``room`` and ``size`` are per axis (x, y), saturated at
    ``ID_LANES_PER_CYCLE``, so the wraps are small tables, not compares of whole coordinates."""
    n = ID_LANES_PER_CYCLE
    (x0, y0, z0), (room_x, room_y), (size_x, size_y) = base, room, size
    wx, cx, rx = _wrap(m, Const(p, range(n + 1)), room_x, size_x, n, f"lane{p}_x")
    wy, cy, ry = _wrap(m, cx, room_y, size_y, n, f"lane{p}_y")
    x, y, z = Signal(10, name=f"lane{p}_x"), Signal(10, name=f"lane{p}_y"), Signal(10, name=f"lane{p}_z")
    m.d.comb += [x.eq(Mux(wx, rx, x0 + p)), y.eq(Mux(wy, ry, y0 + cx)), z.eq(z0 + cy)]
    return x, y, z
