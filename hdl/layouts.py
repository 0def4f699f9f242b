"""Data layouts of the SIMD's ports and of what its units share.

* :data:`DecodedInst`, produced by :class:`hdl.simd.decoder.Decoder` and carried through the
  instruction buffer and issue stages. A register of this layout reset to zero reads as an
  empty slot (``valid = 0, illegal = 0``).
* The payloads of the SIMD's streams (docs/simd.md), functions of the configuration: wave
  launch (:func:`LaunchLayout`), instruction fetch (:func:`FetchReq`, :func:`FetchResp`),
  scalar memory (:func:`SmemReq`, :func:`SmemResp`), vector memory and LDS
  (:func:`VecMemReq`, :func:`ReqRow`, :func:`VecMemResp`), and its ``perf`` counters
  (:data:`SimdPerf`). The caches, LDS, vector memory unit and dispatcher take them from here.
"""
from __future__ import annotations

from amaranth.hdl import signed, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from .config import DCUConfig
from .isa_tables import FmtId, Kind, OpId

__all__ = ["DecodedInst", "LANES", "ADDR", "SEQ", "LaunchLayout", "FetchReq", "FetchResp", "DecodeIn", "DecodeOut",
           "Steer", "SteerLayout",
           "WaveStart", "SmemReq",
           "SmemResp", "VecMemReq", "ReqRow", "VecMemResp", "StallReason", "ISSUE_GROUPS", "issue_group",
           "SimdPerf", "PerfEvents", "WaveStatus", "VectorPort"]

LANES = 32   # lanes of a wave
ADDR = 48    # bits of a virtual byte address
SEQ = 16     # bits of a memory request's per-wave sequence tag

#: One decoded gfx1200 instruction (docs/simd.md, "decoder").
#:
#: Fields a format does not have are 0. Register-number conventions:
#:
#: * ``src0``/``src1``/``src2``: 9-bit source operand codes (``isa.operands``): 0–255 scalar
#:   codes, 256–511 VGPRs. SOP sources are the 8-bit codes; VOP2/VOPC ``vsrc1`` becomes
#:   ``256 + v``; the implicit VCC carry-in / select of the ``_e32`` forms of
#:   ``v_cndmask_b32`` and ``v_{add,sub,subrev}_co_ci_u32`` becomes ``src2 = 106`` (VCC_LO),
#:   so ``_e32`` and ``_e64`` forms look the same. Code 255 means "the literal".
#:   ``srcN_dw`` is the width of source N in dwords, 0 when the instruction does not read it.
#: * ``vdst``: the raw 8-bit VGPR destination field (VOP1/VOP2/VOP3/DS/VGLOBAL);
#:   ``vdst_dw`` dwords written there (0 = no VGPR is written).
#: * ``sdst``: 7-bit SGPR code of the scalar destination: SOP sdst, SMEM sdata, VOP3SD sdst,
#:   the lane mask of VOPC (``_e32``: 106 = VCC_LO; ``v_cmpx_*``: 126 = EXEC_LO), the carry-out
#:   of ``_e32`` ``v_*_co_ci_u32`` (106), and the destination of ``v_readlane_b32`` /
#:   ``v_readfirstlane_b32``; ``sdst_dw`` dwords written there (0 = none; up to 16).
#: * Memory: ``vaddr`` (DS ``addr``, VGLOBAL ``vaddr``) with ``vaddr_dw`` (VGLOBAL: 2 when
#:   ``saddr`` is 0x7C "off", else 1), ``data0``/``data1`` (VGLOBAL data is ``data0``) with
#:   ``data0_dw``/``data1_dw``, ``offset`` (SMEM/VGLOBAL ioffset sign-extended; DS
#:   ``offset1:offset0``), ``sbase`` (SGPR pair index: register ``2 * sbase``), ``soffset`` and
#:   ``saddr`` (0x7C = none).
#:
#: Implicit register accesses (not visible in the operand fields above):
#: ``reads_vcc`` (``v_div_fmas_f32``, ``s_cbranch_vcc*``), ``writes_exec`` (``v_cmpx_*``,
#: saveexec/wrexec), ``reads_scc`` / ``writes_scc`` (SALU, ``s_cbranch_scc*``) and
#: ``reads_dst`` (the old destination is an input: MAC ops, ``v_writelane_b32``, 16-bit VALU
#: results and d16 loads merged into half a VGPR, ``s_cmov*``, ``s_bitset*``, ``s_addk``/``s_mulk``/
#: ``s_cmovk``).
DecodedInst = data.StructLayout({
    "valid": 1,                  # a legal instruction was decoded
    "illegal": 1,                # the words are not an instruction this core implements
    "op": OpId,                  # OpId.NONE when illegal
    "kind": Kind,                # Kind.ILLEGAL when illegal
    "fmt": FmtId,                # encoding used (VOP3/VOP3SD for an _e64 form)
    "size": unsigned(2),         # dwords, literal included (1-3)
    "src0": unsigned(9),
    "src1": unsigned(9),
    "src2": unsigned(9),
    "vdst": unsigned(8),
    "sdst": unsigned(7),
    "literal": unsigned(32),     # the literal dword (0 when there is none)
    "has_literal": 1,
    "abs": unsigned(3),          # VOP3 input modifiers, bit i for source i (VOP3P: neg_hi)
    "neg": unsigned(3),          # (VOP3P: neg_lo)
    "opsel": unsigned(4),        # (VOP3P: op_sel, bit 3 op_sel_hi[2])
    "clamp": 1,
    "omod": unsigned(2),         # (VOP3P: op_sel_hi[1:0])
    "simm16": unsigned(16),      # SOPK / SOPP immediate
    "offset": signed(24),
    "offset0": unsigned(8),
    "offset1": unsigned(8),
    "saddr": unsigned(7),
    "sbase": unsigned(6),
    "soffset": unsigned(7),
    "vaddr": unsigned(8),
    "data0": unsigned(8),
    "data1": unsigned(8),
    "th": unsigned(3),           # cache temporal hint (SMEM: 2 bits)
    "scope": unsigned(2),
    # operand widths in dwords for the scoreboard (0 = operand not used)
    "src0_dw": unsigned(2),
    "src1_dw": unsigned(2),
    "src2_dw": unsigned(2),
    "vdst_dw": unsigned(3),
    "sdst_dw": unsigned(5),
    "vaddr_dw": unsigned(2),
    "data0_dw": unsigned(3),
    "data1_dw": unsigned(3),
    # implicit register accesses
    "reads_vcc": 1,
    "writes_exec": 1,
    "reads_scc": 1,
    "writes_scc": 1,
    "reads_dst": 1,
})


