"""Unit tests of the reference model on small assembled programs.

Expected values are computed here from the ISA's definitions with plain Python integers,
independently of the model's numpy code.
"""
from __future__ import annotations

import numpy as np
import pytest

from sim.memory import GlobalMemory
from isa.abi import Dispatch
from sim.model import BarrierDeadlock, ExecutionError, Model, Watchdog
from tests.asmutil import assemble, needs_llvm

pytestmark = needs_llvm
M32 = 0xFFFF_FFFF


def run(text, block=32, vgprs=16, lds=0, mem=None, user=None, max_instructions=100_000):
    code = assemble(text + "\ns_endpgm")
    mem = mem or GlobalMemory()
    model = Model(mem, code, 0)
    model.run(Dispatch(entry=0, grid=(1, 1, 1), block=(block, 1, 1), vgprs=vgprs, lds_bytes=lds,
                       user_sgprs=user or {}, max_instructions=max_instructions))
    return model


def wave0(text, **kw):
    return run(text, **kw).last_waves[0]


def test_scalar_add_carry_and_scc():
    w = wave0("s_mov_b32 s0, -1\ns_add_co_u32 s1, s0, 2\ns_mov_b32 s2, 0\ns_cselect_b32 s3, 7, 9")
    assert w.s[1] == 1 and w.s[3] == 7  # 0xffffffff + 2 carries out: SCC = 1
    w = wave0("s_mov_b32 s0, 0x7fffffff\ns_add_co_i32 s1, s0, 1")
    assert w.s[1] == 0x8000_0000 and w.scc == 1  # signed overflow


def test_scalar_64bit_shift_and_add():
    w = wave0("s_mov_b64 s[0:1], 0x80000001\ns_lshl_b64 s[2:3], s[0:1], 4\ns_add_nc_u64 s[4:5], s[2:3], s[0:1]")
    v = 0x8000_0001 << 4
    assert (w.s[2], w.s[3]) == (v & M32, v >> 32)
    t = v + 0x8000_0001
    assert (w.s[4], w.s[5]) == (t & M32, t >> 32)


def test_scalar_min_sets_scc_and_bfe():
    w = wave0("s_mov_b32 s0, -5\ns_min_i32 s1, s0, 3")
    assert w.s[1] == (-5 & M32) and w.scc == 1
    w = wave0("s_mov_b32 s0, 0xabcd1234\ns_bfe_u32 s1, s0, 0x80004")  # offset 4, width 8
    assert w.s[1] == (0xabcd1234 >> 4) & 0xFF


def test_saveexec_and_branch_over_inactive():
    text = """
    v_mov_b32 v1, 0
    v_cmp_gt_u32 vcc_lo, 8, v0
    s_and_saveexec_b32 s4, vcc_lo
    s_cbranch_execz skip
    v_mov_b32 v1, 5
skip:
    s_or_b32 exec_lo, exec_lo, s4
    v_add_nc_u32 v2, v1, v0
    """
    w = wave0(text, user=None)
    lanes = np.arange(32)
    assert list(w.v[1]) == [5 if i < 8 else 0 for i in lanes]
    assert list(w.v[2]) == [(5 if i < 8 else 0) + i for i in lanes]
    assert w.s[4] == M32 and w.exec == M32


def test_vector_carry_chain_is_a_64bit_add():
    text = """
    v_mov_b32 v2, -1
    v_mov_b32 v3, 7
    v_add_co_u32 v4, vcc_lo, v2, v0
    v_add_co_ci_u32_e32 v5, vcc_lo, 0, v3, vcc_lo
    """
    w = wave0(text)
    for lane in range(32):
        total = ((7 << 32) | M32) + lane
        assert (int(w.v[4][lane]), int(w.v[5][lane])) == (total & M32, (total >> 32) & M32)


def test_mad_co_u64_u32_and_mul_hi():
    text = """
    v_mov_b32 v1, 0xfffffff0
    v_mad_co_u64_u32 v[2:3], s0, v1, v1, v[0:1]
    v_mul_hi_u32 v4, v1, v1
    """
    w = wave0(text)  # v1 is overwritten before use only in v[0:1]'s high half: compute from the state
    a = 0xFFFF_FFF0
    for lane in range(32):
        acc = lane | (a << 32)
        t = a * a + acc
        assert int(w.v[2][lane]) | (int(w.v[3][lane]) << 32) == t & (2**64 - 1)
        assert int(w.v[4][lane]) == (a * a) >> 32


def test_exec_masks_vector_writes_and_compares():
    text = """
    s_mov_b32 exec_lo, 0x0000ffff
    v_mov_b32 v1, 3
    v_cmp_eq_u32 vcc_lo, 3, v1
    s_mov_b32 exec_lo, -1
    """
    w = wave0(text)
    assert list(w.v[1]) == [3] * 16 + [0] * 16
    assert w.s[106] == 0xFFFF  # inactive lanes write 0 into the compare mask


