"""Private (scratch) memory and flat addressing: OpenCL C private arrays indexed by data run on
the model through ``dcu.launch`` and ``dcu run``; every scratch_* addressing mode and width against a numpy
model of each lane's private bytes; the lanes' dword interleaving in backing memory (LLVM
AMDGPUUsage, "Private Segment"); faults name the wave, PC, lane and private address; flat_*
reaches the LDS, private and global apertures; the RTL backends refuse a kernel with a private
segment before they simulate anything."""
from __future__ import annotations

import re

import numpy as np
import pytest

import dcu
from dcu import toolchain
from dcu.launch import LaunchError, prepare, private_lane_bytes
from sim.model import ExecutionError, Model
from tests import asmkernel
from tests.asmutil import needs_llvm

pytestmark = needs_llvm
LANES = 32

PRIVATE_CL = """
__kernel void priv(__global const int *in, __global const uint *idx, __global int *out)
{
    size_t i = get_global_id(0);
    int t[48]; uchar b[64]; ushort h[40];
    for (int k = 0; k < 48; k++) t[k] = in[i * 48 + k];
    for (int k = 0; k < 64; k++) b[k] = (uchar)(in[i * 48 + (k % 48)] >> (k & 7));
    for (int k = 0; k < 40; k++) h[k] = (ushort)(in[i * 48 + k] ^ (k * 77));
    uint x = idx[i];
    int acc = 0;
    for (uint k = 0; k < 16; k++) {
        uint r = x * 2654435761u + k * 40503u;
        t[r % 48] += b[(r >> 8) % 64];
        acc += t[(r >> 4) % 48] * (int)(k + 1) + h[(r >> 12) % 40];
        b[(r >> 16) % 64] ^= (uchar)acc;
    }
    out[i] = acc;
}
"""


def _private_golden(inp: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """PRIVATE_CL in numpy (int32 arithmetic wraps; uint indices)."""
    n = idx.size
    t = inp.reshape(n, 48).astype(np.int64)
    k64 = np.arange(64)
    b = ((inp.reshape(n, 48)[:, k64 % 48] >> (k64 & 7)) & 0xFF).astype(np.int64)
    h = (inp.reshape(n, 48)[:, :40].astype(np.int64) ^ (np.arange(40) * 77)) & 0xFFFF
    acc = np.zeros(n, np.int64)
    rows = np.arange(n)
    for k in range(16):
        r = (idx.astype(np.uint64) * 2654435761 + k * 40503) & 0xFFFF_FFFF
        t[rows, r % 48] = (t[rows, r % 48] + b[rows, (r >> 8) % 64]).astype(np.int32)
        acc = (acc + t[rows, (r >> 4) % 48] * (k + 1) + h[rows, (r >> 12) % 40]).astype(np.int32)
        j = (r >> 16) % 64
        b[rows, j] ^= acc & 0xFF
    return acc.astype(np.int32)


def test_private_array_indexed_by_data_runs_on_the_model(tmp_path):
    src = tmp_path / "priv.cl"
    src.write_text(PRIVATE_CL)
    prog = dcu.load_program(src)
    kernel = prog.kernel("priv")
    text = toolchain.objdump(prog.binary)
    assert kernel.private_segment_size > 0 and kernel.enable_private_segment
    assert "scratch_store_" in text and "scratch_load_" in text     # the arrays live in scratch
    rng = np.random.default_rng(5)
    n = 192                                        # 3 workgroups: waves reuse the segments
    inp = rng.integers(-(1 << 20), 1 << 20, n * 48).astype(np.int32)
    idx = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    out = np.zeros(n, np.int32)
    run = dcu.launch(kernel, grid=(3,), block=(64,), args=[inp, idx, out])
    np.testing.assert_array_equal(run.buffers[2], _private_golden(inp, idx))
    assert any("private (scratch)" in c for c in run.report.checks)


def test_dcu_run_of_a_private_array_gives_numpys_result(tmp_path, capsys):
    """The same kernel from the command line, with stock flags (VOPD on), buffers from .npy
    files and the result written back with --out."""
    from dcu.cli import main
    src = tmp_path / "priv.cl"
    src.write_text(PRIVATE_CL)
    rng = np.random.default_rng(6)
    inp = rng.integers(-(1 << 20), 1 << 20, 128 * 48).astype(np.int32)
    idx = rng.integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32)
    np.save(tmp_path / "in.npy", inp)
    np.save(tmp_path / "idx.npy", idx)
    rc = main(["run", str(src), "--grid", "2", "--block", "64", "--arg", f"buf:{tmp_path / 'in.npy'}",
               "--arg", f"buf:{tmp_path / 'idx.npy'}", "--arg", "zeros:128:i32", "--out", str(tmp_path / "out"), "-q"])
    out = capsys.readouterr().out
    assert rc == 0 and "every private (scratch) access fell inside its lane's" in out
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "arg2.npy"), _private_golden(inp, idx))


