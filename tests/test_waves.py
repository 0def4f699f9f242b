"""dcu/waves.py: the GTKWave save file made from a VCD header.

A compiled simulator's dump (numeric ``ex.inst.op``, HostTop scopes as Verilator writes
them) gets per-SIMD and per-wave groups, the outermost copy of each signal, bit ranges,
and a translate filter that names every OpId; a missing signal is left out. The view of a
real Amaranth dump is checked by tests/test_dcu.py.
"""
from __future__ import annotations

from dcu.waves import gtkw_for_vcd
from hdl.isa_tables import OpId

VCD = """$timescale 1ps $end
$scope module TOP $end
$scope module hosttop $end
$var wire 1 ! busy $end
$var wire 1 " done $end
$scope module dcu $end
$var wire 1 # busy $end
$scope module simd0 $end
$var wire 1 $ issue $end
$var wire 9 % ex.inst.op [8:0] $end
$var wire 48 & pc0 [47:0] $end
$var wire 6 ' loadcnt0 [5:0] $end
$scope module decoder0 $end
$var wire 48 ( pc0 [47:0] $end
$upscope $end
$upscope $end
$scope module lds $end
$var wire 64 ) accesses [63:0] $end
$upscope $end
$upscope $end
$upscope $end
$upscope $end
$enddefinitions $end
#0
0!
#5000
1!
"""


def test_view_of_a_compiled_dump(tmp_path):
    vcd = tmp_path / "run.vcd"
    vcd.write_text(VCD)
    gtkw = open(gtkw_for_vcd(str(vcd), wave_slots=2, simds=1)).read()
    lines = gtkw.splitlines()
    assert "TOP.hosttop.busy" in lines                      # the outermost busy, not the DCU's
    assert "TOP.hosttop.dcu.simd0.pc0[47:0]" in lines      # not the decoder's copy
    assert "TOP.hosttop.dcu.simd0.loadcnt0[5:0]" in lines
    assert "TOP.hosttop.dcu.lds.accesses[63:0]" in lines
    assert "-simd0 wave0" in lines and "-simd0 wave1" not in lines   # wave 1 has no signals here
    i = lines.index("TOP.hosttop.dcu.simd0.ex.inst.op[8:0]")
    assert lines[i - 2] == "@2022" and lines[i - 1].startswith("^1 ")
    table = dict(line.split() for line in open(lines[i - 1][3:]))
    assert table[f"{OpId.S_ENDPGM.value:03X}"] == "s_endpgm"
    assert len(table) == len(OpId)
    assert any(line.startswith("*-") for line in lines)     # zoomed on the run (5000 ps)
