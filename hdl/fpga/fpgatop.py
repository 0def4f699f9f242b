"""The FPGA top: :class:`hdl.top.hosttop.HostTop` (the DCU and a block-RAM memory) behind a UART
host link, for the ULX3S's ECP5-85F (docs/fpga.md).

::

    FTDI UART ──> UARTRx ──> HostLink ──> HostTop (DCU + ExtMemory in block RAM)
              <── UARTTx <──┘  (byte protocol: write/read memory, dispatch
                                registers, start, status, cycles, counters)

The byte protocol (:data:`OPS`, :data:`REGS`) is spoken on the host side by
``dcu/fpga/uartlink.py``; all multi-byte fields are little-endian.

=====  ========  ====================================  ==========================================
byte   command   arguments                             answer
=====  ========  ====================================  ==========================================
``I``  IDENT     --                                    16 bytes: ``b"DCU1"``, mem_base u32,
                                                       mem_bytes u32, counters u16,
                                                       dispatch words u8, error words u8
``W``  WRITE     dword index u32, count u16,           ``K`` after the last dword is written
                 count x u32
``R``  READ      dword index u32, count u16            count x u32
``S``  SETREG    register u8, value u32                ``K``
``G``  GETREG    register u8                           u32
``D``  START     --                                    ``K`` once the DCU took the dispatch,
                                                       ``B`` if it was busy (nothing started)
``P``  PERF      counter index u16                     u32 (``HostTop.perf_names[index]``)
other  --        --                                    ``?`` (the byte is dropped)
=====  ========  ====================================  ==========================================

Dword indices count from ``mem_base`` and wrap at ``mem_bytes``. Registers (:data:`REGS`):
``0x00 + i`` word ``i`` of the packed ``hdl.top.dispatch.DispatchLayout``; ``0x20``/``0x21``
aperture base low/high, ``0x22``/``0x23`` aperture size low/high, ``0x24`` the memory
model's seed (all read-write); ``0x40`` status (bit 0 busy, bit 1 done, bit 2 error; read
only), ``0x41`` cycles of the last dispatch, ``0x48 + i`` word ``i`` of the packed
``hdl.top.dcu.DcuError``. Reading any other register gives 0, writing it does nothing.
"""
from __future__ import annotations

from amaranth.hdl import ClockDomain, ClockSignal, Const, Instance, Module, Mux, ResetSignal, Signal, Cat
from amaranth.lib import io, stream, wiring
from amaranth.lib.wiring import In, Out, connect

from ..config import DCUConfig
from ..top.dcu import DcuError
from ..top.dispatch import DispatchLayout
from ..top.hosttop import CYCLE_BITS, HostTop
from ..mem.memport import ADDR_BITS
from .linkproto import ACK, BUSY, MAGIC, NAK, OPS, REGS
from .uart import UARTRx, UARTTx, uart_divisor

__all__ = ["HostLink", "LinkTop", "FPGATop", "OPS", "REGS", "MAGIC", "ACK", "BUSY", "NAK",
           "pll_params", "DEFAULT_MEM_BYTES", "DEFAULT_MEM_BASE"]

DEFAULT_MEM_BYTES = 64 * 1024
DEFAULT_MEM_BASE = 0x1000_0000     # the launcher's first allocation (dcu.launch.prepare)


