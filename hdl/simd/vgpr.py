"""The SIMD's VGPR file: four banks of RAM rows (docs/simd.md: ``VgprBanks``).

A register is ``passes = 32 / lanes`` rows of ``lanes`` x 32 bits (row *p*: lanes
``[p * lanes, (p + 1) * lanes)``). Row *p* of register *r* is row ``k = r * passes + p`` of
the file, in bank ``k mod 4`` at address ``k div 4``: consecutive rows of a register, or
(with one row a register) consecutive registers, are in different banks. With four rows a
register or more, the same row of every register is in one bank, so a 64-bit operand's two
registers are read in two cycles (a bank mapping that spreads them, ``(r + p) mod 4``,
measured 2,700 LUT4 on the ECP5 against 1,200 for this one). Each bank is a RAM with three
read ports (one per source operand: an FPGA makes a copy of the bank per port) and one write
port.

The VALU writes through ``valu``, always in its cycle: a pass writes one row, and the next
pass moves to the next bank. Everything else (memory returns, transcendental results, a
launch's v0) comes through ``side`` a row at a time and takes the bank the VALU leaves
free; a row whose bank the VALU takes waits in a one-row buffer, and ``side`` is not ready
while the buffer is full. Reads are not transparent: a row read in the cycle it is written
returns its old contents.
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Module, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2, exact_log2

from ..config import DCUConfig

__all__ = ["VgprBanks", "VgprRead", "VgprWrite"]

BANKS = 4


def VgprWrite(regs: int, passes: int, lanes: int) -> data.StructLayout:
    """One row of a register: its lanes' data and a write enable per lane."""
    return data.StructLayout({"reg": range(regs), "row": range(max(passes, 2)), "data": 32 * lanes, "mask": lanes})


class VgprRead(wiring.Signature):
    """A read port: ``reg`` and ``row``; ``data`` is that row the next cycle. It reads every
    cycle (a read enable that holds the data would cost a register per bit on an FPGA)."""

    def __init__(self, regs: int, passes: int, lanes: int):
        super().__init__({"reg": Out(range(regs)), "row": Out(range(max(passes, 2))), "data": In(32 * lanes)})


class VgprBanks(wiring.Component):
    """The VGPRs of one SIMD in four banks.

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
        #: bank ``b`` holds the file's rows ``k`` with ``k mod 4 == b``, at ``k div 4``
        self.banks = [memory.Memory(shape=32 * self.lanes, depth=self.depth, init=[]) for _ in range(BANKS)]
        layout = VgprWrite(self.regs, self.passes, self.lanes)
        super().__init__({
            "rd": In(VgprRead(self.regs, self.passes, self.lanes)).array(reads),
            "valu": In(data.StructLayout({"valid": 1, "w": layout})),
            "side": In(stream.Signature(layout)),
        })

    def _place(self, reg, row):
        """(bank, address) of a register's row: row ``k = reg * passes + row`` of the file."""
        k = Cat(row[:exact_log2(self.passes)], reg)
        return k[:2], k[2:2 + ceil_log2(self.depth)]

    def elaborate(self, platform):
        m = Module()
        banks = []
        for b, mem in enumerate(self.banks):
            m.submodules[f"bank{b}"] = mem
            banks.append((mem, [mem.read_port() for _ in self.rd], mem.write_port(granularity=32)))

        # reads: every bank's port k takes read port k's address; the data comes from its bank
        for k, rd in enumerate(self.rd):
            bank, addr = self._place(rd.reg, rd.row)
            held = Signal(2, name=f"rd{k}_bank")
            m.d.sync += held.eq(bank)
            for _, ports, _ in banks:
                m.d.comb += ports[k].addr.eq(addr)
            m.d.comb += rd.data.eq(Array(ports[k].data for _, ports, _ in banks)[held])

        # writes: the VALU's, then the buffered side row, then the side row offered now
        buf = Signal(data.StructLayout({"valid": 1, "w": self.side.payload.shape()}))
        v, s = self.valu, self.side
        v_bank, v_addr = self._place(v.w.reg, v.w.row)
        b_bank, b_addr = self._place(buf.w.reg, buf.w.row)
        s_bank, s_addr = self._place(s.payload.reg, s.payload.row)
        buf_goes = buf.valid & ~(v.valid & (v_bank == b_bank))
        side_goes = s.valid & ~buf.valid & ~(v.valid & (v_bank == s_bank))
        m.d.comb += s.ready.eq(~buf.valid | buf_goes)
        for b, (_, _, wp) in enumerate(banks):
            with m.If(v.valid & (v_bank == b)):
                m.d.comb += [wp.addr.eq(v_addr), wp.data.eq(v.w.data), wp.en.eq(v.w.mask)]
            with m.Elif(buf_goes & (b_bank == b)):
                m.d.comb += [wp.addr.eq(b_addr), wp.data.eq(buf.w.data), wp.en.eq(buf.w.mask)]
            with m.Elif(side_goes & (s_bank == b)):
                m.d.comb += [wp.addr.eq(s_addr), wp.data.eq(s.payload.data), wp.en.eq(s.payload.mask)]
        # the buffer: empties when written; a side row taken and not written fills it
        with m.If(buf_goes):
            m.d.sync += buf.valid.eq(0)
        with m.If(s.valid & s.ready & ~side_goes):
            m.d.sync += [buf.valid.eq(1), buf.w.eq(s.payload)]
        return m
