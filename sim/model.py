"""ISA-level functional model of one dual compute unit running a gfx1200 dispatch.

The model executes every workgroup of a grid with the kernel ABI of gfx1200 (LLVM AMDGPUUsage),
completing each memory access at issue, so waits are satisfied by construction. Waves of a
workgroup are interleaved in quanta and meet at ``s_barrier_signal``/``s_barrier_wait``.
Alongside the results it counts what the micro-architecture is checked against later:
instructions by kind, the wait counter each memory instruction increments, LDS bank-conflict
cycles and distinct 128-byte lines per global access.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from isa import DecodeError, decode, disassemble
from isa.abi import DEFAULT_MODE, Dispatch
from .execute import build
from .fpmode import wrap as wrap_mode
from .memory import GlobalMemory, MemoryFault
from .memory_ops import LDS_BANKS
from .wave import EXEC, LANES, TTMP, ModelError, Wave

__all__ = ["Model", "ModelStats", "ExecutionError", "BarrierDeadlock", "Watchdog", "Workgroup"]


class ExecutionError(Exception):
    """A wave stopped on an instruction: names the workgroup, wave, PC, raw dwords and cause.

    For a report the model sets ``wg`` (workgroup id), ``wave``, ``pc``, ``inst`` (the decoded
    instruction, None if undecodable), ``words`` (its dwords) and ``cause`` (the exception
    that stopped it); a :class:`Watchdog` or :class:`BarrierDeadlock` sets ``waves`` instead.
    """

    wg = wave = pc = inst = cause = None
    words: tuple = ()
    waves: list = []          # (wave id, PC, instruction text) of each live wave of the workgroup


class BarrierDeadlock(ExecutionError):
    """A workgroup barrier that can never complete."""


class Watchdog(ExecutionError):
    """The dispatch ran past its instruction budget, or one wave past its own limit."""

    limit = None              # the limit that ran out
    per_wave = False          # ... one wave's (else the dispatch's)


@dataclass
class ModelStats:
    instructions: int = 0
    by_kind: Counter = field(default_factory=Counter)
    by_name: Counter = field(default_factory=Counter)
    counters: Counter = field(default_factory=Counter)   # loadcnt/storecnt/dscnt/kmcnt increments
    ds_accesses: int = 0
    ds_cycles: int = 0
    global_accesses: int = 0
    global_lines: int = 0
    waves: int = 0
    workgroups: int = 0


def wave_inits(d: Dispatch, wg_id) -> list[dict]:
    """The ABI state of each wave of workgroup ``wg_id`` (LLVM AMDGPUUsage, "Initial Kernel
    Execution State"): user SGPRs, workgroup ids in ttmp9 / ttmp7, EXEC for a partial last
    wave, and v0 = x | y << 10 | z << 20."""
    bx, by, bz = d.block
    n = bx * by * bz
    t = np.arange(-(-n // LANES) * LANES)
    tx, ty, tz = t % bx, (t // bx) % by, t // (bx * by)
    packed = tx.astype(np.uint32)
    if d.workitem_id_dims >= 2:
        packed |= (ty.astype(np.uint32) << 10)
    if d.workitem_id_dims >= 3:
        packed |= (tz.astype(np.uint32) << 20)
    inits = []
    for k in range(len(t) // LANES):
        sgprs = {reg: val & 0xFFFF_FFFF for reg, val in d.user_sgprs.items()}
        sgprs[TTMP + 9] = wg_id[0]
        sgprs[TTMP + 7] = (wg_id[1] & 0xFFFF) | (wg_id[2] << 16)
        valid = min(LANES, n - k * LANES)
        inits.append({"sgprs": sgprs, "exec": (1 << valid) - 1, "v0": packed[k * LANES: (k + 1) * LANES].copy()})
    return inits


def _lane_dwords(addrs: np.ndarray, nbytes: int) -> np.ndarray:
    """The dwords each lane's LDS access of ``nbytes`` at ``addrs`` touches: (lanes, dwords)."""
    return (addrs[:, None] + np.arange(0, max(nbytes, 4), 4)[None, :]) // 4


class Workgroup:
    """Execution context handed to instruction handlers: memory, LDS, barrier, recording."""

    lds_banks = LDS_BANKS    # the banks the LDS conflict statistic (``ds_cycles``) counts, which
                             # also size its scheduling windows (``memory_ops.lds_windows``)
    coalesce_lanes = LANES   # the lanes merged per line request the ``lines`` statistic counts

    def __init__(self, model: "Model", wg_id, lds_bytes: int):
        self.model = model
        self.mem = model.mem
        self.stats = model.stats
        self.id = wg_id
        self.lds = np.zeros(lds_bytes, dtype=np.uint8)
        self.waves: list[Wave] = []
        self.phase = 0

    # -- recording ------------------------------------------------------------------
    def record(self, w: Wave, counter: str | None, lines: int | None = None, ds_cycles: int | None = None):
        st = self.stats
        if counter:
            st.counters[counter] += 1
        if ds_cycles is not None:
            st.ds_accesses += 1
            st.ds_cycles += ds_cycles
        if lines is not None:
            st.global_accesses += 1
            st.global_lines += lines
        if self.model.trace is not None:
            w.trace_memory = {"counter": counter, "lines": lines, "ds_cycles": ds_cycles}

    # -- LDS: reads past the allocation return 0, writes there are dropped (RDNA rule) ---
    def lds_read(self, addrs: np.ndarray, nbytes: int):
        size = self.lds.size
        idx = addrs[:, None] + np.arange(nbytes)[None, :]
        inside = idx < size
        raw = np.where(inside, self.lds[np.where(inside, idx, 0)] if size else 0, 0).astype(np.uint8)
        return raw, _lane_dwords(addrs, nbytes)

    def lds_write(self, addrs: np.ndarray, data: np.ndarray) -> np.ndarray:
        nbytes = data.shape[1]
        size = self.lds.size
        for a, row in zip(addrs.tolist(), data):  # lane order: the highest lane wins
            for k in range(nbytes):
                if 0 <= a + k < size:
                    self.lds[a + k] = row[k]
        return _lane_dwords(addrs, nbytes)

    def lds_load_dword(self, a: int) -> int:
        if 0 <= a and a + 4 <= self.lds.size:
            return int(self.lds[a: a + 4].view("<u4")[0])
        return 0

    def lds_store_dword(self, a: int, value: int) -> None:
        if 0 <= a and a + 4 <= self.lds.size:
            self.lds[a: a + 4] = np.array([value], "<u4").view(np.uint8)

    # -- barrier: a wave's wait completes once every live wave has signalled the same phase;
    # a wave that has ended counts as arrived. -------------------------------------------
    def barrier_signal(self, w: Wave) -> None:
        w.barrier_phase = self.phase
        self.check_barrier()

    def barrier_wait(self, w: Wave):
        if w.barrier_phase is not None and w.barrier_phase < self.phase:
            w.barrier_phase = None
            return None
        w.waiting_barrier = True
        return "wait"

    def check_barrier(self) -> None:
        live = [w for w in self.waves if not w.done]
        if live and all(w.barrier_phase == self.phase for w in live):
            self.phase += 1
            for w in live:
                if w.waiting_barrier:
                    w.waiting_barrier = False
                    w.barrier_phase = None


class Model:
    """The reference model: global memory plus an instruction image; ``run`` executes a dispatch.

    Parameters
    ----------
    mem : GlobalMemory
        Memory holding the kernel's buffers and kernarg segment.
    code : bytes
        The code image (a code object's text), loaded at byte address ``code_base``.
    progress : callable, optional
        ``progress(stats, workgroup index, workgroups, the running wave)`` is called after each
        wave's turn (at most ``QUANTUM`` instructions), for a progress display.
    trace : callable, optional
        ``trace(event: dict)`` is called after every executed instruction, for lock-step checks:
        ``wg``, ``wave``, ``pc``, ``inst``, ``exec``, ``scc``, ``sgprs`` (the 128 scalar
        operand registers after it), ``vgprs`` ({register: lane array after it} for every
        VGPR it changed or names as a destination) and ``memory`` (what it recorded).
    """

    QUANTUM = 256  # instructions a wave runs before the next wave of its workgroup gets a turn

    def __init__(self, mem: GlobalMemory, code: bytes, code_base: int = 0, trace: Callable | None = None,
                 progress: Callable | None = None):
        self.mem = mem
        self.progress = progress
        self._wave_limit, self._wg_count, self._wg_index = None, 0, 0
        self.code = code
        self.code_base = code_base
        self.trace = trace
        self.stats = ModelStats()
        self._cache: dict[int, tuple] = {}
        self._mode_cache: dict[tuple[int, int], Callable] = {}
        self.last_waves: list[Wave] = []  # the final state of the last workgroup's waves (for tests and tools)
        self._words = np.frombuffer(code[: len(code) // 4 * 4], dtype="<u4")

    # -- decode ------------------------------------------------------------------------
    def _fetch(self, pc: int):
        hit = self._cache.get(pc)
        if hit is not None:
            return hit
        i = (pc - self.code_base) // 4
        if pc % 4 or not 0 <= i < self._words.size:
            end = self.code_base + len(self.code)
            raise ModelError(f"PC {pc:#x} is outside the code image [{self.code_base:#x}, {end:#x})")
        words = [int(x) for x in self._words[i: i + 3]]
        inst = decode(words, pc)
        entry = (inst, build(inst))
        self._cache[pc] = entry
        return entry

    def _in_mode(self, pc: int, inst, handler, mode: int):
        """The handler run in a float mode other than the default (sim.fpmode.wrap), cached."""
        key = (pc, mode)
        hit = self._mode_cache.get(key)
        if hit is None:
            hit = self._mode_cache[key] = wrap_mode(inst, handler, mode)
        return hit

    def _decode_at(self, pc: int):
        """(instruction or None, its dwords) at ``pc``, for a report."""
        i = (pc - self.code_base) // 4
        words = tuple(int(x) for x in self._words[i: i + 3]) if 0 <= i < self._words.size else ()
        try:
            inst = decode(list(words), pc)
        except (DecodeError, ValueError, IndexError):
            return None, words
        return inst, inst.words

    def _describe_at(self, pc: int) -> str:
        inst, words = self._decode_at(pc)
        raw = f"[{' '.join(f'{x:08x}' for x in words) or '?'}]"
        return f"{disassemble(inst)}  {raw}" if inst is not None else raw

    def _fail(self, w: Wave, wg, err: Exception, cls=ExecutionError):
        where = f"workgroup {wg.id} wave {w.id} at PC {w.pc:#x}"
        e = cls(f"{where}: {self._describe_at(w.pc)}: {err}")
        e.wg, e.wave, e.pc, e.cause = wg.id, w.id, w.pc, err
        e.inst, e.words = self._decode_at(w.pc)
        raise e from err

    def _live_waves(self, wg) -> list:
        return [(v.id, v.pc, self._describe_at(v.pc)) for v in wg.waves if not v.done]

    # -- dispatch ---------------------------------------------------------------------
    def run(self, d: Dispatch) -> ModelStats:
        gx, gy, gz = d.grid
        budget = [d.max_instructions]
        self._wave_limit = d.max_wave_instructions
        self._wg_count, self._wg_index = gx * gy * gz, 0
        for z in range(gz):
            for y in range(gy):
                for x in range(gx):
                    self._run_workgroup(d, (x, y, z), budget)
                    self._wg_index += 1
        return self.stats

    def _make_waves(self, d: Dispatch, wg_id, wg: Workgroup) -> list[Wave]:
        waves = []
        for k, init in enumerate(wave_inits(d, wg_id)):
            w = Wave(k, d.vgprs, d.entry)
            for reg, val in init["sgprs"].items():
                w.s[reg] = val
            w.s[EXEC] = init["exec"]
            w.v[0] = init["v0"]
            # the resident waves of one workgroup at a time: wave k reuses slot k's segment
            w.scratch_lane_bytes = d.scratch_lane_bytes
            w.scratch_base = d.scratch_base + k * LANES * d.scratch_lane_bytes
            w.mode = d.mode
            waves.append(w)
        return waves

    def _run_workgroup(self, d: Dispatch, wg_id, budget):
        wg = Workgroup(self, wg_id, d.lds_bytes)
        wg.waves = self._make_waves(d, wg_id, wg)
        self.stats.workgroups += 1
        self.stats.waves += len(wg.waves)
        while True:
            progressed = False
            for w in wg.waves:
                if w.done or w.waiting_barrier:
                    continue
                progressed = True
                self._run_wave(w, wg, self.QUANTUM, budget)
                if self.progress is not None:
                    self.progress(self.stats, self._wg_index, self._wg_count, w)
            if all(w.done for w in wg.waves):
                self.last_waves = wg.waves
                return
            if not progressed:
                waiting = [f"wave {w.id} at PC {w.pc:#x}" for w in wg.waves if w.waiting_barrier]
                missing = [f"wave {w.id}" for w in wg.waves if not w.done and w.barrier_phase != wg.phase]
                e = BarrierDeadlock(
                    f"workgroup {wg_id}: barrier can never complete: waiting {', '.join(waiting)}; "
                    f"never signalled: {', '.join(missing) or 'none'}")
                e.wg, e.waves = wg_id, self._live_waves(wg)
                raise e

    def _run_wave(self, w: Wave, wg: Workgroup, quantum: int, budget):
        stats, trace = self.stats, self.trace
        for _ in range(quantum):
            if trace is not None:
                v_before = w.v.copy()
                w.trace_memory = None
            try:
                inst, handler = self._fetch(w.pc)
                if w.mode != DEFAULT_MODE:
                    handler = self._in_mode(w.pc, inst, handler, w.mode)
            except (DecodeError, ModelError) as e:
                self._fail(w, wg, e)
            pc = w.pc
            w.pc = pc + inst.size
            try:
                status = handler(w, wg)
            except (ModelError, MemoryFault, IndexError) as e:
                w.pc = pc
                if isinstance(e, IndexError):
                    e = ModelError(f"register outside the wave's allocation ({w.v.shape[0]} VGPRs): {e}")
                self._fail(w, wg, e)
            w.instructions += 1
            stats.instructions += 1
            stats.by_name[inst.name] += 1
            stats.by_kind[inst.info.kind] += 1
            budget[0] -= 1
            if trace is not None:
                trace(self._event(w, wg, pc, inst, v_before))
            if budget[0] <= 0 or (self._wave_limit is not None and w.instructions >= self._wave_limit):
                w.pc = pc
                self._time_out(w, wg, budget[0] <= 0)
            if status == "end":
                w.done = True
                wg.check_barrier()
                return
            if status == "wait":
                return

    def _time_out(self, w: Wave, wg, whole_dispatch: bool):
        """Raise :class:`Watchdog` naming the limit and every live wave's PC and instruction."""
        if whole_dispatch:
            limit = self.stats.instructions
            what = f"the dispatch executed {limit} instructions, its budget"
        else:
            limit = self._wave_limit
            what = f"wave {w.id} of workgroup {wg.id} executed {limit} instructions, the limit per wave"
        waves = self._live_waves(wg)
        e = Watchdog(f"instruction limit: {what}; waves: "
                     + "; ".join(f"wave {i} at PC {pc:#x}: {text}" for i, pc, text in waves))
        e.wg, e.wave, e.pc, e.waves, e.limit, e.per_wave = wg.id, w.id, w.pc, waves, limit, not whole_dispatch
        e.inst, e.words = self._decode_at(w.pc)
        raise e

    @staticmethod
    def _event(w: Wave, wg, pc: int, inst, v_before: np.ndarray) -> dict:
        changed = set(np.flatnonzero((w.v != v_before).any(axis=1)).tolist())
        if "vdst" in inst.f and inst.info.kind in _VDST_KINDS:
            n = max(1, max(inst.info.dst_bits, inst.info.data_bits) // 32)
            changed |= {r for r in range(inst.f["vdst"], inst.f["vdst"] + n) if r < w.v.shape[0]}
        return {"wg": wg.id, "wave": w.id, "pc": pc, "inst": inst, "exec": w.s[EXEC], "scc": w.scc,
                "sgprs": list(w.s), "vgprs": {r: w.v[r].copy() for r in sorted(changed)},
                "memory": w.trace_memory}


_VDST_KINDS = {"valu", "vtrans", "vmem_load", "vmem_atomic", "ds_load", "ds_atomic"}
