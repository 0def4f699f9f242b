"""Run a dispatch on one RTL SIMD in Amaranth's simulator, in lock step with the reference model.

The harness is the SIMD's whole world: a mini dispatcher that launches workgroups into free
wave slots, an instruction memory, and a behavioural memory that serves scalar, vector and
LDS requests with configurable latency and out-of-order completion (per-wave order for
loads, stores and LDS; any order for scalar loads). The memory side executes requests with
the model's own memory semantics (``sim.memory_ops``), fed with the operands the RTL sent.

The model runs the same dispatch first and records, per wave and instruction, the state after
it. While the RTL runs, every issued PC and every register write (VGPR, SGPR, EXEC, VCC,
SCC, M0) is compared with that record; the first difference stops the run with the wave, PC,
disassembly, register, expected and actual values.
"""
from __future__ import annotations

import dataclasses
import random
import time
from collections import Counter, defaultdict, deque

import numpy as np
from amaranth.hdl import Cat
from amaranth.lib import data
from amaranth.sim import Simulator

from dcu.launch import prepare
from hdl.config import DCUConfig
from hdl.layouts import ISSUE_GROUPS, SimdPerf, issue_group
from hdl.simd import SIMD, ErrorCause
from isa import decode, disassemble
from sim.execute import build as build_handler
from sim.model import Model, Workgroup, wave_inits
from sim.wave import LANES, NULL, Wave

U32 = np.uint32
M32 = 0xFFFF_FFFF


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

    def __init__(self, dut):
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
        tr = dut.trace
        # what the bench looks at every cycle, read in one go: before the inputs are set
        # (everything here follows from the registers) and after (which inputs were taken)
        self.status = _Bits(launch_slot=dut.launched_slot, fetch_req=dut.fetch_req.valid, issue=tr["issue"],
                            sel=tr["sel"], issue_s=tr["issue_s"], sel_s=tr["sel_s"], smem_req=dut.smem_req.valid,
                            vmem_req=dut.vmem_req.valid, lds_req=dut.lds_req.valid, ex=tr["ex"].as_value(),
                            ex_s=tr["ex_s"].as_value(), ex_last=tr["ex_last"],
                            trans=tr["trans_valid"], error=dut.error.valid, bar_wait=dut.bar_wait,
                            idle=dut.idle, ended=dut.ended)
        self.ex_fields = _fields(tr["ex"].shape())
        self.accepted = _Bits(launch=dut.launch.ready, smem_resp=dut.smem_resp.ready,
                              vmem_resp=dut.vmem_resp.ready, lds_resp=dut.lds_resp.ready)
        vw, sw = tr["vw_ex"], tr["sw"][0]
        self.ex_writes = _Bits(v_en=vw.en, v_addr=vw.addr, v_grp=vw.grp, v_data=vw.data, s_en=sw.en, s_addr=sw.addr,
                               s_data=sw.data)
        self.group_lanes = len(vw.en)   # the VALU writes one lane group a cycle
        sws = tr["sw_s"]
        self.ex_s_writes = _Bits(s_en=sws.en, s_addr=sws.addr, s_data=sws.data)   # SALU results only
        self.wave = [_Bits(exec=tr["exec"][s], vcc=tr["vcc"][s], scc=tr["scc"][s], m0=tr["m0"][s], base=tr["base"][s])
                     for s in range(len(tr["pc"]))]

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
    """Several values read with one ``ctx.get`` (each get costs as much as evaluating a few
    signals), returned as a dict by name."""

    def __init__(self, **values):
        self.value = Cat(*values.values())
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


