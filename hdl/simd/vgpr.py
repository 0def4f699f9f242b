"""The SIMD's VGPR file: two banks of RAM rows (docs/simd.md: ``VgprBanks``).

A register is ``passes = 32 / lanes`` rows of ``lanes`` x 32 bits (row *p*: lanes
``[p * lanes, (p + 1) * lanes)``). Row *p* of register *r* is row ``k = r * passes + p`` of
the file, in bank ``k mod 2`` at address ``k div 2``: consecutive rows of a register, or
(with one row a register) consecutive registers, are in different banks. With two rows a
register or more, the same row of every register is in one bank, so a 64-bit operand's two
registers are read in two cycles. Each bank is a RAM with three read ports (one per source
operand: an FPGA makes a copy of the bank per port) and one write port.

The VALU writes through ``valu``, always in its cycle: a pass writes one row, and the next
pass moves to the other bank. Everything else (memory returns, transcendental results, a
launch's v0) comes through ``side`` a row at a time and takes the bank the VALU leaves
free; a row whose bank the VALU takes waits in a one-row buffer, and ``side`` is not ready
while the buffer is full. Two banks, not four: a block RAM holds 512 rows of 36 bits, so
four banks of the ``fpga`` preset's 256 rows would fill half of each (48 DP16KD for the
three copies instead of 24), and each read port would select among four banks.

A read returns the row as it was before the cycle's writes. A read of a row written in the
same cycle is never used: the issue stage holds an instruction that reads the destination
of a VALU instruction still in the pipe, and a wave reads a memory instruction's
destination only after waiting for its counter (a read racing the write is a program's
error on RDNA, as here). So the block RAMs need not order them (``no_rw_check``).
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2, exact_log2

from ..config import DCUConfig

__all__ = ["VgprBanks", "VgprRead", "VgprWrite", "place"]

BANKS = 2


def place(k: int) -> tuple[int, int]:
    """(bank, address) of row ``k`` of the file: for a testbench that reads or sets the banks."""
    return k % BANKS, k // BANKS


def VgprWrite(regs: int, passes: int, lanes: int) -> data.StructLayout:
    """One row of a register: its lanes' data and a write enable per lane."""
    return data.StructLayout({"reg": range(regs), "row": range(max(passes, 2)), "data": 32 * lanes, "mask": lanes})


class VgprRead(wiring.Signature):
    """A read port: ``reg`` and ``row``; ``data`` is that row the next cycle. It reads every
    cycle (a read enable that holds the data would cost a register per bit on an FPGA)."""

    def __init__(self, regs: int, passes: int, lanes: int):
        super().__init__({"reg": Out(range(regs)), "row": Out(range(max(passes, 2))), "data": In(32 * lanes)})


class VgprBanks(wiring.Component):
    """The VGPRs of one SIMD in two banks.

    Parameters
    ----------
    config : DCUConfig
        ``lanes`` (the row width), ``vgprs_per_simd``.
    reads : int
        Read ports (three: one per source operand).

    Attributes
    ----------
    rd : In(VgprRead).array(reads)
    valu : In(VgprWrite)
        With ``valid``: written in its cycle.
    side : In(stream.Signature(VgprWrite))
        Written in a cycle its bank is free, through a one-row buffer.
    banks : list of memory.Memory
    """

    def __init__(self, config: DCUConfig, reads: int = 3):
        self.lanes = config.lanes
        self.passes = 32 // config.lanes
        self.regs = config.vgprs_per_simd
        rows = self.regs * self.passes
        if rows % BANKS:
            raise ValueError(f"{self.regs} registers of {self.passes} rows do not fill {BANKS} banks")
        self.depth = rows // BANKS
        #: bank ``b`` holds the file's rows ``k`` with ``k mod BANKS == b``, at ``k div BANKS``
        self.banks = [memory.Memory(shape=32 * self.lanes, depth=self.depth, init=[], attrs={"no_rw_check": 1})
                      for _ in range(BANKS)]
        layout = VgprWrite(self.regs, self.passes, self.lanes)
        super().__init__({
            "rd": In(VgprRead(self.regs, self.passes, self.lanes)).array(reads),
            "valu": In(data.StructLayout({"valid": 1, "w": layout})),
            "side": In(stream.Signature(layout)),
        })

    def _place(self, reg, row):
        """(bank, address) of a register's row: row ``k = reg * passes + row`` of the file."""
        k = Cat(row[:exact_log2(self.passes)], reg)
        b = exact_log2(BANKS)
        return k[:b], k[b:b + ceil_log2(self.depth)]

    def elaborate(self, platform):
        m = Module()
        banks = []
        for b, mem in enumerate(self.banks):
            m.submodules[f"bank{b}"] = mem
            banks.append((mem, [mem.read_port(domain="comb") for _ in self.rd], mem.write_port(granularity=32)))

        # reads: every bank's port k takes read port k's address; the data comes from its bank.
        # Each read is an asynchronous port and a register, which Yosys merges into the block
        # RAM's synchronous port, taking ``no_rw_check`` (on a synchronous port it would add a
        # register and a multiplexer per bit and bank copy to return the old row)
        for k, rd in enumerate(self.rd):
            bank, addr = self._place(rd.reg, rd.row)
            held = Signal(range(BANKS), name=f"rd{k}_bank")
            m.d.sync += held.eq(bank)
            rows = []
            for b, (_, ports, _) in enumerate(banks):
                row = Signal(32 * self.lanes, name=f"rd{k}_bank{b}")
                m.d.comb += ports[k].addr.eq(addr)
                m.d.sync += row.eq(ports[k].data)
                rows.append(row)
            m.d.comb += rd.data.eq(Array(rows)[held])

        # writes: the VALU's, then the buffered side row, then the side row offered now. A side
        # row is offered only while the buffer is empty, so one row of the two can be written
        # in a cycle: ``other``, which each bank takes when the VALU leaves it free (a 2:1
        # select a bit and bank, not a priority chain of three)
        buf = Signal(data.StructLayout({"valid": 1, "w": self.side.payload.shape()}))
        v, s = self.valu, self.side
        other = data.View(self.side.payload.shape(), Mux(buf.valid, buf.w, s.payload))
        v_bank, v_addr = self._place(v.w.reg, v.w.row)
        o_bank, o_addr = self._place(other.reg, other.row)
        o_goes = (buf.valid | s.valid) & ~(v.valid & (v_bank == o_bank))
        m.d.comb += s.ready.eq(~buf.valid | o_goes)
        for b, (_, _, wp) in enumerate(banks):
            v_here = v.valid & (v_bank == b)
            m.d.comb += [wp.addr.eq(Mux(v_here, v_addr, o_addr)), wp.data.eq(Mux(v_here, v.w.data, other.data)),
                         wp.en.eq(Mux(v_here, v.w.mask, Mux(o_goes & (o_bank == b), other.mask, 0)))]
        # the buffer: empties when written; a side row taken and not written fills it
        with m.If(buf.valid & o_goes):
            m.d.sync += buf.valid.eq(0)
        with m.If(s.valid & s.ready & (buf.valid | ~o_goes)):
            m.d.sync += [buf.valid.eq(1), buf.w.eq(s.payload)]
        return m
