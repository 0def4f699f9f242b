"""isa decoder: known encodings, fields, errors and truncated input."""
from __future__ import annotations

import struct

import pytest

import isa
from isa import Fmt, DecodeError, decode, decode_program, disassemble
from isa.operands import inline_constant, operand_name


def words(*bs: str) -> list[int]:
    """Little-endian dwords from hex bytes as llvm-mc prints them ("0x01,0x02,...")."""
    b = bytes(int(x, 16) for x in ",".join(bs).split(","))
    return list(struct.unpack(f"<{len(b) // 4}I", b))


# (dwords, text) from llvm-mc-19 -show-encoding
KNOWN = [
    ([0xBE800081], "s_mov_b32 s0, 1"),
    ([0x4A020702], "v_add_nc_u32_e32 v1, v2, v3"),
    ([0xD8D80000, 0x01000002], "ds_load_b32 v1, v2"),
    ([0xBFB00000], "s_endpgm"),
    (words("0x01,0x02,0x13,0xd6,0x02,0x07,0x16,0x28"), "v_fma_f32 v1, -v2, |v3|, s5 mul:2"),
    (words("0x05,0x00,0x4a,0xd4,0x01,0x05,0x02,0x00"), "v_cmp_eq_u32_e64 s5, v1, v2"),
    (words("0x7e,0x00,0xca,0xd4,0x01,0x05,0x00,0x00"), "v_cmpx_eq_u32_e64 v1, s2"),
    (words("0x01,0x05,0x94,0x7d"), "v_cmpx_eq_u32_e32 v1, v2"),
    (words("0x01,0x03,0x00,0xd7,0x02,0x07,0x02,0x00"), "v_add_co_u32 v1, s3, v2, v3"),
    (words("0x02,0x07,0x02,0x40"), "v_add_co_ci_u32_e32 v1, vcc_lo, v2, v3, vcc_lo"),
    (words("0x01,0x04,0x20,0xd5,0x02,0x07,0x1a,0x00"), "v_add_co_ci_u32_e64 v1, s4, v2, v3, s6"),
    (words("0x01,0x04,0xfe,0xd6,0x02,0x07,0x12,0x04"), "v_mad_co_u64_u32 v[1:2], s4, v2, v3, v[4:5]"),
    (words("0x02,0x07,0x02,0x58,0x00,0x00,0x00,0x40"), "v_fmamk_f32 v1, v2, 0x40000000, v3"),
    (words("0xff,0x02,0x02,0x7e,0x78,0x56,0x34,0x12"), "v_mov_b32_e32 v1, 0x12345678"),
    (words("0x80,0x20,0x00,0xf4,0x10,0x00,0x00,0xf8"), "s_load_b64 s[2:3], s[0:1], 0x10"),
    (words("0x80,0x00,0x00,0xf4,0x10,0x00,0x00,0x08"), "s_load_b32 s2, s[0:1], s4 offset:0x10"),
    (words("0x1e,0x00,0xc0,0xbf"), "s_wait_loadcnt 0x1e"),
    (words("0x91,0x04,0x87,0xbf"), "s_delay_alu instid0(VALU_DEP_1) | instskip(NEXT) | instid1(SALU_CYCLE_1)"),
    (words("0x03,0x00,0xb6,0xbf"), "s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)"),
    (words("0xc1,0x4e,0x80,0xbe"), "s_barrier_signal -1"),
    (words("0xff,0xff,0x94,0xbf"), "s_barrier_wait 0xffff"),
    (words("0xfd,0xff,0xa5,0xbf"), "s_cbranch_execz 65533"),
    (words("0x01,0x05,0xdc,0xd8,0x02,0x00,0x00,0x01"), "ds_load_2addr_b32 v[1:2], v2 offset0:1 offset1:5"),
    (words("0x7c,0x00,0x05,0xee,0x01,0x00,0x00,0x00,0x02,0x00,0x00,0x00"), "global_load_b32 v1, v[2:3], off"),
    (words("0x04,0x00,0x05,0xee,0x01,0x00,0x00,0x00,0x02,0xf0,0xff,0xff"),
     "global_load_b32 v1, v2, s[4:5] offset:-16"),
    (words("0x7c,0x40,0x0d,0xee,0x01,0x00,0x10,0x02,0x02,0x00,0x00,0x00"),
     "global_atomic_add_u32 v1, v[2:3], v4, off th:TH_ATOMIC_RETURN"),
    (words("0x7c,0xc0,0x0a,0xee,0x00,0x00,0x00,0x00,0x00,0x00,0x00,0x00"), "global_inv"),
    (words("0x04,0x83,0x82,0x84"), "s_lshl_b64 s[2:3], s[4:5], 3"),
]