class SimdRun:
    """One kernel dispatch on one SIMD.

    Parameters
    ----------
    kernel : dcu.codeobj.KernelInfo
    grid, block : dispatch shape
    args : kernel arguments (numpy arrays and scalars)
    config : DCUConfig
    latency : (lo, hi) cycles for vector memory and LDS responses; scalar loads likewise
    seed : int, for the latency and reordering choices (printed on failure)
    lockstep : compare with the model instruction by instruction
    max_cycles : the watchdog: :class:`SimdHang` after this many cycles of the run
    order_dependent : compare only the results (atomics with return, spin loops)
    external_barrier : build the SIMD with ``external_barrier`` and act as the DCU: release a
        workgroup's waves ``barrier_delay`` (lo, hi) cycles after all its live waves signal

    Members
    -------
    cycles, instructions : of the whole run so far
    resident_cycles : cycles of this dispatch in which a wave was resident (``idle`` low)
    issue_cycles, dual_issue_cycles : cycles in which one or more, or two, instructions issued
    issued : ``{kind: n}`` as the bench saw them issue (``issued_ops``: ``{OpInfo: n}``);
        ``valu_cycles`` the cycle of each VALU issue
    perf : the SIMD's ``perf`` counters over this dispatch (:data:`hdl.layouts.SimdPerf` as dicts)
    ended : ``ended`` strobes seen during this dispatch
    sim_seconds, sim_cpu_seconds : this dispatch's simulation time, wall clock and CPU
    """

    def __init__(self, kernel, grid, block, args, config: DCUConfig, latency=(1, 8), seed=0,
                 lockstep=True, max_cycles=200_000, order_dependent=False, external_barrier=False,
                 barrier_delay=(0, 3)):
        self.kernel, self.config = kernel, config
        self.external_barrier, self.barrier_delay = external_barrier, barrier_delay
        self.latency, self.rng = latency, random.Random(seed)
        self.seed = seed
        self.lockstep, self.max_cycles = lockstep, max_cycles
        self.order_dependent = order_dependent   # atomics with return, spin loops: compare results only
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
        self.issued_ops = Counter()   # isa.OpInfo -> count of issued instructions
        self.perf = None
        self.ended = 0
        self.resident_cycles = 0
        self.issue_cycles = self.dual_issue_cycles = 0
        self._decoded = {}

    # -- helpers ------------------------------------------------------------------------
    def _inst_at(self, pc: int):
        inst = self._decoded.get(pc)
        if inst is None:
            i = (pc - self.prep.code_base) // 4
            inst = self._decoded[pc] = decode([int(x) for x in self.words[i: i + 3]], pc)
        return inst

    def _fail(self, slot, what):
        key = self.slot_id.get(slot)
        raise Divergence(f"seed {self.seed}: wave {key} (slot {slot}): {what}")

    # -- the run ------------------------------------------------------------------------
    def run(self, more: list["SimdRun"] = ()):
        """Run this dispatch, then each of ``more`` (the same configuration), on one simulated SIMD;
        return this dispatch's buffers."""
        jobs = [self, *more]
        dut = SIMD(self.config, external_barrier=self.external_barrier)

        async def bench(ctx):
            io = _Io(dut)
            for job in jobs:
                await job._dispatch(ctx, dut, io)

        sim = Simulator(dut)
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

    async def _dispatch(self, ctx, dut, io):
        """Serve one dispatch on ``dut`` until every workgroup has finished.

        Each cycle first reads what the design drives (it has settled after the clock edge),
        then sets every input at once (each ``ctx.set`` makes the simulator settle again), then
        reads which responses and launches were accepted."""
        cfg = self.config
        d = self.prep.dispatch
        gx, gy, gz = d.grid
        pending = deque((x, y, z) for z in range(gz) for y in range(gy) for x in range(gx))
        alloc = -(-d.vgprs // cfg.vgpr_granule) * cfg.vgpr_granule
        if alloc * cfg.wave_slots > cfg.vgprs_per_simd:
            raise ValueError(f"{cfg.wave_slots} waves of {alloc} VGPRs do not fit {cfg.vgprs_per_simd}")
        self.slot_id = {}
        tr = dut.trace
        launch_q = deque()
        wgs = {}                # wg id -> {"ctx": Workgroup, "live": n}
        seqs = defaultdict(int)
        issued_pc = {}          # (slot, seq) -> pc
        issued_key = {}         # (slot, seq) -> (workgroup, wave) that issued it
        fetch_q = deque()       # (ready cycle, wave, addr)
        smem_q = []             # (ready cycle, beats)
        vmem_q = defaultdict(deque)   # slot -> deque of (ready cycle, beats)
        lds_q = defaultdict(deque)
        wg_tag = {}
        release_at = {}         # slot -> cycle its barrier release strobe is due (external barrier)
        perf0 = io.perf(ctx)
        ex_wave, ex_seq = io.ex_fields["wave"], io.ex_fields["seq"]
        # config.valu_stages: the main pipe's register writes are those of the EX D cycles before
        stages = deque([None] * (cfg.valu_stages - 1))
        t0, c0 = time.perf_counter(), time.process_time()
        while True:
            cyc = self.cycles
            st = io.status.get(ctx)
            # ended waves; a workgroup's LDS is freed once all of its waves have ended
            for s in range(cfg.wave_slots):
                if st["ended"] >> s & 1:
                    key = self.slot_id.get(s)
                    if key is None:
                        raise Divergence(f"seed {self.seed}: ended strobe for slot {s}, which holds no wave")
                    if vmem_q[s] or lds_q[s] or any(b[0]["wave"] == s for _, b in smem_q):
                        self._fail(s, "ended with memory requests outstanding")
                    self.ended += 1
                    wgs[key[0]]["live"] -= 1
                    self.slot_id[s] = None
                    if wgs[key[0]]["live"] == 0:
                        del wgs[key[0]]
            if not pending and not launch_q and not wgs and st["idle"]:
                self.perf = _perf_delta(io.perf(ctx), perf0)
                # this dispatch's simulation (elaboration and the model excluded): wall clock,
                # and this process's CPU time (steadier on a shared machine)
                self.sim_seconds, self.sim_cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
                await ctx.tick()   # past the last ended strobe (an idle cycle)
                self.cycles += 1
                return
            if self.cycles >= self.max_cycles:
                stuck = ", ".join(f"slot {s} wave {k} at PC {ctx.get(tr['pc'][s]):#x} "
                                  f"(loadcnt {ctx.get(tr['loadcnt'][s])}, storecnt {ctx.get(tr['storecnt'][s])}, "
                                  f"dscnt {ctx.get(tr['dscnt'][s])}, kmcnt {ctx.get(tr['kmcnt'][s])})"
                                  for s, k in self.slot_id.items() if k is not None)
                raise SimdHang(f"seed {self.seed}: no completion after {self.cycles} cycles: {stuck}")
            drive = {}          # this cycle's inputs: port -> (valid, payload fields)
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
                sg = init["sgprs"]
                drive["launch"] = dict(pc=d.entry, vgpr_base=launch_slot * alloc, wg=wg_tag[wg_id],
                                       wg_last=int(k == n - 1), exec=init["exec"],
                                       sgpr=_pack([sg.get(r, 0) for r in range(4)]),
                                       ttmp7=sg[108 + 7], ttmp9=sg[108 + 9], v0=_pack(init["v0"]))

            # ---- instruction fetch: a line, one cycle later ------------------------
            if st["fetch_req"]:
                q = io.get(ctx, "fetch_req")
                fetch_q.append((cyc + 1, q["wave"], q["addr"], q["epoch"], q["target"]))
            if fetch_q and fetch_q[0][0] <= cyc:
                _, w, addr, ep, tgt = fetch_q.popleft()
                i = (addr - self.prep.code_base) // 4
                n = self.config.fetch_bytes // 4
                ws = [int(self.words[j]) if 0 <= j < len(self.words) else 0 for j in range(i, i + n)]
                drive["fetch_resp"] = dict(wave=w, epoch=ep, target=tgt, data=sum(ws[k] << (32 * k) for k in range(n)))

            # ---- lock step: issue (the main and the scalar pipe) -----------------------
            self.issue_cycles += st["issue"] | st["issue_s"]
            self.dual_issue_cycles += st["issue"] & st["issue_s"]
            if st["issue"] and st["issue_s"] and st["sel"] == st["sel_s"]:
                self._fail(st["sel"], "both issue pipes picked this wave in one cycle")
            for slot in [st[sel] for go, sel in (("issue", "sel"), ("issue_s", "sel_s")) if st[go]]:
                pc = ctx.get(tr["pc"][slot])
                sq = seqs[slot]
                seqs[slot] += 1
                issued_pc[(slot, sq)] = pc
                issued_key[(slot, sq)] = self.slot_id[slot]
                self.instructions += 1
                info = self._inst_at(pc).info
                kind = info.kind
                self.issued[kind] = self.issued.get(kind, 0) + 1
                self.issued_ops[info] += 1
                if kind == "valu":
                    self.valu_cycles.append(cyc)
                if self.lockstep and not self.order_dependent:
                    evs = self.events[self.slot_id[slot]]
                    if sq >= len(evs) or evs[sq]["pc"] != pc:
                        want = (f"{evs[sq]['pc']:#x} ({disassemble(evs[sq]['inst'])})" if sq < len(evs)
                                else "the wave to have ended")
                        self._fail(slot, f"instruction {sq}: issued PC {pc:#x} ({disassemble(self._inst_at(pc))}), "
                                         f"model expected {want}")

            # ---- memory requests ----------------------------------------------------
            if st["smem_req"]:
                q = io.get(ctx, "smem_req")
                slot, sq = q["wave"], q["seq"]
                vals = self._serve_smem(slot, issued_pc[(slot, sq)], q["addr"], q["dwords"],
                                        wgs[self.slot_id[slot][0]]["ctx"])
                n = q["dwords"]
                beats = [dict(wave=slot, seq=sq, sdst=q["sdst"] + j, data=vals[j], last=int(j == n - 1))
                         for j in range(n)]
                smem_q.append((cyc + self.rng.randint(*self.latency), beats))
            for name, queue in (("vmem_req", vmem_q), ("lds_req", lds_q)):
                if st[name]:
                    q = io.get(ctx, name)
                    slot, sq = q["wave"], q["seq"]
                    beats = self._serve(slot, issued_pc[(slot, sq)], sq, q, wgs[self.slot_id[slot][0]]["ctx"])
                    queue[slot].append((cyc + self.rng.randint(*self.latency), beats))

            # ---- memory responses: scalar in any order; vector per wave in order -----
            ready_s = [k for k, (t, _) in enumerate(smem_q) if t <= cyc]
            s_pick = self.rng.choice(ready_s) if ready_s else None
            if s_pick is not None:
                drive["smem_resp"] = smem_q[s_pick][1][0]
            v_pick = {}
            for name, queue in (("vmem_resp", vmem_q), ("lds_resp", lds_q)):
                heads = [s for s, qq in queue.items() if qq and qq[0][0] <= cyc]
                if heads:
                    v_pick[name] = s = self.rng.choice(heads)
                    drive[name] = queue[s][0][1][0]

            # ---- lock step: register writes in EX -----------------------------------
            ex_now = []
            for name, writes in (("ex", io.ex_writes), ("ex_s", io.ex_s_writes)):
                ex = None
                if st[name] & 1:
                    slot = (st[name] >> ex_wave[0]) & ((1 << ex_wave[1]) - 1)
                    sq = (st[name] >> ex_seq[0]) & ((1 << ex_seq[1]) - 1)
                    ex = (slot, sq, bool(st["ex_last"]) or name == "ex_s")
                if name == "ex" and stages:
                    stages.append(ex)
                    ex = stages.popleft()
                if ex is not None:
                    slot, sq, last = ex
                    # an instruction's flip-flop state is checked whole unless writes of the
                    # wave are still staged (or it is one): then only what it changed
                    partial = (name == "ex" and bool(stages)) or any(e is not None and e[0] == slot for e in stages)
                    if last:
                        ex_now.append((slot, sq, issued_key.get((slot, sq)), partial))
                    if self.lockstep and not self.order_dependent:
                        self._check_ex_writes(ctx, io, writes, slot, sq, issued_key.get((slot, sq)))

            if st["trans"] and self.lockstep and not self.order_dependent:
                slot, sq = ctx.get(tr["trans_wb"].wave), ctx.get(tr["trans_wb"].seq)
                ev = self._event(slot, sq)
                if ev is not None:
                    self._compare_vgpr(slot, ev, ctx.get(tr["trans_wb"].vdst), ctx.get(tr["vw_trans"].data),
                                       ctx.get(tr["vw_trans"].en))

            if st["error"]:
                err = io.get(ctx, "error")
                slot, pc, words, cause = err["wave"], err["pc"], err["words"], ErrorCause(err["cause"])
                latched = (f"{' '.join(f'{(words >> (32 * j)) & M32:08x}' for j in range(3))} "
                           if cause == ErrorCause.ILLEGAL_INSTRUCTION else "")   # words kept at issue only
                raise Divergence(f"seed {self.seed}: RTL stopped wave {self.slot_id.get(slot)} (slot {slot}), "
                                 f"{cause.name.lower()}, at PC {pc:#x}: {latched}({disassemble(self._inst_at(pc))})")

            # ---- external barrier: release a workgroup once all its live waves wait ------
            if self.external_barrier:
                waiting = st["bar_wait"]
                for wg_id in wgs:
                    mine = [s for s, key in self.slot_id.items() if key is not None and key[0] == wg_id]
                    if mine and all(waiting >> s & 1 for s in mine) and not any(s in release_at for s in mine):
                        due = cyc + self.rng.randint(*self.barrier_delay)   # 0: the first cycle bar_wait is seen
                        release_at.update((s, due) for s in mine)
                due = [s for s, t in release_at.items() if t <= cyc]
                drive["bar_release"] = sum(1 << s for s in due)
                for s in due:
                    del release_at[s]

            # ---- all inputs at once, then what was accepted ---------------------------
            io.set(ctx, drive)
            taken = io.accepted.get(ctx)
            if launch_q and taken["launch"]:
                wg_id, k = launch_q[0][:2]
                self.slot_id[launch_slot] = (wg_id, k)
                # the model starts every wave with zeroed registers; hardware promises nothing,
                # so the bench clears the wave's registers to keep undefined values comparable
                for r in range(alloc):
                    for cell in tr["vgprs"].cells(launch_slot * alloc + r):
                        ctx.set(cell, 0)
                for r in range(64):
                    for cell in tr["sgprs"].cells(launch_slot * 64 + r):
                        ctx.set(cell, 0)
                seqs[launch_slot] = 0
                launch_q.popleft()
            if s_pick is not None and taken["smem_resp"]:
                beat = smem_q[s_pick][1].pop(0)
                self._check_sgpr_return(slot=beat["wave"], beat=beat)
                if not smem_q[s_pick][1]:
                    smem_q.pop(s_pick)
            for name, queue in (("vmem_resp", vmem_q), ("lds_resp", lds_q)):
                if name in v_pick and taken[name]:
                    head = queue[v_pick[name]][0][1]
                    self._check_vgpr_return(ctx, tr, head.pop(0))
                    if not head:
                        queue[v_pick[name]].popleft()

            if not st["idle"]:
                self.resident_cycles += 1
            await ctx.tick()
            self.cycles += 1
            # flip-flop state written by the instruction that was in EX
            if self.lockstep and not self.order_dependent:
                for done in ex_now:
                    self._check_ffs(ctx, io, *done)

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

    def _event(self, slot, seq, key=None):
        evs = self.events[key if key is not None else self.slot_id[slot]]
        return evs[seq] if seq < len(evs) else None

    def _check_ex_writes(self, ctx, io, writes, slot, seq, key):
        if key is None:
            return   # the previous dispatch's last instruction
        ev = self._event(slot, seq, key)
        if ev is None:
            return
        w = writes.get(ctx)
        if w.get("v_en"):
            g = io.group_lanes
            data = sum(w["v_data"] << (32 * g * k) for k in range(LANES // g))   # every group holds the result
            reg = w["v_addr"] - io.wave[slot].get(ctx)["base"]
            self._compare_vgpr(slot, ev, reg, data, w["v_en"] << (g * w["v_grp"]))
        en = w["s_en"]
        if en:
            pair = w["s_addr"] - slot * 64
            value = w["s_data"]
            for half in (0, 1):
                if en >> half & 1:
                    code = 2 * pair + half
                    got = (value >> (32 * half)) & M32
                    want = ev["sgprs"][code]
                    if got != want:
                        self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: s{code} = {got:#010x}, "
                                         f"model {want:#010x}")

    def _compare_vgpr(self, slot, ev, reg, value, en, what="writes"):
        want = ev["vgprs"].get(reg)
        got = _lanes(value)
        if want is None:
            self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: RTL {what} v{reg}, "
                             "which the model's instruction does not")
        for lane in range(LANES):
            if en >> lane & 1 and int(got[lane]) != int(want[lane]):
                self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: v{reg} lane {lane} = "
                                 f"{int(got[lane]):#010x}, model {int(want[lane]):#010x}")

    def _check_vgpr_return(self, ctx, tr, beat):
        if not beat["write"] or not self.lockstep or self.order_dependent:
            return
        slot = beat["wave"]
        ev = self._event(slot, beat["seq"])
        if ev is None or ev["inst"].info.kind in ("vmem_atomic", "ds_atomic"):
            return   # atomics return values that depend on the order waves reach memory
        R = self.config.resp_lanes    # the beat's lane group, in place in the register
        self._compare_vgpr(slot, ev, beat["vdst"], beat["data"] << (32 * R * beat["grp"]),
                           beat["mask"] << (R * beat["grp"]), "returns data to")

    def _check_sgpr_return(self, slot, beat):
        if not self.lockstep or self.order_dependent:
            return
        ev = self._event(slot, beat["seq"])
        if ev is not None and ev["sgprs"][beat["sdst"]] != beat["data"]:
            self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: s{beat['sdst']} loaded "
                             f"{beat['data']:#010x}, model {ev['sgprs'][beat['sdst']]:#010x}")

    def _check_ffs(self, ctx, io, slot, seq, key, changed_only=False):
        """The wave's flip-flop state after instruction ``seq``; ``changed_only``: only what that
        instruction changed (with the VALU in stages, the instructions of a wave complete out
        of order, but never two that write the same state: a write-after-write waits)."""
        if key is None or self.slot_id.get(slot) != key:
            return   # the wave ended and its slot may already hold the next one
        ev = self._event(slot, seq, key)
        if ev is None:
            return
        w = io.wave[slot].get(ctx)
        got = {"exec_lo": w["exec"] & M32, "vcc_lo": w["vcc"] & M32, "vcc_hi": w["vcc"] >> 32, "scc": w["scc"],
               "m0": w["m0"]}

        def state(e):
            return {"exec_lo": e["sgprs"][126], "vcc_lo": e["sgprs"][106], "vcc_hi": e["sgprs"][107],
                    "scc": e["scc"], "m0": e["sgprs"][125]}
        want = state(ev)
        if changed_only and seq > 0:
            before = state(self._event(slot, seq - 1, key))
            want = {k: v for k, v in want.items() if v != before[k]}
        for k in want:
            if got[k] != want[k]:
                self._fail(slot, f"after PC {ev['pc']:#x} {disassemble(ev['inst'])}: {k} = {got[k]:#x}, "
                                 f"model {want[k]:#x}")
