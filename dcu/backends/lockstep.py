"""Run a dispatch on one RTL SIMD (:class:`~hdl.simd.simd.SIMD`) in Amaranth's simulator, in
lock step with the reference model.

The harness is the SIMD's whole world: a mini dispatcher that launches workgroups into free
wave slots, an instruction memory, a transcendental unit (:class:`~hdl.simd.transseq.TransSeq`),
the DCU's barrier (a workgroup's waves are released ``barrier_delay`` cycles after all its live
waves have signalled), and a behavioural memory that serves scalar, vector and LDS requests
with configurable latency and out-of-order completion (per-wave order for loads, stores and
LDS; any order for scalar loads). The memory side executes requests with the model's own
memory semantics (``sim.memory_ops``), fed with the operands the RTL sent.

The model runs the same dispatch first and records, per wave and instruction, the state after
it. While the RTL runs, every issued PC and every register write is compared with that record;
the first difference stops the run with the wave, PC, disassembly, register, expected and
actual values. A write is attributed to its instruction by the order the pipes keep:

* the scalar pipe's EX and a VALU lane mask: the wave's last issued instruction (a wave issues
  nothing while either is outstanding); the SGPR file's write, then EXEC, VCC and SCC;
* VALU rows (and a 64-bit result's high rows): the wave's VALU instructions in issue order (a
  VOPD's two halves, issued one after the other, both its own);
* vector memory and LDS return beats, scalar load dwords: the request they answer (requests
  leave in issue order per wave);
* transcendental results: the wave's transcendental instructions in issue order.
"""
from __future__ import annotations

import dataclasses
import random
import sys
import time
from collections import Counter, defaultdict, deque

import numpy as np
from amaranth.hdl import Cat, Elaboratable, Fragment, Module, Signal
from amaranth.lib import data, wiring
from amaranth.sim import Simulator

from dcu.launch import prepare
from hdl.config import DCUConfig
from hdl.layouts import ISSUE_GROUPS, SimdPerf, issue_group
from hdl.simd.scalar import PipeError
from hdl.simd.simd import SIMD
from hdl.simd.transseq import TransSeq
from hdl.simd.scalar_float import SCALAR_FLOAT
from hdl.simd.vgpr import place
from isa import decode, disassemble
from sim.execute import build as build_handler
from sim.model import Model, Workgroup, wave_inits
from sim.wave import LANES, NULL, Wave

U32 = np.uint32
M32 = 0xFFFF_FFFF
_MEMORY = ("vmem_load", "vmem_store", "vmem_atomic", "cache", "ds_load", "ds_store", "ds_atomic")


class Divergence(AssertionError):
    """The RTL and the model disagree."""


class SimdHang(AssertionError):
    """The watchdog fired: no progress for too long."""


def _lanes(value: int, width: int = 32, n: int = LANES) -> np.ndarray:
    mask = (1 << width) - 1
    return np.array([(value >> (width * i)) & mask for i in range(n)], dtype=np.uint64 if width <= 64 else object)


def _pack(lanes, width: int = 32) -> int:
    v = 0
    for i, x in enumerate(lanes):
        v |= (int(x) & ((1 << width) - 1)) << (width * i)
    return v