@pytest.mark.parametrize("ws,text", KNOWN, ids=[t for _, t in KNOWN])
def test_known_encodings(ws, text):
    inst = decode(ws + [0xDEADBEEF], pc=0x40)
    assert disassemble(inst) == text
    assert inst.size == 4 * len(ws)
    assert inst.words == tuple(ws)
    assert inst.pc == 0x40


def test_fields_and_info():
    i = decode([0x4A020702])
    assert (i.fmt, i.info.fmt, i.name) == (Fmt.VOP2, Fmt.VOP2, "v_add_nc_u32")
    assert i.f == {"vdst": 1, "src0": 0x102, "vsrc1": 3}
    assert i.info.vop3_op == 0x125 and not i.is_e64

    i = decode(words("0x01,0x00,0x25,0xd5,0x01,0x04,0x00,0x00"))   # v_add_nc_u32_e64 v1, s1, s2
    assert (i.fmt, i.info.fmt, i.name, i.is_e64) == (Fmt.VOP3, Fmt.VOP2, "v_add_nc_u32", True)
    assert (i.f["vdst"], i.f["src0"], i.f["src1"]) == (1, 1, 2)

    i = decode(words("0x01,0x04,0x20,0xd5,0x02,0x07,0x1a,0x00"))   # v_add_co_ci_u32_e64
    assert i.fmt == Fmt.VOP3SD and i.f["sdst"] == 4 and i.f["src2"] == 6

    i = decode(words("0x80,0x00,0x00,0xf4,0xf0,0xff,0xff,0xf8"))   # s_load_b32 s2, s[0:1], -0x10
    assert i.f == {"sdata": 2, "sbase": 0, "soffset": 0x7C, "ioffset": -16, "th": 0, "scope": 0}

    i = decode(words("0x04,0x00,0x05,0xee,0x01,0x00,0x00,0x00,0x02,0xf0,0xff,0xff"))
    assert (i.f["saddr"], i.f["vaddr"], i.f["vdst"], i.f["ioffset"]) == (4, 2, 1, -16)

    i = decode(words("0x7c,0x40,0x0d,0xee,0x01,0x00,0x10,0x02,0x02,0x00,0x00,0x00"))
    assert i.returns and i.info.kind == "vmem_atomic" and i.f["vsrc"] == 4
    assert not decode(words("0x7c,0x40,0x0d,0xee,0x00,0x00,0x00,0x02,0x02,0x00,0x00,0x00")).returns

    i = decode(words("0x01,0x05,0xdc,0xd8,0x02,0x00,0x00,0x01"))
    assert i.f == {"offset0": 1, "offset1": 5, "vdst": 1, "data1": 0, "data0": 0, "addr": 2}
    assert "2addr" in i.info.flags and i.info.data_bits == 64

    i = decode([0xBE800081])
    assert i.literal is None and i.f == {"sdst": 0, "ssrc0": 0x81}


def test_literals():
    i = decode([0x7E0202FF, 0x12345678, 0xBFB00000])
    assert (i.size, i.literal) == (8, 0x12345678)
    i = decode(words("0x01,0x00,0x10,0xd6,0x02,0x11,0xfd,0x03,0x34,0x12,0x00,0x00"))
    assert (i.name, i.size, i.literal) == ("v_bfe_u32", 12, 0x1234)
    assert disassemble(i) == "v_bfe_u32 v1, v2, 8, 0x1234"


def test_branch_target():
    i = decode([0xBFA5FFFD], pc=0x100)           # s_cbranch_execz -3
    assert i.branch_target() == 0x100 + 4 - 12
    assert decode([0xBFB00000]).branch_target() is None


def test_decode_program():
    code = struct.pack("<6I", 0xBE800081, 0x7E0202FF, 0x12345678, 0xD8D80000, 0x01000002,
                       0xBFB00000)
    prog = decode_program(code, base=0x1000)
    assert [i.name for i in prog] == ["s_mov_b32", "v_mov_b32", "ds_load_b32", "s_endpgm"]
    assert [i.pc for i in prog] == [0x1000, 0x1004, 0x100C, 0x1014]