# -- the SIMD's stream payloads ------------------------------------------------------------
def LaunchLayout(cfg: DCUConfig):
    return data.StructLayout({
        "pc": ADDR, "vgpr_base": range(cfg.vgprs_per_simd), "vgprs": range(cfg.vgprs_per_simd + 1),
        "wg": 8, "wg_last": 1, "exec": 32, "sgpr": data.ArrayLayout(32, 4), "ttmp7": 32, "ttmp9": 32, "v0": 32 * LANES,
    })


def FetchReq(cfg):
    """A chunk of instructions (``cfg.fetch_bytes``, aligned) for one wave; ``epoch`` and
    ``target`` come back with the data. ``target``: a speculative fetch of a loop's first chunk
    (the target of a backward branch seen in the stream), which must not raise a fetch fault."""
    return data.StructLayout({"wave": range(cfg.wave_ids), "addr": ADDR, "epoch": 2, "target": 1})


def FetchResp(cfg):
    """Responses return in request order for each wave; a faulting ``target`` fetch answers zeros."""
    return data.StructLayout({"wave": range(cfg.wave_ids), "data": 8 * cfg.fetch_bytes, "epoch": 2, "target": 1})


class Steer(enum.Enum, shape=2):
    """What the SIMD's issue stage tells the fetch unit about a wave's instruction."""
    NEXT = 0        # the wave goes on at ``pc`` in its stream: the next instruction, or the same one replayed
    JUMP = 1        # a taken branch or a PC write: the buffered stream is dropped, fetch restarts at ``pc``
    STOP = 2        # the wave ended


def DecodeIn(tag_width: int, pc_width: int = ADDR) -> data.StructLayout:
    """What the SIMD's decode stage takes: three dwords at a PC (dword 0 in bits [31:0]),
    the PC, a tag (the wave) that it carries along, and ``second``: a VOPD instruction there is
    wanted as its second half."""
    return data.StructLayout({"words": 96, "pc": pc_width, "tag": tag_width, "second": 1})


def DecodeOut(tag_width: int, pc_width: int = ADDR) -> data.StructLayout:
    """A decoded instruction, its PC, fall-through PC and branch target, and the tag. A VOPD
    instruction leaves as two (``dual``), each the VOP1/VOP2 operation of one half: the first
    (its ``next_pc`` is its own PC), then the ``second``."""
    return data.StructLayout({"inst": DecodedInst, "pc": pc_width, "next_pc": pc_width, "target": pc_width,
                              "tag": tag_width, "dual": 1, "second": 1})


def SteerLayout(cfg):
    """The issue stage's answer for the instruction the fetch unit last gave a wave; ``second``:
    the VOPD instruction at ``pc`` is next wanted as its second half."""
    return data.StructLayout({"wave": range(cfg.wave_ids), "pc": ADDR, "steer": Steer, "second": 1})


