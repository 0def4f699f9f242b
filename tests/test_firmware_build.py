"""Build checks for the firmware tests (firmware_tests/manifest.py).

Every manifest source assembles (llvm-mc-19) or compiles (clang-19 with dcu.toolchain's
flags, the device library and dcu/include/dcu_device.h) and links (ld.lld-19); every entry's kernel
descriptor NAME.kd exists; golden functions run on generated inputs and return arrays
of the argument's shape and dtype; the exact-FMA reference agrees with a Fraction
reference; the order-independent checks accept a valid result and reject a wrong one.
These tests do not run kernels.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

from firmware_tests import manifest
from firmware_tests.manifest import TESTS, fma32, fma32_exact

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "dcu", "include", "dcu_device.h")
TOOLS = ["clang-19", "llvm-mc-19", "ld.lld-19", "llvm-readelf-19"]

needs_tools = pytest.mark.skipif(any(shutil.which(t) is None for t in TOOLS),
                                 reason="LLVM 19 tools (clang-19, llvm-mc-19, ld.lld-19) not installed")

_BUILD_DIR = tempfile.mkdtemp(prefix="dcu_fw_build_")


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}\n{r.stderr}"
    return r.stdout


@functools.lru_cache(maxsize=None)
def build(source: str, wgp: bool) -> str:
    """Build firmware_tests/<source> to a .hsaco with the project's flags; return its path."""
    src = os.path.join(manifest.HERE, source)
    base = os.path.join(_BUILD_DIR, source.replace(".", "_") + ("_wgp" if wgp else ""))
    obj, hsaco = base + ".o", base + ".hsaco"
    if source.endswith(".cl"):
        from dcu import toolchain
        libs = [a for lib in toolchain.device_library()
                for a in ("-Xclang", "-mlink-builtin-bitcode", "-Xclang", str(lib))]
        _run(["clang-19", *toolchain.cl_flags(wgp), *libs, "-include", HEADER, "-c", src, "-o", obj])
    else:
        _run(["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1200", "-filetype=obj", src, "-o", obj])
    _run(["ld.lld-19", "-shared", obj, "-o", hsaco])
    return hsaco


def _symbols(hsaco: str) -> set[str]:
    out = _run(["llvm-readelf-19", "--symbols", "--wide", hsaco])
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[0].rstrip(":").isdigit():
            syms.add(parts[7])
    return syms


def _bytes(a):
    return np.ascontiguousarray(np.atleast_1d(np.asarray(a))).view(np.uint8)


SOURCES = sorted({(t.source, t.wgp) for t in TESTS})


def test_names_unique():
    names = [t.name for t in TESTS]
    assert len(names) == len(set(names))
    for t in TESTS:
        assert manifest.get(t.name) is t
    with pytest.raises(KeyError):
        manifest.get("no_such_test")


def test_enough_sources_and_forms():
    sources = {t.source for t in TESTS}
    assert len(sources) >= 22
    assert any(s.endswith(".s") for s in sources) and any(s.endswith(".cl") for s in sources)
    for s in sources:
        assert os.path.isfile(os.path.join(manifest.HERE, s)), s
        assert manifest.path(next(t for t in TESTS if t.source == s)) == os.path.join(manifest.HERE, s)
    stems_both = {s[:-2] for s in sources if s.endswith(".s")} & {s[:-3] for s in sources if s.endswith(".cl")}
    assert len(stems_both) >= 5, stems_both
    assert any(t.wgp for t in TESTS)
    assert any(t.ulp_tol for t in TESTS)


def test_launch_shapes():
    for t in TESTS:
        assert 1 <= len(t.grid) <= 3 and len(t.grid) == len(t.block), t.name
        assert all(int(g) >= 1 for g in t.grid) and all(int(b) >= 1 for b in t.block), t.name
        assert int(np.prod(t.block)) <= 1024, t.name


@needs_tools
@pytest.mark.parametrize("source,wgp", SOURCES, ids=[f"{s}{'-wgp' if w else ''}" for s, w in SOURCES])
def test_source_builds(source, wgp):
    hsaco = build(source, wgp)
    assert os.path.getsize(hsaco) > 0
    syms = _symbols(hsaco)
    for t in TESTS:
        if t.source == source and t.wgp == wgp:
            assert t.kernel in syms, f"{t.name}: kernel symbol {t.kernel} missing"
            assert t.kernel + ".kd" in syms, f"{t.name}: descriptor {t.kernel}.kd missing"