class _Io:
    """The SIMD's ports as plain integers: all inputs of a cycle go in with one ``ctx.set``
    (each set makes the simulator settle the design again), and output payloads are read
    whole and split into fields."""

    INPUTS = ("launch", "fetch_resp", "smem_resp", "vmem_resp", "lds_resp")
    OUTPUTS = ("fetch_req", "smem_req", "vmem_req", "lds_req")

    def __init__(self, dut, m):
        parts, pos = [], 0
        self.inputs = []       # (port name, bit of its valid, its payload's fields)
        for name in self.INPUTS:
            port = getattr(dut, name)
            self.inputs.append((name, pos, _fields(port.payload.shape())))
            parts += [port.valid, port.payload.as_value()]
            pos += 1 + len(port.payload.as_value())
        self.release_at = pos
        parts.append(dut.bar_release)
        pos += len(dut.bar_release)
        self.ones = 0          # the request ports' ready inputs stay 1
        for name in self.OUTPUTS:
            parts.append(getattr(dut, name).ready)
            self.ones |= 1 << pos
            pos += 1
        self.all = Cat(*parts)
        self.last = None
        self.outputs = {name: (getattr(dut, name).payload.as_value(), _fields(getattr(dut, name).payload.shape()))
                        for name in self.OUTPUTS}
        self.outputs["error"] = (dut.error.as_value(), _fields(dut.error.shape()))
        # a request's lanes come a row at a time (config.request_lanes): the row each port carries
        self.rows = dut.config.request_rows
        self.row_inputs = {"vmem_req": dut.vmem_req_row, "lds_req": dut.lds_req_row}
        self.perf_value = dut.perf.as_value()
        st, vt = dut.scalar.trace, dut.vector.trace
        # what the bench needs to drive the inputs, read before they are set (it follows from
        # the registers), and after (which inputs were taken, what issued and was written)
        self.status = _Bits(m, launch_slot=dut.launched_slot, fetch_req=dut.fetch_req.valid,
                            smem_req=dut.smem_req.valid, vmem_req=dut.vmem_req.valid, lds_req=dut.lds_req.valid,
                            error=dut.error.valid, bar_wait=dut.bar_wait, idle=dut.idle, ended=dut.ended)
        sw, vw = st["sgpr_write"], vt["valu"]
        tq = vt["trans"]
        self.after = _Bits(m, launch=dut.launch.ready, fetch_resp=dut.fetch_resp.ready, smem_resp=dut.smem_resp.ready,
                           vmem_resp=dut.vmem_resp.ready, lds_resp=dut.lds_resp.ready,
                           issue=st["issue"], wave=st["wave"], pc=st["pc"], first_half=st["first_half"],
                           ex_done=st["ex_done"], ex_wave=st["ex_wave"], ex_write=st["ex_write"],
                           mask=dut.vector.port.mask.valid, mask_wave=dut.vector.port.mask.wave,
                           mask_write=st["mask_write"], s_addr=sw.addr, s_en=sw.en, s_data=sw.data,
                           v_en=vw.valid, v_wave=vt["valu_wave"], v_done=vt["valu_done"], v_reg=vw.w.reg,
                           v_row=vw.w.row, v_mask=vw.w.mask, v_data=vw.w.data,
                           t_done=vt["trans_done"], t_wave=tq.wave, t_vdst=tq.vdst, t_exec=tq.exec, t_sres=tq.sres,
                           sres_write=st["sres_write"])
        self.trans_data = dut.trans_resp.payload.d
        self.lanes = dut.config.lanes
        self.wave = [_Bits(m, exec=st["exec"][s], vcc=st["vcc"][s], scc=st["scc"][s]) for s in range(len(st["exec"]))]

    def get(self, ctx, name) -> dict:
        """An output's fields; a request's ``addr`` and ``data`` for the whole wave, its rows
        read one after the other."""
        value, fields = self.outputs[name]
        v = ctx.get(value)
        out = {k: (v >> o) & ((1 << w) - 1) for k, (o, w) in fields.items()}
        if name in self.row_inputs and self.rows > 1:
            for r in range(1, self.rows):
                ctx.set(self.row_inputs[name], r)
                v = ctx.get(value)
                for k in ("addr", "data"):
                    o, w = fields[k]
                    out[k] |= ((v >> o) & ((1 << w) - 1)) << (w * r)
            ctx.set(self.row_inputs[name], 0)
        return out

    def set(self, ctx, drive: dict):
        """``drive``: input port name -> payload fields (valid = present), and ``bar_release``."""
        v = self.ones | drive.get("bar_release", 0) << self.release_at
        for name, pos, fields in self.inputs:
            beat = drive.get(name)
            if beat is not None:
                v |= 1 << pos
                for k, x in beat.items():
                    o, w = fields[k]
                    v |= (x & ((1 << w) - 1)) << (pos + 1 + o)
        if v != self.last:
            ctx.set(self.all, v)
            self.last = v

    def perf(self, ctx) -> dict:
        """``perf`` as ``{"issued": {group: n}, "valu_busy": n, "stall": {reason: n}}``."""
        v = ctx.get(self.perf_value)
        out = {}
        for name, field in SimdPerf:
            if isinstance(field.shape, data.StructLayout):
                out[name] = {k: (v >> (field.offset + o)) & M32 for k, (o, _) in _fields(field.shape).items()}
            else:
                out[name] = (v >> field.offset) & M32
        return out


class _Bits:
    """Several values read with one ``ctx.get``, returned as a dict by name. They are read
    through a signal the design drives (added to module ``m``): the simulator evaluates it in
    its compiled code, while an expression that a testbench reads is walked anew each time."""

    def __init__(self, m, **values):
        cat = Cat(*values.values())
        self.value = Signal(len(cat))
        m.d.comb += self.value.eq(cat)
        self.fields, pos = {}, 0
        for name, v in values.items():
            self.fields[name] = (pos, len(v))
            pos += len(v)

    def get(self, ctx) -> dict:
        v = ctx.get(self.value)
        return {k: (v >> o) & ((1 << w) - 1) for k, (o, w) in self.fields.items()}


def _fields(layout) -> dict:
    return {name: (f.offset, f.width) for name, f in layout}


