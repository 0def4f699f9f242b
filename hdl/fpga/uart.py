"""A plain 8N1 UART: a receiver and a transmitter with ``lib.stream`` byte ports (docs/fpga.md).

Both count a fixed number of clock cycles per bit (``divisor = clock // baud``): at 50 MHz
and 115,200 baud that is 434 cycles, an error of 0.01 %. The receiver samples each bit in
the middle of its period (found from the start bit's falling edge, after a two-flip-flop
synchroniser), so it tolerates several percent of baud-rate mismatch.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["UARTRx", "UARTTx", "uart_divisor"]


def uart_divisor(clock_hz: float, baud: int) -> int:
    """Clock cycles per bit for ``baud`` at ``clock_hz``.

    Raises
    ------
    ValueError
        When the divisor is below 4 (too few samples per bit) or the rounding error
        exceeds 2 % of a bit.
    """
    div = round(clock_hz / baud)
    if div < 4:
        raise ValueError(f"{baud} baud needs at least 4 clock cycles per bit at {clock_hz / 1e6:g} MHz")
    if abs(clock_hz / div - baud) > 0.02 * baud:
        raise ValueError(f"{baud} baud is off by more than 2 % at {clock_hz / 1e6:g} MHz")
    return div


class UARTRx(wiring.Component):
    """8N1 receiver.

    Parameters
    ----------
    divisor : int
        Clock cycles per bit (>= 4).

    Members
    -------
    rx : In(1)
        The serial line (idle high); asynchronous to the clock.
    stream : Out(stream.Signature(8))
        Received bytes. A byte is offered until taken; a byte that completes while the
        previous one is still waiting is dropped and counted in ``overruns``.
    framing_errors : Out(16)
        Bytes whose stop bit was low (dropped), saturating.
    overruns : Out(16)
        Bytes dropped because ``stream`` was not ready, saturating.
    """

    def __init__(self, divisor: int):
        if divisor < 4:
            raise ValueError(f"divisor must be >= 4, got {divisor}")
        self.divisor = divisor
        super().__init__({
            "rx": In(1, init=1),
            "stream": Out(stream.Signature(8)),
            "framing_errors": Out(16),
            "overruns": Out(16),
        })

    def elaborate(self, platform):
        m = Module()
        div = self.divisor
        sync1 = Signal(init=1)
        line = Signal(init=1)
        m.d.sync += [sync1.eq(self.rx), line.eq(sync1)]

        timer = Signal(range(div))
        bits = Signal(range(9))
        shreg = Signal(8)
        with m.If(self.stream.ready):
            m.d.sync += self.stream.valid.eq(0)

        with m.FSM():
            with m.State("IDLE"):
                with m.If(~line):
                    m.d.sync += timer.eq(div // 2 - 1)
                    m.next = "START"
            with m.State("START"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Elif(line):           # a glitch, not a start bit
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += [timer.eq(div - 1), bits.eq(0)]
                    m.next = "DATA"
            with m.State("DATA"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Else():
                    m.d.sync += timer.eq(div - 1)
                    with m.If(bits == 8):    # the middle of the stop bit
                        with m.If(~line):
                            with m.If(self.framing_errors != 0xFFFF):
                                m.d.sync += self.framing_errors.eq(self.framing_errors + 1)
                        with m.Elif(self.stream.valid & ~self.stream.ready):
                            with m.If(self.overruns != 0xFFFF):
                                m.d.sync += self.overruns.eq(self.overruns + 1)
                        with m.Else():      # the payload holds while the next byte shifts in
                            m.d.sync += [self.stream.valid.eq(1), self.stream.payload.eq(shreg)]
                        m.next = "IDLE"
                    with m.Else():
                        m.d.sync += [shreg.eq(Cat(shreg[1:], line)), bits.eq(bits + 1)]
        return m


class UARTTx(wiring.Component):
    """8N1 transmitter.

    Parameters
    ----------
    divisor : int
        Clock cycles per bit (>= 4).

    Members
    -------
    stream : In(stream.Signature(8))
        Bytes to send; one is taken when the previous one's stop bit has been sent.
    tx : Out(1)
        The serial line (idle high).
    """

    def __init__(self, divisor: int):
        if divisor < 4:
            raise ValueError(f"divisor must be >= 4, got {divisor}")
        self.divisor = divisor
        super().__init__({
            "stream": In(stream.Signature(8)),
            "tx": Out(1, init=1),
        })

    def elaborate(self, platform):
        m = Module()
        div = self.divisor
        shreg = Signal(10, init=0x3FF)      # stop, data (LSB first), start: shifted out from bit 0
        left = Signal(range(11))            # bits still to send
        timer = Signal(range(div))
        m.d.comb += [self.tx.eq(shreg[0]), self.stream.ready.eq(left == 0)]
        with m.If(left == 0):
            with m.If(self.stream.valid):
                m.d.sync += [shreg.eq(Cat(0, self.stream.payload, 1)), left.eq(10), timer.eq(div - 1)]
        with m.Elif(timer != 0):
            m.d.sync += timer.eq(timer - 1)
        with m.Else():
            m.d.sync += [shreg.eq(Cat(shreg[1:], 1)), left.eq(left - 1), timer.eq(div - 1)]
        return m