# -- every scratch_* mode and width, checked against each lane's private bytes -----------------
# Private segment layout (64 bytes per lane) written by MODES_BODY:
#   [0,16) b128 (no address registers) · 16 + 4*(lane%4) b32 (vaddr) · [40,48) b64 (saddr 32
#   + offset 8) · [48,50) b16 (vaddr 8 + saddr 44 - 4) · 50 d16_hi_b8 · [52,54) d16_hi_b16 ·
#   [56,60) b32
MODES_BODY = """
  s_load_b128 s[4:7], s[0:1], 0x0
  v_lshlrev_b32 v2, 5, v0
  v_and_b32 v12, 3, v0
  v_lshl_add_u32 v12, v12, 2, 16
  v_mov_b32 v13, 8
  s_mov_b32 s8, 32
  s_mov_b32 s9, 44
  s_wait_kmcnt 0
  global_load_b128 v[4:7], v2, s[4:5]
  global_load_b128 v[8:11], v2, s[4:5] offset:16
  s_wait_loadcnt 0
  scratch_store_b128 off, v[4:7], off
  scratch_store_b32 v12, v8, off
  scratch_store_b64 off, v[9:10], s8 offset:8
  scratch_store_b16 v13, v11, s9 offset:-4
  scratch_store_d16_hi_b8 off, v11, off offset:50
  scratch_store_d16_hi_b16 off, v8, off offset:52
  scratch_store_b32 off, v9, off offset:56
  scratch_load_b128 v[20:23], off, off
  scratch_load_b32 v24, v12, off
  scratch_load_b64 v[25:26], off, s8 offset:8
  scratch_load_u16 v27, v13, s9 offset:-4
  scratch_load_i16 v28, off, off offset:48
  scratch_load_u8 v29, off, off offset:50
  scratch_load_i8 v30, off, off offset:50
  v_mov_b32 v31, v4
  v_mov_b32 v32, v5
  v_mov_b32 v33, v6
  v_mov_b32 v34, v7
  v_mov_b32 v35, v4
  v_mov_b32 v36, v5
  scratch_load_d16_b16 v31, off, off offset:52
  scratch_load_d16_hi_u8 v32, off, off offset:50
  scratch_load_d16_hi_i8 v33, off, off offset:50
  scratch_load_d16_i8 v34, off, off offset:50
  scratch_load_d16_hi_b16 v35, off, off offset:52
  scratch_load_d16_u8 v36, off, off offset:50
  scratch_load_b96 v[37:39], off, off offset:4
  scratch_load_b32 v40, off, off offset:57
  v_lshlrev_b32 v2, 7, v0
  s_wait_loadcnt 0
  global_store_b128 v2, v[20:23], s[6:7]
  global_store_b128 v2, v[24:27], s[6:7] offset:16
  global_store_b128 v2, v[28:31], s[6:7] offset:32
  global_store_b128 v2, v[32:35], s[6:7] offset:48
  global_store_b128 v2, v[36:39], s[6:7] offset:64
  global_store_b32 v2, v40, s[6:7] offset:80
  s_endpgm
"""


def _le(b: np.ndarray) -> np.ndarray:
    """(lanes, k) bytes -> (lanes,) unsigned little-endian values."""
    return (b.astype(np.uint64) << (8 * np.arange(b.shape[1], dtype=np.uint64))).sum(axis=1)


