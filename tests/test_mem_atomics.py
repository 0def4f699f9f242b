"""The 64-bit, mask-or, float and exchange atomics of the model (global, flat and DS) against
numpy goldens written from the ISA's pseudocode.

Every lane of a wave applies each operation once to one shared slot with the returning form and
once to another without. The lanes race, so the checks hold whatever order they took: the
returned values must chain into a serial order of the lanes that ends in the slot's final value
(``serial_order``), and the data of the non-returning forms is chosen so that every order gives
the same final value (or, for swap and a single-winner cmpswap, one of the lanes' data).
A compiled OpenCL C kernel checks that clang's 64-bit atomics on ``long`` are these instructions.
"""
from __future__ import annotations

import numpy as np
import pytest

import dcu
from dcu import toolchain
from tests import asmkernel
from tests.asmutil import needs_llvm

pytestmark = needs_llvm
LANES = 32


def _signed(x: int, bits: int) -> int:
    return x - (1 << bits) if x >> (bits - 1) else x


def _f32(x: int) -> float:
    return float(np.uint32(x).view(np.float32))


def semantics(key: str, bits: int):
    """f(mem, data, data2) -> new memory value, from the DS_*/GLOBAL_ATOMIC_* pseudocode."""
    mask = (1 << bits) - 1
    return {
        "add": lambda m, d, c: (m + d) & mask,
        "sub": lambda m, d, c: (m - d) & mask,
        "rsub": lambda m, d, c: (d - m) & mask,
        "inc": lambda m, d, c: 0 if m >= d else m + 1,
        "dec": lambda m, d, c: d if m == 0 or m > d else m - 1,
        "min_i": lambda m, d, c: d if _signed(d, bits) < _signed(m, bits) else m,
        "max_i": lambda m, d, c: d if _signed(d, bits) >= _signed(m, bits) else m,
        "min_u": lambda m, d, c: min(m, d),
        "max_u": lambda m, d, c: max(m, d),
        "and": lambda m, d, c: m & d,
        "or": lambda m, d, c: m | d,
        "xor": lambda m, d, c: m ^ d,
        "swap": lambda m, d, c: d,
        "cmpswap": lambda m, d, c: d if m == c else m,
        "mskor": lambda m, d, c: (m & ~d & mask) | c,
        # the data here has no NaN and no zero: plain IEEE arithmetic, exact for these sums
        "add_f": lambda m, d, c: int(np.float32(_f32(m) + _f32(d)).view(np.uint32)),
        "min_num_f": lambda m, d, c: d if _f32(d) < _f32(m) else m,
        "max_num_f": lambda m, d, c: d if _f32(d) > _f32(m) else m,
    }[key]


def serial_order(fn, init: int, data, data2, old, final, budget: int = 100_000) -> list[int] | None:
    """An order of the lanes in which applying ``fn`` from ``init`` hands each lane the value
    it returned and ends at ``final``; None if there is none (or none within ``budget`` steps
    of the search, which only a wrong result makes long)."""
    n = len(old)
    used = [False] * n
    order: list[int] = []
    steps = [budget]

    def walk(cur: int, left: int) -> bool:
        steps[0] -= 1
        if steps[0] < 0:
            return False
        if left == 0:
            return cur == final
        ready = [i for i in range(n) if not used[i] and old[i] == cur]
        # a lane that leaves the value as it is can go first: it changes nothing for the others
        idle = [i for i in ready if fn(cur, data[i], data2[i]) == cur]
        for i in idle or ready:
            used[i] = True
            order.append(i)
            if idle:
                continue
            if walk(fn(cur, data[i], data2[i]), left - 1):
                return True
            used[i] = False
            order.pop()
        if idle:
            if walk(cur, left - len(idle)):
                return True
            for i in idle:
                used[i] = False
                order.pop()
        return False

    return order if walk(init, n) else None


