"""dcu/vpost/vcse.py: identical definitions of unnamed nets merged, so that a compiled simulator
computes each once; the Verilog still describes the same hardware (Icarus runs it)."""
import re

from amaranth.hdl import Array, Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from dcu.vpost.vcse import merge_module
from dcu.vpost.vopt import simulation_verilog
from tests.iverilog_tb import same_as_amaranths_verilog


class Picks(wiring.Component):
    """A register file read through an ``Array`` in several places, as the scalar cache reads
    its slots: Amaranth writes the selection once per use."""
    a: In(8)
    b: In(8)
    y: Out(8)

    def elaborate(self, platform):
        m = Module()
        regs = Array(Signal(8, name=f"r{i}") for i in range(4))
        m.d.sync += regs[self.a[:2]].eq(self.b)
        picked = regs[self.a[2:4]]
        pair = Cat(picked, picked) >> self.a[4:7]       # the selection twice, the pair twice
        with m.If(self.a[7]):
            m.d.comb += self.y.eq(Cat(pair[:4], picked[4:]))
        with m.Else():
            m.d.comb += self.y.eq(pair[:8] ^ picked)
        return m


def test_a_selection_used_in_several_places_is_made_once(tmp_path):
    stats = {}
    text = simulation_verilog(Picks(), "regs", keep_depth=None, stats=stats)
    assert stats["nets_merged"] >= 3, stats
    # one process selects among r0..r3 (each case item reads one of them once)
    assert len(re.findall(r"= r0;$", text, re.M)) == 1, text
    assert len(re.findall(r"\} >> ", text)) == 1, text
    same_as_amaranths_verilog(tmp_path, Picks(), text)


_BODY = """  input [3:0] s;
  wire [3:0] s;
  output [7:0] o;
  wire [7:0] o;
  wire [7:0] named;
  reg [7:0] n_dd0_1 ;
  reg [7:0] n_dd0_2 ;
  reg [3:0] n_dd0_3 ;
  wire [7:0] n_dd0_4 ;
  wire [7:0] n_dd0_5 ;
  always @* begin
    n_dd0_1  = 8'h00;
    if (s[0]) n_dd0_1  = 8'h0f;
  end
  always @* begin
    n_dd0_2  = 8'h00;
    if (s[0]) n_dd0_2  = 8'h0f;
  end
  always @* begin
    n_dd0_3  = 4'h0;
    if (s[0]) n_dd0_3  = 4'hf;
  end
  assign n_dd0_4  = n_dd0_1  + s;
  assign n_dd0_5  = n_dd0_2  + s;
  assign named = n_dd0_1  + s;
  assign o = n_dd0_4  ^ n_dd0_5  ^ named ^ n_dd0_3 ;"""


def test_only_unnamed_nets_of_the_same_width_and_text_merge_and_merges_repeat():
    lines, n = merge_module(_BODY.split("\n"))
    text = "\n".join(lines)
    # n_dd0_2 is n_dd0_1; then n_dd0_5 reads what n_dd0_4 reads and goes too; n_dd0_3 has
    # another width; the named wire and the port stay
    assert n == 2, text
    assert "n_dd0_2" not in text and "n_dd0_5" not in text
    assert "  assign o = n_dd0_4  ^ n_dd0_4  ^ named ^ n_dd0_3 ;" in text
    assert "  assign named = n_dd0_1  + s;" in text and "  reg [3:0] n_dd0_3 ;" in text
    assert text.count("always @*") == 2


def test_a_process_that_assigns_slices_of_two_nets_together_is_not_merged():
    """``{ a [1:0], b [3:0] } = ...`` assigns two nets: dropping a copy of the process
    would leave its second net undriven. Only the merged net's own name is left out of the
    comparison, and the other net differs between the copies (a net has one driver)."""
    body = """  input [7:0] s;
  wire [7:0] s;
  reg [3:0] n_dd0_1 ;
  reg [3:0] n_dd0_2 ;
  reg [3:0] n_dd0_3 ;
  reg [3:0] n_dd0_4 ;
  always @* begin
    n_dd0_1  = 4'h0;
    { n_dd0_1 [1:0], n_dd0_2 [3:0] } = s[5:0];
  end
  always @* begin
    n_dd0_3  = 4'h0;
    { n_dd0_3 [1:0], n_dd0_4 [3:0] } = s[5:0];
  end"""
    lines, n = merge_module(body.split("\n"))
    assert n == 0 and lines == body.split("\n")