def _modes_golden(data: np.ndarray) -> np.ndarray:
    """The 21 result dwords of MODES_BODY per lane, from a numpy model of the private bytes."""
    lane = np.arange(LANES)
    v = data.reshape(LANES, 8)
    raw = v.view(np.uint8).reshape(LANES, 32)
    priv = np.zeros((LANES, 64), np.uint8)
    priv[:, 0:16] = raw[:, 0:16]
    sv = 16 + 4 * (lane % 4)
    for i in range(4):
        priv[lane, sv + i] = raw[:, 16 + i]
    priv[:, 40:48] = raw[:, 20:28]
    priv[:, 48:50] = raw[:, 28:30]
    priv[:, 50] = raw[:, 30]                       # v11 bits [23:16]
    priv[:, 52:54] = raw[:, 18:20]                 # v8 bits [31:16]
    priv[:, 56:60] = raw[:, 20:24]
    u16, u8 = _le(priv[:, 48:50]), _le(priv[:, 50:51])
    i16, i8 = u16.astype(np.uint16).view(np.int16), u8.astype(np.uint8).view(np.int8)
    h52 = _le(priv[:, 52:54])
    lo, hi = v & 0xFFFF, v & 0xFFFF_0000
    sx16 = lambda x: x.astype(np.int64) & 0xFFFF                      # noqa: E731
    out = [v[:, 0], v[:, 1], v[:, 2], v[:, 3],
           _le(priv[lane[:, None], sv[:, None] + np.arange(4)]), v[:, 5], v[:, 6], u16,
           i16.astype(np.int32).view(np.uint32), u8, i8.astype(np.int32).view(np.uint32),
           hi[:, 0] | h52,                                            # d16_b16 into v4's copy
           lo[:, 1] | (u8 << 16), lo[:, 2] | (sx16(i8) << 16),        # d16_hi_u8, d16_hi_i8
           hi[:, 3] | sx16(i8), lo[:, 0] | (h52 << 16),               # d16_i8, d16_hi_b16
           hi[:, 1] | u8,                                             # d16_u8
           _le(priv[:, 4:8]), _le(priv[:, 8:12]), _le(priv[:, 12:16]), _le(priv[:, 57:61])]
    return np.stack([np.asarray(x, np.uint64).astype(np.uint32) for x in out], axis=1)


def test_scratch_modes_and_widths(tmp_path):
    kernel = asmkernel.load(tmp_path, "modes", MODES_BODY, vgprs=48, sgprs=16, private=64)
    assert private_lane_bytes(kernel) == 64
    rng = np.random.default_rng(7)
    data = rng.integers(0, 1 << 32, LANES * 8, dtype=np.uint64).astype(np.uint32)
    out = np.zeros(LANES * 32, np.uint32)
    run = dcu.launch(kernel, grid=1, block=LANES, args=[data, out])
    got = run.buffers[1].reshape(LANES, 32)[:, :21]
    want = _modes_golden(data)
    bad = [(lane, col, hex(got[lane, col]), hex(want[lane, col]))
           for lane, col in zip(*np.nonzero(got != want))]
    assert not bad, bad[:10]


LAYOUT_BODY = """
  v_and_b32 v3, 31, v0
  v_lshlrev_b32 v1, 2, v3
  v_add_nc_u32 v2, 0x1000, v0
  s_mov_b32 exec_lo, 0xffff
  scratch_store_b32 off, v2, off offset:8
  s_mov_b32 exec_lo, -1
  scratch_store_b16 v1, v0, off offset:1
  s_endpgm
"""


def test_lanes_are_dword_interleaved_in_backing_memory(tmp_path):
    """Private byte p of lane l is at the wave's base + (p // 4) * 128 + l * 4 + p % 4; a lane
    outside EXEC writes nothing; waves of a workgroup have segments of their own."""
    kernel = asmkernel.load(tmp_path, "layout", LAYOUT_BODY, vgprs=8, sgprs=8, private=136)
    prep = prepare(kernel, (1,), (64,), [])
    Model(prep.mem, prep.code, prep.code_base).run(prep.dispatch)
    d = prep.dispatch
    assert d.scratch_lane_bytes == 136
    back = prep.mem.read_bytes(d.scratch_base, 2 * LANES * 136).reshape(2, 34, LANES, 4)
    want = np.zeros((2, 34, LANES, 4), np.uint8)
    for wave in range(2):
        for lane in range(LANES):
            tid = wave * LANES + lane
            priv = np.zeros(136, np.uint8)
            if lane < 16:
                priv[8:12] = np.frombuffer(np.uint32(0x1000 + tid).tobytes(), np.uint8)
            p = 4 * lane + 1
            priv[p:p + 2] = np.frombuffer(np.uint16(tid).tobytes(), np.uint8)
            want[wave, :, lane, :] = priv.reshape(34, 4)
    np.testing.assert_array_equal(back, want)


