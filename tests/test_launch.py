"""The launch API: argument marshalling, hidden arguments, refusals and failures that lose nothing."""
from __future__ import annotations

import numpy as np
import pytest

import dcu
from dcu.admission import ResourceError
from dcu.launch import LaunchError
from sim.model import ExecutionError
from tests.asmutil import needs_llvm

pytestmark = needs_llvm


def _program(tmp_path, src: str, name="k.cl"):
    p = tmp_path / name
    p.write_text(src)
    return dcu.load_program(p)


def test_hidden_arguments_give_local_size_and_group_count(tmp_path):
    prog = _program(tmp_path, """
    __kernel void sizes(__global uint *out) {
        uint g = get_global_id(0);
        out[g] = get_local_size(0) * 1000 + get_num_groups(0) * 10 + get_local_id(0) % 10;
    }""")
    out = np.zeros(96, np.uint32)
    run = dcu.launch(prog.kernel("sizes"), grid=(3,), block=(32,), args=[out])
    g = np.arange(96)
    assert np.array_equal(run.buffers[0], 32 * 1000 + 3 * 10 + (g % 32) % 10)


def test_scalar_arguments_are_packed_by_type(tmp_path):
    prog = _program(tmp_path, """
    __kernel __attribute__((reqd_work_group_size(32, 1, 1)))
    void scal(__global float *out, float a, int b, ulong c) {
        uint i = get_local_id(0);
        out[i] = a * (float)b + (float)(c >> 32) + (float)i;
    }""")
    out = np.zeros(32, np.float32)
    run = dcu.launch(prog.kernel("scal"), 1, 32, [out, np.float32(1.5), np.int32(-4), np.uint64(7 << 32)])
    assert np.array_equal(run.buffers[0],
                          np.float32(1.5) * np.float32(-4) + np.float32(7) + np.arange(32, dtype=np.float32))
    with pytest.raises(LaunchError, match="expects 4 bytes"):
        dcu.launch(prog.kernel("scal"), 1, 32, [out, np.float64(1.5), np.int32(-4), np.uint64(0)])
    with pytest.raises(LaunchError, match="takes 4 arguments"):
        dcu.launch(prog.kernel("scal"), 1, 32, [out])
    with pytest.raises(LaunchError, match="is a buffer"):
        dcu.launch(prog.kernel("scal"), 1, 32, [np.float32(0), np.float32(1.5), np.int32(-4), np.uint64(0)])


def test_too_much_lds_is_refused_before_launch(tmp_path):
    prog = _program(tmp_path, """
    __kernel __attribute__((reqd_work_group_size(64, 1, 1)))
    void big(__global uint *out) {
        __local uint tile[3000];
        tile[get_local_id(0)] = get_local_id(0);
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_local_id(0)] = tile[63 - get_local_id(0)];
    }""")
    out = np.zeros(64, np.uint32)
    with pytest.raises(ResourceError, match="LDS"):
        dcu.launch(prog.kernel("big"), 1, 64, [out], config="tiny")
    run = dcu.launch(prog.kernel("big"), 1, 64, [out], config="default")
    assert np.array_equal(run.buffers[0], 63 - np.arange(64))


def test_fault_reports_lane_and_keeps_other_buffers(tmp_path):
    prog = _program(tmp_path, """
    __kernel __attribute__((reqd_work_group_size(64, 1, 1)))
    void oob(__global uint *done, __global uint *small) {
        uint i = get_local_id(0);
        done[i] = i + 1;
        small[i * 4] = i;          /* lanes past the end of 'small' fault */
    }""")
    done, small = np.zeros(64, np.uint32), np.zeros(16, np.uint32)
    with pytest.raises(ExecutionError,
                       match=r"lane \d+: access of 4 bytes at 0x[0-9a-f]+ is outside every buffer") as e:
        dcu.launch(prog.kernel("oob"), 1, 64, [done, small])
    # wave 0 stored 'done' and then faulted, before wave 1 ran: its stores are kept, nothing else changed
    assert np.array_equal(e.value.buffers[0], np.concatenate([np.arange(1, 33), np.zeros(32)]))


def test_unknown_kernel_lists_the_kernels(tmp_path):
    prog = _program(tmp_path, "__kernel void one(__global int *x) { x[0] = 1; }")
    with pytest.raises(KeyError, match="one"):
        prog.kernel("two")