@needs_tools
def test_toolchain_build_if_available():
    """When dcu.toolchain exists, it builds every source too and finds the same kernels."""
    toolchain = pytest.importorskip("dcu.toolchain")
    for source, wgp in SOURCES:
        out = toolchain.build(os.path.join(manifest.HERE, source), wgp=wgp)
        syms = _symbols(str(out))
        for t in TESTS:
            if t.source == source and t.wgp == wgp:
                assert t.kernel + ".kd" in syms, (t.name, out)


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_golden_shapes(test):
    rng = np.random.default_rng(12345)
    args = test.make_args(rng)
    assert isinstance(args, list) and args
    for a in args:
        assert isinstance(a, (np.ndarray, np.generic)), (test.name, type(a))
        if isinstance(a, np.ndarray):
            assert a.flags.c_contiguous and a.size > 0
    snapshot = [a.copy() for a in args]
    expected = test.golden(args)
    assert isinstance(expected, dict)
    for idx, exp in expected.items():
        assert isinstance(args[idx], np.ndarray), (test.name, idx)
        assert isinstance(exp, np.ndarray), (test.name, idx)
        assert exp.shape == args[idx].shape and exp.dtype == args[idx].dtype, (test.name, idx)
    for a, b in zip(args, snapshot):  # golden must not modify its inputs
        assert np.array_equal(_bytes(a), _bytes(b)), test.name
    # deterministic inputs
    again = test.make_args(np.random.default_rng(12345))
    for a, b in zip(args, again):
        assert np.array_equal(_bytes(a), _bytes(b)), test.name
    if not expected:
        assert test.check is not None, f"{test.name}: neither golden outputs nor a check"


def test_fma32_matches_fraction_reference():
    rng = np.random.default_rng(7)
    n = 3000
    a = rng.uniform(-2, 2, n).astype(np.float32)
    b = rng.uniform(-2, 2, n).astype(np.float32)
    c = rng.uniform(-4, 4, n).astype(np.float32)
    # hard cases: near-cancellation, huge/small magnitudes, exact ties, zeros, subnormals
    c[:500] = (-(a[:500].astype(np.float64) * b[:500])).astype(np.float32)
    a[500:600] = np.float32(1 + 2 ** -12)
    b[500:600] = np.float32(1 + 2 ** -12)
    c[500:600] = np.float32(2 ** -24) * rng.integers(-3, 4, 100).astype(np.float32)
    a[600:700] *= np.float32(2 ** 60)
    b[600:700] *= np.float32(2 ** 60)
    a[700:800] *= np.float32(2 ** -70)
    b[700:800] *= np.float32(2 ** -70)
    c[700:800] *= np.float32(2 ** -130)
    a[800:810] = 0.0
    c[800:805] = -0.0
    b[805:810] = -b[805:810]
    got = fma32(a, b, c)
    ref = np.array([fma32_exact(x, y, z) for x, y, z in zip(a, b, c)], np.float32)
    assert np.array_equal(got.view(np.uint32), ref.view(np.uint32))


def test_fma32_double_rounding_case():
    # a*b + c lies just above a float32 tie; rounding through float64 would round the
    # tie to even, the exact answer rounds up.
    a = np.float32(1 + 2 ** -23)
    b = np.float32(1 + 2 ** -23)
    c = np.float32(2 ** -24)
    assert fma32(a, b, c) == fma32_exact(a, b, c)
    assert fma32(a, b, c) == np.float32(1 + 3 * 2 ** -23)  # 1 + 2^-22 + 2^-24 + 2^-46 -> up