def test_serial_order_rejects_impossible_returns():
    add = semantics("add", 32)
    assert serial_order(add, 10, [1, 2], [0, 0], [10, 11], 13) == [0, 1]
    assert serial_order(add, 10, [1, 2], [0, 0], [12, 10], 13) == [1, 0]
    assert serial_order(add, 10, [1, 2], [0, 0], [10, 10], 13) is None
    assert serial_order(add, 10, [1, 2], [0, 0], [10, 11], 14) is None


# -- operands ---------------------------------------------------------------------------------
def _key(op: str) -> tuple[str, int]:
    """(semantics key, bits) of an operation suffix such as ``add_rtn_u64`` or ``cmpstore_b64``."""
    base, typ = op.replace("_rtn", "").rsplit("_", 1)
    base = {"storexchg": "swap", "cmpstore": "cmpswap"}.get(base, base)
    if base in ("min", "max") or typ == "f32":
        base += "_" + typ[0]
    return base, int(typ[1:])


def operands(key: str, bits: int, rng, returning: bool):
    """(initial value, data, data2) of one slot. Non-returning forms get data that gives the
    same final value in every lane order (uniform, lane-owned bits, or commutative)."""
    mask = (1 << bits) - 1
    rand = [int(x) & mask for x in rng.integers(0, 1 << 63, LANES, dtype=np.uint64) * 3 + 1]
    init = int(rng.integers(0, 1 << 62)) & mask
    zero = [0] * LANES
    if key in ("inc", "dec"):
        if returning:
            return 5, [int(x) for x in rng.permutation(LANES) + 3], zero
        return 7, [20] * LANES, zero
    if key == "rsub" and not returning:
        return init, [rand[0]] * LANES, zero
    if key == "cmpswap":
        if returning:                        # lane p[k] expects k and writes k + 1
            p = rng.permutation(LANES)
            return 0, [int(np.flatnonzero(p == lane)[0]) + 1 for lane in range(LANES)], \
                [int(np.flatnonzero(p == lane)[0]) for lane in range(LANES)]
        return init, rand, [init] * LANES    # one winner
    if key == "mskor":
        if returning:
            return init, rand, [int(x) & mask for x in rng.integers(0, 1 << 63, LANES, dtype=np.uint64)]
        own = [((1 << lane) | (1 << (lane + 32))) & mask for lane in range(LANES)]
        return init, own, [o & r for o, r in zip(own, rand)]
    if key == "add_f":
        quarters = rng.choice(np.arange(1, 4000), LANES, replace=False).astype(np.float32) * 0.25
        return int(np.float32(1.5).view(np.uint32)), [int(x) for x in quarters.view(np.uint32)], zero
    if key in ("min_num_f", "max_num_f"):
        vals = (rng.choice(np.arange(1, 100000), LANES + 1, replace=False) - 50000).astype(np.float32) / 7
        vals = [int(x) for x in vals.view(np.uint32)]
        return vals[-1], vals[:-1], zero
    return init, rand, zero


def expected_finals(key: str, bits: int, init: int, data, data2) -> set[int]:
    """The final values the non-returning form may leave (see ``operands``)."""
    if key == "swap":
        return set(data)
    if key == "cmpswap":
        return set(data)
    fn, cur = semantics(key, bits), init
    for d, c in zip(data, data2):
        cur = fn(cur, d, c)
    return {cur}


# -- kernels ----------------------------------------------------------------------------------
def _regs(bits: int, first: int) -> str:
    return f"v{first}" if bits == 32 else f"v[{first}:{first + 1}]"


