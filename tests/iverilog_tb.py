"""Icarus Verilog testbenches for the dcu/vpost rewrites' tests: a design's outputs on every
cycle of a stimulus, from a rewritten Verilog and from Amaranth's own, must be the same."""
from __future__ import annotations

import random
import shutil
import subprocess

import pytest
from amaranth.back import verilog

from tests.lint import lint_text


def simulate_regs(tmp_path, text, tag, stimulus):
    """The outputs ``y`` of module ``regs`` (clk, rst, a, b) in ``text``, a line per cycle of ``stimulus``."""
    (tmp_path / f"{tag}.v").write_text(text)
    lines = ["module tb;", "reg clk = 0, rst = 1; reg [7:0] a = 0, b = 0; wire [7:0] y;",
             "regs dut(.clk(clk), .rst(rst), .a(a), .b(b), .y(y));", "initial begin",
             "#1 clk = 1; #1 clk = 0; rst = 0;"]
    lines += [f"a = {a}; b = {b}; #1 clk = 1; #1 clk = 0; $display(\"%h\", y);" for a, b in stimulus]
    lines += ["$finish;", "end", "endmodule"]
    (tmp_path / f"tb_{tag}.v").write_text("\n".join(lines))
    exe = tmp_path / f"{tag}.vvp"
    subprocess.run(["iverilog", "-o", str(exe), str(tmp_path / f"tb_{tag}.v"), str(tmp_path / f"{tag}.v")], check=True)
    return subprocess.run(["vvp", "-n", str(exe)], capture_output=True, text=True, check=True).stdout


def same_as_amaranths_verilog(tmp_path, design, text):
    """``text`` lints and, as module ``regs``, computes what Amaranth's Verilog of ``design`` does."""
    lint_text(text, tmp_path / "ram.v")
    if not shutil.which("iverilog"):
        pytest.skip("iverilog not found: apt-get install -y iverilog")
    rng = random.Random(6)
    stimulus = [(rng.choice([rng.randrange(256), rng.randrange(256) & 0xC3]), rng.randrange(256)) for _ in range(300)]
    want = simulate_regs(tmp_path, verilog.convert(design, name="regs", emit_src=False), "original", stimulus)
    got = simulate_regs(tmp_path, text, "rewritten", stimulus)
    assert len(set(want.splitlines())) > 20 and "x" not in want
    assert got == want


def simulate_top(tmp_path, text: str, tag: str, stimulus) -> str:
    """The outputs y0, y1, y2 of module ``top`` (clk, rst, a, addr) in ``text``, a line per cycle."""
    (tmp_path / f"{tag}.v").write_text(text)
    lines = ["`timescale 1ns/1ps", "module tb;", "reg clk = 0, rst = 1; reg [7:0] a = 0; reg [1:0] addr = 0;",
             "wire [7:0] y0, y1, y2;", "top dut(.clk(clk), .rst(rst), .a(a), .addr(addr), .y0(y0), .y1(y1), .y2(y2));",
             "initial begin", "#1 clk = 1; #1 clk = 0; rst = 0;"]
    for a, addr in stimulus:
        lines.append(f"a = {a}; addr = {addr}; #1 clk = 1; #1 clk = 0; $display(\"%h %h %h\", y0, y1, y2);")
    lines += ["$finish;", "end", "endmodule"]
    (tmp_path / f"tb_{tag}.v").write_text("\n".join(lines))
    exe = tmp_path / f"{tag}.vvp"
    subprocess.run(["iverilog", "-o", str(exe), str(tmp_path / f"tb_{tag}.v"), str(tmp_path / f"{tag}.v")], check=True)
    return subprocess.run(["vvp", "-n", str(exe)], capture_output=True, text=True, check=True).stdout