# -- faults ----------------------------------------------------------------------------------
FAULT_BODY = """
  v_cmp_eq_u32 vcc_lo, 5, v0
  v_cndmask_b32 v1, 8, {addr}, vcc_lo
  {inst}
  s_endpgm
"""


@pytest.mark.parametrize("inst, addr, nbytes", [
    ("scratch_store_b32 v1, v0, off", 0x40, 4),                 # far past the 16-byte segment
    ("scratch_load_b64 v[2:3], v1, off", 12, 8),                # straddles its end
    ("scratch_load_b32 v2, v1, off offset:-8", 4, 4),           # wraps below 0
])
def test_scratch_access_outside_the_segment_faults_with_lane_and_address(tmp_path, inst, addr, nbytes):
    kernel = asmkernel.load(tmp_path, "fault", FAULT_BODY.format(addr=addr, inst=inst), vgprs=8,
                            sgprs=8, private=16)
    with pytest.raises(ExecutionError) as err:
        dcu.launch(kernel, grid=1, block=LANES, args=[])
    msg = str(err.value)
    private = (addr + (-8 if "-8" in inst else 0)) & 0xFFFF_FFFF
    assert re.search(r"wave 0 at PC 0x[0-9a-f]+", msg), msg
    assert inst.split()[0] in msg
    assert f"lane 5: scratch access of {nbytes} bytes at private address {private:#x}" in msg, msg
    assert "16-byte private segment" in msg


def test_scratch_without_a_private_segment_faults(tmp_path):
    kernel = asmkernel.load(tmp_path, "none", "  scratch_store_b32 off, v0, off\n  s_endpgm",
                            vgprs=4, sgprs=4)
    with pytest.raises(ExecutionError, match="lane 0: .* private address 0x0 .*has none"):
        dcu.launch(kernel, grid=1, block=LANES, args=[])


# -- flat ------------------------------------------------------------------------------------
FLAT_BODY = """
  s_load_b128 s[4:7], s[0:1], 0x0
  s_mov_b64 s[8:9], src_shared_base
  s_mov_b64 s[10:11], src_private_base
  v_lshlrev_b32 v1, 2, v0
  v_mov_b32 v2, v1
  v_mov_b32 v3, s9
  v_mov_b32 v4, 8
  v_mov_b32 v5, s11
  v_mov_b32 v14, 0
  v_mov_b32 v15, s9
  v_add_nc_u32 v6, 100, v0
  s_wait_kmcnt 0
  v_add_co_u32 v8, vcc_lo, s4, v1
  v_add_co_ci_u32 v9, vcc_lo, s5, 0, vcc_lo
  flat_store_b32 v[2:3], v0
  flat_store_b32 v[4:5], v6
  flat_atomic_add_u32 v10, v[8:9], v0 th:TH_ATOMIC_RETURN
  s_wait_storecnt_dscnt 0
  flat_load_b32 v11, v[2:3] offset:4
  flat_load_b32 v12, v[4:5]
  flat_atomic_add_u32 v13, v[14:15], v6 th:TH_ATOMIC_RETURN
  v_lshlrev_b32 v2, 4, v0
  s_wait_loadcnt_dscnt 0
  global_store_b128 v2, v[10:13], s[6:7]
  s_endpgm
"""


def test_flat_reaches_lds_private_and_global(tmp_path):
    kernel = asmkernel.load(tmp_path, "flat", FLAT_BODY, vgprs=16, sgprs=16, lds=128, private=16)
    gbuf = np.arange(1000, 1000 + LANES, dtype=np.uint32)
    out = np.zeros(LANES * 4, np.uint32)
    run = dcu.launch(kernel, grid=1, block=LANES, args=[gbuf.copy(), out])
    lane = np.arange(LANES, dtype=np.uint32)
    np.testing.assert_array_equal(run.buffers[0], gbuf + lane)          # global atomic add
    got = run.buffers[1].reshape(LANES, 4)
    np.testing.assert_array_equal(got[:, 0], gbuf)                      # ... returned the old value
    np.testing.assert_array_equal(got[:, 1], np.append(lane[1:], 0))    # LDS[4(l+1)]; past the end: 0
    np.testing.assert_array_equal(got[:, 2], lane + 100)                # the lane's private dword
    # LDS[0] (lane 0 stored 0) += lane + 100 by every lane: the returned values form a chain
    old = got[:, 3].astype(np.int64)
    order = np.argsort(old)
    np.testing.assert_array_equal(old[order], np.concatenate([[0], np.cumsum((lane + 100)[order])[:-1]]))