def _perf_delta(after: dict, before: dict) -> dict:
    return {k: _perf_delta(v, before[k]) if isinstance(v, dict) else (v - before[k]) & M32 for k, v in after.items()}


class _Top(Elaboratable):
    """The SIMD, a transcendental unit of its own, and the bench's view of them (``io``, made
    once the SIMD has been elaborated and its trace signals exist)."""

    def __init__(self, dut):
        self.dut, self.io = dut, None

    def elaborate(self, platform):
        m = Module()
        dut = self.dut
        m.submodules.simd = Fragment.get(dut, platform)
        m.submodules.trans = trans = TransSeq(dut.config)
        wiring.connect(m, dut.trans_req, trans.i)
        wiring.connect(m, trans.o, dut.trans_resp)
        self.io = _Io(dut, m)
        return m


class _Slot:
    """What the bench keeps of the wave in a slot: its instructions as issued, and those whose
    writes are outstanding, by the order each pipe keeps."""

    def __init__(self, key, base, v0):
        self.key, self.base = key, base          # (workgroup, wave); its first VGPR in the file
        self.v0 = v0                             # v0 at launch
        self.issued = 0                          # instructions issued
        self.valu = deque()                      # VALU instructions whose rows are not all written
        self.trans = deque()                     # transcendentals whose results are not written
        self.mem = deque()                       # memory instructions whose request has not left
        self.smem = deque()                      # scalar loads whose request has not left
        self.pcs = []                            # the PC of each instruction issued