def _vmem_kernel(space: str, ops: list[str]) -> str:
    """Per op j: load the lane's data (v[2:3]) and data2 (v[4:5]); the returning form on slot j,
    the other on slot len(ops) + j; store the returned value. s[4:5] data, s[6:7] data2,
    s[8:9] slots, s[10:11] returned values."""
    lines = ["  s_load_b256 s[4:11], s[0:1], 0x0", "  v_lshlrev_b32 v1, 3, v0", "  v_mov_b32 v10, 0",
             "  s_wait_kmcnt 0", "  v_mov_b32 v12, s8", "  v_mov_b32 v13, s9"]
    for j, op in enumerate(ops):
        key, bits = _key(op)
        assert key != "cmpswap" or bits == 64          # {data, compare} must be v[2:5]
        src = "v[2:5]" if key == "cmpswap" else _regs(bits, 2)
        lines += [f"  global_load_b64 v[2:3], v1, s[4:5] offset:{j * 256}",
                  f"  global_load_b64 v[4:5], v1, s[6:7] offset:{j * 256}", "  s_wait_loadcnt 0"]
        dst = _regs(bits, 6)
        addr = ("v10", ", s[8:9]") if space == "global" else ("v[12:13]", "")
        lines += [f"  {space}_atomic_{op} {dst}, {addr[0]}, {src}{addr[1]} offset:{8 * j} th:TH_ATOMIC_RETURN",
                  f"  {space}_atomic_{op} {addr[0]}, {src}{addr[1]} offset:{8 * (len(ops) + j)}",
                  "  s_wait_loadcnt 0", f"  global_store_b64 v1, v[6:7], s[10:11] offset:{j * 256}"]
    return "\n".join(lines + ["  s_endpgm"])


def _ds_kernel(ops: list[tuple[str, str | None]]) -> str:
    """As ``_vmem_kernel`` on LDS slots, which lane k loads from and stores back to slots[k]."""
    lines = ["  s_load_b256 s[4:11], s[0:1], 0x0", "  v_lshlrev_b32 v1, 3, v0", "  v_mov_b32 v10, 0",
             "  s_wait_kmcnt 0", "  global_load_b64 v[2:3], v1, s[8:9]", "  s_wait_loadcnt 0",
             "  ds_store_b64 v1, v[2:3]", "  s_wait_dscnt 0"]
    for j, (rtn, plain) in enumerate(ops):
        key, bits = _key(rtn[3:])
        two = key in ("cmpswap", "mskor")
        data = _regs(bits, 2) + (f", {_regs(bits, 4)}" if two else "")
        lines += [f"  global_load_b64 v[2:3], v1, s[4:5] offset:{j * 256}",
                  f"  global_load_b64 v[4:5], v1, s[6:7] offset:{j * 256}", "  s_wait_loadcnt 0",
                  f"  {rtn} {_regs(bits, 6)}, v10, {data} offset:{8 * j}"]
        if plain:
            lines.append(f"  {plain} v10, {data} offset:{8 * (len(ops) + j)}")
        lines += ["  s_wait_dscnt 0", f"  global_store_b64 v1, v[6:7], s[10:11] offset:{j * 256}"]
    lines += ["  ds_load_b64 v[2:3], v1", "  s_wait_dscnt 0", "  global_store_b64 v1, v[2:3], s[8:9]",
              "  s_endpgm"]
    return "\n".join(lines)


def _run(tmp_path, name, body, specs, lds=0):
    """Launch one wave on the operands of ``specs`` [(key, bits, has a non-returning form)];
    return [(key, bits, init, data, data2, returned, final, (init2, data, data2, final2))]."""
    rng = np.random.default_rng(sum(map(ord, name)))
    n = len(specs)
    data = np.zeros((n, LANES), np.uint64)
    data2 = np.zeros((n, LANES), np.uint64)
    slots = np.zeros(2 * n if lds == 0 else LANES, np.uint64)
    plain = []
    for j, (key, bits, _) in enumerate(specs):
        init, d, c = operands(key, bits, rng, True)
        slots[j], data[j], data2[j] = init, d, c
        plain.append(operands(key, bits, rng, False))
    # the non-returning forms read their operands from the second half of each data row: the
    # kernels load one row per op, so they share it; give them their own slot values only
    kernel = asmkernel.load(tmp_path, name, body, vgprs=16, sgprs=16, lds=lds)
    for j, (init, _, _) in enumerate(plain):
        slots[n + j] = init
    run = dcu.launch(kernel, grid=1, block=LANES, args=[data, data2, slots.copy(), np.zeros((n, LANES), np.uint64)])
    final, ret = run.buffers[2], run.buffers[3]
    out = []
    for j, (key, bits, has_plain) in enumerate(specs):
        mask = (1 << bits) - 1
        d, c = [int(x) & mask for x in data[j]], [int(x) & mask for x in data2[j]]
        out.append((key, bits, int(slots[j]), d, c, [int(x) & mask for x in ret[j]], int(final[j]) & mask,
                    (int(slots[n + j]), int(final[n + j]) & mask) if has_plain else None))
    return out