def test_unknown_opcode_error():
    # SOP1 opcode 0xff does not exist
    with pytest.raises(DecodeError) as e:
        decode([0xBE80FF00], pc=0x24)
    msg = str(e.value)
    assert "0x24" in msg and "be80ff00" in msg


def test_known_but_unimplemented_names_mnemonic():
    # v_dot4_u32_u8 v1, v2, v3, v4 (VOP3P op 23, not in the table): the message names it
    with pytest.raises(DecodeError) as e:
        decode([0xCC174001, 0x1C120702], pc=8)
    assert "0x8" in str(e.value) and "cc174001" in str(e.value)
    assert e.value.mnemonic == "v_dot4_u32_u8"
    # s_alloc_vgpr (SOP1 op 83) exists on gfx1200 but is not in our table
    with pytest.raises(DecodeError) as e:
        decode([0xBE805301], pc=0)
    assert e.value.mnemonic == "s_alloc_vgpr" and "s_alloc_vgpr" in str(e.value)


def test_dpp_forms():
    # v_mov_b32_dpp (src0 = 0xFA): the DPP16 dword follows; tests/test_dpp.py covers the rest
    i = decode([0x7E0202FA, 0xFF0000E4])
    assert i.size == 8 and i.dpp.vsrc0 == 0xE4 and i.dpp.ctrl == 0
    # v_readfirstlane_b32 has no DPP form
    with pytest.raises(DecodeError):
        decode([0x7E0204FA, 0xFF0000E4])
    # 0xFB is src_vccz, not a DPP code
    assert decode([0x7E0202FB]).size == 4


@pytest.mark.parametrize("ws", [
    [],
    [0xD8D80000],                  # DS needs 2 dwords
    [0xEE05007C, 0x00000001],      # VGLOBAL needs 3
    [0x7E0202FF],                  # literal missing
    [0xD6100001],                  # VOP3 second dword missing
])
def test_truncated(ws):
    with pytest.raises(DecodeError) as e:
        decode(ws, pc=0x10)
    assert "0x10" in str(e.value)


def test_truncated_program():
    with pytest.raises(DecodeError):
        decode_program(struct.pack("<I", 0x7E0202FF))
    with pytest.raises(DecodeError):
        decode_program(b"\x00\x00")


def test_inline_constants():
    assert inline_constant(128) == 0
    assert inline_constant(192) == 64
    assert inline_constant(193) == 0xFFFFFFFF
    assert inline_constant(208, 64) == (-16) & (2**64 - 1)
    assert inline_constant(242) == 0x3F800000
    assert inline_constant(242, 64) == 0x3FF0000000000000
    assert inline_constant(248) == 0x3E22F983
    assert inline_constant(255) is None and inline_constant(5) is None
    assert operand_name(106) == "vcc_lo" and operand_name(106, 64) == "vcc"
    assert operand_name(126, 64) == "exec" and operand_name(124) == "null"
    assert operand_name(110, 64) == "ttmp[2:3]" and operand_name(300, 96) == "v[44:46]"
    assert operand_name(255, 32, 0x3F800000) == "1.0"


def test_table_sanity():
    names = [i.name for i in isa.OPCODES]
    assert len(names) == len(set(names)) >= 150
    for i in isa.OPCODES:
        assert i.kind in isa.KINDS, i
        assert isa.lookup(i.fmt, i.op) is i
        assert isa.by_name(i.name) is i
        if i.vop3_op is not None:
            assert isa.lookup(Fmt.VOP3, i.vop3_op) is i
    assert isa.by_name("v_add_nc_u32_e64").name == "v_add_nc_u32"
    with pytest.raises(KeyError):
        isa.by_name("v_bogus")
    assert isa.by_name("v_fma_f32").op == 0x213
    assert isa.by_name("s_barrier_signal").op == 78
    assert isa.by_name("v_cmp_eq_u32").vop3_op == isa.by_name("v_cmp_eq_u32").op
    assert isa.by_name("v_cvt_f32_u32").vop3_op == 0x180 + isa.by_name("v_cvt_f32_u32").op
