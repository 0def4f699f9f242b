"""The transcendental unit shared by the SIMDs of a DCU.

RDNA gives every SIMD its own transcendental unit. On an FPGA a pipelined one is the largest
block of a SIMD (at 8 lanes: 288 multipliers and 16,000 flip-flops), while kernels issue few
transcendental instructions, so the DCU keeps one for all four SIMDs, and a small one:
:class:`~hdl.simd.transseq.TransSeq`, which steps every operation through one multiplier per
lane group. :class:`SharedTrans` puts a round-robin arbiter in front of it and sends each
result back to the SIMD that sent the wave (the unit carries the SIMD's index in its ``tag``;
it returns waves in the order it took them, so each SIMD gets its own in order). A SIMD
drives its payload only while its port is valid and ready (zero otherwise), and the arbiter
makes one port ready among those with a wave, so the wave is the OR of the ports' payloads:
one LUT4 a bit for four ports, where a multiplexer takes three.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .trans import TransIn, TransOut
from .transseq import TransSeq

__all__ = ["SharedTrans"]


class SharedTrans(wiring.Component):
    """A :class:`~hdl.simd.transseq.TransSeq` shared by ``ports`` SIMDs, taken in turn.

    Parameters
    ----------
    config : hdl.config.DCUConfig
        ``trans_lanes``: the unit's datapaths.
    ports : int
        SIMDs sharing it.

    Members
    -------
    req : In(stream of TransIn), one per SIMD
        Waves to compute (``tag`` is ignored). ``ready`` does not depend on the port's own
        ``valid`` (a SIMD reads it before it sends): it is the unit's ready while no port
        ahead of this one in the round-robin order has a wave; the port after the last one
        taken comes first. ``op`` and ``a`` must be zero unless ``valid & ready``.
    resp : Out(stream of TransOut), one per SIMD
        Results, each on the port its wave came from, in the order that port sent them. A
        result waiting for its port's ``ready`` stalls the unit.
    """

    def __init__(self, config, ports: int):
        self.config = config
        self.ports = ports
        super().__init__({
            "req": In(stream.Signature(TransIn)).array(ports),
            "resp": Out(stream.Signature(TransOut)).array(ports),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.ports
        m.submodules.unit = unit = TransSeq(self.config)
        valid = Cat(*[r.valid for r in self.req])
        last = Signal(range(n))                 # the port taken last
        first = Signal(n)                       # one-hot: the port whose wave goes in now
        with m.Switch(last):
            for l in range(n):
                with m.Case(l):
                    order = [(l + 1 + k) % n for k in range(n)]
                    for pos, p in enumerate(order):
                        ahead = Cat(*[valid[q] for q in order[:pos]]).any() if pos else Const(0, 1)
                        m.d.comb += [self.req[p].ready.eq(unit.i.ready & ~ahead),
                                     first[p].eq(valid[p] & ~ahead)]
        sel = Signal(range(n))                  # the index of ``first``
        # every port but the one taken drives a zero payload: their OR is the wave
        m.d.comb += [unit.i.valid.eq(valid.any()), sel.eq(_first_index(first)),
                     unit.i.payload.op.eq(_or([r.payload.op.as_value() for r in self.req])),
                     unit.i.payload.a.eq(_or([r.payload.a for r in self.req])),
                     unit.i.payload.tag.eq(sel)]
        with m.If(valid.any() & unit.i.ready):
            m.d.sync += last.eq(sel)

        tag = unit.o.payload.tag
        for p in range(n):
            m.d.comb += [self.resp[p].valid.eq(unit.o.valid & (tag == p)),
                         self.resp[p].payload.d.eq(unit.o.payload.d), self.resp[p].payload.tag.eq(tag)]
            with m.If(tag == p):
                m.d.comb += unit.o.ready.eq(self.resp[p].ready)
        return m


def _first_index(onehot):
    """The index of the set bit of a one-hot (or zero) value: OR of the indices' bits."""
    n = len(onehot)
    return Cat(*[Cat(*[onehot[p] for p in range(n) if p >> b & 1]).any()
                 for b in range(max(1, (n - 1).bit_length()))])


def _or(values):
    """The bitwise OR of ``values``."""
    out = values[0]
    for v in values[1:]:
        out = out | v
    return out