def _words(bits: int) -> int:
    return -(-bits // 32)


class HostLink(wiring.Component):
    """The protocol engine: bytes in, bytes out, HostTop's host-side ports driven.

    Parameters
    ----------
    config : DCUConfig
        Sizes of the dispatch and error layouts.
    mem_bytes, mem_base : int
        The memory behind the host port (reported by IDENT; ``host_addr`` is
        ``range(mem_bytes // 4)``).
    counters : int
        Number of performance counters (``len(HostTop.perf_names)``).

    Members
    -------
    rx : In(stream.Signature(8))
        Command bytes (from :class:`hdl.fpga.uart.UARTRx`).
    tx : Out(stream.Signature(8))
        Answer bytes (to :class:`hdl.fpga.uart.UARTTx`).
    host_addr, host_wdata, host_we, host_re, host_rdata
        HostTop's memory port (``host_rdata`` one cycle after ``host_re``).
    dispatch : Out(stream.Signature(DispatchLayout(config)))
        The dispatch START offers until taken.
    aperture_base, aperture_size : Out(48); seed : Out(32)
        Registers set by SETREG.
    busy, done : In(1); error : In(DcuError(config)); cycles : In(32)
        HostTop's status, read by GETREG.
    perf_addr : Out(range(counters)); perf_data : In(32)
        HostTop's counters (``perf_data`` one cycle after ``perf_addr``).
    """

    def __init__(self, config: DCUConfig, mem_bytes: int = DEFAULT_MEM_BYTES,
                 mem_base: int = DEFAULT_MEM_BASE, counters: int = 1):
        self.config, self.mem_bytes, self.mem_base, self.counters = config, mem_bytes, mem_base, counters
        self.dispatch_words = _words(DispatchLayout(config).size)
        self.error_words = _words(DcuError(config).size)
        if self.dispatch_words > 0x20 or self.error_words > 0x100 - REGS["error"]:
            raise ValueError("dispatch or error layout too wide for the register map")
        super().__init__({
            "rx": In(stream.Signature(8)),
            "tx": Out(stream.Signature(8)),
            "host_addr": Out(range(mem_bytes // 4)), "host_wdata": Out(32),
            "host_we": Out(1), "host_re": Out(1), "host_rdata": In(32),
            "dispatch": Out(stream.Signature(DispatchLayout(config))),
            "aperture_base": Out(ADDR_BITS), "aperture_size": Out(ADDR_BITS), "seed": Out(32),
            "busy": In(1), "done": In(1), "error": In(DcuError(config)), "cycles": In(CYCLE_BITS),
            "perf_addr": Out(range(max(counters, 2))), "perf_data": In(32),
        })

    def ident(self) -> bytes:
        """The 16 bytes IDENT answers."""
        return (MAGIC + self.mem_base.to_bytes(4, "little") + self.mem_bytes.to_bytes(4, "little")
                + self.counters.to_bytes(2, "little")
                + bytes([self.dispatch_words, self.error_words]))

    def elaborate(self, platform):
        m = Module()
        op = Signal(8)
        arg = Signal(48)                 # argument bytes shift in from the top
        nargs = Signal(range(7))
        addr = Signal(32)
        count = Signal(16)
        wbuf = Signal(24)
        wbytes = Signal(range(4))
        obuf = Signal(128)               # answer bytes shift out from the bottom
        ocnt = Signal(range(17))
        payload = Signal(DispatchLayout(self.config).size)
        byte = self.rx.payload

        m.d.comb += [self.host_addr.eq(addr), self.dispatch.payload.eq(payload),
                     self.tx.payload.eq(obuf[:8])]

        # The 32-bit registers SETREG writes besides the dispatch words (GETREG reads them back).
        settable = {"aperture_base_lo": self.aperture_base[:32], "aperture_base_hi": self.aperture_base[32:],
                    "aperture_size_lo": self.aperture_size[:32], "aperture_size_hi": self.aperture_size[32:],
                    "seed": self.seed[:32]}
        # Register reads: a mux over the register number.
        reg_rd = Signal(32)
        reg_no = arg[40:48]              # GETREG's single argument byte
        err = self.error.as_value()
        with m.Switch(reg_no):
            for i in range(self.dispatch_words):
                with m.Case(REGS["dispatch"] + i):
                    m.d.comb += reg_rd.eq(payload[32 * i:32 * i + 32])
            for name, field in settable.items():
                with m.Case(REGS[name]):
                    m.d.comb += reg_rd.eq(field)
            with m.Case(REGS["status"]):
                m.d.comb += reg_rd.eq(Cat(self.busy, self.done, self.error.valid))
            with m.Case(REGS["cycles"]):
                m.d.comb += reg_rd.eq(self.cycles)
            for i in range(self.error_words):
                with m.Case(REGS["error"] + i):
                    m.d.comb += reg_rd.eq(err[32 * i:32 * i + 32])

        def reply(data, n: int):
            m.d.sync += [obuf.eq(data if not isinstance(data, bytes) else int.from_bytes(data, "little")),
                         ocnt.eq(n)]
            m.next = "SEND"

        m.d.sync += self.host_we.eq(0)
        nargs_of = {code: n for code, n in OPS.values()}
        with m.FSM():
            with m.State("OP"):
                m.d.comb += self.rx.ready.eq(1)
                with m.If(self.rx.valid):
                    m.d.sync += op.eq(byte)
                    with m.Switch(byte):
                        for code, n in nargs_of.items():
                            with m.Case(code):
                                m.d.sync += nargs.eq(n)
                                m.next = "ARGS" if n else "EXEC"
                        with m.Default():
                            reply(NAK, 1)
            with m.State("ARGS"):
                m.d.comb += self.rx.ready.eq(1)
                with m.If(self.rx.valid):
                    m.d.sync += [arg.eq(Cat(arg[8:], byte)), nargs.eq(nargs - 1)]
                    with m.If(nargs == 1):
                        m.next = "EXEC"
            with m.State("EXEC"):
                with m.Switch(op):
                    with m.Case(OPS["IDENT"][0]):
                        reply(self.ident(), 16)
                    with m.Case(OPS["WRITE"][0]):
                        m.d.sync += [addr.eq(arg[:32]), count.eq(arg[32:48]), wbytes.eq(0)]
                        with m.If(arg[32:48] == 0):
                            reply(ACK, 1)
                        with m.Else():
                            m.next = "WDATA"
                    with m.Case(OPS["READ"][0]):
                        m.d.sync += [addr.eq(arg[:32]), count.eq(arg[32:48])]
                        m.next = "RCHECK"
                    with m.Case(OPS["SETREG"][0]):
                        reg, value = arg[8:16], arg[16:48]
                        with m.Switch(reg):
                            for i in range(self.dispatch_words):
                                with m.Case(REGS["dispatch"] + i):
                                    hi = min(32 * i + 32, len(payload))
                                    m.d.sync += payload[32 * i:hi].eq(value)
                            for name, field in settable.items():
                                with m.Case(REGS[name]):
                                    m.d.sync += field.eq(value)
                        reply(ACK, 1)
                    with m.Case(OPS["GETREG"][0]):
                        reply(reg_rd, 4)
                    with m.Case(OPS["START"][0]):
                        with m.If(self.busy):
                            reply(BUSY, 1)
                        with m.Else():
                            m.next = "START"
                    with m.Case(OPS["PERF"][0]):
                        m.d.sync += self.perf_addr.eq(arg[32:48])
                        m.next = "PERF"
            with m.State("WDATA"):
                m.d.comb += self.rx.ready.eq(1)
                with m.If(self.rx.valid):
                    m.d.sync += [wbuf.eq(Cat(wbuf[8:], byte)), wbytes.eq(wbytes + 1)]
                    with m.If(wbytes == 3):
                        m.d.sync += [self.host_wdata.eq(Cat(wbuf, byte)), self.host_we.eq(1)]
                        m.next = "WWRITE"
            with m.State("WWRITE"):      # host_we is high in this cycle, at host_addr = addr
                m.d.sync += [addr.eq(addr + 1), count.eq(count - 1)]
                with m.If(count == 1):
                    reply(ACK, 1)
                with m.Else():
                    m.next = "WDATA"
            with m.State("RCHECK"):      # after an answer: more of a READ, or the next command
                with m.If((op != OPS["READ"][0]) | (count == 0)):
                    m.next = "OP"
                with m.Else():
                    m.next = "RREQ"
            with m.State("RREQ"):
                m.d.comb += self.host_re.eq(1)
                m.next = "RDATA"
            with m.State("RDATA"):       # host_rdata holds the dword in this cycle only
                m.d.sync += [addr.eq(addr + 1), count.eq(count - 1)]
                reply(self.host_rdata, 4)
            with m.State("PERF"):        # perf_data follows perf_addr by a cycle
                m.next = "PERF_DATA"
            with m.State("PERF_DATA"):
                reply(self.perf_data, 4)
            with m.State("START"):
                m.d.comb += self.dispatch.valid.eq(1)
                with m.If(self.dispatch.ready):
                    reply(ACK, 1)
            with m.State("SEND"):
                m.d.comb += self.tx.valid.eq(1)
                with m.If(self.tx.ready):
                    m.d.sync += [obuf.eq(obuf >> 8), ocnt.eq(ocnt - 1)]
                    with m.If(ocnt == 1):
                        m.next = "RCHECK"
        return m


class LinkTop(wiring.Component):
    """:class:`HostLink` driving a :class:`hdl.top.hosttop.HostTop`: the protocol at the byte-stream
    level, without the UART (what :class:`FPGATop` wraps, and what a simulation drives).

    Parameters
    ----------
    config : DCUConfig
    mem_bytes, mem_base : int
        The memory (:class:`hdl.mem.extmem.ExtMemory`, fixed latency ``latency``, in order).
    latency : int
        Memory latency in cycles (2: the block RAM's own; 3 with ``registered_read``).
    registered_read : bool
        The memory registers the block RAM's output before its read-modify-write (the board
        build's timing) and takes a request every other cycle.
    watchdog_cycles : int
        The DCU's watchdog.
    init : bytes
        Initial memory contents (a simulation's shortcut).
    with_dcu : bool
        False: the memory alone behind the link (board bring-up: the UART, the protocol and
        the block RAM without the DCU); START is taken at once and the status reads done.

    Members
    -------
    rx : In(stream.Signature(8)); tx : Out(stream.Signature(8))
        Command and answer bytes.
    busy, done, error : Out(1)
        For LEDs (``error``: an error is latched).
    """

    def __init__(self, config: DCUConfig, mem_bytes: int = DEFAULT_MEM_BYTES,
                 mem_base: int = DEFAULT_MEM_BASE, latency: int = 2,
                 watchdog_cycles: int = 1_000_000, init: bytes = b"", with_dcu: bool = True,
                 registered_read: bool = False):
        self.with_dcu = with_dcu
        if with_dcu:
            self.host = HostTop(config, mem_bytes=mem_bytes, mem_base=mem_base, latency=latency,
                                reorder=False, watchdog_cycles=watchdog_cycles, init=init,
                                registered_read=registered_read)
            self.perf_names = self.host.perf_names
        else:
            from ..mem.extmem import ExtMemory
            self.host = ExtMemory(mem_bytes, base=mem_base, latency=latency, init=init,
                                  registered_read=registered_read)
            self.perf_names = []
        self.link = HostLink(config, mem_bytes, mem_base, len(self.perf_names))
        super().__init__({"rx": In(stream.Signature(8)), "tx": Out(stream.Signature(8)),
                          "busy": Out(1), "done": Out(1), "error": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.host = host = self.host
        m.submodules.link = link = self.link
        connect(m, wiring.flipped(self.rx), link.rx)
        connect(m, link.tx, wiring.flipped(self.tx))
        if not self.with_dcu:
            m.d.comb += [
                host.host_addr.eq(link.host_addr), host.host_wdata.eq(link.host_wdata),
                host.host_we.eq(link.host_we), host.host_re.eq(link.host_re),
                link.host_rdata.eq(host.host_rdata), link.dispatch.ready.eq(1), link.done.eq(1),
                self.done.eq(1),
            ]
            return m
        connect(m, link.dispatch, host.dispatch)
        m.d.comb += [
            host.host_addr.eq(link.host_addr), host.host_wdata.eq(link.host_wdata),
            host.host_we.eq(link.host_we), host.host_re.eq(link.host_re),
            link.host_rdata.eq(host.host_rdata),
            host.aperture_base.eq(link.aperture_base), host.aperture_size.eq(link.aperture_size),
            host.seed.eq(link.seed),
            link.busy.eq(host.busy), link.done.eq(host.done), link.error.eq(host.error),
            link.cycles.eq(host.cycles),
            host.perf_addr.eq(link.perf_addr), link.perf_data.eq(host.perf_data),
            self.busy.eq(host.busy), self.done.eq(host.done), self.error.eq(host.error.valid),
        ]
        return m


# ---- the board top ------------------------------------------------------------------------

# EHXPLLL settings for a 25 MHz input (yowasp-ecppll -i 25 -o F): CLKI_DIV, CLKFB_DIV,
# CLKOP_DIV, CLKOP_CPHASE.
_PLL_25 = {30.0: (5, 6, 20, 9), 35.0: (5, 7, 17, 8), 40.0: (5, 8, 15, 7), 45.0: (5, 9, 13, 6),
           50.0: (1, 2, 12, 5), 55.0: (5, 11, 11, 5), 60.0: (5, 12, 10, 4), 65.0: (5, 13, 9, 4),
           70.0: (5, 14, 9, 4)}


def pll_params(out_mhz: float, in_mhz: float = 25.0) -> tuple[int, int, int, int, float]:
    """EHXPLLL dividers for ``out_mhz`` from ``in_mhz``: ``(clki_div, clkfb_div, clkop_div,
    clkop_cphase, achieved_mhz)``: ecppll's own answers for 30-70 MHz in steps of 5 from 25 MHz,
    otherwise the same search (PFD 3.125-400 MHz, VCO 400-800 MHz, the closest output,
    feedback from CLKOP, CPHASE ``(CLKOP_DIV - 1) // 2``)."""
    if in_mhz == 25.0 and float(out_mhz) in _PLL_25:
        return (*_PLL_25[float(out_mhz)], float(out_mhz))
    best = None
    for clki in range(1, 129):
        pfd = in_mhz / clki
        if not 3.125 <= pfd <= 400:
            continue
        for fb in range(1, 81):
            out = in_mhz * fb / clki
            for op in range(1, 129):
                vco = out * op
                if 400 <= vco <= 800:
                    err = abs(out - out_mhz)
                    if best is None or err < best[0] - 1e-9:
                        best = (err, clki, fb, op, out)
    if best is None:
        raise ValueError(f"no PLL setting for {out_mhz} MHz")
    _, clki, fb, op, out = best
    return clki, fb, op, (op - 1) // 2, out


class FPGATop(wiring.Component):
    """The board top: PLL, UART, :class:`LinkTop` (:class:`HostLink` and HostTop), LEDs.

    Parameters
    ----------
    config : DCUConfig
    clock_mhz : float
        Design clock. Equal to the board clock (25 MHz on the ULX3S): no PLL; otherwise an
        EHXPLLL makes it from the board clock.
    baud : int
        UART rate.
    mem_bytes, mem_base : int
        The block-RAM memory (:class:`hdl.mem.extmem.ExtMemory`: one 1,024-bit row per 128-byte
        line, in order, with ``registered_read``: fixed latency 3, a request every other
        cycle).
    watchdog_cycles : int
        The DCU's watchdog.
    with_dcu : bool
        False: the link and the memory only (:class:`LinkTop`), for bring-up.

    With no platform (simulation, Verilog) the top has ports ``uart_rx``, ``uart_tx`` and
    ``leds`` and the ``sync`` domain is the caller's; on a platform it requests ``clk25``
    (the default clock), ``uart`` 0 and ``led`` 0-7 itself. LEDs: 0 busy, 1 done, 2 error,
    3 a byte was received, 7 a 1 Hz heartbeat.
    """

    def __init__(self, config: DCUConfig, clock_mhz: float = 50.0, baud: int = 115_200,
                 mem_bytes: int = DEFAULT_MEM_BYTES, mem_base: int = DEFAULT_MEM_BASE,
                 watchdog_cycles: int = 1_000_000, board_mhz: float = 25.0, with_dcu: bool = True):
        self.config, self.clock_mhz, self.baud, self.board_mhz = config, clock_mhz, baud, board_mhz
        self.divisor = uart_divisor(clock_mhz * 1e6, baud)
        self.core = LinkTop(config, mem_bytes, mem_base, latency=3, registered_read=True,
                            watchdog_cycles=watchdog_cycles, with_dcu=with_dcu)
        super().__init__({"uart_rx": In(1, init=1), "uart_tx": Out(1, init=1), "leds": Out(8)})

    def elaborate(self, platform):
        m = Module()
        if platform is not None:
            m.submodules.clk_buf = clk = io.Buffer("i", platform.request(platform.default_clk, 0, dir="-"))
            m.domains.sync = sync = ClockDomain("sync")
            if abs(self.clock_mhz - self.board_mhz) < 1e-6:
                m.d.comb += ClockSignal("sync").eq(clk.i)
                m.d.comb += ResetSignal("sync").eq(0)
            else:
                clki, fb, op, cphase, _ = pll_params(self.clock_mhz, self.board_mhz)
                # No constraint on the output: nextpnr derives it from the board clock's
                # (25 MHz on the pin) through the PLL's dividers ("Derived frequency
                # constraint of 50.0 MHz for net core.clk").
                pll_clk = sync.clk
                locked = Signal()
                m.submodules.pll = Instance(
                    "EHXPLLL",
                    a_FREQUENCY_PIN_CLKI=str(self.board_mhz), a_FREQUENCY_PIN_CLKOP=str(self.clock_mhz),
                    a_ICP_CURRENT="12", a_LPF_RESISTOR="8", a_MFG_ENABLE_FILTEROPAMP="1",
                    a_MFG_GMCREF_SEL="2",
                    p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED", p_STDBY_ENABLE="DISABLED",
                    p_DPHASE_SOURCE="DISABLED", p_OUTDIVIDER_MUXA="DIVA", p_OUTDIVIDER_MUXB="DIVB",
                    p_OUTDIVIDER_MUXC="DIVC", p_OUTDIVIDER_MUXD="DIVD",
                    p_CLKI_DIV=clki, p_CLKOP_ENABLE="ENABLED", p_CLKOP_DIV=op,
                    p_CLKOP_CPHASE=cphase, p_CLKOP_FPHASE=0, p_FEEDBK_PATH="CLKOP", p_CLKFB_DIV=fb,
                    i_RST=0, i_STDBY=0, i_CLKI=clk.i, o_CLKOP=pll_clk, i_CLKFB=pll_clk,
                    i_PHASESEL0=0, i_PHASESEL1=0, i_PHASEDIR=1, i_PHASESTEP=1,
                    i_PHASELOADREG=1, i_PLLWAKESYNC=0, i_ENCLKOP=0, o_LOCK=locked)
                rst = Signal(4, init=0xF)       # held in reset until the PLL locks
                m.domains.por = ClockDomain("por", reset_less=True)
                m.d.comb += ClockSignal("por").eq(pll_clk)
                with m.If(~locked):
                    m.d.por += rst.eq(0xF)
                with m.Elif(rst != 0):
                    m.d.por += rst.eq(rst - 1)
                m.d.comb += ResetSignal("sync").eq(rst != 0)
            uart = platform.request("uart", 0, dir="-")
            m.submodules.uart_rx_buf = rx_buf = io.Buffer("i", uart.rx)
            m.submodules.uart_tx_buf = tx_buf = io.Buffer("o", uart.tx)
            m.d.comb += [self.uart_rx.eq(rx_buf.i), tx_buf.o.eq(self.uart_tx)]
            for i in range(8):
                m.submodules[f"led_buf{i}"] = led = io.Buffer("o", platform.request("led", i, dir="-"))
                m.d.comb += led.o.eq(self.leds[i])

        m.submodules.core = core = self.core
        m.submodules.uart_rx = rx = UARTRx(self.divisor)
        m.submodules.uart_tx = tx = UARTTx(self.divisor)
        m.d.comb += [rx.rx.eq(self.uart_rx), self.uart_tx.eq(tx.tx)]
        connect(m, rx.stream, core.rx)
        connect(m, core.tx, tx.stream)
        half_second = max(2, int(self.clock_mhz * 1e6) // 2)
        beat = Signal(range(half_second))
        heart, seen = Signal(), Signal()
        m.d.sync += beat.eq(Mux(beat == 0, half_second - 1, beat - 1))
        with m.If(beat == 0):
            m.d.sync += heart.eq(~heart)
        with m.If(rx.stream.valid):
            m.d.sync += seen.eq(1)
        m.d.comb += self.leds.eq(Cat(core.busy, core.done, core.error, seen, Const(0, 3), heart))
        return m
