"""One multiplier per lane shared by a SIMD's integer and FP32 vector ALUs
(``config.shared_multiplier``).

The integer unit's 19 multiply ops already share one signed 33 x 33-bit multiplier per lane
(``hdl/simd/valu_int.py``), and the FP32 unit's fused multiply-add has a 24 x 24-bit significand
product per lane. Only one of the two units works on an instruction, so on an FPGA one
multiplier can serve both: each unit presents its operands (``VALUInt`` and ``VALUFloat``
built with ``external_mul``) and takes the product back in the same cycle. On the ECP5 a
33 x 33 multiplier is four MULT18X18D blocks, as a 24 x 24 one is, so sharing halves the
SIMD's ALU multipliers.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["LaneMultiplier", "WIDTH", "FP_WIDTH"]

WIDTH = 33       # a 32-bit integer operand, zero- or sign-extended
FP_WIDTH = 24    # an FP32 significand with its hidden bit


class LaneMultiplier(wiring.Component):
    """``lanes`` signed 33 x 33-bit multipliers, their operands from the integer unit or,
    when ``fp`` is 1, from the FP32 unit.

    Parameters
    ----------
    lanes : int

    Members
    -------
    int_x, int_y : In(33 * lanes)
        The integer unit's operands, lane ``i`` at bits ``[33i + 32 : 33i]``, two's complement.
    fp_x, fp_y : In(24 * lanes)
        The FP32 unit's significands (unsigned).
    fp : In(1)
        Multiply the FP32 unit's operands.
    p : Out(66 * lanes)
        The exact signed products, lane ``i`` at ``[66i + 65 : 66i]``; an FP32 product is in
        the low 48 bits of its lane.
    """

    def __init__(self, lanes: int):
        self.lanes = lanes
        super().__init__({
            "int_x": In(WIDTH * lanes), "int_y": In(WIDTH * lanes),
            "fp_x": In(FP_WIDTH * lanes), "fp_y": In(FP_WIDTH * lanes), "fp": In(1),
            "p": Out(2 * WIDTH * lanes),
        })

    def elaborate(self, platform):
        m = Module()
        w, f = WIDTH, FP_WIDTH

        def operand(ints, fps, i):
            return Mux(self.fp, Cat(fps[f * i:f * (i + 1)], Const(0, w - f)), ints[w * i:w * (i + 1)]).as_signed()
        m.d.comb += self.p.eq(Cat(*[operand(self.int_x, self.fp_x, i) * operand(self.int_y, self.fp_y, i)
                                    for i in range(self.lanes)]))
        return m