def _check(results):
    bad = []
    for key, bits, init, d, c, old, final, plain in results:
        if serial_order(semantics(key, bits), init, d, c, old, final) is None:
            bad.append(f"{key}{bits}: returned values do not chain from {init:#x} to {final:#x}")
        if plain is not None:
            init2, final2 = plain
            want = expected_finals(key, bits, init2, d, c)
            if final2 not in want:
                bad.append(f"{key}{bits} (no return): {final2:#x} not in {sorted(map(hex, want))[:4]}")
    assert not bad, "\n".join(bad)


VMEM_OPS = ["swap_b64", "cmpswap_b64", "add_u64", "sub_u64", "min_i64", "min_u64", "max_i64",
            "max_u64", "and_b64", "or_b64", "xor_b64", "inc_u64", "dec_u64", "add_f32",
            "min_num_f32", "max_num_f32"]


@pytest.mark.parametrize("space", ["global", "flat"])
def test_vector_memory_atomics(tmp_path, space):
    """global_atomic_* / flat_atomic_* on 64-bit integers and f32, with and without return."""
    specs = []
    for op in VMEM_OPS:
        key, bits = _key(op)
        specs.append((key, bits, True))
    results = _run(tmp_path, f"{space}_atomics", _vmem_kernel(space, VMEM_OPS), specs)
    _check(_same_plain_operands(results))


def _same_plain_operands(results):
    """The non-returning form of an op reads the same data as the returning one: its final
    value is checked against that data (``operands(returning=True)`` is order-independent for
    the commutative ops; the others are checked by the returned chains only)."""
    out = []
    for key, bits, init, d, c, old, final, plain in results:
        order_free = key in ("add", "sub", "min_i", "max_i", "min_u", "max_u", "and", "or", "xor",
                             "add_f", "min_num_f", "max_num_f", "swap")
        out.append((key, bits, init, d, c, old, final, plain if order_free else None))
    return out


DS_OPS = [("ds_add_rtn_u64", "ds_add_u64"), ("ds_sub_rtn_u64", "ds_sub_u64"),
          ("ds_rsub_rtn_u64", None), ("ds_inc_rtn_u64", None), ("ds_dec_rtn_u64", None),
          ("ds_min_rtn_i64", "ds_min_i64"), ("ds_max_rtn_i64", "ds_max_i64"),
          ("ds_min_rtn_u64", "ds_min_u64"), ("ds_max_rtn_u64", "ds_max_u64"),
          ("ds_and_rtn_b64", "ds_and_b64"), ("ds_or_rtn_b64", "ds_or_b64"), ("ds_xor_rtn_b64", "ds_xor_b64"),
          ("ds_mskor_rtn_b64", None), ("ds_cmpstore_rtn_b64", None), ("ds_storexchg_rtn_b64", None),
          ("ds_mskor_rtn_b32", None)]
DS_FLOAT_OPS = [("ds_add_rtn_f32", "ds_add_f32"), ("ds_min_num_rtn_f32", "ds_min_num_f32"),
                ("ds_max_num_rtn_f32", "ds_max_num_f32"), ("ds_cmpstore_rtn_b32", None)]