class SimdRun:
    """One kernel dispatch on one SIMD.

    Parameters
    ----------
    kernel : dcu.codeobj.KernelInfo
    grid, block : dispatch shape
    args : kernel arguments (numpy arrays and scalars)
    config : DCUConfig
        Its ``request_lanes`` and ``resp_lanes`` equal ``lanes`` (:class:`~hdl.simd.simd.SIMD`).
    latency : (lo, hi) cycles for vector memory and LDS responses; scalar loads likewise
    seed : int, for the latency, reordering and barrier choices (printed on failure)
    lockstep : compare with the model instruction by instruction
    max_cycles : the watchdog: :class:`SimdHang` after this many cycles of the run
    order_dependent : compare only the results (atomics with return, spin loops)
    barrier_delay : (lo, hi) cycles after all live waves of a workgroup have signalled (0: the
        first cycle ``bar_wait`` shows it) at which the bench releases them

    Members
    -------
    cycles, instructions : of the whole run so far
    resident_cycles : cycles of this dispatch in which a wave was resident (``idle`` low)
    issued : ``{kind: n}`` as the bench saw them issue (``issued_ops``: ``{OpInfo: n}``);
        ``valu_cycles`` the cycle of each VALU issue, ``issue_log`` ``(cycle, slot, pc)`` of each
    releases : cycles of the barrier releases
    perf : the SIMD's ``perf`` counters over this dispatch (:data:`hdl.layouts.SimdPerf` as dicts)
    ended : ``ended`` strobes seen during this dispatch
    sim_seconds, sim_cpu_seconds : this dispatch's simulation time, wall clock and CPU
    """

    def __init__(self, kernel, grid, block, args, config: DCUConfig, latency=(1, 8), seed=0,
                 lockstep=True, max_cycles=200_000, order_dependent=False, barrier_delay=(0, 3)):
        if not config.request_lanes == config.lanes == config.resp_lanes:
            raise ValueError(f"{config.name}: the SIMD reads and writes requests a row of lanes at a time "
                             f"(request_lanes {config.request_lanes}, resp_lanes {config.resp_lanes}, "
                             f"lanes {config.lanes})")
        self.kernel, self.config = kernel, config
        self.barrier_delay = barrier_delay
        self.latency, self.rng = latency, random.Random(seed)
        self.seed = seed
        self.lockstep, self.max_cycles = lockstep, max_cycles
        self.order_dependent = order_dependent   # atomics with return, spin loops: compare results only
        self.check = lockstep and not order_dependent
        # the model's run, recorded
        self.model_prep = prepare(kernel, grid, block, args)
        self.events = defaultdict(list)
        if lockstep:
            model = Model(self.model_prep.mem, self.model_prep.code, self.model_prep.code_base,
                          trace=lambda e: self.events[(e["wg"], e["wave"])].append(e))
            model.run(self.model_prep.dispatch)
        else:
            Model(self.model_prep.mem, self.model_prep.code, self.model_prep.code_base).run(self.model_prep.dispatch)
        # the RTL's own copy of memory
        self.prep = prepare(kernel, grid, block, args)
        self.mem = self.prep.mem
        self.words = np.frombuffer(self.prep.code, dtype="<u4")
        self.cycles = 0
        self.instructions = 0
        self.issued = {}              # kind -> count of issued instructions
        self.valu_cycles = []         # cycle of every VALU issue
        self.issue_log = []           # (cycle, slot, pc) of every issue
        self.releases = []
        self.issued_ops = Counter()   # isa.OpInfo -> count of issued instructions
        self.perf = None
        self.ended = 0
        self.resident_cycles = 0
        self._decoded = {}

    # -- helpers ------------------------------------------------------------------------
    def _inst_at(self, pc: int):
        inst = self._decoded.get(pc)
        if inst is None:
            i = (pc - self.prep.code_base) // 4
            inst = self._decoded[pc] = decode([int(x) for x in self.words[i: i + 3]], pc)
        return inst

    def _fail(self, slot, what):
        w = self.slots.get(slot)
        raise Divergence(f"seed {self.seed}: wave {w.key if w else None} (slot {slot}): {what}")

    # -- the run ------------------------------------------------------------------------
    def run(self, more: list["SimdRun"] = ()):
        """Run this dispatch, then each of ``more`` (the same configuration), on one simulated SIMD;
        return this dispatch's buffers."""
        jobs = [self, *more]
        dut = SIMD(self.config)
        top = _Top(dut)

        async def bench(ctx):
            for job in jobs:
                await job._dispatch(ctx, dut, top.io)

        # Amaranth's simulator compiles some of the SIMD's memories (16 and 8 lanes) into code
        # nested deeper than Python's default recursion limit lets it compile
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
        sim = Simulator(top)
        self.signal_count = len(sim._engine._state.signals)   # what the simulator updates
        sim.add_clock(1e-8)
        sim.add_testbench(bench)
        sim.run()
        return self.prep.read_back()

    def model_issued(self) -> dict:
        """The model's instruction counts of this dispatch by ``perf.issued`` group."""
        counts = dict.fromkeys(ISSUE_GROUPS, 0)
        for evs in self.events.values():
            for ev in evs:
                counts[issue_group(ev["inst"].info.kind)] += 1
        return counts

    def _clear(self, ctx, dut, slot, alloc):
        """Zero a slot's registers before its launch: the model starts every wave with zeroed
        registers; hardware promises nothing, so the bench keeps undefined values comparable."""
        P = 32 // self.config.lanes
        banks = dut.vector.vgprs.banks
        for k in range(slot * alloc * P, (slot + 1) * alloc * P):
            bank, addr = place(k)
            ctx.set(banks[bank].data[addr], 0)
        for r in range(64):
            ctx.set(dut.scalar.sgprs.data[slot * 64 + r], 0)

    async def _dispatch(self, ctx, dut, io):
        """Serve one dispatch on ``dut`` until every workgroup has finished.

        Each cycle first reads what the design drives (it has settled after the clock edge),
        then sets every input at once (each ``ctx.set`` makes the simulator settle again), then
        reads which responses and launches were accepted, what issued and what was written."""
        cfg = self.config
        d = self.prep.dispatch
        gx, gy, gz = d.grid
        pending = deque((x, y, z) for z in range(gz) for y in range(gy) for x in range(gx))
        alloc = -(-d.vgprs // cfg.vgpr_granule) * cfg.vgpr_granule
        if alloc * cfg.wave_slots > cfg.vgprs_per_simd:
            raise ValueError(f"{cfg.wave_slots} waves of {alloc} VGPRs do not fit {cfg.vgprs_per_simd}")
        self.slots = {}         # slot -> _Slot of the wave it holds
        launch_q = deque()
        cleared = None          # the slot cleared for the launch offered
        wgs = {}                # wg id -> {"ctx": Workgroup, "live": n}
        fetch_q = deque()       # (ready cycle, wave, addr, epoch, target)
        smem_q = []             # (ready cycle, beats, instruction)
        vmem_q = defaultdict(deque)   # slot -> deque of (ready cycle, beats, instruction)
        lds_q = defaultdict(deque)
        wg_tag = {}
        release_at = {}         # slot -> cycle its barrier release strobe is due
        perf0 = io.perf(ctx)
        t0, c0 = time.perf_counter(), time.process_time()
        while True:
            cyc = self.cycles
            st = io.status.get(ctx)
            # ended waves; a workgroup's LDS is freed once all of its waves have ended
            for s in range(cfg.wave_slots):
                if st["ended"] >> s & 1:
                    w = self.slots.pop(s, None)
                    if w is None:
                        raise Divergence(f"seed {self.seed}: ended strobe for slot {s}, which holds no wave")
                    if vmem_q[s] or lds_q[s] or any(b[0]["wave"] == s for _, b, _ in smem_q):
                        raise Divergence(f"seed {self.seed}: wave {w.key} (slot {s}) ended with memory "
                                         "requests outstanding")
                    if w.valu or w.trans:
                        raise Divergence(f"seed {self.seed}: wave {w.key} (slot {s}) ended with VALU or "
                                         "transcendental results outstanding")
                    self.ended += 1
                    wgs[w.key[0]]["live"] -= 1
                    if wgs[w.key[0]]["live"] == 0:
                        del wgs[w.key[0]]
            if not pending and not launch_q and not wgs and st["idle"]:
                self.perf = _perf_delta(io.perf(ctx), perf0)
                # this dispatch's simulation (elaboration and the model excluded): wall clock,
                # and this process's CPU time (steadier on a shared machine)
                self.sim_seconds, self.sim_cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
                await ctx.tick()   # past the last ended strobe (an idle cycle)
                self.cycles += 1
                return
            if self.cycles >= self.max_cycles:
                stuck = ", ".join(f"slot {s} wave {w.key} at PC {ctx.get(dut.waves[s].pc):#x} "
                                  f"(loadcnt {ctx.get(dut.waves[s].loadcnt)}, "
                                  f"storecnt {ctx.get(dut.waves[s].storecnt)}, dscnt {ctx.get(dut.waves[s].dscnt)}, "
                                  f"kmcnt {ctx.get(dut.waves[s].kmcnt)})" for s, w in self.slots.items())
                raise SimdHang(f"seed {self.seed}: no completion after {self.cycles} cycles: {stuck}")
            if st["error"]:
                err = io.get(ctx, "error")
                slot, pc = err["wave"], err["pc"]
                w = self.slots.get(slot)
                raise Divergence(f"seed {self.seed}: RTL stopped wave {w.key if w else None} (slot {slot}), "
                                 f"{PipeError(err['cause']).name.lower()}, at PC {pc:#x} "
                                 f"({disassemble(self._inst_at(pc))})")
            drive = {}          # this cycle's inputs: port -> payload fields
            # ---- dispatcher: a whole workgroup when enough slots are free ----------
            if not launch_q and pending:
                wg_id = pending[0]
                inits = wave_inits(d, wg_id)
                live = sum(w["live"] for w in wgs.values())
                if len(inits) <= cfg.wave_slots - live:
                    pending.popleft()
                    wgc = Workgroup(Model(self.mem, self.prep.code, self.prep.code_base), wg_id, d.lds_bytes)
                    wgs[wg_id] = {"ctx": wgc, "live": len(inits)}
                    wg_tag[wg_id] = len(wg_tag) & 0xFF
                    for k, init in enumerate(inits):
                        launch_q.append((wg_id, k, init, len(inits)))
            launch_slot = st["launch_slot"]
            if launch_q:
                wg_id, k, init, n = launch_q[0]
                if cleared != launch_slot:      # v0 is written while the launch is offered
                    self._clear(ctx, dut, launch_slot, alloc)
                    cleared = launch_slot
                sg = init["sgprs"]
                drive["launch"] = dict(pc=d.entry, vgpr_base=launch_slot * alloc, vgprs=alloc, wg=wg_tag[wg_id],
                                       wg_last=int(k == n - 1), exec=init["exec"],
                                       sgpr=_pack([sg.get(r, 0) for r in range(4)]),
                                       ttmp7=sg[108 + 7], ttmp9=sg[108 + 9], v0=_pack(init["v0"]))

            # ---- instruction fetch: a line, one cycle later ------------------------
            if st["fetch_req"]:
                q = io.get(ctx, "fetch_req")
                fetch_q.append((cyc + 1, q["wave"], q["addr"], q["epoch"], q["target"]))
            if fetch_q and fetch_q[0][0] <= cyc:      # offered until taken (a row a cycle)
                _, w, addr, ep, tgt = fetch_q[0]
                i = (addr - self.prep.code_base) // 4
                n = self.config.fetch_bytes // 4
                ws = [int(self.words[j]) if 0 <= j < len(self.words) else 0 for j in range(i, i + n)]
                drive["fetch_resp"] = dict(wave=w, epoch=ep, target=tgt, data=sum(ws[k] << (32 * k) for k in range(n)))

            # ---- memory requests (taken at once): served now, answered later ---------
            if st["smem_req"]:
                q = io.get(ctx, "smem_req")
                slot = q["wave"]
                w = self.slots[slot]
                iseq = w.smem.popleft()
                vals = self._serve_smem(slot, w.pcs[iseq], q["addr"], q["dwords"], wgs[w.key[0]]["ctx"])
                n = q["dwords"]
                beats = [dict(wave=slot, seq=q["seq"], sdst=q["sdst"] + j, data=vals[j], last=int(j == n - 1))
                         for j in range(n)]
                smem_q.append((cyc + self.rng.randint(*self.latency), beats, iseq))
            for name, queue in (("vmem_req", vmem_q), ("lds_req", lds_q)):
                if st[name]:
                    q = io.get(ctx, name)
                    slot = q["wave"]
                    w = self.slots[slot]
                    iseq = w.mem.popleft()
                    beats = self._serve(slot, w.pcs[iseq], q["seq"], q, wgs[w.key[0]]["ctx"])
                    queue[slot].append((cyc + self.rng.randint(*self.latency), beats, iseq))

            # ---- memory responses: scalar in any order; vector per wave in order -----
            ready_s = [k for k, (t, _, _) in enumerate(smem_q) if t <= cyc]
            s_pick = self.rng.choice(ready_s) if ready_s else None
            if s_pick is not None:
                drive["smem_resp"] = smem_q[s_pick][1][0]
            v_pick = {}
            for name, queue in (("vmem_resp", vmem_q), ("lds_resp", lds_q)):
                heads = [s for s, qq in queue.items() if qq and qq[0][0] <= cyc]
                if heads:
                    v_pick[name] = s = self.rng.choice(heads)
                    drive[name] = queue[s][0][1][0]

            # ---- the barrier: a workgroup's waves released once all its live waves wait ----
            waiting = st["bar_wait"]
            for wg_id in wgs:
                mine = [s for s, w in self.slots.items() if w.key[0] == wg_id]
                if mine and all(waiting >> s & 1 for s in mine) and not any(s in release_at for s in mine):
                    due = cyc + self.rng.randint(*self.barrier_delay)   # 0: the first cycle bar_wait is seen
                    release_at.update((s, due) for s in mine)
            due = [s for s, t in release_at.items() if t <= cyc]
            drive["bar_release"] = sum(1 << s for s in due)
            if due:
                self.releases.append(cyc)
            for s in due:
                del release_at[s]

            # ---- all inputs at once, then what was taken, issued and written ----------
            io.set(ctx, drive)
            got = io.after.get(ctx)
            if "fetch_resp" in drive and got["fetch_resp"]:
                fetch_q.popleft()
            if launch_q and got["launch"]:
                wg_id, k, init = launch_q[0][:3]
                self.slots[launch_slot] = _Slot((wg_id, k), launch_slot * alloc, np.array(init["v0"], dtype=U32))
                launch_q.popleft()
                cleared = None
            if s_pick is not None and got["smem_resp"]:
                _, beats, iseq = smem_q[s_pick]
                self._check_sgpr_return(beats[0]["wave"], iseq, beats.pop(0))
                if not beats:
                    smem_q.pop(s_pick)
            for name, queue in (("vmem_resp", vmem_q), ("lds_resp", lds_q)):
                if name in v_pick and got[name]:
                    _, beats, iseq = queue[v_pick[name]][0]
                    self._check_vgpr_return(v_pick[name], iseq, beats.pop(0))
                    if not beats:
                        queue[v_pick[name]].popleft()
            flops = self._issue_and_writes(ctx, io, got, cyc)

            if not st["idle"]:
                self.resident_cycles += 1
            await ctx.tick()
            self.cycles += 1
            # the flip-flop state an instruction left (its EX, or its lane mask, ended last cycle)
            for slot, iseq in flops:
                self._check_flops(ctx, io, slot, iseq)

    def _issue_and_writes(self, ctx, io, got, cyc) -> list:
        """Record this cycle's issue and check it and the register writes against the model;
        return ``(slot, instruction)`` of those whose flip-flop state is to be checked after
        the clock edge."""
        flops = []
        if got["issue"]:
            slot, pc = got["wave"], got["pc"]
            w = self.slots[slot]
            iseq = w.issued
            info = self._inst_at(pc).info
            kind = info.kind
            # a VOPD issues as its two halves, one VALU instruction each: the second completes it
            if not got["first_half"]:
                w.issued += 1
                w.pcs.append(pc)
                self.instructions += 1
                self.issued[kind] = self.issued.get(kind, 0) + 1
                self.issued_ops[info] += 1
                self.issue_log.append((cyc, slot, pc))
                if kind == "valu":
                    self.valu_cycles.append(cyc)
            if kind == "valu" or info.name in SCALAR_FLOAT:      # a scalar float one runs on the VALU
                w.valu.append(iseq)
            elif kind == "vtrans":
                w.trans.append(iseq)
            elif kind == "smem":
                w.smem.append(iseq)
            elif kind in _MEMORY:
                w.mem.append(iseq)
            if self.check:
                evs = self.events[w.key]
                if iseq >= len(evs) or evs[iseq]["pc"] != pc:
                    want = (f"{evs[iseq]['pc']:#x} ({disassemble(evs[iseq]['inst'])})" if iseq < len(evs)
                            else "the wave to have ended")
                    self._fail(slot, f"instruction {iseq}: issued PC {pc:#x} ({disassemble(self._inst_at(pc))}), "
                                     f"model expected {want}")
        # the scalar pipe's EX, or a lane mask: the wave's last issued instruction
        for done, wave, write in (("ex_done", "ex_wave", "ex_write"), ("mask", "mask_wave", "mask_write")):
            if got[done]:
                slot = got[wave]
                iseq = self.slots[slot].issued - 1
                flops.append((slot, iseq))
                if got[write] and self.check:
                    self._check_sgpr_write(slot, iseq, got["s_addr"], got["s_en"], got["s_data"])
        # a VALU row: the wave's oldest VALU instruction in flight
        if got["v_en"] or got["v_done"]:
            slot = got["v_wave"]
            w = self.slots[slot]
            if not w.valu:
                self._fail(slot, "a VALU write with no VALU instruction in flight")
            if got["v_en"] and self.check:
                L = io.lanes
                self._compare_vgpr(slot, w.valu[0], got["v_reg"] - w.base, got["v_data"] << (32 * L * got["v_row"]),
                                   got["v_mask"] << (L * got["v_row"]))
            if got["v_done"]:
                w.valu.popleft()
        # a transcendental's result, whole, once its last row is written
        if got["t_done"]:
            slot = got["t_wave"]
            w = self.slots[slot]
            if not w.trans:
                self._fail(slot, "a transcendental result with no transcendental in flight")
            iseq = w.trans.popleft()
            if got["t_sres"]:          # v_s_*: lane 0's result to an SGPR (or VCC) as it is taken
                flops.append((slot, iseq))
                if got["sres_write"] and self.check:
                    self._check_sgpr_write(slot, iseq, got["s_addr"], got["s_en"], got["s_data"])
            elif self.check:
                self._compare_vgpr(slot, iseq, got["t_vdst"] - w.base, ctx.get(io.trans_data),
                                   got["t_exec"])
        return flops

    # -- pieces of the bench -----------------------------------------------------------
    def _serve_smem(self, slot, pc, addr, dwords, wgc):
        """Execute a scalar load at the exact byte address the RTL sent, with the model's
        semantics (alignment, sub-dword extension); return the loaded dwords."""
        inst = self._inst_at(pc)
        fake = Wave(slot, 1, pc)
        fake.s[0], fake.s[1] = addr & M32, addr >> 32
        f = dict(inst.f, sbase=0, soffset=NULL, ioffset=0, sdata=8)
        build_handler(dataclasses.replace(inst, f=f))(fake, wgc)
        return fake.s[8: 8 + dwords]

    def _serve(self, slot, pc, seq, req, wgc):
        """Execute one vector-memory or LDS request with the model's semantics; return its beats."""
        inst = self._inst_at(pc)
        f = dict(inst.f)
        fake = Wave(slot, 32, pc)
        fake.s[126] = req["exec"]
        kind = inst.info.kind
        data = _lanes(req["data"], 128)
        dwords = [np.array([(int(x) >> (32 * j)) & M32 for x in data], dtype=U32) for j in range(4)]
        # The fake wave holds the request's operands in fixed registers, so operands never alias.
        regs = {}
        if kind.startswith("ds_"):
            f["addr"], f["vdst"] = 0, 16
            regs[0] = np.array([int(x) & M32 for x in _lanes(req["addr"], 64)], dtype=U32)
            f["data0"], f["data1"] = 4, 8
            two_data = inst.name not in ("ds_store_b96", "ds_store_b128") and inst.f.get("data1") is not None
            if kind != "ds_load" and two_data:
                regs[4], regs[5], regs[8], regs[9] = dwords[0], dwords[1], dwords[2], dwords[3]
            else:
                regs.update({4 + j: dwords[j] for j in range(4)})
        elif inst.name not in ("global_inv", "global_wb"):
            addrs = _lanes(req["addr"], 64)
            f["saddr"], f["ioffset"], f["vaddr"], f["vsrc"], f["vdst"] = NULL, 0, 0, 4, 16
            regs[0] = np.array([int(a) & M32 for a in addrs], dtype=U32)
            regs[1] = np.array([int(a) >> 32 for a in addrs], dtype=U32)
            regs.update({4 + j: dwords[j] for j in range(4)})
        for r, v in regs.items():
            fake.v[r] = v
        handler = build_handler(dataclasses.replace(inst, f=f))
        handler(fake, wgc)
        vdst_n = max(inst.info.dst_bits, inst.info.data_bits) // 32 if "vdst" in f else 0
        writes = kind in ("vmem_load", "ds_load", "ds_atomic") or (kind == "vmem_atomic" and inst.returns)
        if kind == "ds_atomic" and "_rtn" not in inst.name:
            writes = False
        store = kind in ("vmem_store", "vmem_atomic") and not writes or inst.name == "global_wb"
        if not writes:
            return [dict(wave=slot, seq=seq, vdst=0, grp=0, data=0, mask=0, write=0, last=1, store=int(store))]
        d = inst.f["vdst"]
        n = max(1, vdst_n) if kind != "vmem_atomic" else 1
        # a beat per lane group of each register (config.resp_lanes), registers in order
        R = self.config.resp_lanes
        groups = LANES // R
        return [dict(wave=slot, seq=seq, vdst=d + j, grp=g, data=_pack(fake.v[16 + j][R * g:R * (g + 1)]),
                     mask=(req["exec"] >> (R * g)) & ((1 << R) - 1), write=1,
                     last=int(j == n - 1 and g == groups - 1), store=0)
                for j in range(n) for g in range(groups)]

    def _event(self, slot, iseq):
        evs = self.events[self.slots[slot].key]
        return evs[iseq] if iseq < len(evs) else None

    def _check_sgpr_write(self, slot, iseq, addr, en, value):
        ev = self._event(slot, iseq)
        pair = addr - slot * 64
        for half in (0, 1):
            if en >> half & 1:
                code = 2 * pair + half
                got = (value >> (32 * half)) & M32
                want = ev["sgprs"][code]
                if got != want:
                    self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: s{code} = {got:#010x}, "
                                     f"model {want:#010x}")

    def _compare_vgpr(self, slot, iseq, reg, value, en, what="writes"):
        ev = self._event(slot, iseq)
        want = ev["vgprs"].get(reg)
        if want is None and reg in (ev["inst"].f.get("vdstx"), ev["inst"].f.get("vdsty")):
            want = self._vgpr_before(slot, iseq, reg)     # a VOPD half that leaves its destination as it was
        if want is None:
            self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: RTL {what} v{reg}, "
                             "which the model's instruction does not")
        for lane in range(LANES):
            if en >> lane & 1:
                got = (value >> (32 * lane)) & M32
                if got != int(want[lane]):
                    self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: v{reg} lane {lane} = "
                                     f"{got:#010x}, model {int(want[lane]):#010x}")

    def _vgpr_before(self, slot, iseq, reg):
        """VGPR ``reg`` of the wave before instruction ``iseq``: as the last instruction that
        wrote it left it, or as the launch did (v0, the work-item IDs; zero)."""
        w = self.slots[slot]
        for ev in reversed(self.events[w.key][:iseq]):
            if reg in ev["vgprs"]:
                return ev["vgprs"][reg]
        return w.v0 if reg == 0 else np.zeros(LANES, dtype=U32)

    def _check_vgpr_return(self, slot, iseq, beat):
        if not beat["write"] or not self.check:
            return
        ev = self._event(slot, iseq)
        if ev["inst"].info.kind in ("vmem_atomic", "ds_atomic"):
            return   # atomics return values that depend on the order waves reach memory
        R = self.config.resp_lanes    # the beat's lane group, in place in the register
        self._compare_vgpr(slot, iseq, beat["vdst"], beat["data"] << (32 * R * beat["grp"]),
                           beat["mask"] << (R * beat["grp"]), "returns data to")

    def _check_sgpr_return(self, slot, iseq, beat):
        if not self.check:
            return
        ev = self._event(slot, iseq)
        if ev["sgprs"][beat["sdst"]] != beat["data"]:
            self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: s{beat['sdst']} loaded "
                             f"{beat['data']:#010x}, model {ev['sgprs'][beat['sdst']]:#010x}")

    def _check_flops(self, ctx, io, slot, iseq):
        """EXEC, VCC and SCC after instruction ``iseq`` (a SALU instruction or a lane mask):
        the wave has issued nothing since, and every earlier write of them is done (a wave
        waits for its lane mask before issuing again)."""
        if not self.check or slot not in self.slots:
            return
        ev = self._event(slot, iseq)
        w = io.wave[slot].get(ctx)
        got = {"exec_lo": w["exec"] & M32, "vcc_lo": w["vcc"] & M32, "vcc_hi": w["vcc"] >> 32, "scc": w["scc"]}
        want = {"exec_lo": ev["sgprs"][126], "vcc_lo": ev["sgprs"][106], "vcc_hi": ev["sgprs"][107], "scc": ev["scc"]}
        for k in want:
            if got[k] != want[k]:
                self._fail(slot, f"after PC {ev['pc']:#x} {disassemble(ev['inst'])}: {k} = {got[k]:#x}, "
                                 f"model {want[k]:#x}")
