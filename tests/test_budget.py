"""dcu.fpga.budget: register bits, DSP tiles and memories counted in a design's RTLIL.

* A small design with known contents: an 8-bit register, a 33 x 33 multiplier (its
  expression used twice: Amaranth writes it twice, synthesis keeps one) and a 24 x 24 one,
  a multiply by a constant (not a DSP), a narrow index multiply, a memory with two read
  ports and one write port, in two submodules.
* The integer and FP32 VALUs of the ``fpga`` preset at 8 lanes: 32 MULT18X18D each, the
  counts ``synth_ecp5`` gave for them (docs/fpga.md).
* ``dcu fpga --budget --block`` prints the table without the FPGA tools.
"""
from __future__ import annotations

from amaranth.back import rtlil
from amaranth.hdl import Module, Signal, signed
from amaranth.lib.memory import Memory

from dcu import cli
from dcu.fpga.budget import budget, rtlil_budget
from hdl.config import get_config


def _design():
    top, sub = Module(), Module()
    top.submodules.arith = sub
    x, y, p, p2 = Signal(signed(33)), Signal(signed(33)), Signal(signed(66)), Signal(signed(67))
    u, v, q = Signal(24), Signal(24), Signal(48)
    k, kq, i, iq = Signal(16), Signal(32), Signal(3), Signal(8)
    xy = x * y
    sub.d.comb += [p.eq(xy), p2.eq(xy + 1), q.eq(u * v), kq.eq(k * 1000), iq.eq(i * 5)]
    r = Signal(8)
    top.d.sync += r.eq(r + p[:8] + p2[:8] + q[:8] + kq[:8] + iq)
    top.submodules.ram = ram = Memory(shape=16, depth=64, init=[])
    rd0, rd1, wr = ram.read_port(), ram.read_port(domain="comb"), ram.write_port()
    top.d.comb += [rd0.addr.eq(r), rd1.addr.eq(r + 1), wr.addr.eq(r), wr.data.eq(r)]
    return top, [x, y, u, v, k, i, rd0.data, rd1.data]


def test_counts_of_a_known_design():
    top, ports = _design()
    blocks = rtlil_budget(rtlil.convert(top, name="t", ports=ports, emit_src=False), "t")
    assert blocks["arith"]["dsp"] == 4 + 4                       # 2 x 2 tiles each
    assert blocks["arith"]["multipliers"] == {"33x33": 1, "24x24": 1}
    assert blocks["(top)"]["ff"] == 8      # r (a synchronous read port's register is the memory's)
    [mem] = blocks["(top)"]["memories"].values()
    assert mem == {"bits": 1024, "width": 16, "depth": 64, "read_ports": 2, "write_ports": 1}


def test_fpga_valus_match_synthesis():
    """The SIMD's lanes in three stages, registers between them (8 lanes: 66-bit extended
    operands and more), four DSP blocks a lane for each unit's multiplier."""
    cfg = get_config("fpga").replace(lanes=8)
    staged = {top: budget(cfg, top)["total"] for top in ("valu_int", "valu_fp")}
    assert all(t["dsp"] == 32 and t["ff"] > 8 * 66 * 3 for t in staged.values()), staged


def test_cli_budget(capsys):
    assert cli.main(["fpga", "--budget", "--block", "valu_int", "--config", "fpga"]) == 0
    out = capsys.readouterr().out
    assert "total" in out and "LFE5U-85F" in out and "dsp fits" in out