def _simulate_atomics(inputs, rng):
    """Run global_atomics' semantics in a random interleaving (per-lane atomics)."""
    v, c = inputs[0], inputs[1]
    c = c.astype(np.uint64).copy()
    xc = int(inputs[5][0])
    n = v.size
    ticket = np.zeros(n, np.uint32)
    xold = np.zeros(n, np.uint32)
    aold = np.zeros(n, np.uint32)
    for i in (int(j) for j in rng.permutation(n)):
        x = int(v[i])
        ticket[i] = c[0]
        c[0] = (c[0] + 1) & 0xFFFFFFFF
        c[1] = (c[1] + x) & 0xFFFFFFFF
        c[2] = np.int32(min(int(np.uint32(c[2]).view(np.int32)), int(np.uint32(x).view(np.int32)))).view(np.uint32)
        c[3] = np.int32(max(int(np.uint32(c[3]).view(np.int32)), int(np.uint32(x).view(np.int32)))).view(np.uint32)
        c[4] = min(int(c[4]), x)
        c[5] = max(int(c[5]), x)
        c[6] &= x | 0x80000001
        c[7] |= x & 0x00F0F0F0
        c[8] ^= x
        xold[i], xc = xc, x
        c[10] = (c[10] + x) & 0xFFFFFFFF
        c[11] = (c[11] - (x & 0xFF)) & 0xFFFFFFFF
        k = 16 + (i & 15)
        aold[i] = c[k]
        c[k] = (c[k] + i) & 0xFFFFFFFF
    return [v, c.astype(np.uint32), ticket, xold, aold, np.array([xc], np.uint32)]


def test_atomics_golden_and_check_on_a_simulated_order():
    t = manifest.get("global_atomics_cl")
    inputs = t.make_args(np.random.default_rng(3))
    outputs = _simulate_atomics(inputs, np.random.default_rng(4))
    manifest.check_outputs(t, inputs, outputs)
    bad = [o.copy() if isinstance(o, np.ndarray) else o for o in outputs]
    bad[4][5] += 1
    with pytest.raises(AssertionError):
        manifest.check_outputs(t, inputs, bad)
    bad = [o.copy() if isinstance(o, np.ndarray) else o for o in outputs]
    bad[2][0] = bad[2][1]
    with pytest.raises(AssertionError):
        manifest.check_outputs(t, inputs, bad)


@pytest.mark.parametrize("name,unroll", [("wave_xy_asm", 4), ("wave_xy_u8_asm", 8)])
def test_wave_xy_check(name, unroll):
    t = manifest.get(name)
    inputs = t.make_args(np.random.default_rng(5))
    chain, xbuf, dst, K, cap = inputs
    idx = 0
    seen = set()
    for _ in range(int(K)):
        idx = int(chain[idx])
        assert idx % 32 == 0 and idx not in seen  # one node per 128-byte line, no early cycle
        seen.add(idx)
    out = dst.copy()
    out[0], out[1], out[2] = idx, int(K), 37
    out[16:48] = (xbuf.reshape(unroll, 32).astype(np.uint64).sum(axis=0) * 37) & 0xFFFFFFFF
    outputs = [chain, xbuf, out, K, cap]
    manifest.check_outputs(t, inputs, outputs)
    out2 = out.copy()
    out2[2] = 38
    with pytest.raises(AssertionError):
        manifest.check_outputs(t, inputs, [chain, xbuf, out2, K, cap])


def test_check_outputs_ulp_tolerance():
    t = manifest.get("transcendental_cl")
    inputs = t.make_args(np.random.default_rng(9))
    exp = t.golden(inputs)[2]
    near = (exp.view(np.int32) + np.int32(1)).view(np.float32)
    manifest.check_outputs(t, inputs, [inputs[0], inputs[1], near])
    far = (exp.view(np.int32) + np.int32(2)).view(np.float32)
    with pytest.raises(AssertionError):
        manifest.check_outputs(t, inputs, [inputs[0], inputs[1], far])


def test_int_alu_reference_spot_values():
    x = np.array([0x80000000, 0xFFFFFFFF, 0x12345678], np.uint32)
    y = np.array([0x00000001, 0x00000004, 0x0000000F], np.uint32)
    o = manifest.int_alu_ref(x, y).reshape(3, 20)
    assert o[0, 2] == 0xFFFFFFFF                    # mul_hi_i32(INT_MIN, 1) = -1
    assert o[1, 5] == 0xFFFFFFF0                    # 0xffffffff << 4
    assert o[1, 7] == 0xFFFFFFFF                    # arithmetic shift of -1
    assert o[2, 15] == ((0x12345678 << 15) | (0x12345678 >> 17)) & 0xFFFFFFFF
    assert o[0, 13] == 31 and o[1, 14] == 4         # ctz(0x80000000), clz(0xffffffff >> 4)
    assert o[1, 11] == 0xFFFFFFFF and o[0, 11] == 1  # brev
