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
from collections import defaultdict, deque

import numpy as np
from amaranth.sim import Simulator

from dcu.launch import prepare
from hdl.config import DCUConfig
from hdl.simd import SIMD
from isa import decode, disassemble
from sim.execute import build as build_handler
from sim.model import Model, _Workgroup, wave_inits
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
    """

    def __init__(self, kernel, grid, block, args, config: DCUConfig, latency=(1, 8), seed=0,
                 lockstep=True, max_cycles=200_000, order_dependent=False):
        self.kernel, self.config = kernel, config
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
        dut = SIMD(self.config)

        async def bench(ctx):
            for job in jobs:
                await job._dispatch(ctx, dut)

        sim = Simulator(dut)
        self.signal_count = len(sim._engine._state.signals)   # what the simulator updates
        sim.add_clock(1e-8)
        sim.add_testbench(bench)
        t0 = time.perf_counter()
        sim.run()
        self.sim_seconds = time.perf_counter() - t0   # simulation alone, without elaboration
        return self.prep.read_back()

    async def _dispatch(self, ctx, dut):
        """Serve one dispatch on ``dut`` until every workgroup has finished."""
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
        wgs = {}                # wg id -> {"ctx": _Workgroup, "live": n}
        seqs = defaultdict(int)
        issued_pc = {}          # (slot, seq) -> pc
        issued_key = {}         # (slot, seq) -> (workgroup, wave) that issued it
        fetch_q = deque()       # (ready cycle, wave, addr)
        smem_q = []             # (ready cycle, beat)
        vmem_q = defaultdict(deque)   # slot -> deque of (ready cycle, beats)
        lds_q = defaultdict(deque)
        wg_tag = {}
        ctx.set(dut.fetch_req.ready, 1)
        ctx.set(dut.smem_req.ready, 1)
        ctx.set(dut.vmem_req.ready, 1)
        ctx.set(dut.lds_req.ready, 1)
        while True:
            cyc = self.cycles
            # ---- dispatcher: a whole workgroup when enough slots are free ----------
            if not launch_q and pending:
                wg_id = pending[0]
                inits = wave_inits(d, wg_id)
                live = sum(w["live"] for w in wgs.values())
                if len(inits) <= cfg.wave_slots - live:
                    pending.popleft()
                    wgc = _Workgroup(Model(self.mem, self.prep.code, self.prep.code_base), wg_id, d.lds_bytes)
                    wgs[wg_id] = {"ctx": wgc, "live": len(inits)}
                    wg_tag[wg_id] = len(wg_tag) & 0xFF
                    for k, init in enumerate(inits):
                        launch_q.append((wg_id, k, init))
            if launch_q:
                wg_id, k, init = launch_q[0]
                p = dut.launch.payload
                slot_guess = ctx.get(dut.launched_slot)
                ctx.set(p.pc, d.entry)
                ctx.set(p.vgpr_base, slot_guess * alloc)
                ctx.set(p.wg, wg_tag[wg_id])
                ctx.set(p.wg_last, int(k == len(wave_inits(d, wg_id)) - 1))
                ctx.set(p.exec, init["exec"])
                for r in range(4):
                    ctx.set(p.sgpr[r], init["sgprs"].get(r, 0))
                ctx.set(p.ttmp7, init["sgprs"][108 + 7])
                ctx.set(p.ttmp9, init["sgprs"][108 + 9])
                ctx.set(p.v0, _pack(init["v0"]))
                ctx.set(dut.launch.valid, 1)
                if ctx.get(dut.launch.ready):
                    slot = ctx.get(dut.launched_slot)
                    self.slot_id[slot] = (wg_id, k)
                    # the model starts every wave with zeroed registers; hardware promises nothing,
                    # so the bench clears the wave's registers to keep undefined values comparable
                    for r in range(alloc):
                        ctx.set(tr["vgpr_mem"].data[slot * alloc + r], 0)
                    for r in range(64):
                        ctx.set(tr["sgpr_mem"].data[slot * 64 + r], 0)
                    seqs[slot] = 0
                    launch_q.popleft()
            else:
                ctx.set(dut.launch.valid, 0)

            # ---- instruction fetch: three dwords, one cycle later ------------------
            if ctx.get(dut.fetch_req.valid):
                q = dut.fetch_req.payload
                fetch_q.append((cyc + 1, ctx.get(q.wave), ctx.get(q.addr), ctx.get(q.epoch)))
            if fetch_q and fetch_q[0][0] <= cyc:
                _, w, addr, ep = fetch_q.popleft()
                i = (addr - self.prep.code_base) // 4
                ws = [int(x) for x in self.words[max(i, 0): i + 4]] + [0] * 4
                ctx.set(dut.fetch_resp.valid, 1)
                ctx.set(dut.fetch_resp.payload.wave, w)
                ctx.set(dut.fetch_resp.payload.epoch, ep)
                ctx.set(dut.fetch_resp.payload.data, ws[0] | ws[1] << 32 | ws[2] << 64 | ws[3] << 96)
            else:
                ctx.set(dut.fetch_resp.valid, 0)

            # ---- lock step: issue ---------------------------------------------------
            if ctx.get(tr["issue"]):
                slot = ctx.get(tr["sel"])
                pc = ctx.get(tr["pc"][slot])
                sq = seqs[slot]
                seqs[slot] += 1
                issued_pc[(slot, sq)] = pc
                issued_key[(slot, sq)] = self.slot_id[slot]
                self.instructions += 1
                kind = self._inst_at(pc).info.kind
                self.issued[kind] = self.issued.get(kind, 0) + 1
                if kind == "valu":
                    self.valu_cycles.append(cyc)
                if self.lockstep and not self.order_dependent:
                    evs = self.events[self.slot_id[slot]]
                    if sq >= len(evs) or evs[sq]["pc"] != pc:
                        want = f"{evs[sq]['pc']:#x} ({disassemble(evs[sq]['inst'])})" if sq < len(evs) else "the wave to have ended"
                        self._fail(slot, f"instruction {sq}: issued PC {pc:#x} ({disassemble(self._inst_at(pc))}), model expected {want}")

            # ---- memory requests ----------------------------------------------------
            if ctx.get(dut.smem_req.valid):
                q = dut.smem_req.payload
                slot, sq, addr, sdst, n = (ctx.get(q.wave), ctx.get(q.seq), ctx.get(q.addr), ctx.get(q.sdst), ctx.get(q.dwords))
                off = self.mem.check_lanes(np.array([addr]), 4 * n, np.array([0]))
                vals = self.mem.gather(off, 4 * n)[0].view("<u4")
                beats = [dict(wave=slot, seq=sq, sdst=sdst + j, data=int(vals[j]), last=int(j == n - 1)) for j in range(n)]
                smem_q.append((cyc + self.rng.randint(*self.latency), beats))
            for port, queue in ((dut.vmem_req, vmem_q), (dut.lds_req, lds_q)):
                if ctx.get(port.valid):
                    q = port.payload
                    slot, sq = ctx.get(q.wave), ctx.get(q.seq)
                    req = dict(op=ctx.get(q.op), exec=ctx.get(q.exec), addr=ctx.get(q.addr), data=ctx.get(q.data))
                    beats = self._serve(slot, issued_pc[(slot, sq)], sq, req, wgs[self.slot_id[slot][0]]["ctx"])
                    queue[slot].append((cyc + self.rng.randint(*self.latency), beats))

            # ---- memory responses: scalar in any order; vector per wave in order -----
            ready_s = [k for k, (t, _) in enumerate(smem_q) if t <= cyc]
            if ready_s:
                k = self.rng.choice(ready_s)
                beat = smem_q[k][1][0]
                self._drive(ctx, dut.smem_resp, beat)
                if ctx.get(dut.smem_resp.ready):
                    self._check_sgpr_return(slot=beat["wave"], beat=beat)
                    smem_q[k][1].pop(0)
                    if not smem_q[k][1]:
                        smem_q.pop(k)
            else:
                ctx.set(dut.smem_resp.valid, 0)
            for port, queue in ((dut.vmem_resp, vmem_q), (dut.lds_resp, lds_q)):
                heads = [s for s, qq in queue.items() if qq and qq[0][0] <= cyc]
                if heads:
                    s = self.rng.choice(heads)
                    beat = queue[s][0][1][0]
                    self._drive(ctx, port, beat)
                    if ctx.get(port.ready):
                        self._check_vgpr_return(ctx, tr, beat)
                        queue[s][0][1].pop(0)
                        if not queue[s][0][1]:
                            queue[s].popleft()
                else:
                    ctx.set(port.valid, 0)

            # ---- lock step: register writes in EX -----------------------------------
            ex_now = None
            if ctx.get(tr["ex"].valid):
                slot, sq = ctx.get(tr["ex"].wave), ctx.get(tr["ex"].seq)
                ex_now = (slot, sq, issued_key.get((slot, sq)))
                if self.lockstep and not self.order_dependent:
                    self._check_ex_writes(ctx, tr, slot, sq, ex_now[2])

            if ctx.get(tr["trans_valid"]) and self.lockstep and not self.order_dependent:
                slot, sq = ctx.get(tr["trans_wb"].wave), ctx.get(tr["trans_wb"].seq)
                ev = self._event(slot, sq)
                if ev is not None:
                    self._compare_vgpr(slot, ev, ctx.get(tr["trans_wb"].vdst), ctx.get(tr["vw_trans"].data),
                                       ctx.get(tr["vw_trans"].en))

            err = ctx.get(dut.error.valid)
            if err:
                slot, pc = ctx.get(dut.error.wave), ctx.get(dut.error.pc)
                words = ctx.get(dut.error.words)
                raise Divergence(f"seed {self.seed}: RTL stopped wave {self.slot_id.get(slot)} (slot {slot}) on an "
                                 f"instruction it does not execute at PC {pc:#x}: "
                                 f"{' '.join(f'{(words >> (32 * j)) & M32:08x}' for j in range(3))} "
                                 f"({disassemble(self._inst_at(pc))})")

            await ctx.tick()
            self.cycles += 1
            # flip-flop state written by the instruction that was in EX
            if ex_now and self.lockstep and not self.order_dependent:
                self._check_ffs(ctx, tr, *ex_now)
            # waves that ended free their workgroup's LDS once all have ended
            for s, key in list(self.slot_id.items()):
                if key is not None and not ctx.get(tr["resident"][s]):
                    wgs[key[0]]["live"] -= 1
                    self.slot_id[s] = None
                    if wgs[key[0]]["live"] == 0:
                        del wgs[key[0]]
            if not pending and not launch_q and not wgs and ctx.get(dut.idle):
                return
            if self.cycles >= self.max_cycles:
                stuck = ", ".join(f"slot {s} wave {k} at PC {ctx.get(tr['pc'][s]):#x} "
                                  f"(loadcnt {ctx.get(tr['loadcnt'][s])}, storecnt {ctx.get(tr['storecnt'][s])}, "
                                  f"dscnt {ctx.get(tr['dscnt'][s])}, kmcnt {ctx.get(tr['kmcnt'][s])})"
                                  for s, k in self.slot_id.items() if k is not None)
                raise SimdHang(f"seed {self.seed}: no completion after {self.cycles} cycles: {stuck}")


    # -- pieces of the bench -----------------------------------------------------------
    @staticmethod
    def _drive(ctx, port, beat):
        ctx.set(port.valid, 1)
        for k, v in beat.items():
            ctx.set(getattr(port.payload, k), v)

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
            if kind != "ds_load" and inst.name not in ("ds_store_b96", "ds_store_b128") and inst.f.get("data1") is not None:
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
            return [dict(wave=slot, seq=seq, vdst=0, data=0, mask=0, write=0, last=1, store=int(store))]
        d = inst.f["vdst"]
        n = max(1, vdst_n) if kind != "vmem_atomic" else 1
        return [dict(wave=slot, seq=seq, vdst=d + j, data=_pack(fake.v[16 + j]), mask=req["exec"], write=1,
                     last=int(j == n - 1), store=0) for j in range(n)]

    def _event(self, slot, seq, key=None):
        evs = self.events[key if key is not None else self.slot_id[slot]]
        return evs[seq] if seq < len(evs) else None

    def _check_ex_writes(self, ctx, tr, slot, seq, key):
        if key is None:
            return   # the previous dispatch's last instruction
        ev = self._event(slot, seq, key)
        if ev is None:
            return
        base = ctx.get(tr["base"][slot])
        for port in tr["vw"][:2]:
            en = ctx.get(port.en)
            if en:
                reg = ctx.get(port.addr) - base
                self._compare_vgpr(slot, ev, reg, ctx.get(port.data), en)
        port = tr["sw"][0]
        en = ctx.get(port.en)
        if en:
            pair = ctx.get(port.addr) - slot * 64
            value = ctx.get(port.data)
            for half in (0, 1):
                if en >> half & 1:
                    code = 2 * pair + half
                    got = (value >> (32 * half)) & M32
                    want = ev["sgprs"][code]
                    if got != want:
                        self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: s{code} = {got:#010x}, model {want:#010x}")

    def _compare_vgpr(self, slot, ev, reg, value, en, what="writes"):
        want = ev["vgprs"].get(reg)
        got = _lanes(value)
        if want is None:
            self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: RTL {what} v{reg}, which the model's instruction does not")
        for lane in range(LANES):
            if en >> lane & 1 and int(got[lane]) != int(want[lane]):
                self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: v{reg} lane {lane} = {int(got[lane]):#010x}, "
                                 f"model {int(want[lane]):#010x}")

    def _check_vgpr_return(self, ctx, tr, beat):
        if not beat["write"] or not self.lockstep or self.order_dependent:
            return
        slot = beat["wave"]
        ev = self._event(slot, beat["seq"])
        if ev is None or ev["inst"].info.kind in ("vmem_atomic", "ds_atomic"):
            return   # atomics return values that depend on the order waves reach memory
        self._compare_vgpr(slot, ev, beat["vdst"], beat["data"], beat["mask"], "returns data to")

    def _check_sgpr_return(self, slot, beat):
        if not self.lockstep or self.order_dependent:
            return
        ev = self._event(slot, beat["seq"])
        if ev is not None and ev["sgprs"][beat["sdst"]] != beat["data"]:
            self._fail(slot, f"PC {ev['pc']:#x} {disassemble(ev['inst'])}: s{beat['sdst']} loaded {beat['data']:#010x}, "
                             f"model {ev['sgprs'][beat['sdst']]:#010x}")

    def _check_ffs(self, ctx, tr, slot, seq, key):
        if key is None or self.slot_id.get(slot) != key:
            return   # the wave ended and its slot may already hold the next one
        ev = self._event(slot, seq, key)
        if ev is None:
            return
        got = {"exec_lo": ctx.get(tr["exec"][slot]) & M32, "vcc_lo": ctx.get(tr["vcc"][slot]) & M32,
               "vcc_hi": ctx.get(tr["vcc"][slot]) >> 32, "scc": ctx.get(tr["scc"][slot]), "m0": ctx.get(tr["m0"][slot])}
        want = {"exec_lo": ev["sgprs"][126], "vcc_lo": ev["sgprs"][106], "vcc_hi": ev["sgprs"][107],
                "scc": ev["scc"], "m0": ev["sgprs"][125]}
        for k in got:
            if got[k] != want[k]:
                self._fail(slot, f"after PC {ev['pc']:#x} {disassemble(ev['inst'])}: {k} = {got[k]:#x}, model {want[k]:#x}")