def test_float_fma_rounds_once():
    # (1 + 2^-23) * (1 - 2^-23) - 1 = -2^-46 exactly; a separately rounded product gives 0.
    text = """
    v_mov_b32 v1, 0x3f800001
    v_mov_b32 v2, 0x3f7ffffe
    v_fma_f32 v3, v1, v2, -1.0
    v_mul_f32 v4, v1, v2
    v_add_f32 v4, -1.0, v4
    """
    w = wave0(text)
    assert int(w.v[3][0]) == np.float32(-(2.0 ** -46)).view(np.uint32)
    assert int(w.v[4][0]) == 0


def test_global_load_store_and_fault_names_lane():
    mem = GlobalMemory()
    buf = mem.allocate(32 * 4, "data")
    mem.write_bytes(buf.base, np.arange(32, dtype=np.uint32) * 3)
    text = """
    v_lshlrev_b32 v1, 2, v0
    global_load_b32 v2, v1, s[0:1]
    s_wait_loadcnt 0
    v_add_nc_u32 v2, 1, v2
    global_store_b32 v1, v2, s[0:1] offset:0
    """
    run(text, mem=mem, user={0: buf.base, 1: 0})
    got = mem.read_bytes(buf.base, 128).view(np.uint32)
    assert list(got) == [3 * i + 1 for i in range(32)]
    with pytest.raises(ExecutionError,
                       match=r"lane 31: access of 4 bytes at 0x[0-9a-f]+ is outside every buffer .*'data'"):
        run("v_lshlrev_b32 v1, 2, v0\nv_add_nc_u32 v1, 4, v1\nglobal_load_b32 v2, v1, s[0:1]",
            mem=mem, user={0: buf.base, 1: 0})


@pytest.mark.parametrize("stride", [0, 1, 2, 3, 4, 8, 16, 31, 32, 33, 64])
def test_lds_conflict_cost_follows_bank_rule(stride):
    text = f"""
    v_mul_u32_u24 v1, {stride * 4}, v0
    ds_load_b32 v2, v1
    s_wait_dscnt 0
    """
    model = run(text, lds=64 * 1024)
    addrs = [lane * stride for lane in range(32)]
    per_bank = {}
    for a in set(addrs):
        per_bank[a % 32] = per_bank.get(a % 32, 0) + 1
    assert model.stats.ds_cycles == max(per_bank.values())
    assert model.stats.counters["dscnt"] == 1


def test_lds_out_of_range_reads_zero_and_drops_writes():
    text = """
    v_mov_b32 v1, 77
    v_lshlrev_b32 v2, 2, v0
    ds_store_b32 v2, v1 offset:64
    s_wait_dscnt 0
    ds_load_b32 v3, v2 offset:64
    s_wait_dscnt 0
    """
    w = wave0(text, lds=128)  # 32 dwords: lanes 16..31 (bytes 128..) are outside
    assert list(w.v[3]) == [77] * 16 + [0] * 16


def test_barrier_across_waves_orders_lds_traffic():
    # Wave k writes lane ids to LDS, barrier, then each lane reads the next wave's slot.
    text = """
    v_lshlrev_b32 v1, 2, v0
    ds_store_b32 v1, v0
    s_wait_dscnt 0
    s_barrier_signal -1
    s_barrier_wait -1
    v_add_nc_u32 v2, 128, v1
    v_and_b32 v2, 0x1ff, v2
    ds_load_b32 v3, v2
    s_wait_dscnt 0
    """
    model = run(text, block=128, lds=512)
    for k, w in enumerate(model.last_waves):
        expect = [((32 * k + i + 32) % 128) for i in range(32)]
        assert list(w.v[3]) == expect


def test_barrier_deadlock_is_reported():
    text = """
    v_cmp_eq_u32 vcc_lo, 0, v0
    s_cmp_eq_u32 ttmp9, 0
    v_readfirstlane_b32 s0, v0
    s_cmp_eq_u32 s0, 0
    s_cbranch_scc1 skip
    s_barrier_signal -1
skip:
    s_barrier_wait -1
    """
    with pytest.raises(BarrierDeadlock, match="never signalled: wave 0"):
        run(text, block=64)


def test_watchdog_names_the_stuck_wave():
    with pytest.raises(Watchdog, match=r"wave 0 at PC 0x0"):
        run("loop:\ns_branch loop", max_instructions=1000)


def test_unknown_encoding_reports_pc_and_dwords():
    model_code = assemble("s_nop 0") + bytes.fromhex("ffffffff")  # 0xffffffff is no valid gfx1200 instruction
    model = Model(GlobalMemory(), model_code, 0)
    with pytest.raises(ExecutionError, match=r"PC 0x4.*ffffffff"):
        model.run(Dispatch(entry=0, grid=(1, 1, 1), block=(32, 1, 1), vgprs=8, lds_bytes=0))


