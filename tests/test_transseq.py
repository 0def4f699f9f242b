"""hdl.simd.transseq.TransSeq (the transcendental unit) bit for bit against sim.fp32.

* Eight datapaths (four groups a pass): a sample of the special inputs tests/trans_inputs.py
  builds and random inputs of every op, waves interleaved; every result bit-exact, each op's
  latency as documented, the next wave taken when the result appears.
  In the same run, documented special results (signed zeros, infinities, NaN payloads,
  denormals flushed, exp's overflow and underflow edges) equal their literals.
* One datapath (the ``fpga`` preset's) and 32: bit-exact on a sample of the same inputs.
* Random input gaps and output back-pressure: the payload holds while stalled, tags in
  order, an unsupported op gives 0.
* ROM contents; log's ``round_pack`` inputs over every significand are in the range the
  unit's normalisation covers; a lane count that does not divide 32 is refused; Verilog
  conversion and ``verilator --lint-only``.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from hdl.config import DCUConfig
from hdl.isa_tables import OpId
from hdl.simd import transseq
from hdl.simd.trans import CLS_OF, EXP2_T, LOG2_C, LOG2_L, RCP_T0, RSQ_T0, Cls
from hdl.simd.transseq import TransSeq
from sim import fp32 as F
from tests.lint import convert_and_lint
from tests.trans_inputs import OPS, make_waves, random_inputs, run_waves, special_inputs

SEED = 20261206
U32 = np.uint32


def _run(dut, waves, **kw):
    """``(out, in_cycles, out_cycles, held)`` of :func:`tests.trans_inputs.run_waves`."""
    res = run_waves(dut, waves, **kw)
    return res["out"], res["in_cycles"], res["out_cycles"], res["held"]


def _check(waves, expected, out):
    assert len(out) == len(waves)
    for (op, a, tag), want, (tag_o, d) in zip(waves, expected, out):
        assert tag_o == tag, "tags out of order"
        bad = np.nonzero(d != want)[0]
        assert not len(bad), (f"{op.name}: {len(bad)} lanes wrong, e.g. a={a[bad[0]]:#010x} "
                              f"got {d[bad[0]]:#010x} want {want[bad[0]]:#010x}")


def _inputs(n_random, special_step, seed):
    per_op = {}
    for k, op in enumerate(OPS):
        n = n_random if op != OpId.V_RCP_IFLAG_F32 else n_random // 8
        per_op[op] = np.concatenate([special_inputs(op)[::special_step], random_inputs(op, n, seed + k)])
    return per_op


#: Results docs/fp32.md §5 gives, by op and input bits.
SPECIAL_RESULTS = {
    OpId.V_RCP_F32: {0x80000000: 0xFF800000, 0x7F800000: 0, 0x40000000: 0x3F000000,
                     0x7F7FFFFF: 0, 0x7F000000: 0, 0xFF000000: 0x80000000,   # denormal: flushed
                     0x7E800000: 0x00800000, 0x00000001: 0x7F800000, 0x807FFFFF: 0xFF800000,
                     0x7FA5A5A5: 0x7FE5A5A5},
    OpId.V_RSQ_F32: {0x80000000: 0xFF800000, 0x7F800000: 0, 0x40800000: 0x3F000000,
                     0xBF800000: 0xFFC00000},
    OpId.V_SQRT_F32: {0x80000000: 0x80000000, 0x40800000: 0x40000000, 0xFF800000: 0xFFC00000,
                      0x00000001: 0, 0x80000001: 0x80000000},
    OpId.V_EXP_F32: {0x80000000: 0x3F800000, 0xFF800000: 0, 0x7F800000: 0x7F800000,
                     0x43000000: 0x7F800000, 0xC3150000: 0, 0x40400000: 0x41000000,
                     0xC2FC0000: 0x00800000, 0xC3020000: 0, 0x00000001: 0x3F800000},
    OpId.V_LOG_F32: {0x00000000: 0xFF800000, 0x3F800000: 0, 0x00000001: 0xFF800000,
                     0x80000001: 0xFF800000, 0x00800000: 0xC2FC0000, 0xBF800000: 0xFFC00000,
                     0xFFC12345: 0xFFC12345, 0x7F800000: 0x7F800000},
}


def test_rom_words():
    words = transseq.rom_words()
    assert len(words) == 512 and max(words) < 1 << 64
    assert words[:128] == list(RCP_T0) and words[128:256] == list(RSQ_T0)
    assert words[256:320] == list(EXP2_T)
    assert [(w & 0x7FF, w >> 11) for w in words[384:]] == list(zip(LOG2_C, LOG2_L))


def test_eight_datapaths_bit_exact_and_latency():
    """The documented special results, every 24th special input and 300 random inputs per op,
    back to back (about 800 per op; every special input and 4,000 random ones per op pass
    too, in 11 minutes): bit-exact, the documented results equal to their literals,
    each op's latency equal to :func:`hdl.simd.transseq.latency`, the next wave taken as its
    predecessor's result appears."""
    per_op = _inputs(300, 24, SEED)
    for op, cases in SPECIAL_RESULTS.items():
        per_op[op] = np.concatenate([np.array(list(cases), U32), per_op[op]])
    waves, expected = make_waves(per_op)
    dut = TransSeq(DCUConfig(trans_lanes=8))
    out, ins, outs, _ = _run(dut, waves)
    _check(waves, expected, out)
    got = {(op, int(x)): int(y) for (op, a, _), (_, d) in zip(waves, out) for x, y in zip(a, d)}
    for op, cases in SPECIAL_RESULTS.items():
        for x, want in cases.items():
            y = got[(op, x)]
            assert y == want, f"{op.name}({x:#010x}) = {y:#010x}, want {want:#010x} (docs/fp32.md)"
    for (op, _, _), i, o in zip(waves, ins, outs):
        assert o - i == transseq.latency(8, CLS_OF[op]), op
    assert all(b == a for a, b in zip(outs, ins[1:])), "next wave not taken with the result"