@pytest.mark.parametrize("ops", [DS_OPS, DS_FLOAT_OPS], ids=["integer", "float"])
def test_lds_atomics(tmp_path, ops):
    specs = [(*_key(rtn[3:]), plain is not None) for rtn, plain in ops]
    results = _run(tmp_path, "ds_atomics", _ds_kernel(ops), specs, lds=8 * LANES)
    _check(_same_plain_operands(results))


STOREXCHG_BODY = """
  s_load_b64 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 3, v0
  v_lshlrev_b32 v2, 2, v0
  v_lshlrev_b32 v15, 6, v0
  v_add_nc_u32 v3, 0x100, v0
  v_add_nc_u32 v4, 0x200, v0
  v_mov_b32 v5, 0
  v_mov_b32 v6, 0
  v_mov_b32 v7, 0
  ds_store_b32 v2, v0
  ds_store_b32 v2, v0 offset:256
  s_wait_dscnt 0
  ds_storexchg_2addr_rtn_b32 v[8:9], v2, v3, v4 offset1:64
  ds_storexchg_2addr_stride64_rtn_b64 v[10:13], v1, v[3:4], v[5:6] offset0:2 offset1:3
  ds_storexchg_2addr_rtn_b32 v[16:17], v7, v3, v4 offset0:100 offset1:101
  s_wait_dscnt 0
  ds_load_b32 v14, v2
  ds_load_b32 v20, v2 offset:256
  ds_load_b64 v[21:22], v1 offset:1024
  ds_load_b64 v[26:27], v1 offset:1536
  ds_load_b64 v[18:19], v7 offset:400
  s_wait_dscnt 0
  s_wait_kmcnt 0
  global_store_b32 v15, v8, s[4:5] offset:0
  global_store_b32 v15, v9, s[4:5] offset:4
  global_store_b32 v15, v10, s[4:5] offset:8
  global_store_b32 v15, v11, s[4:5] offset:12
  global_store_b32 v15, v12, s[4:5] offset:16
  global_store_b32 v15, v13, s[4:5] offset:20
  global_store_b32 v15, v14, s[4:5] offset:24
  global_store_b32 v15, v20, s[4:5] offset:28
  global_store_b32 v15, v21, s[4:5] offset:32
  global_store_b32 v15, v22, s[4:5] offset:36
  global_store_b32 v15, v16, s[4:5] offset:40
  global_store_b32 v15, v17, s[4:5] offset:44
  global_store_b32 v15, v18, s[4:5] offset:48
  global_store_b32 v15, v19, s[4:5] offset:52
  global_store_b32 v15, v26, s[4:5] offset:56
  global_store_b32 v15, v27, s[4:5] offset:60
  s_endpgm
"""


def test_ds_storexchg_2addr_returns_both_old_elements(tmp_path):
    """Each lane exchanges two elements: its dwords at 4l and 4l + 256 (which held l), its b64
    pair at 1024 + 8l and 1536 + 8l (stride64; never written before: zero), and, all lanes
    racing, the dwords at 400 and 404 (zero at first)."""
    kernel = asmkernel.load(tmp_path, "xchg", STOREXCHG_BODY, vgprs=28, sgprs=8, lds=2048)
    run = dcu.launch(kernel, grid=1, block=LANES, args=[np.zeros(LANES * 16, np.uint32)])
    lane = np.arange(LANES, dtype=np.uint32)
    got = run.buffers[0].reshape(LANES, 16)
    zero = np.zeros(LANES, np.uint32)
    want = {0: lane, 1: lane, 2: zero, 3: zero, 4: zero, 5: zero,        # the old elements
            6: lane + 0x100, 7: lane + 0x200,                            # data0 first, data1 second
            8: lane + 0x100, 9: lane + 0x200, 14: zero, 15: zero}        # b64: {data0} and {data1}
    for col, w in want.items():
        np.testing.assert_array_equal(got[:, col], w, err_msg=f"column {col}")
    # the race on (400, 404): each lane read the pair the lane before it wrote
    pair = lambda lo, hi: [int(a) | int(b) << 32 for a, b in zip(lo, hi)]       # noqa: E731
    final = pair(got[:, 12], got[:, 13])
    assert len(set(final)) == 1
    assert serial_order(semantics("swap", 64), 0, pair(lane + 0x100, lane + 0x200), [0] * LANES,
                        pair(got[:, 10], got[:, 11]), final[0]) is not None