def test_flat_kernel_disassembles_as_llvm_prints_it(tmp_path):
    """The aperture registers (src_shared_base ...) and flat/scratch forms print as LLVM does."""
    import isa
    kernel = asmkernel.load(tmp_path, "flat", FLAT_BODY, vgprs=16, sgprs=16, lds=128, private=16)
    ref = {}
    for line in toolchain.objdump(dcu.load_program(tmp_path / "flat.s").binary).splitlines():
        m = re.match(r"^\s+(\S.*?)\s*//\s*([0-9A-Fa-f]{12}):", line)
        if m:
            ref[int(m.group(2), 16)] = " ".join(m.group(1).split())
    prog = isa.decode_program(kernel.code, kernel.code_base)
    mine = {i.pc: " ".join(isa.disassemble(i).split()) for i in prog}
    assert "s_mov_b64 s[8:9], src_shared_base" in mine.values()
    assert mine == ref


# -- the RTL backends ------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["rtl", "verilator"])
def test_rtl_backends_refuse_scratch_before_simulation(tmp_path, monkeypatch, backend):
    import dcu.backends.rtl
    import dcu.backends.verilator

    def simulate(*a, **k):
        raise AssertionError("the RTL was asked to simulate a kernel with a private segment")
    monkeypatch.setattr(dcu.backends.rtl, "run_dispatch", simulate)
    monkeypatch.setattr(dcu.backends.verilator, "run_dispatch", simulate)
    kernel = asmkernel.load(tmp_path, "modes", MODES_BODY, vgprs=48, sgprs=16, private=64)
    with pytest.raises(LaunchError, match=r"backend '%s'.*64 bytes of private \(scratch\) memory per "
                                          r"lane.*backend 'model' runs it" % backend):
        dcu.launch(kernel, grid=1, block=LANES, args=[np.zeros(256, np.uint32), np.zeros(1024, np.uint32)],
                   backend=backend)


def _descriptor_source(name: str, private: int, extra: str) -> str:
    return asmkernel.source(name, "  s_endpgm", vgprs=4, sgprs=8, private=private).replace(
        "  .end_amdhsa_kernel", extra + "\n  .end_amdhsa_kernel")


@pytest.mark.parametrize("private, dynamic, lane_bytes", [(18, 0, 20), (20, 0, 20), (20, 1, 1024), (2000, 1, 2000)])
def test_private_bytes_per_lane_from_the_descriptor(tmp_path, private, dynamic, lane_bytes):
    """The fixed size rounded up to a dword; a dynamic stack gets at least 1 KiB."""
    path = tmp_path / "size.s"
    path.write_text(_descriptor_source("size", private, f"    .amdhsa_uses_dynamic_stack {dynamic}"))
    kernel = dcu.load_program(path).kernel("size")
    assert kernel.private_segment_size == private and kernel.uses_dynamic_stack == bool(dynamic)
    assert kernel.enable_private_segment
    assert private_lane_bytes(kernel) == lane_bytes


SIZE_SGPR_BODY = """
  s_load_b64 s[4:5], s[0:1], 0x0
  v_mov_b32 v1, 0
  v_mov_b32 v2, s2
  s_wait_kmcnt 0
  global_store_b32 v1, v2, s[4:5]
  s_endpgm
"""


def test_private_segment_size_user_sgpr(tmp_path):
    """With the private_segment_size user SGPR enabled it follows the kernarg pointer (s2)."""
    path = tmp_path / "sgpr.s"
    src = asmkernel.source("sgpr", SIZE_SGPR_BODY, vgprs=4, sgprs=8, private=36)
    src = src.replace(".amdhsa_user_sgpr_count 2", ".amdhsa_user_sgpr_count 3\n"
                      "    .amdhsa_user_sgpr_private_segment_size 1")
    path.write_text(src)
    kernel = dcu.load_program(path).kernel("sgpr")
    out = np.zeros(1, np.uint32)
    run = dcu.launch(kernel, grid=1, block=LANES, args=[out])
    assert run.buffers[0][0] == 36