def WaveStart(cfg):
    """A wave launched into a free slot at ``pc``."""
    return data.StructLayout({"wave": range(cfg.wave_ids), "pc": ADDR})


def SmemReq(cfg):
    """A scalar load: ``addr`` is the exact byte address (base + offsets, low bits kept), so the
    memory side aligns it as the opcode requires (dword loads ignore bits [1:0], 16-bit loads
    bit 0) and serves sub-dword loads; ``dwords`` destination registers from ``sdst``."""
    return data.StructLayout({"wave": range(cfg.wave_ids), "seq": SEQ, "op": OpId, "addr": 64,
                              "sdst": 7, "dwords": range(17)})


def SmemResp(cfg):
    return data.StructLayout({"wave": range(cfg.wave_ids), "seq": SEQ, "sdst": 7, "data": 32, "last": 1})


def VecMemReq(cfg):
    """Vector memory and LDS requests: the operands the instruction read, per lane. ``addr``
    and ``data`` are the ``cfg.request_lanes`` lanes of the row the reader names
    (:func:`ReqRow`): the whole wave when there is one row."""
    RQ = cfg.request_lanes
    return data.StructLayout({
        "wave": range(cfg.wave_ids), "seq": SEQ, "op": OpId, "exec": 32,
        "addr": 64 * RQ,             # per-lane byte address (LDS: the 32-bit vaddr, offsets separate)
        "data": 128 * RQ,            # per lane: up to four data dwords (data0, then data1 for DS 2-operand forms)
        "offset0": 8, "offset1": 8, "vdst": 8, "returns": 1,
    })


def ReqRow(cfg):
    """The row of a request (``cfg.request_lanes`` lanes) its reader names: lanes
    ``row * request_lanes`` and up. One bit, unused, when there is one row (a 0-bit port
    becomes ``[-1:0]`` in the Verilog, which Verilator rejects)."""
    return unsigned(max(1, exact_log2(cfg.request_rows)))