def test_16bit_ops_select_halves_and_preserve_the_other_half():
    text = """
    v_mov_b32 v1, 0x0003fffe
    v_mov_b32 v2, 0x00050004
    v_mov_b32 v3, 0xaaaa5555
    v_add_nc_u16 v3, v1, v2
    v_mov_b32 v4, 0x11112222
    v_add_nc_u16 v4, v1, v2 op_sel:[1,1,1]
    v_add_nc_u16 v5, v1, v2 clamp
    """
    w = wave0(text)
    assert int(w.v[3][0]) == 0xAAAA0000 | ((0xFFFE + 0x0004) & 0xFFFF)   # wraps, high half kept
    assert int(w.v[4][0]) == (((0x0003 + 0x0005) & 0xFFFF) << 16) | 0x2222
    assert int(w.v[5][0]) & 0xFFFF == 0xFFFF                             # clamp saturates


def test_bfe_i32_shifts_arithmetically():
    # offset 28, width 8 reaches past bit 31: the extra bits are copies of the sign
    w = wave0("v_mov_b32 v1, 0x90000000\nv_bfe_i32 v2, v1, 28, 8\nv_bfe_u32 v3, v1, 28, 8")
    assert int(w.v[2][0]) == 0xFFFF_FFF9
    assert int(w.v[3][0]) == 0x9


def test_perm_b32_bytes_signs_and_constants():
    w = wave0("v_mov_b32 v1, 0x8899aabb\nv_mov_b32 v2, 0x11227344\nv_perm_b32 v3, v1, v2, 0x0c0d0904")
    # sel bytes (low first): 4 -> a.byte0 0xbb; 9 -> sign of byte 3 (0x11: 0) -> 0x00; 13 -> 0xff; 12 -> 0x00
    assert int(w.v[3][0]) == 0x00FF00BB


def test_wrexec_writes_new_exec_to_dest():
    w = wave0("s_mov_b32 s0, 0xff00ff00\ns_mov_b32 exec_lo, 0x0000ffff\ns_and_not1_wrexec_b32 s1, s0")
    assert w.exec == 0xFF00_0000 and w.s[1] == 0xFF00_0000 and w.scc == 1


def test_trace_reports_each_instruction_with_its_writes():
    events = []
    code = assemble("v_mov_b32 v1, 5\ns_mov_b32 s3, 7\nv_add_nc_u32 v2, s3, v1\ns_endpgm")
    model = Model(GlobalMemory(), code, 0, trace=events.append)
    model.run(Dispatch(entry=0, grid=(1, 1, 1), block=(32, 1, 1), vgprs=8, lds_bytes=0))
    assert [e["inst"].name for e in events] == ["v_mov_b32", "s_mov_b32", "v_add_nc_u32", "s_endpgm"]
    assert list(events[0]["vgprs"]) == [1] and (events[0]["vgprs"][1] == 5).all()
    assert events[1]["sgprs"][3] == 7
    assert (events[2]["vgprs"][2] == 12).all()


def test_cls_bfe_i32_and_absdiff_follow_the_isa():
    # v_cls_i32: index of the first bit below the sign that differs from it
    w = wave0("v_mov_b32 v1, 0x40000000\nv_cls_i32 v2, v1\nv_mov_b32 v3, 0xfffffff0\nv_cls_i32 v4, v3")
    assert int(w.v[2][0]) == 1 and int(w.v[4][0]) == 28
    # s_bfe_i32 shifts S0 arithmetically: offset 31, width 4 of 0x80000000 is -1
    w = wave0("s_mov_b32 s0, 0x80000000\ns_bfe_i32 s1, s0, 0x4001f")
    assert w.s[1] == 0xFFFF_FFFF
    # s_absdiff_i32 takes |S0 - S1| of the wrapped 32-bit difference
    w = wave0("s_mov_b32 s0, 0x7fffffff\ns_mov_b32 s1, 0x80000000\ns_absdiff_i32 s2, s0, s1")
    assert w.s[2] == 1


def test_barrier_signal_isfirst_sets_scc_for_the_first_signal_only():
    # two waves, two barrier phases: exactly one wave signals first in each. The model runs
    # wave 0 up to its first wait, then wave 1, whose signal completes the barrier and which
    # goes on to signal the second phase first.
    text = ("s_barrier_signal_isfirst -1\ns_cselect_b32 s5, 1, 0\ns_barrier_wait 0xffff\n"
            "s_barrier_signal_isfirst -1\ns_cselect_b32 s6, 1, 0\ns_barrier_wait 0xffff")
    waves = run(text, block=64).last_waves
    assert [(w.s[5], w.s[6]) for w in waves] == [(1, 0), (0, 1)]