@pytest.mark.parametrize("lanes", [1, 32])
def test_other_datapath_counts(lanes):
    """One datapath (the ``fpga`` preset's: 264 cycles for rsq, 168 for rcp) and 32."""
    waves, expected = make_waves(_inputs(32, 97 if lanes == 1 else 401, SEED + 10 * lanes))
    dut = TransSeq(DCUConfig(trans_lanes=lanes))
    out, ins, outs, _ = _run(dut, waves)
    _check(waves, expected, out)
    lat = {op: o - i for (op, _, _), i, o in zip(waves, ins, outs)}
    assert lat == {op: transseq.latency(lanes, CLS_OF[op]) for op in OPS}
    if lanes == 1:
        assert (lat[OpId.V_RSQ_F32], lat[OpId.V_RCP_F32]) == (264, 168)


def test_backpressure_gaps_and_unsupported_op():
    rng = np.random.default_rng(SEED + 2)
    per_op = {op: random_inputs(op, 32 * 6, SEED + 20 + k) for k, op in enumerate(OPS)}
    per_op[OpId.V_ADD_F32] = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(U32)
    waves, expected = make_waves(per_op, first_tag=0xFFF0)
    out, _, _, held = _run(TransSeq(DCUConfig(trans_lanes=8)), waves, valid_p=0.5, ready_p=0.3,
                           seed=SEED)
    assert held > 20, "back-pressure was not exercised"
    _check(waves, expected, out)


def test_rejects_bad_lane_count():
    with pytest.raises(ValueError, match="trans_lanes must divide 32"):
        TransSeq(SimpleNamespace(trans_lanes=6))


def test_log_round_pack_input_leading_one_at_bit_32_or_above():
    """The unit normalises ``round_pack``'s input from bit 32 up (``transseq._normalise``): log's
    value off the near-1 path and ``V`` on it, over every significand at the exponents
    nearest 1, are 0 or at least 2^32 in magnitude (rcp, sqrt, rsq and exp are by range)."""
    smallest = 1 << 62
    for start in range(1 << 23, 1 << 24, 1 << 21):
        M = np.arange(start, start + (1 << 21), dtype=np.int64)
        for e in (-2, -1, 0, 1):
            t = F.log2_core(M, np.full_like(M, e))
            val = np.abs(np.where(t["near1"], t["V"], t["S"]))
            smallest = min(smallest, int(val[val != 0].min()))
    assert smallest >= 1 << 32, smallest


def test_latency_formula():
    assert transseq.latency(1, Cls.SQRT) == 8 * 32 + 8
    assert transseq.latency(8, Cls.EXP) == 5 * 5 + 4 - 5 + 8


def test_verilog_lint(tmp_path):
    text = convert_and_lint(TransSeq(DCUConfig(trans_lanes=1)), "trans_seq", tmp_path)
    assert text.count(" * ") == 6                 # six 18 x 18 partial products
