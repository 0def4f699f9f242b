"""The SIMD's register files, in the two organisations of ``DCUConfig.regfile``.

``"wide"``: one memory row of 32 lanes x 32 bits per register, with two write ports and one
transparent read port per operand. It reads a whole register in one cycle and costs the
simulator least, but a memory with two write ports and six read ports maps to flip-flops on
an FPGA (docs/fpga.md).

``"banked"``: ``32 // lanes`` rows of ``lanes x 32`` bits per register (register ``r``'s lane
group ``g`` in row ``r * groups + g``), a single write port, and one copy of the file per read
port: every copy is a memory with one write and one read port, which is what a block RAM is.
A read returns one lane group; the VALU already works on one group per cycle. Memory returns
arrive a lane group per beat and are written as they come (``wr_side``); whole-register
writes (wave launch, transcendental results) are buffered and written a group at a time.
Both take the cycles in which the VALU writes nothing, the buffer first.

The SGPR file (:class:`SgprFile`) is small (64 pairs of 32-bit registers per wave slot);
``"banked"`` gives it one write port, which the SIMD's writers share (it arbitrates), and a
copy per read port.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from ..config import DCUConfig

__all__ = ["VgprFile", "SgprFile", "LANES"]

LANES = 32


def _fragments(m, *names):
    """Submodules for groups of wiring: Amaranth's simulator re-evaluates a fragment whenever
    any of its inputs changes, so the read ports' inputs, their data and each write port get
    their own."""
    subs = [Module() for _ in names]
    for name, sub in zip(names, subs):
        m.submodules[name] = sub
    return subs


class VgprFile(wiring.Component):
    """The VGPR file of one SIMD: ``config.vgprs_per_simd`` registers of 32 lanes x 32 bits.

    Parameters
    ----------
    config : DCUConfig
        ``regfile`` picks the organisation, ``lanes`` the lane group (``G`` lanes, ``C = 32 //
        lanes`` groups), ``vgprs_per_simd`` the size.
    reads : int
        Read ports.

    Attributes
    ----------
    read_lanes : int
        Lanes a read port returns: 32 (``"wide"``) or ``G`` (``"banked"``).

    Members
    -------
    rd : In(read port).array(reads)
        ``addr`` (register), ``grp`` (lane group), ``en``; ``data`` (``read_lanes`` x 32 bits)
        is, the cycle after ``en``, register ``addr``: all its lanes (``"wide"``, ``grp``
        ignored) or lane group ``grp``. With ``en`` low the port keeps its data. ``"wide"``
        ports are transparent (a write in the same cycle shows); ``"banked"`` ports are not,
        and return a buffered whole-register write when addressed after its ``done``.
    wr_group : In(write)
        One lane group of a register (the VALU's results): ``addr``, ``grp``, ``data`` (``G``
        x 32 bits), ``en`` (``G`` lanes). Always written in its cycle.
    wr_reg : In(write)
        A whole register (``addr``, ``data`` 32 x 32 bits, ``en`` 32 lanes), taken when
        ``ready``; ``en`` of 0 writes nothing. ``"wide"``: always ready, written in its cycle.
        ``"banked"``: ready while nothing is buffered, or in the cycle the buffer's last group
        is written; the buffer writes one group (with enabled lanes) per cycle in which
        ``wr_group.en`` is 0.
    wr_side : In(write)
        ``"banked"`` only: one lane group, as ``wr_group``, written in its cycle when ``ready``:
        when ``wr_group.en`` is 0 and nothing is buffered.
    busy : Out(1)
        A taken ``wr_reg`` write has groups not written yet (``"wide"``: always 0). A read of
        its register addressed while ``busy`` may return the old value.
    done : Out(1)
        ``"banked"``: the last group of a taken ``wr_reg`` write is written in this cycle (a
        read addressed from the next cycle on sees it). ``"wide"``: 0.
    """

    def __init__(self, config: DCUConfig, reads: int = 6):
        self.config = config
        V, G = config.vgprs_per_simd, config.lanes
        C = config.valu_cycles
        self.banked = config.regfile == "banked"
        self.read_lanes = G if self.banked else LANES
        read = wiring.Signature({"addr": Out(range(V)), "grp": Out(range(C)), "en": Out(1, init=1),
                                 "data": In(32 * self.read_lanes)})
        group_members = {"addr": Out(range(V)), "grp": Out(range(C)), "data": Out(32 * G), "en": Out(G)}
        group = wiring.Signature(group_members)
        whole = wiring.Signature({"addr": Out(range(V)), "data": Out(32 * LANES), "en": Out(LANES),
                                  "ready": In(1)})
        side = {"wr_side": In(wiring.Signature({**group_members, "ready": In(1)}))} if self.banked else {}
        super().__init__({"rd": In(read).array(reads), "wr_group": In(group), "wr_reg": In(whole), **side,
                          "busy": Out(1), "done": Out(1)})
        # the memories and their ports exist before elaboration, so that a testbench can
        # reach the storage (``cells``)
        if self.banked:
            self._mems = [memory.Memory(shape=unsigned(32 * G), depth=V * C, init=[]) for _ in range(reads)]
            self._wports = [mem.write_port(granularity=32) for mem in self._mems]
            self._rports = [mem.read_port() for mem in self._mems]
        else:
            mem = memory.Memory(shape=unsigned(32 * LANES), depth=V, init=[])
            self._mems = [mem]
            # two write ports: each lane-granular port costs the simulator about as much as
            # the rest of the memory's update; the read ports' transparency is built in
            # :meth:`_wide`
            self._wports = [mem.write_port(granularity=32), mem.write_port(granularity=32)]
            self._rports = [mem.read_port() for _ in range(reads)]

    def cells(self, reg: int) -> list:
        """The memory rows that hold register ``reg`` (every copy, every lane group), for
        testbenches that initialise the file."""
        C = self.config.valu_cycles
        if self.banked:
            return [mem.data[reg * C + g] for mem in self._mems for g in range(C)]
        return [self._mems[0].data[reg]]

    def elaborate(self, platform):
        m = Module()
        for k, mem in enumerate(self._mems):
            m.submodules[f"mem{k}" if self.banked else "mem"] = mem
        reads_in, reads_out = _fragments(m, "reads_in", "reads_out")
        reads_in.d.comb += [port.en.eq(rd.en) for rd, port in zip(self.rd, self._rports)]
        if self.banked:
            reads_out.d.comb += [rd.data.eq(port.data) for rd, port in zip(self.rd, self._rports)]
            self._banked(m, reads_in)
        else:
            self._wide(m, reads_in, reads_out)
        return m

    def _wide(self, m, reads_in, reads_out):
        G, C = self.config.lanes, self.config.valu_cycles
        alu, whole = self._wports
        g = self.wr_group
        write_group, write_reg = _fragments(m, "write_group", "write_reg")
        write_group.d.comb += [alu.addr.eq(g.addr), alu.data.eq(Cat(*[g.data] * C)),
                               alu.en.eq(g.en if C == 1 else (g.en << (g.grp * G))[:LANES])]
        write_reg.d.comb += [whole.addr.eq(self.wr_reg.addr), whole.data.eq(self.wr_reg.data),
                             whole.en.eq(self.wr_reg.en)]
        m.d.comb += self.wr_reg.ready.eq(1)
        reads_in.d.comb += [port.addr.eq(rd.addr) for rd, port in zip(self.rd, self._rports)]
        # Transparent reads, by hand: a read returns the lanes that the writes of its cycle
        # put in its register (the whole-register port's over the group port's, as in the
        # memory). Yosys's transparent port compares the addresses once per lane and write
        # port, 64 compares per read port, which a compiled simulation evaluates every
        # cycle; here a compare per write port, and the lanes merged only after a read met
        # a write. The same hardware: a lane mask and the written data, kept with the read.
        bypass = Module()
        m.submodules.bypass = bypass
        lane = lambda v, i: v[32 * i:32 * i + 32]
        for k, (rd, port) in enumerate(zip(self.rd, self._rports)):
            from_alu, from_whole = Signal(LANES, name=f"hit_alu{k}"), Signal(LANES, name=f"hit_whole{k}")
            mask, data = Signal(LANES, name=f"fwd_mask{k}"), Signal(32 * LANES, name=f"fwd_data{k}")
            bypass.d.comb += [from_alu.eq(Mux(alu.addr == rd.addr, alu.en, 0)),
                              from_whole.eq(Mux(whole.addr == rd.addr, whole.en, 0))]
            with bypass.If(rd.en):
                bypass.d.sync += mask.eq(from_alu | from_whole)
                with bypass.If((from_alu | from_whole).any()):
                    bypass.d.sync += data.eq(Cat(*[Mux(from_whole[i], lane(whole.data, i), lane(alu.data, i))
                                                   for i in range(LANES)]))
            with reads_out.If(mask.any()):
                reads_out.d.comb += rd.data.eq(Cat(*[Mux(mask[i], lane(data, i), lane(port.data, i))
                                                     for i in range(LANES)]))
            with reads_out.Else():
                reads_out.d.comb += rd.data.eq(port.data)

    def _banked(self, m, reads_in):
        G, C = self.config.lanes, self.config.valu_cycles
        V = self.config.vgprs_per_simd
        reads_in.d.comb += [port.addr.eq(Cat(rd.grp, rd.addr)) for rd, port in zip(self.rd, self._rports)]
        # the whole-register buffer: its register, data, lane enables, groups still to write
        b_addr, b_data, b_en, pending = Signal(range(V)), Signal(32 * LANES), Signal(LANES), Signal(C)
        first = Signal(range(C))          # the group written next
        for g in reversed(range(C)):
            with m.If(pending[g]):
                m.d.comb += first.eq(g)
        g = self.wr_group
        addr, data, en = Signal(range(V * C)), Signal(32 * G), Signal(G)
        drain = Signal()
        m.d.comb += [self.busy.eq(pending.any()), drain.eq(pending.any() & ~g.en.any())]
        side = self.wr_side
        m.d.comb += side.ready.eq(~pending.any() & ~g.en.any())
        with m.If(drain):
            m.d.comb += [addr.eq(Cat(first, b_addr)), data.eq(b_data.word_select(first, 32 * G)),
                         en.eq(b_en.word_select(first, G))]
            m.d.sync += pending.bit_select(first, 1).eq(0)
        with m.Elif(g.en.any()):
            m.d.comb += [addr.eq(Cat(g.grp, g.addr)), data.eq(g.data), en.eq(g.en)]
        with m.Else():
            m.d.comb += [addr.eq(Cat(side.grp, side.addr)), data.eq(side.data), en.eq(side.en)]
        for port in self._wports:
            m.d.comb += [port.addr.eq(addr), port.data.eq(data), port.en.eq(en)]
        w = self.wr_reg
        m.d.comb += [self.done.eq(drain & (pending == (1 << first))), w.ready.eq(~pending.any() | self.done)]
        with m.If(w.ready & w.en.any()):
            m.d.sync += [b_addr.eq(w.addr), b_data.eq(w.data), b_en.eq(w.en),
                         pending.eq(Cat(*[w.en.word_select(k, G).any() for k in range(C)]))]


class SgprFile(wiring.Component):
    """The SGPR file of one SIMD: ``64 * config.wave_slots`` rows of an even/odd register pair.

    Parameters
    ----------
    config : DCUConfig
        ``regfile`` picks the organisation, ``wave_slots`` the size.
    writes, reads : int
        Write and read ports.

    Members
    -------
    wr : In(write port).array(writes)
        ``addr`` (pair), ``data`` (64 bits: the odd register high), ``en`` (2: low, high
        register). ``"wide"``: any ports may write in one cycle (to different pairs);
        ``"banked"``: at most one port may have ``en`` set in a cycle.
    rd : In(read port).array(reads)
        ``addr``, ``en``; ``data`` is the pair the cycle after ``en``, including the writes of
        that cycle (transparent), and is kept while ``en`` is low.
    """

    def __init__(self, config: DCUConfig, writes: int = 3, reads: int = 6):
        self.config = config
        rows = 64 * config.wave_slots
        self.banked = config.regfile == "banked"
        write = wiring.Signature({"addr": Out(range(rows)), "data": Out(64), "en": Out(2)})
        read = wiring.Signature({"addr": Out(range(rows)), "en": Out(1, init=1), "data": In(64)})
        super().__init__({"wr": In(write).array(writes), "rd": In(read).array(reads)})
        if self.banked:   # one write port per copy, a copy per read port
            self._mems = [memory.Memory(shape=unsigned(64), depth=rows, init=[]) for _ in range(reads)]
            self._wports = [mem.write_port(granularity=32) for mem in self._mems]
            self._rports = [mem.read_port(transparent_for=(wp,)) for mem, wp in zip(self._mems, self._wports)]
        else:
            mem = memory.Memory(shape=unsigned(64), depth=rows, init=[])
            self._mems = [mem]
            self._wports = [mem.write_port(granularity=32) for _ in range(writes)]
            self._rports = [mem.read_port(transparent_for=self._wports) for _ in range(reads)]

    def cells(self, row: int) -> list:
        """The memory rows that hold pair ``row`` (every copy), for testbenches."""
        return [mem.data[row] for mem in self._mems]

    def elaborate(self, platform):
        m = Module()
        for k, mem in enumerate(self._mems):
            m.submodules[f"mem{k}" if self.banked else "mem"] = mem
        reads_in, reads_out = _fragments(m, "reads_in", "reads_out")
        reads_in.d.comb += [stmt for rd, port in zip(self.rd, self._rports)
                            for stmt in (port.addr.eq(rd.addr), port.en.eq(rd.en))]
        reads_out.d.comb += [rd.data.eq(port.data) for rd, port in zip(self.rd, self._rports)]
        if self.banked:
            for wp in self._wports:
                for w in self.wr:
                    with m.If(w.en.any()):
                        m.d.comb += [wp.addr.eq(w.addr), wp.data.eq(w.data), wp.en.eq(w.en)]
        else:
            for k, (w, wp) in enumerate(zip(self.wr, self._wports)):
                m.submodules[f"write{k}"] = sub = Module()
                sub.d.comb += [wp.addr.eq(w.addr), wp.data.eq(w.data), wp.en.eq(w.en)]
        return m