def VecMemResp(cfg):
    """One beat per lane group (``cfg.resp_lanes`` lanes: ``grp``) of each destination register
    (``write``): register ``vdst`` is ``data`` for the group's lanes enabled in ``mask``.
    Registers in order, each one's groups in order, so its last group is its last beat. An
    instruction without a destination register answers one beat (``write`` 0, ``grp`` 0).
    ``last`` retires the instruction and decrements loadcnt, or storecnt when ``store``
    (stores, non-returning atomics, global_wb)."""
    R = cfg.resp_lanes
    # ``grp`` has a bit even when a beat is the whole wave (always 0 then): a 0-bit port
    # becomes ``[-1:0]`` in the Verilog, which Verilator rejects
    return data.StructLayout({"wave": range(cfg.wave_ids), "seq": SEQ, "vdst": 8, "grp": range(max(2, LANES // R)),
                              "data": 32 * R, "mask": R, "write": 1, "last": 1, "store": 1})


# -- the SIMD's perf counters --------------------------------------------------------------
class StallReason(enum.Enum, shape=unsigned(4)):
    """Why a wave cannot issue this cycle; the first that applies, in this order."""
    NONE = 0          # it can issue (or the slot is empty)
    HELD = 1          # not started: launch in progress, waiting for its workgroup, or stopped by an error
    FETCH = 2         # its next instruction is not buffered yet (or a branch is resolving)
    DEPENDENCY = 3    # a register it reads or writes is busy (scoreboard); s_endpgm waiting for writes
    LOADCNT = 4       # s_wait_* / s_endpgm waiting for this counter
    STORECNT = 5
    DSCNT = 6
    KMCNT = 7
    BARRIER = 8       # s_barrier_wait before the barrier completes
    STRUCTURAL = 9    # its unit or memory port is busy (full counter, multi-cycle VALU, trans unit)


#: Instruction kinds (``isa.OpInfo.kind``) counted by each ``perf.issued`` counter; every other
#: kind (waits, hints, barriers, s_endpgm, illegal words) counts as ``other``.
ISSUE_GROUPS = {
    "valu": ("valu",), "trans": ("vtrans",), "salu": ("salu",), "branch": ("sbranch",), "smem": ("smem",),
    "vmem": ("vmem_load", "vmem_store", "vmem_atomic", "cache"), "lds": ("ds_load", "ds_store", "ds_atomic"),
    "other": (),
}


def issue_group(kind: str) -> str:
    """The ``perf.issued`` counter an instruction of ``kind`` counts in."""
    return next((g for g, kinds in ISSUE_GROUPS.items() if kind in kinds), "other")


#: ``perf``: free-running 32-bit counters (they wrap), cleared by reset.
SimdPerf = data.StructLayout({
    "issued": data.StructLayout({g: 32 for g in ISSUE_GROUPS}),
    "valu_busy": 32,
    "stall": data.StructLayout({r.name.lower(): 32 for r in StallReason if r is not StallReason.NONE}),
})


#: What the issue stage counts each cycle (:class:`hdl.simd.perf.PerfCounters`): an instruction
#: issued and its :data:`ISSUE_GROUPS` index, or why nothing issued (``NONE``: no wave resident),
#: and whether the vector pipe reads a VALU row.
PerfEvents = data.StructLayout({"issued": 1, "group": range(len(ISSUE_GROUPS)), "stall": StallReason, "valu": 1})

#: A wave slot as a report of a stopped dispatch describes it: whether a wave is resident, its
#: PC, its outstanding-access counters and whether it waits at a barrier.
WaveStatus = data.StructLayout({"resident": 1, "pc": ADDR, "loadcnt": 6, "storecnt": 6, "dscnt": 6, "kmcnt": 5,
                                "barrier": 1})


# -- the SIMD's issue stage and vector pipe --------------------------------------------
class VectorPort(wiring.Signature):
    """The issue stage's link to the vector pipe (seen from the issue stage).

    Members
    -------
    issue : Out
        ``valid`` one cycle: wave ``wave`` (its VGPRs from ``base``) issues ``inst`` with EXEC ``exec``.
        ``sres``: a scalar float instruction (``hdl.simd.scalar_float``): lane 0's result goes
        to ``sdst``, or with ``scc`` its compare bit to SCC, through ``mask`` (``sres`` for a
        transcendental).
    scalar : Out(ArrayLayout(64, 3))
        The cycle after ``issue``: its sources 0-2 as scalar values (an SGPR, a constant, the
        literal, VCC or EXEC, 32-bit ones in the low half; the lane-mask source of
        ``v_cndmask_b32`` and the carry-ins is source 2; a global access's ``saddr`` pair is
        source 0).
    ready, mem_ready, trans_ready : In(1)
        The pipe takes a VALU instruction this cycle; a memory instruction; a transcendental.
    ready_soon : In(1)
        The pipe takes a VALU instruction within three cycles (sooner than a replay returns).
    blocked, busy : In(wave_slots)
        Bit ``w``: wave ``w`` may not issue a VALU or memory instruction this cycle (a 64-bit
        VALU instruction of it is in flight, or a transcendental's result is pending); wave
        ``w`` has VALU or transcendental instructions in flight.
    unwritten : In
        The VGPRs ``vdst`` .. ``vdst + dw - 1`` of wave ``wave``'s VALU instruction issued four
        cycles before (``valid``): an instruction of that wave issued now would read them
        before they are written, a cycle later after.
    mask : In
        ``valid`` one cycle: the lane mask ``value`` of wave ``wave``'s instruction for its
        ``sdst`` (EXEC_LO for ``v_cmpx``), EXEC's inactive lanes 0; with ``scc``, ``value[0]``
        is SCC (a scalar float compare). The issue stage writes it in that cycle: the SGPR
        file's write port is its.
    sres : In(stream.Signature)
        A scalar-destination transcendental's result (``v_s_*``): ``value`` for SGPR ``sdst``
        of wave ``wave``, written when the SGPR file's port is free.
    soon : In(3)
        Bit ``j``: a lane mask comes on ``mask`` ``j + 2`` cycles from now, when a scalar
        instruction of ``j + 1`` passes issued now would write the SGPR file.
    retired : In
        Bit ``w`` of ``load``, ``store``, ``ds``: a memory instruction of wave ``w`` has
        retired (its last response beat), for its counter.
    valu_row : In(1)
        The pipe reads a row of a VALU instruction this cycle (``perf.valu_busy``).
    """

    def __init__(self, cfg: DCUConfig):
        w = range(max(cfg.wave_slots, 2))
        super().__init__({
            "issue": Out(data.StructLayout({"valid": 1, "wave": w, "base": range(cfg.vgprs_per_simd), "exec": 32,
                                            "inst": DecodedInst, "sres": 1, "scc": 1})),
            "scalar": Out(data.ArrayLayout(64, 3)),
            "ready": In(1),
            "ready_soon": In(1),
            "mem_ready": In(1),
            "trans_ready": In(1),
            "blocked": In(cfg.wave_slots),
            "busy": In(cfg.wave_slots),
            "unwritten": In(data.StructLayout({"valid": 1, "wave": w, "vdst": 8, "dw": 3})),
            "mask": In(data.StructLayout({"valid": 1, "wave": w, "sdst": 7, "value": 32, "scc": 1})),
            "sres": In(stream.Signature(data.StructLayout({"wave": w, "sdst": 7, "value": 32}))),
            "soon": In(3),
            "retired": In(data.StructLayout({"load": cfg.wave_slots, "store": cfg.wave_slots,
                                             "ds": cfg.wave_slots})),
            "valu_row": In(1),
        })