CL_ATOMICS = """
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
__kernel void atomics64(__global ulong *g, __global const ulong *v, __global ulong *ret, __global ulong *lout)
{
    __local ulong l[4];
    size_t i = get_global_id(0);
    uint lid = get_local_id(0);
    if (lid < 4)
        l[lid] = g[8 + lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong x = v[i];
    ret[i] = atom_add(&g[0], x);
    atom_min((volatile __global long *)&g[1], (long)x);
    atom_max(&g[2], x);
    atom_xor(&g[3], x);
    ret[32 + i] = atom_xchg(&g[4], x);
    atom_add(&l[0], x);
    atom_min((volatile __local long *)&l[1], (long)x);
    atom_or(&l[2], x);
    lout[i] = atom_cmpxchg(&l[3], (ulong)lid, (ulong)lid + 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 4)
        g[8 + 4 * (i / 32) + lid] = l[lid];
}
"""


def test_opencl_long_atomics_compile_to_these_instructions(tmp_path):
    src = tmp_path / "atomics64.cl"
    src.write_text(CL_ATOMICS)
    prog = dcu.load_program(src)
    text = toolchain.objdump(prog.binary)
    for inst in ("global_atomic_add_u64", "global_atomic_min_i64", "global_atomic_max_u64",
                 "global_atomic_xor_b64", "global_atomic_swap_b64", "ds_add_u64", "ds_min_i64",
                 "ds_or_b64", "ds_cmpstore_rtn_b64"):
        assert inst in text, inst
    rng = np.random.default_rng(11)
    n = 32                                         # one workgroup of one wave: LDS slots shared
    g = rng.integers(0, 1 << 63, 12, dtype=np.uint64)
    g[8 + 3] = 0
    v = rng.integers(0, 1 << 63, n, dtype=np.uint64) * 2 + 1
    ret, lout = np.zeros(2 * n, np.uint64), np.zeros(n, np.uint64)
    run = dcu.launch(prog.kernel(), grid=1, block=n, args=[g.copy(), v, ret, lout])
    gg, r, lo = run.buffers[0], run.buffers[2], run.buffers[3]
    u = [int(x) for x in v]
    mask = (1 << 64) - 1
    assert int(gg[0]) == (int(g[0]) + sum(u)) & mask
    assert serial_order(semantics("add", 64), int(g[0]), u, [0] * n, [int(x) for x in r[:n]], int(gg[0]))
    assert int(gg[1]) == min([_signed(int(g[1]), 64)] + [_signed(x, 64) for x in u]) & mask
    assert int(gg[2]) == max([int(g[2])] + u)
    assert int(gg[3]) == int(np.bitwise_xor.reduce(np.append(v, g[3])))
    assert serial_order(semantics("swap", 64), int(g[4]), u, [0] * n, [int(x) for x in r[n:]], int(gg[4]))
    assert int(gg[8]) == (int(g[8]) + sum(u)) & mask
    assert int(gg[9]) == min([_signed(int(g[9]), 64)] + [_signed(x, 64) for x in u]) & mask
    assert int(gg[10]) == int(np.bitwise_or.reduce(np.append(v, g[10])))
    # lane k swaps k for k + 1: in whatever order, the returned values chain from 0
    assert serial_order(semantics("cmpswap", 64), 0, list(range(1, n + 1)), list(range(n)),
                        [int(x) for x in lo], int(gg[11]))
