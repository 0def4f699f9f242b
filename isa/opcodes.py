"""gfx1200 opcode table: one line per opcode.

Each row is ``(format, opcode, LLVM mnemonic[, spec])``. Operand widths, the
execution kind and most flags are derived from the mnemonic (see ``_derive``);
``spec`` overrides them with space-separated tokens:

  ``d64``        destination width in bits (``d0`` = none)
  ``s32 s64``    the full list of source widths, in order src0, src1, src2
  ``n2``         number of sources (each of the default width)
  ``k:kind``     execution kind
  ``+flag``      an extra flag

Opcode numbers were read from AMD's machine-readable RDNA 4 ISA tables and are
checked against llvm-mc-19 by tests/test_isa_roundtrip.py.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field


class Fmt(enum.Enum):
    SOP1 = "SOP1"
    SOP2 = "SOP2"
    SOPK = "SOPK"
    SOPC = "SOPC"
    SOPP = "SOPP"
    SMEM = "SMEM"
    VOP1 = "VOP1"
    VOP2 = "VOP2"
    VOPC = "VOPC"
    VOP3 = "VOP3"
    VOP3SD = "VOP3SD"
    DS = "DS"
    VGLOBAL = "VGLOBAL"
    VSCRATCH = "VSCRATCH"
    VFLAT = "VFLAT"
    VOP3P = "VOP3P"
    VOPD = "VOPD"


KINDS = ("salu", "sbranch", "swait", "shint", "sbarrier", "sendpgm", "smem", "valu", "vtrans",
         "vmem_load", "vmem_store", "vmem_atomic", "ds_load", "ds_store", "ds_atomic", "cache")


@dataclass(frozen=True)
class OpInfo:
    """One opcode. Conventions:

    * VALU lane-mask results (VOPC) have dst_bits 32 (wave32). SOPC/SOPP have no destination.
    * VALU 16-bit operands keep width 16; SALU and sub-dword memory registers are 32 wide.
    * SMEM src_bits = (sbase 64, soffset 32). DS src_bits = (addr 32, data0[, data1]).
      VGLOBAL src_bits = (vaddr 64 — 32 when saddr is used —, data). global_inv/wb: none.
      VSCRATCH src_bits = (vaddr 32, data): a private-segment offset. VFLAT = (vaddr 64, data).
    * data_bits: bits per lane per address (u8 -> 8); 2addr ops move 2 elements, so
      data_bits = 2 x element (ds_load_2addr_b32: 64, vdst v[n:n+1]); cmpswap/cmpstore: 32.
    * Flags: cmpx (writes EXEC), writes_vcc / reads_vcc (implicit VCC in the _e32 form; the
      _e64 form names the SGPR in sdst / src2), carry_out (the _e64 form is VOP3SD), mac
      (vdst is also an addend), literal_k (fmamk/fmaak: K literal), sdst (VALU writing an SGPR),
      returns (DS _rtn_), th_return (global atomics: return iff th[0]), 2addr, stride64, signed,
      d16 (a 16-bit load into half a VGPR that keeps the other half, or a store of a half),
      saveexec, reads_scc, simm16 (SOPK), writelane, VOP3 modifiers neg/abs (on the first
      mods<N> sources), clamp, omod, opsel, fi_bc (v_permlane*16: op_sel[0] is fetch-inactive,
      op_sel[1] bound_ctrl; a lane that reads nothing keeps vdst), lanes (DS ops that move data
      between lanes without accessing LDS), hwreg (SOPK: simm16 names a hardware register
      field), sendmsg (s_sendmsg_rtn: ssrc0 is a message id), buffer (SMEM: sbase is a buffer
      resource, s[4n:4n+3]), no_e64 (VOP1 ops without a VOP3 form).
    """
    name: str                  # LLVM base mnemonic without _e32/_e64
    fmt: Fmt                   # native format
    op: int                    # opcode in the native format (VOP3/VOP3SD: 10-bit VOP3 opcode)
    vop3_op: int | None        # VOP1/VOP2/VOPC: opcode of the VOP3 (_e64) form
    dst_bits: int              # destination width in bits (0 = none)
    src_bits: tuple[int, ...]  # width of each source, in order
    data_bits: int             # memory ops: bits per lane moved, else 0
    kind: str
    flags: frozenset[str] = field(default_factory=frozenset)

    @property
    def vop3_fmt(self) -> "Fmt | None":
        """Encoding used by the _e64 form (VOP3 or VOP3SD), None if there is none."""
        if self.fmt in (Fmt.VOP3, Fmt.VOP3SD):
            return self.fmt
        if self.vop3_op is None:
            return None
        return Fmt.VOP3SD if "carry_out" in self.flags else Fmt.VOP3


F = Fmt
# (format, opcode, mnemonic[, spec])
_TABLE: list[tuple] = [
    # SOP2
    (F.SOP2,    0x000, "s_add_co_u32"),
    (F.SOP2,    0x001, "s_sub_co_u32"),
    (F.SOP2,    0x002, "s_add_co_i32"),
    (F.SOP2,    0x003, "s_sub_co_i32"),
    (F.SOP2,    0x004, "s_add_co_ci_u32", "+reads_scc"),
    (F.SOP2,    0x005, "s_sub_co_ci_u32", "+reads_scc"),
    (F.SOP2,    0x006, "s_absdiff_i32"),
    (F.SOP2,    0x008, "s_lshl_b32"),
    (F.SOP2,    0x009, "s_lshl_b64", "s64 s32"),
    (F.SOP2,    0x00a, "s_lshr_b32"),
    (F.SOP2,    0x00b, "s_lshr_b64", "s64 s32"),
    (F.SOP2,    0x00c, "s_ashr_i32"),
    (F.SOP2,    0x00d, "s_ashr_i64", "s64 s32"),
    (F.SOP2,    0x00e, "s_lshl1_add_u32"),
    (F.SOP2,    0x00f, "s_lshl2_add_u32"),
    (F.SOP2,    0x010, "s_lshl3_add_u32"),
    (F.SOP2,    0x011, "s_lshl4_add_u32"),
    (F.SOP2,    0x012, "s_min_i32"),
    (F.SOP2,    0x013, "s_min_u32"),
    (F.SOP2,    0x014, "s_max_i32"),
    (F.SOP2,    0x015, "s_max_u32"),
    (F.SOP2,    0x016, "s_and_b32"),
    (F.SOP2,    0x017, "s_and_b64"),
    (F.SOP2,    0x018, "s_or_b32"),
    (F.SOP2,    0x019, "s_or_b64"),
    (F.SOP2,    0x01a, "s_xor_b32"),
    (F.SOP2,    0x01b, "s_xor_b64"),
    (F.SOP2,    0x01c, "s_nand_b32"),
    (F.SOP2,    0x01d, "s_nand_b64"),
    (F.SOP2,    0x01e, "s_nor_b32"),
    (F.SOP2,    0x01f, "s_nor_b64"),
    (F.SOP2,    0x020, "s_xnor_b32"),
    (F.SOP2,    0x021, "s_xnor_b64"),
    (F.SOP2,    0x022, "s_and_not1_b32"),
    (F.SOP2,    0x023, "s_and_not1_b64"),
    (F.SOP2,    0x024, "s_or_not1_b32"),
    (F.SOP2,    0x025, "s_or_not1_b64"),
    (F.SOP2,    0x026, "s_bfe_u32"),
    (F.SOP2,    0x027, "s_bfe_i32"),
    (F.SOP2,    0x028, "s_bfe_u64", "s64 s32"),
    (F.SOP2,    0x029, "s_bfe_i64", "s64 s32"),
    (F.SOP2,    0x02a, "s_bfm_b32"),
    (F.SOP2,    0x02b, "s_bfm_b64", "d64 s32 s32"),
    (F.SOP2,    0x02c, "s_mul_i32"),
    (F.SOP2,    0x02d, "s_mul_hi_u32"),
    (F.SOP2,    0x02e, "s_mul_hi_i32"),
    (F.SOP2,    0x030, "s_cselect_b32", "+reads_scc"),
    (F.SOP2,    0x031, "s_cselect_b64", "+reads_scc"),
    (F.SOP2,    0x040, "s_add_f32"),
    (F.SOP2,    0x041, "s_sub_f32"),
    (F.SOP2,    0x042, "s_min_num_f32"),
    (F.SOP2,    0x043, "s_max_num_f32"),
    (F.SOP2,    0x044, "s_mul_f32"),
    (F.SOP2,    0x045, "s_fmaak_f32", "+literal_k"),
    (F.SOP2,    0x046, "s_fmamk_f32", "+literal_k"),
    (F.SOP2,    0x047, "s_fmac_f32", "+mac"),
    # Scalar f16 (RDNA 4 ISA guide, SALU float): S0.f16/S1.f16 are the low halves of the
    # operands; D0.f16 = ... writes bits 15:0 of sdst (sim.salu_f16 keeps bits 31:16)
    (F.SOP2,    0x048, "s_cvt_pk_rtz_f16_f32"),
    (F.SOP2,    0x049, "s_add_f16", "s16 s16"),
    (F.SOP2,    0x04a, "s_sub_f16", "s16 s16"),
    (F.SOP2,    0x04b, "s_min_num_f16", "s16 s16"),
    (F.SOP2,    0x04c, "s_max_num_f16", "s16 s16"),
    (F.SOP2,    0x04d, "s_mul_f16", "s16 s16"),
    (F.SOP2,    0x04e, "s_fmac_f16", "s16 s16 +mac"),
    (F.SOP2,    0x04f, "s_minimum_f32"),
    (F.SOP2,    0x050, "s_maximum_f32"),
    (F.SOP2,    0x051, "s_minimum_f16", "s16 s16"),
    (F.SOP2,    0x052, "s_maximum_f16", "s16 s16"),
    (F.SOP2,    0x053, "s_add_nc_u64"),
    (F.SOP2,    0x054, "s_sub_nc_u64"),
    (F.SOP2,    0x055, "s_mul_u64"),
    # SOP1
    (F.SOP1,    0x000, "s_mov_b32"),
    (F.SOP1,    0x001, "s_mov_b64"),
    (F.SOP1,    0x002, "s_cmov_b32", "+reads_scc"),
    (F.SOP1,    0x003, "s_cmov_b64", "+reads_scc"),
    (F.SOP1,    0x004, "s_brev_b32"),
    (F.SOP1,    0x005, "s_brev_b64"),
    (F.SOP1,    0x008, "s_ctz_i32_b32"),
    (F.SOP1,    0x009, "s_ctz_i32_b64"),
    (F.SOP1,    0x00a, "s_clz_i32_u32"),
    (F.SOP1,    0x00b, "s_clz_i32_u64"),
    (F.SOP1,    0x00c, "s_cls_i32"),
    (F.SOP1,    0x00d, "s_cls_i32_i64"),
    (F.SOP1,    0x00e, "s_sext_i32_i8"),
    (F.SOP1,    0x00f, "s_sext_i32_i16"),
    (F.SOP1,    0x010, "s_bitset0_b32"),
    (F.SOP1,    0x012, "s_bitset1_b32"),
    (F.SOP1,    0x015, "s_abs_i32"),
    (F.SOP1,    0x016, "s_bcnt0_i32_b32"),
    (F.SOP1,    0x017, "s_bcnt0_i32_b64"),
    (F.SOP1,    0x018, "s_bcnt1_i32_b32"),
    (F.SOP1,    0x019, "s_bcnt1_i32_b64"),
    (F.SOP1,    0x01e, "s_not_b32"),
    (F.SOP1,    0x01f, "s_not_b64"),
    (F.SOP1,    0x020, "s_and_saveexec_b32"),
    (F.SOP1,    0x022, "s_or_saveexec_b32"),
    (F.SOP1,    0x024, "s_xor_saveexec_b32"),
    (F.SOP1,    0x026, "s_nand_saveexec_b32"),
    (F.SOP1,    0x028, "s_nor_saveexec_b32"),
    (F.SOP1,    0x02a, "s_xnor_saveexec_b32"),
    (F.SOP1,    0x02c, "s_and_not0_saveexec_b32"),
    (F.SOP1,    0x02e, "s_or_not0_saveexec_b32"),
    (F.SOP1,    0x030, "s_and_not1_saveexec_b32"),
    (F.SOP1,    0x032, "s_or_not1_saveexec_b32"),
    (F.SOP1,    0x034, "s_and_not0_wrexec_b32"),
    (F.SOP1,    0x036, "s_and_not1_wrexec_b32"),
    (F.SOP1,    0x047, "s_getpc_b64", "n0"),
    (F.SOP1,    0x048, "s_setpc_b64", "d0 k:sbranch"),
    (F.SOP1,    0x049, "s_swappc_b64", "k:sbranch"),
    (F.SOP1,    0x04e, "s_barrier_signal", "d0 k:sbarrier"),
    (F.SOP1,    0x060, "s_ceil_f32"),
    (F.SOP1,    0x061, "s_floor_f32"),
    (F.SOP1,    0x062, "s_trunc_f32"),
    (F.SOP1,    0x063, "s_rndne_f32"),
    (F.SOP1,    0x064, "s_cvt_f32_i32"),
    (F.SOP1,    0x065, "s_cvt_f32_u32"),
    (F.SOP1,    0x066, "s_cvt_i32_f32"),
    (F.SOP1,    0x067, "s_cvt_u32_f32"),
    # LLVM 19 prints these sources as 32-bit operands; the model reads an f16 source's low half
    (F.SOP1,    0x068, "s_cvt_f16_f32"),
    (F.SOP1,    0x069, "s_cvt_f32_f16"),
    (F.SOP1,    0x06a, "s_cvt_hi_f32_f16"),
    (F.SOP1,    0x06b, "s_ceil_f16"),
    (F.SOP1,    0x06c, "s_floor_f16"),
    (F.SOP1,    0x06d, "s_trunc_f16"),
    (F.SOP1,    0x06e, "s_rndne_f16"),
    # SOPC
    (F.SOPC,    0x000, "s_cmp_eq_i32"),
    (F.SOPC,    0x001, "s_cmp_lg_i32"),
    (F.SOPC,    0x002, "s_cmp_gt_i32"),
    (F.SOPC,    0x003, "s_cmp_ge_i32"),
    (F.SOPC,    0x004, "s_cmp_lt_i32"),
    (F.SOPC,    0x005, "s_cmp_le_i32"),
    (F.SOPC,    0x006, "s_cmp_eq_u32"),
    (F.SOPC,    0x007, "s_cmp_lg_u32"),
    (F.SOPC,    0x008, "s_cmp_gt_u32"),
    (F.SOPC,    0x009, "s_cmp_ge_u32"),
    (F.SOPC,    0x00a, "s_cmp_lt_u32"),
    (F.SOPC,    0x00b, "s_cmp_le_u32"),
    (F.SOPC,    0x00c, "s_bitcmp0_b32"),
    (F.SOPC,    0x00d, "s_bitcmp1_b32"),
    (F.SOPC,    0x00e, "s_bitcmp0_b64", "s64 s32"),
    (F.SOPC,    0x00f, "s_bitcmp1_b64", "s64 s32"),
    (F.SOPC,    0x010, "s_cmp_eq_u64"),
    (F.SOPC,    0x011, "s_cmp_lg_u64"),
    (F.SOPC,    0x041, "s_cmp_lt_f32"),
    (F.SOPC,    0x042, "s_cmp_eq_f32"),
    (F.SOPC,    0x043, "s_cmp_le_f32"),
    (F.SOPC,    0x044, "s_cmp_gt_f32"),
    (F.SOPC,    0x045, "s_cmp_lg_f32"),
    (F.SOPC,    0x046, "s_cmp_ge_f32"),
    (F.SOPC,    0x047, "s_cmp_o_f32"),
    (F.SOPC,    0x048, "s_cmp_u_f32"),
    (F.SOPC,    0x049, "s_cmp_nge_f32"),
    (F.SOPC,    0x04a, "s_cmp_nlg_f32"),
    (F.SOPC,    0x04b, "s_cmp_ngt_f32"),
    (F.SOPC,    0x04c, "s_cmp_nle_f32"),
    (F.SOPC,    0x04d, "s_cmp_neq_f32"),
    (F.SOPC,    0x04e, "s_cmp_nlt_f32"),
    (F.SOPC,    0x051, "s_cmp_lt_f16", "s16 s16"),
    (F.SOPC,    0x052, "s_cmp_eq_f16", "s16 s16"),
    (F.SOPC,    0x053, "s_cmp_le_f16", "s16 s16"),
    (F.SOPC,    0x054, "s_cmp_gt_f16", "s16 s16"),
    (F.SOPC,    0x055, "s_cmp_lg_f16", "s16 s16"),
    (F.SOPC,    0x056, "s_cmp_ge_f16", "s16 s16"),
    (F.SOPC,    0x057, "s_cmp_o_f16", "s16 s16"),
    (F.SOPC,    0x058, "s_cmp_u_f16", "s16 s16"),
    (F.SOPC,    0x059, "s_cmp_nge_f16", "s16 s16"),
    (F.SOPC,    0x05a, "s_cmp_nlg_f16", "s16 s16"),
    (F.SOPC,    0x05b, "s_cmp_ngt_f16", "s16 s16"),
    (F.SOPC,    0x05c, "s_cmp_nle_f16", "s16 s16"),
    (F.SOPC,    0x05d, "s_cmp_neq_f16", "s16 s16"),
    (F.SOPC,    0x05e, "s_cmp_nlt_f16", "s16 s16"),
    # SOPK
    (F.SOPK,    0x000, "s_movk_i32"),
    (F.SOPK,    0x002, "s_cmovk_i32", "+reads_scc"),
    (F.SOPK,    0x00f, "s_addk_co_i32"),
    (F.SOPK,    0x010, "s_mulk_i32"),
    # SOPP
    (F.SOPP,    0x000, "s_nop"),
    (F.SOPP,    0x005, "s_clause"),
    (F.SOPP,    0x007, "s_delay_alu"),
    (F.SOPP,    0x008, "s_wait_alu"),
    (F.SOPP,    0x011, "s_round_mode", "k:salu"),
    (F.SOPP,    0x012, "s_denorm_mode", "k:salu"),
    (F.SOPP,    0x00a, "s_wait_idle"),
    (F.SOPP,    0x014, "s_barrier_wait"),
    (F.SOPP,    0x020, "s_branch"),
    (F.SOPP,    0x021, "s_cbranch_scc0"),
    (F.SOPP,    0x022, "s_cbranch_scc1"),
    (F.SOPP,    0x023, "s_cbranch_vccz"),
    (F.SOPP,    0x024, "s_cbranch_vccnz"),
    (F.SOPP,    0x025, "s_cbranch_execz"),
    (F.SOPP,    0x026, "s_cbranch_execnz"),
    (F.SOPP,    0x01f, "s_code_end"),
    (F.SOPP,    0x030, "s_endpgm"),
    (F.SOPP,    0x036, "s_sendmsg"),
    (F.SOPP,    0x040, "s_wait_loadcnt"),
    (F.SOPP,    0x041, "s_wait_storecnt"),
    (F.SOPP,    0x042, "s_wait_samplecnt"),
    (F.SOPP,    0x043, "s_wait_bvhcnt"),
    (F.SOPP,    0x044, "s_wait_expcnt"),
    (F.SOPP,    0x046, "s_wait_dscnt"),
    (F.SOPP,    0x047, "s_wait_kmcnt"),
    (F.SOPP,    0x048, "s_wait_loadcnt_dscnt"),
    (F.SOPP,    0x049, "s_wait_storecnt_dscnt"),
    # SMEM
    (F.SMEM,    0x000, "s_load_b32"),
    (F.SMEM,    0x001, "s_load_b64"),
    (F.SMEM,    0x005, "s_load_b96"),
    (F.SMEM,    0x002, "s_load_b128"),
    (F.SMEM,    0x003, "s_load_b256"),
    (F.SMEM,    0x004, "s_load_b512"),
    (F.SMEM,    0x008, "s_load_i8"),
    (F.SMEM,    0x009, "s_load_u8"),
    (F.SMEM,    0x00a, "s_load_i16"),
    (F.SMEM,    0x00b, "s_load_u16"),
    # VOP1
    (F.VOP1,    0x000, "v_nop", "d0 n0"),
    (F.VOP1,    0x001, "v_mov_b32"),
    (F.VOP1,    0x002, "v_readfirstlane_b32", "+sdst +no_e64"),
    (F.VOP1,    0x005, "v_cvt_f32_i32"),
    (F.VOP1,    0x006, "v_cvt_f32_u32"),
    (F.VOP1,    0x007, "v_cvt_u32_f32"),
    (F.VOP1,    0x008, "v_cvt_i32_f32"),
    (F.VOP1,    0x00c, "v_cvt_nearest_i32_f32"),
    (F.VOP1,    0x00d, "v_cvt_floor_i32_f32"),
    (F.VOP1,    0x011, "v_cvt_f32_ubyte0"),
    (F.VOP1,    0x012, "v_cvt_f32_ubyte1"),
    (F.VOP1,    0x013, "v_cvt_f32_ubyte2"),
    (F.VOP1,    0x014, "v_cvt_f32_ubyte3"),
    (F.VOP1,    0x020, "v_fract_f32"),
    (F.VOP1,    0x021, "v_trunc_f32"),
    (F.VOP1,    0x022, "v_ceil_f32"),
    (F.VOP1,    0x023, "v_rndne_f32"),
    (F.VOP1,    0x024, "v_floor_f32"),
    (F.VOP1,    0x025, "v_exp_f32"),
    (F.VOP1,    0x027, "v_log_f32"),
    (F.VOP1,    0x02a, "v_rcp_f32"),
    (F.VOP1,    0x02b, "v_rcp_iflag_f32"),
    (F.VOP1,    0x02e, "v_rsq_f32"),
    (F.VOP1,    0x033, "v_sqrt_f32"),
    (F.VOP1,    0x035, "v_sin_f32"),
    (F.VOP1,    0x036, "v_cos_f32"),
    (F.VOP1,    0x037, "v_not_b32"),
    (F.VOP1,    0x069, "v_not_b16"),
    (F.VOP1,    0x06a, "v_cvt_i32_i16"),
    (F.VOP1,    0x06b, "v_cvt_u32_u16"),
    (F.VOP1,    0x038, "v_bfrev_b32"),
    (F.VOP1,    0x039, "v_clz_i32_u32"),
    (F.VOP1,    0x03a, "v_ctz_i32_b32"),
    (F.VOP1,    0x03b, "v_cls_i32"),
    (F.VOP1,    0x03f, "v_frexp_exp_i32_f32"),
    (F.VOP1,    0x040, "v_frexp_mant_f32"),
    # scalar control, hints, wave64-only and relative-addressing ops, and the SMEM/VOP1
    # encodings neither model nor RTL executes (they decode and disassemble like LLVM 19)
    (F.SOP1,    0x011, "s_bitset0_b64", "d64 s32"),
    (F.SOP1,    0x013, "s_bitset1_b64", "d64 s32"),
    (F.SOP1,    0x014, "s_bitreplicate_b64_b32"),
    (F.SOP1,    0x01a, "s_quadmask_b32"),
    (F.SOP1,    0x01b, "s_quadmask_b64"),
    (F.SOP1,    0x01c, "s_wqm_b32"),
    (F.SOP1,    0x01d, "s_wqm_b64"),
    (F.SOP1,    0x021, "s_and_saveexec_b64"),
    (F.SOP1,    0x023, "s_or_saveexec_b64"),
    (F.SOP1,    0x025, "s_xor_saveexec_b64"),
    (F.SOP1,    0x027, "s_nand_saveexec_b64"),
    (F.SOP1,    0x029, "s_nor_saveexec_b64"),
    (F.SOP1,    0x02b, "s_xnor_saveexec_b64"),
    (F.SOP1,    0x02d, "s_and_not0_saveexec_b64"),
    (F.SOP1,    0x02f, "s_or_not0_saveexec_b64"),
    (F.SOP1,    0x031, "s_and_not1_saveexec_b64"),
    (F.SOP1,    0x033, "s_or_not1_saveexec_b64"),
    (F.SOP1,    0x035, "s_and_not0_wrexec_b64"),
    (F.SOP1,    0x037, "s_and_not1_wrexec_b64"),
    (F.SOP1,    0x040, "s_movrels_b32"),
    (F.SOP1,    0x041, "s_movrels_b64"),
    (F.SOP1,    0x042, "s_movreld_b32"),
    (F.SOP1,    0x043, "s_movreld_b64"),
    (F.SOP1,    0x044, "s_movrelsd_2_b32"),
    (F.SOP1,    0x04a, "s_rfe_b64", "d0"),
    (F.SOP1,    0x04c, "s_sendmsg_rtn_b32", "n0 +sendmsg"),
    (F.SOP1,    0x04d, "s_sendmsg_rtn_b64", "n0 +sendmsg"),
    (F.SOP1,    0x04f, "s_barrier_signal_isfirst", "d0"),
    (F.SOP1,    0x050, "s_get_barrier_state", "d32"),
    (F.SOP1,    0x051, "s_barrier_init", "d0"),
    (F.SOP1,    0x052, "s_barrier_join", "d0"),
    (F.SOP1,    0x058, "s_sleep_var", "d0"),
    (F.SOP2,    0x032, "s_pack_ll_b32_b16"),
    (F.SOP2,    0x033, "s_pack_lh_b32_b16"),
    (F.SOP2,    0x034, "s_pack_hh_b32_b16"),
    (F.SOP2,    0x035, "s_pack_hl_b32_b16"),
    (F.SOPK,    0x011, "s_getreg_b32", "+hwreg"),
    (F.SOPK,    0x012, "s_setreg_b32", "d0 s32 +hwreg"),
    (F.SOPK,    0x013, "s_setreg_imm32_b32", "d0 +hwreg +literal_k"),
    (F.SOPK,    0x014, "s_call_b64", "d64"),
    (F.SOPP,    0x001, "s_setkill", "k:salu"),
    (F.SOPP,    0x002, "s_sethalt", "k:salu"),
    (F.SOPP,    0x003, "s_sleep"),
    (F.SOPP,    0x009, "s_waitcnt", "k:salu"),
    (F.SOPP,    0x00b, "s_wait_event", "k:salu"),
    (F.SOPP,    0x010, "s_trap", "k:salu"),
    (F.SOPP,    0x015, "s_barrier_leave", "k:salu"),
    (F.SOPP,    0x031, "s_endpgm_saved", "k:salu"),
    (F.SOPP,    0x034, "s_wakeup", "k:salu"),
    (F.SOPP,    0x035, "s_setprio"),
    (F.SOPP,    0x037, "s_sendmsghalt", "k:salu"),
    (F.SOPP,    0x038, "s_incperflevel"),
    (F.SOPP,    0x039, "s_decperflevel"),
    (F.SOPP,    0x03a, "s_ttracedata"),
    (F.SOPP,    0x03b, "s_ttracedata_imm"),
    (F.SOPP,    0x03c, "s_icache_inv"),
    (F.SMEM,    0x010, "s_buffer_load_b32", "s128 s32 +buffer"),
    (F.SMEM,    0x011, "s_buffer_load_b64", "s128 s32 +buffer"),
    (F.SMEM,    0x015, "s_buffer_load_b96", "s128 s32 +buffer"),
    (F.SMEM,    0x012, "s_buffer_load_b128", "s128 s32 +buffer"),
    (F.SMEM,    0x013, "s_buffer_load_b256", "s128 s32 +buffer"),
    (F.SMEM,    0x014, "s_buffer_load_b512", "s128 s32 +buffer"),
    (F.SMEM,    0x018, "s_buffer_load_i8", "s128 s32 +buffer"),
    (F.SMEM,    0x019, "s_buffer_load_u8", "s128 s32 +buffer"),
    (F.SMEM,    0x01a, "s_buffer_load_i16", "s128 s32 +buffer"),
    (F.SMEM,    0x01b, "s_buffer_load_u16", "s128 s32 +buffer"),
    (F.SMEM,    0x021, "s_dcache_inv", "d0 n0 k:shint"),
    (F.SMEM,    0x022, "s_atc_probe", "d0 k:shint"),
    (F.SMEM,    0x023, "s_atc_probe_buffer", "d0 s128 s32 k:shint +buffer"),
    (F.SMEM,    0x024, "s_prefetch_inst", "d0 k:shint"),
    (F.SMEM,    0x025, "s_prefetch_inst_pc_rel", "d0 s32 k:shint"),
    (F.SMEM,    0x026, "s_prefetch_data", "d0 k:shint"),
    (F.SMEM,    0x027, "s_buffer_prefetch_data", "d0 s128 s32 k:shint +buffer"),
    (F.SMEM,    0x028, "s_prefetch_data_pc_rel", "d0 s32 k:shint"),
    (F.VOP1,    0x00e, "v_cvt_off_f32_i4"),
    (F.VOP1,    0x01b, "v_pipeflush", "d0 n0 +no_e64"),
    (F.VOP1,    0x042, "v_movreld_b32"),
    (F.VOP1,    0x043, "v_movrels_b32"),
    (F.VOP1,    0x044, "v_movrelsd_b32"),
    (F.VOP1,    0x048, "v_movrelsd_2_b32"),
    (F.VOP1,    0x062, "v_sat_pk_u8_i16", "d16 s32"),
    (F.VOP1,    0x065, "v_swap_b32", "+no_e64"),
    (F.VOP1,    0x067, "v_permlane64_b32", "+no_e64"),
    (F.VOP1,    0x068, "v_swaprel_b32", "+no_e64"),
    # VOP2
    (F.VOP2,    0x001, "v_cndmask_b32", "s32 s32 s32 +reads_vcc"),
    (F.VOP2,    0x003, "v_add_f32"),
    (F.VOP2,    0x004, "v_sub_f32"),
    (F.VOP2,    0x005, "v_subrev_f32"),
    (F.VOP2,    0x008, "v_mul_f32"),
    (F.VOP2,    0x007, "v_mul_dx9_zero_f32"),
    (F.VOP2,    0x009, "v_mul_i32_i24"),
    (F.VOP2,    0x00a, "v_mul_hi_i32_i24"),
    (F.VOP2,    0x00b, "v_mul_u32_u24"),
    (F.VOP2,    0x00c, "v_mul_hi_u32_u24"),
    (F.VOP2,    0x011, "v_min_i32"),
    (F.VOP2,    0x012, "v_max_i32"),
    (F.VOP2,    0x013, "v_min_u32"),
    (F.VOP2,    0x014, "v_max_u32"),
    (F.VOP2,    0x015, "v_min_num_f32"),
    (F.VOP2,    0x016, "v_max_num_f32"),
    (F.VOP2,    0x018, "v_lshlrev_b32"),
    (F.VOP2,    0x019, "v_lshrrev_b32"),
    (F.VOP2,    0x01a, "v_ashrrev_i32"),
    (F.VOP2,    0x01b, "v_and_b32"),
    (F.VOP2,    0x01c, "v_or_b32"),
    (F.VOP2,    0x01d, "v_xor_b32"),
    (F.VOP2,    0x01e, "v_xnor_b32"),
    (F.VOP2,    0x01f, "v_lshlrev_b64", "s32 s64"),
    (F.VOP2,    0x020, "v_add_co_ci_u32", "s32 s32 s32 +reads_vcc +writes_vcc"),
    (F.VOP2,    0x021, "v_sub_co_ci_u32", "s32 s32 s32 +reads_vcc +writes_vcc"),
    (F.VOP2,    0x022, "v_subrev_co_ci_u32", "s32 s32 s32 +reads_vcc +writes_vcc"),
    (F.VOP2,    0x025, "v_add_nc_u32"),
    (F.VOP2,    0x026, "v_sub_nc_u32"),
    (F.VOP2,    0x027, "v_subrev_nc_u32"),
    (F.VOP2,    0x02b, "v_fmac_f32", "+mac"),
    (F.VOP2,    0x02c, "v_fmamk_f32", "+literal_k"),
    (F.VOP2,    0x02d, "v_fmaak_f32", "+literal_k"),
    # VOPC
    (F.VOPC,    0x011, "v_cmp_lt_f32"),
    (F.VOPC,    0x012, "v_cmp_eq_f32"),
    (F.VOPC,    0x013, "v_cmp_le_f32"),
    (F.VOPC,    0x014, "v_cmp_gt_f32"),
    (F.VOPC,    0x015, "v_cmp_lg_f32"),
    (F.VOPC,    0x016, "v_cmp_ge_f32"),
    (F.VOPC,    0x017, "v_cmp_o_f32"),
    (F.VOPC,    0x018, "v_cmp_u_f32"),
    (F.VOPC,    0x019, "v_cmp_nge_f32"),
    (F.VOPC,    0x01a, "v_cmp_nlg_f32"),
    (F.VOPC,    0x01b, "v_cmp_ngt_f32"),
    (F.VOPC,    0x01c, "v_cmp_nle_f32"),
    (F.VOPC,    0x01d, "v_cmp_neq_f32"),
    (F.VOPC,    0x01e, "v_cmp_nlt_f32"),
    (F.VOPC,    0x041, "v_cmp_lt_i32"),
    (F.VOPC,    0x042, "v_cmp_eq_i32"),
    (F.VOPC,    0x043, "v_cmp_le_i32"),
    (F.VOPC,    0x044, "v_cmp_gt_i32"),
    (F.VOPC,    0x045, "v_cmp_ne_i32"),
    (F.VOPC,    0x046, "v_cmp_ge_i32"),
    (F.VOPC,    0x049, "v_cmp_lt_u32"),
    (F.VOPC,    0x04a, "v_cmp_eq_u32"),
    (F.VOPC,    0x04b, "v_cmp_le_u32"),
    (F.VOPC,    0x04c, "v_cmp_gt_u32"),
    (F.VOPC,    0x04d, "v_cmp_ne_u32"),
    (F.VOPC,    0x04e, "v_cmp_ge_u32"),
    (F.VOPC,    0x051, "v_cmp_lt_i64"),
    (F.VOPC,    0x052, "v_cmp_eq_i64"),
    (F.VOPC,    0x053, "v_cmp_le_i64"),
    (F.VOPC,    0x054, "v_cmp_gt_i64"),
    (F.VOPC,    0x055, "v_cmp_ne_i64"),
    (F.VOPC,    0x056, "v_cmp_ge_i64"),
    (F.VOPC,    0x059, "v_cmp_lt_u64"),
    (F.VOPC,    0x05a, "v_cmp_eq_u64"),
    (F.VOPC,    0x05b, "v_cmp_le_u64"),
    (F.VOPC,    0x05c, "v_cmp_gt_u64"),
    (F.VOPC,    0x05d, "v_cmp_ne_u64"),
    (F.VOPC,    0x05e, "v_cmp_ge_u64"),
    (F.VOPC,    0x07e, "v_cmp_class_f32"),
    (F.VOPC,    0x091, "v_cmpx_lt_f32"),
    (F.VOPC,    0x092, "v_cmpx_eq_f32"),
    (F.VOPC,    0x093, "v_cmpx_le_f32"),
    (F.VOPC,    0x094, "v_cmpx_gt_f32"),
    (F.VOPC,    0x095, "v_cmpx_lg_f32"),
    (F.VOPC,    0x096, "v_cmpx_ge_f32"),
    (F.VOPC,    0x097, "v_cmpx_o_f32"),
    (F.VOPC,    0x098, "v_cmpx_u_f32"),
    (F.VOPC,    0x099, "v_cmpx_nge_f32"),
    (F.VOPC,    0x09a, "v_cmpx_nlg_f32"),
    (F.VOPC,    0x09b, "v_cmpx_ngt_f32"),
    (F.VOPC,    0x09c, "v_cmpx_nle_f32"),
    (F.VOPC,    0x09d, "v_cmpx_neq_f32"),
    (F.VOPC,    0x09e, "v_cmpx_nlt_f32"),
    (F.VOPC,    0x0c1, "v_cmpx_lt_i32"),
    (F.VOPC,    0x0c2, "v_cmpx_eq_i32"),
    (F.VOPC,    0x0c3, "v_cmpx_le_i32"),
    (F.VOPC,    0x0c4, "v_cmpx_gt_i32"),
    (F.VOPC,    0x0c5, "v_cmpx_ne_i32"),
    (F.VOPC,    0x0c6, "v_cmpx_ge_i32"),
    (F.VOPC,    0x0c9, "v_cmpx_lt_u32"),
    (F.VOPC,    0x0ca, "v_cmpx_eq_u32"),
    (F.VOPC,    0x0cb, "v_cmpx_le_u32"),
    (F.VOPC,    0x0cc, "v_cmpx_gt_u32"),
    (F.VOPC,    0x0cd, "v_cmpx_ne_u32"),
    (F.VOPC,    0x0ce, "v_cmpx_ge_u32"),
    (F.VOPC,    0x0d1, "v_cmpx_lt_i64"),
    (F.VOPC,    0x0d2, "v_cmpx_eq_i64"),
    (F.VOPC,    0x0d3, "v_cmpx_le_i64"),
    (F.VOPC,    0x0d4, "v_cmpx_gt_i64"),
    (F.VOPC,    0x0d5, "v_cmpx_ne_i64"),
    (F.VOPC,    0x0d6, "v_cmpx_ge_i64"),
    (F.VOPC,    0x0d9, "v_cmpx_lt_u64"),
    (F.VOPC,    0x0da, "v_cmpx_eq_u64"),
    (F.VOPC,    0x0db, "v_cmpx_le_u64"),
    (F.VOPC,    0x0dc, "v_cmpx_gt_u64"),
    (F.VOPC,    0x0dd, "v_cmpx_ne_u64"),
    (F.VOPC,    0x0de, "v_cmpx_ge_u64"),
    (F.VOPC,    0x0fe, "v_cmpx_class_f32"),
    # VOP3
    (F.VOP3,    0x20a, "v_mad_i32_i24"),
    (F.VOP3,    0x20b, "v_mad_u32_u24"),
    (F.VOP3,    0x210, "v_bfe_u32"),
    (F.VOP3,    0x211, "v_bfe_i32"),
    (F.VOP3,    0x212, "v_bfi_b32"),
    (F.VOP3,    0x213, "v_fma_f32"),
    (F.VOP3,    0x227, "v_div_fixup_f32"),
    (F.VOP3,    0x237, "v_div_fmas_f32", "+reads_vcc"),
    (F.VOP3,    0x216, "v_alignbit_b32"),
    (F.VOP3,    0x217, "v_alignbyte_b32"),
    (F.VOP3,    0x21a, "v_min3_i32"),
    (F.VOP3,    0x21b, "v_min3_u32"),
    (F.VOP3,    0x21d, "v_max3_i32"),
    (F.VOP3,    0x21e, "v_max3_u32"),
    (F.VOP3,    0x220, "v_med3_i32"),
    (F.VOP3,    0x221, "v_med3_u32"),
    (F.VOP3,    0x229, "v_min3_num_f32"),
    (F.VOP3,    0x22a, "v_max3_num_f32"),
    (F.VOP3,    0x22d, "v_minimum3_f32"),
    (F.VOP3,    0x22e, "v_maximum3_f32"),
    (F.VOP3,    0x231, "v_med3_num_f32"),
    (F.VOP3,    0x240, "v_xor3_b32"),
    (F.VOP3,    0x244, "v_perm_b32"),
    (F.VOP3,    0x245, "v_xad_u32"),
    (F.VOP3,    0x246, "v_lshl_add_u32"),
    (F.VOP3,    0x247, "v_add_lshl_u32"),
    (F.VOP3,    0x255, "v_add3_u32"),
    (F.VOP3,    0x256, "v_lshl_or_b32"),
    (F.VOP3,    0x257, "v_and_or_b32"),
    (F.VOP3,    0x258, "v_or3_b32"),
    (F.VOP3,    0x262, "v_maxmin_u32"),
    (F.VOP3,    0x263, "v_minmax_u32"),
    (F.VOP3,    0x264, "v_maxmin_i32"),
    (F.VOP3,    0x265, "v_minmax_i32"),
    (F.VOP3,    0x268, "v_minmax_num_f32"),
    (F.VOP3,    0x269, "v_maxmin_num_f32"),
    (F.VOP3,    0x31c, "v_ldexp_f32", "n2"),
    (F.VOP3,    0x31d, "v_bfm_b32", "n2"),
    (F.VOP3,    0x31e, "v_bcnt_u32_b32", "n2"),
    (F.VOP3,    0x31f, "v_mbcnt_lo_u32_b32", "n2"),
    (F.VOP3,    0x320, "v_mbcnt_hi_u32_b32", "n2"),
    (F.VOP3,    0x325, "v_sub_nc_i32", "n2"),
    (F.VOP3,    0x326, "v_add_nc_i32", "n2"),
    (F.VOP3,    0x32c, "v_mul_lo_u32", "n2"),
    (F.VOP3,    0x32d, "v_mul_hi_u32", "n2"),
    (F.VOP3,    0x32e, "v_mul_hi_i32", "n2"),
    (F.VOP3,    0x33d, "v_lshrrev_b64", "s32 s64"),
    # 16-bit integer ops (LLVM 19 gfx1200 prints them "fake16": vN registers, op_sel)
    (F.VOP3,    0x241, "v_mad_u16"),
    (F.VOP3,    0x253, "v_mad_i16"),
    (F.VOP3,    0x259, "v_mad_u32_u16", "s16 s16 s32"),
    (F.VOP3,    0x25a, "v_mad_i32_i16", "s16 s16 s32"),
    (F.VOP3,    0x303, "v_add_nc_u16", "n2"),
    (F.VOP3,    0x304, "v_sub_nc_u16", "n2"),
    (F.VOP3,    0x305, "v_mul_lo_u16", "n2"),
    (F.VOP3,    0x309, "v_max_u16", "n2"),
    (F.VOP3,    0x30a, "v_max_i16", "n2"),
    (F.VOP3,    0x30b, "v_min_u16", "n2"),
    (F.VOP3,    0x30c, "v_min_i16", "n2"),
    (F.VOP3,    0x30d, "v_add_nc_i16", "n2"),
    (F.VOP3,    0x30e, "v_sub_nc_i16", "n2"),
    (F.VOP3,    0x338, "v_lshlrev_b16", "n2"),
    (F.VOP3,    0x339, "v_lshrrev_b16", "n2"),
    (F.VOP3,    0x33a, "v_ashrrev_i16", "n2"),
    (F.VOP3,    0x362, "v_and_b16", "n2"),
    (F.VOP3,    0x363, "v_or_b16", "n2"),
    (F.VOP3,    0x364, "v_xor_b16", "n2"),
    (F.VOP3,    0x33e, "v_ashrrev_i64", "s32 s64"),
    (F.VOP3,    0x360, "v_readlane_b32", "n2 +sdst"),
    (F.VOP3,    0x361, "v_writelane_b32", "n2 +writelane"),
    (F.VOP3,    0x365, "v_minimum_f32", "n2"),
    (F.VOP3,    0x366, "v_maximum_f32", "n2"),
    # scalar-float transcendentals: one SGPR/constant source, an SGPR destination
    # VOP3P: packed 16-bit math, v_dot2_f32_f16 and the mixed-precision FMAs
    (F.VOP3P,   0x000, "v_pk_mad_i16", "k:valu n3 +clamp"),
    (F.VOP3P,   0x001, "v_pk_mul_lo_u16", "k:valu n2"),
    (F.VOP3P,   0x002, "v_pk_add_i16", "k:valu n2 +clamp"),
    (F.VOP3P,   0x003, "v_pk_sub_i16", "k:valu n2 +clamp"),
    (F.VOP3P,   0x004, "v_pk_lshlrev_b16", "k:valu n2"),
    (F.VOP3P,   0x005, "v_pk_lshrrev_b16", "k:valu n2"),
    (F.VOP3P,   0x006, "v_pk_ashrrev_i16", "k:valu n2"),
    (F.VOP3P,   0x007, "v_pk_max_i16", "k:valu n2"),
    (F.VOP3P,   0x008, "v_pk_min_i16", "k:valu n2"),
    (F.VOP3P,   0x009, "v_pk_mad_u16", "k:valu n3 +clamp"),
    (F.VOP3P,   0x00a, "v_pk_add_u16", "k:valu n2 +clamp"),
    (F.VOP3P,   0x00b, "v_pk_sub_u16", "k:valu n2 +clamp"),
    (F.VOP3P,   0x00c, "v_pk_max_u16", "k:valu n2"),
    (F.VOP3P,   0x00d, "v_pk_min_u16", "k:valu n2"),
    (F.VOP3P,   0x00e, "v_pk_fma_f16", "k:valu n3 +clamp +neg"),
    (F.VOP3P,   0x00f, "v_pk_add_f16", "k:valu n2 +clamp +neg"),
    (F.VOP3P,   0x010, "v_pk_mul_f16", "k:valu n2 +clamp +neg"),
    (F.VOP3P,   0x013, "v_dot2_f32_f16", "k:valu n3 +clamp +neg"),
    (F.VOP3P,   0x01b, "v_pk_min_num_f16", "k:valu n2 +clamp +neg"),
    (F.VOP3P,   0x01c, "v_pk_max_num_f16", "k:valu n2 +clamp +neg"),
    (F.VOP3P,   0x01d, "v_pk_minimum_f16", "k:valu n2 +clamp +neg"),
    (F.VOP3P,   0x01e, "v_pk_maximum_f16", "k:valu n2 +clamp +neg"),
    (F.VOP3P,   0x020, "v_fma_mix_f32", "k:valu n3 +clamp +neg +abs +mods3"),
    (F.VOP3P,   0x021, "v_fma_mixlo_f16", "k:valu d16 n3 +clamp +neg +abs +mods3"),
    (F.VOP3P,   0x022, "v_fma_mixhi_f16", "k:valu d16 n3 +clamp +neg +abs +mods3"),
    (F.VOP3,    0x280, "v_s_exp_f32", "n1 k:vtrans +sdst"),
    (F.VOP3,    0x282, "v_s_log_f32", "n1 k:vtrans +sdst"),
    (F.VOP3,    0x284, "v_s_rcp_f32", "n1 k:vtrans +sdst"),
    (F.VOP3,    0x286, "v_s_rsq_f32", "n1 k:vtrans +sdst"),
    (F.VOP3,    0x288, "v_s_sqrt_f32", "n1 k:vtrans +sdst"),
    # 16-bit float (LLVM 19 gfx1200 fake16: vN registers; op_sel only where LLVM accepts it)
    (F.VOP1,    0x00a, "v_cvt_f16_f32", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x00b, "v_cvt_f32_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x050, "v_cvt_f16_u16", "+clamp +omod"),
    (F.VOP1,    0x051, "v_cvt_f16_i16", "+clamp +omod"),
    (F.VOP1,    0x052, "v_cvt_u16_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x053, "v_cvt_i16_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x054, "v_rcp_f16", "k:vtrans +neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x055, "v_sqrt_f16", "k:vtrans +neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x056, "v_rsq_f16", "k:vtrans +neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x057, "v_log_f16", "k:vtrans +neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x058, "v_exp_f16", "k:vtrans +neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x059, "v_frexp_mant_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x05a, "v_frexp_exp_i16_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x05b, "v_floor_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x05c, "v_ceil_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x05d, "v_trunc_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x05e, "v_rndne_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x05f, "v_fract_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x060, "v_sin_f16", "k:vtrans +neg +abs +mods3 +clamp +omod"),
    (F.VOP1,    0x061, "v_cos_f16", "k:vtrans +neg +abs +mods3 +clamp +omod"),
    (F.VOP2,    0x02f, "v_cvt_pk_rtz_f16_f32", "d32 +neg +abs +mods3 +clamp +omod"),
    (F.VOP2,    0x030, "v_min_num_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP2,    0x031, "v_max_num_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP2,    0x032, "v_add_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP2,    0x033, "v_sub_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP2,    0x034, "v_subrev_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP2,    0x035, "v_mul_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP2,    0x036, "v_fmac_f16", "+mac +neg +abs +mods3 +clamp +omod +opsel"),
    (F.VOP2,    0x037, "v_fmamk_f16", "+literal_k"),
    (F.VOP2,    0x038, "v_fmaak_f16", "+literal_k"),
    (F.VOP2,    0x03b, "v_ldexp_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOPC,    0x001, "v_cmp_lt_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x002, "v_cmp_eq_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x003, "v_cmp_le_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x004, "v_cmp_gt_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x005, "v_cmp_lg_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x006, "v_cmp_ge_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x007, "v_cmp_o_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x008, "v_cmp_u_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x009, "v_cmp_nge_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x00a, "v_cmp_nlg_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x00b, "v_cmp_ngt_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x00c, "v_cmp_nle_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x00d, "v_cmp_neq_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x00e, "v_cmp_nlt_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x07d, "v_cmp_class_f16", "+neg +abs +mods1"),
    (F.VOPC,    0x081, "v_cmpx_lt_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x082, "v_cmpx_eq_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x083, "v_cmpx_le_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x084, "v_cmpx_gt_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x085, "v_cmpx_lg_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x086, "v_cmpx_ge_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x087, "v_cmpx_o_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x088, "v_cmpx_u_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x089, "v_cmpx_nge_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x08a, "v_cmpx_nlg_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x08b, "v_cmpx_ngt_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x08c, "v_cmpx_nle_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x08d, "v_cmpx_neq_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x08e, "v_cmpx_nlt_f16", "+neg +abs +mods3 +clamp"),
    (F.VOPC,    0x0fd, "v_cmpx_class_f16", "+neg +abs +mods1"),
    (F.VOP3,    0x248, "v_fma_f16", "+neg +abs +mods3 +clamp +omod +opsel"),
    (F.VOP3,    0x254, "v_div_fixup_f16", "+neg +abs +mods3 +clamp +omod +opsel"),
    (F.VOP3,    0x22b, "v_min3_num_f16", "+neg +abs +mods3 +clamp +omod +opsel"),
    (F.VOP3,    0x22c, "v_max3_num_f16", "+neg +abs +mods3 +clamp +omod +opsel"),
    (F.VOP3,    0x22f, "v_minimum3_f16", "+neg +abs +mods3 +clamp +omod +opsel"),
    (F.VOP3,    0x230, "v_maximum3_f16", "+neg +abs +mods3 +clamp +omod +opsel"),
    (F.VOP3,    0x232, "v_med3_num_f16", "+neg +abs +mods3 +clamp +omod +opsel"),
    (F.VOP3,    0x26a, "v_minmax_num_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP3,    0x26b, "v_maxmin_num_f16", "+neg +abs +mods3 +clamp +omod"),
    (F.VOP3,    0x367, "v_minimum_f16", "n2 +neg +abs +mods3 +clamp +omod"),
    (F.VOP3,    0x368, "v_maximum_f16", "n2 +neg +abs +mods3 +clamp +omod"),
    (F.VOP3,    0x311, "v_pack_b32_f16", "n2 +neg +abs +mods3 +clamp +opsel"),
    (F.VOP3,    0x281, "v_s_exp_f16", "n1 k:vtrans +sdst +neg +abs +mods3 +clamp +omod"),
    (F.VOP3,    0x283, "v_s_log_f16", "n1 k:vtrans +sdst +neg +abs +mods3 +clamp +omod"),
    (F.VOP3,    0x285, "v_s_rcp_f16", "n1 k:vtrans +sdst +neg +abs +mods3 +clamp +omod"),
    (F.VOP3,    0x287, "v_s_rsq_f16", "n1 k:vtrans +sdst +neg +abs +mods3 +clamp +omod"),
    (F.VOP3,    0x289, "v_s_sqrt_f16", "n1 k:vtrans +sdst +neg +abs +mods3 +clamp +omod"),
    # 16-bit integer compares
    (F.VOPC,    0x031, "v_cmp_lt_i16"),
    (F.VOPC,    0x032, "v_cmp_eq_i16"),
    (F.VOPC,    0x033, "v_cmp_le_i16"),
    (F.VOPC,    0x034, "v_cmp_gt_i16"),
    (F.VOPC,    0x035, "v_cmp_ne_i16"),
    (F.VOPC,    0x036, "v_cmp_ge_i16"),
    (F.VOPC,    0x039, "v_cmp_lt_u16"),
    (F.VOPC,    0x03a, "v_cmp_eq_u16"),
    (F.VOPC,    0x03b, "v_cmp_le_u16"),
    (F.VOPC,    0x03c, "v_cmp_gt_u16"),
    (F.VOPC,    0x03d, "v_cmp_ne_u16"),
    (F.VOPC,    0x03e, "v_cmp_ge_u16"),
    (F.VOPC,    0x0b1, "v_cmpx_lt_i16"),
    (F.VOPC,    0x0b2, "v_cmpx_eq_i16"),
    (F.VOPC,    0x0b3, "v_cmpx_le_i16"),
    (F.VOPC,    0x0b4, "v_cmpx_gt_i16"),
    (F.VOPC,    0x0b5, "v_cmpx_ne_i16"),
    (F.VOPC,    0x0b6, "v_cmpx_ge_i16"),
    (F.VOPC,    0x0b9, "v_cmpx_lt_u16"),
    (F.VOPC,    0x0ba, "v_cmpx_eq_u16"),
    (F.VOPC,    0x0bb, "v_cmpx_le_u16"),
    (F.VOPC,    0x0bc, "v_cmpx_gt_u16"),
    (F.VOPC,    0x0bd, "v_cmpx_ne_u16"),
    (F.VOPC,    0x0be, "v_cmpx_ge_u16"),
    # byte/half-word sums and selects, 16-bit three-operand min/max, conversions with saturation
    # (LLVM 19 prints v_sad_u16 and v_cvt_pk_*'s sources as 32-bit operands)
    (F.VOP3,    0x215, "v_lerp_u8"),
    (F.VOP3,    0x222, "v_sad_u8", "+clamp"),
    (F.VOP3,    0x223, "v_sad_hi_u8", "+clamp"),
    (F.VOP3,    0x224, "v_sad_u16", "d32 s32 s32 s32 +clamp"),
    (F.VOP3,    0x225, "v_sad_u32", "+clamp"),
    (F.VOP3,    0x239, "v_msad_u8", "+clamp"),
    (F.VOP3,    0x23a, "v_qsad_pk_u16_u8", "d64 s64 s32 s64 +clamp"),
    (F.VOP3,    0x23b, "v_mqsad_pk_u16_u8", "d64 s64 s32 s64 +clamp"),
    (F.VOP3,    0x24a, "v_min3_i16", "+opsel +clamp"),
    (F.VOP3,    0x24b, "v_min3_u16", "+opsel +clamp"),
    (F.VOP3,    0x24d, "v_max3_i16", "+opsel +clamp"),
    (F.VOP3,    0x24e, "v_max3_u16", "+opsel +clamp"),
    (F.VOP3,    0x250, "v_med3_i16", "+opsel +clamp"),
    (F.VOP3,    0x251, "v_med3_u16", "+opsel +clamp"),
    (F.VOP3,    0x25d, "v_cndmask_b16", "s16 s16 s32 +neg +abs +mods2"),
    (F.VOP3,    0x323, "v_cvt_pk_u16_u32", "d32 s32 s32"),
    (F.VOP3,    0x324, "v_cvt_pk_i16_i32", "d32 s32 s32"),
    # cross-lane permutations within / across the two 16-lane rows
    (F.VOP3,    0x25b, "v_permlane16_b32", "+fi_bc"),
    (F.VOP3,    0x25c, "v_permlanex16_b32", "+fi_bc"),
    (F.VOP3,    0x30f, "v_permlane16_var_b32", "n2 +fi_bc"),
    (F.VOP3,    0x310, "v_permlanex16_var_b32", "n2 +fi_bc"),
    # VOP3SD
    (F.VOP3SD,  0x300, "v_add_co_u32", "n2"),
    (F.VOP3SD,  0x301, "v_sub_co_u32", "n2"),
    (F.VOP3SD,  0x302, "v_subrev_co_u32", "n2"),
    (F.VOP3SD,  0x2fc, "v_div_scale_f32", "n3"),
    (F.VOP3SD,  0x2fe, "v_mad_co_u64_u32", "d64 s32 s32 s64"),
    (F.VOP3SD,  0x2ff, "v_mad_co_i64_i32", "d64 s32 s32 s64"),
    # FP64: 64-bit sources and destinations are VGPR/SGPR pairs (src_bits/dst_bits 64)
    (F.VOP1,    0x003, "v_cvt_i32_f64"),
    (F.VOP1,    0x004, "v_cvt_f64_i32"),
    (F.VOP1,    0x00f, "v_cvt_f32_f64"),
    (F.VOP1,    0x010, "v_cvt_f64_f32"),
    (F.VOP1,    0x015, "v_cvt_u32_f64"),
    (F.VOP1,    0x016, "v_cvt_f64_u32"),
    (F.VOP1,    0x017, "v_trunc_f64"),
    (F.VOP1,    0x018, "v_ceil_f64"),
    (F.VOP1,    0x019, "v_rndne_f64"),
    (F.VOP1,    0x01a, "v_floor_f64"),
    (F.VOP1,    0x02f, "v_rcp_f64", "k:vtrans"),
    (F.VOP1,    0x031, "v_rsq_f64", "k:vtrans"),
    (F.VOP1,    0x034, "v_sqrt_f64", "k:vtrans"),
    (F.VOP1,    0x03c, "v_frexp_exp_i32_f64"),
    (F.VOP1,    0x03d, "v_frexp_mant_f64"),
    (F.VOP1,    0x03e, "v_fract_f64"),
    (F.VOP2,    0x002, "v_add_f64"),
    (F.VOP2,    0x006, "v_mul_f64"),
    (F.VOP2,    0x00d, "v_min_num_f64"),
    (F.VOP2,    0x00e, "v_max_num_f64"),
    (F.VOPC,    0x021, "v_cmp_lt_f64"),
    (F.VOPC,    0x022, "v_cmp_eq_f64"),
    (F.VOPC,    0x023, "v_cmp_le_f64"),
    (F.VOPC,    0x024, "v_cmp_gt_f64"),
    (F.VOPC,    0x025, "v_cmp_lg_f64"),
    (F.VOPC,    0x026, "v_cmp_ge_f64"),
    (F.VOPC,    0x027, "v_cmp_o_f64"),
    (F.VOPC,    0x028, "v_cmp_u_f64"),
    (F.VOPC,    0x029, "v_cmp_nge_f64"),
    (F.VOPC,    0x02a, "v_cmp_nlg_f64"),
    (F.VOPC,    0x02b, "v_cmp_ngt_f64"),
    (F.VOPC,    0x02c, "v_cmp_nle_f64"),
    (F.VOPC,    0x02d, "v_cmp_neq_f64"),
    (F.VOPC,    0x02e, "v_cmp_nlt_f64"),
    (F.VOPC,    0x07f, "v_cmp_class_f64", "s64 s32"),
    (F.VOPC,    0x0a1, "v_cmpx_lt_f64"),
    (F.VOPC,    0x0a2, "v_cmpx_eq_f64"),
    (F.VOPC,    0x0a3, "v_cmpx_le_f64"),
    (F.VOPC,    0x0a4, "v_cmpx_gt_f64"),
    (F.VOPC,    0x0a5, "v_cmpx_lg_f64"),
    (F.VOPC,    0x0a6, "v_cmpx_ge_f64"),
    (F.VOPC,    0x0a7, "v_cmpx_o_f64"),
    (F.VOPC,    0x0a8, "v_cmpx_u_f64"),
    (F.VOPC,    0x0a9, "v_cmpx_nge_f64"),
    (F.VOPC,    0x0aa, "v_cmpx_nlg_f64"),
    (F.VOPC,    0x0ab, "v_cmpx_ngt_f64"),
    (F.VOPC,    0x0ac, "v_cmpx_nle_f64"),
    (F.VOPC,    0x0ad, "v_cmpx_neq_f64"),
    (F.VOPC,    0x0ae, "v_cmpx_nlt_f64"),
    (F.VOPC,    0x0ff, "v_cmpx_class_f64", "s64 s32"),
    (F.VOP3,    0x214, "v_fma_f64"),
    (F.VOP3,    0x228, "v_div_fixup_f64"),
    (F.VOP3,    0x238, "v_div_fmas_f64", "+reads_vcc"),
    (F.VOP3,    0x32b, "v_ldexp_f64", "s64 s32"),
    (F.VOP3,    0x32f, "v_trig_preop_f64", "s64 s32"),
    (F.VOP3,    0x341, "v_minimum_f64", "n2"),
    (F.VOP3,    0x342, "v_maximum_f64", "n2"),
    (F.VOP3SD,  0x2fd, "v_div_scale_f64", "n3"),
    # DS
    (F.DS,      0x000, "ds_add_u32"),
    (F.DS,      0x001, "ds_sub_u32"),
    (F.DS,      0x002, "ds_rsub_u32"),
    (F.DS,      0x003, "ds_inc_u32"),
    (F.DS,      0x004, "ds_dec_u32"),
    (F.DS,      0x005, "ds_min_i32"),
    (F.DS,      0x006, "ds_max_i32"),
    (F.DS,      0x007, "ds_min_u32"),
    (F.DS,      0x008, "ds_max_u32"),
    (F.DS,      0x009, "ds_and_b32"),
    (F.DS,      0x00a, "ds_or_b32"),
    (F.DS,      0x00b, "ds_xor_b32"),
    (F.DS,      0x00d, "ds_store_b32"),
    (F.DS,      0x00e, "ds_store_2addr_b32"),
    (F.DS,      0x00f, "ds_store_2addr_stride64_b32"),
    (F.DS,      0x010, "ds_cmpstore_b32"),
    (F.DS,      0x01e, "ds_store_b8"),
    (F.DS,      0x01f, "ds_store_b16"),
    (F.DS,      0x020, "ds_add_rtn_u32"),
    (F.DS,      0x021, "ds_sub_rtn_u32"),
    (F.DS,      0x022, "ds_rsub_rtn_u32"),
    (F.DS,      0x023, "ds_inc_rtn_u32"),
    (F.DS,      0x024, "ds_dec_rtn_u32"),
    (F.DS,      0x025, "ds_min_rtn_i32"),
    (F.DS,      0x026, "ds_max_rtn_i32"),
    (F.DS,      0x027, "ds_min_rtn_u32"),
    (F.DS,      0x028, "ds_max_rtn_u32"),
    (F.DS,      0x029, "ds_and_rtn_b32"),
    (F.DS,      0x02a, "ds_or_rtn_b32"),
    (F.DS,      0x02b, "ds_xor_rtn_b32"),
    (F.DS,      0x02d, "ds_storexchg_rtn_b32"),
    (F.DS,      0x02e, "ds_storexchg_2addr_rtn_b32"),
    (F.DS,      0x02f, "ds_storexchg_2addr_stride64_rtn_b32"),
    (F.DS,      0x030, "ds_cmpstore_rtn_b32"),
    (F.DS,      0x036, "ds_load_b32"),
    (F.DS,      0x037, "ds_load_2addr_b32"),
    (F.DS,      0x038, "ds_load_2addr_stride64_b32"),
    (F.DS,      0x039, "ds_load_i8"),
    (F.DS,      0x03a, "ds_load_u8"),
    (F.DS,      0x03b, "ds_load_i16"),
    (F.DS,      0x03c, "ds_load_u16"),
    (F.DS,      0x04d, "ds_store_b64"),
    (F.DS,      0x04e, "ds_store_2addr_b64"),
    (F.DS,      0x04f, "ds_store_2addr_stride64_b64"),
    (F.DS,      0x076, "ds_load_b64"),
    (F.DS,      0x077, "ds_load_2addr_b64"),
    (F.DS,      0x078, "ds_load_2addr_stride64_b64"),
    (F.DS,      0x0de, "ds_store_b96"),
    (F.DS,      0x0df, "ds_store_b128"),
    (F.DS,      0x0fe, "ds_load_b96"),
    (F.DS,      0x0ff, "ds_load_b128"),
    # DS: mask-or, 64-bit atomics and the d16 forms (a half of the VGPR is kept)
    (F.DS,      0x00c, "ds_mskor_b32"),
    (F.DS,      0x012, "ds_min_num_f32"),
    (F.DS,      0x013, "ds_max_num_f32"),
    (F.DS,      0x015, "ds_add_f32"),
    (F.DS,      0x032, "ds_min_num_rtn_f32"),
    (F.DS,      0x033, "ds_max_num_rtn_f32"),
    (F.DS,      0x079, "ds_add_rtn_f32"),
    (F.DS,      0x02c, "ds_mskor_rtn_b32"),
    (F.DS,      0x040, "ds_add_u64"),
    (F.DS,      0x041, "ds_sub_u64"),
    (F.DS,      0x042, "ds_rsub_u64"),
    (F.DS,      0x043, "ds_inc_u64"),
    (F.DS,      0x044, "ds_dec_u64"),
    (F.DS,      0x045, "ds_min_i64"),
    (F.DS,      0x046, "ds_max_i64"),
    (F.DS,      0x047, "ds_min_u64"),
    (F.DS,      0x048, "ds_max_u64"),
    (F.DS,      0x049, "ds_and_b64"),
    (F.DS,      0x04a, "ds_or_b64"),
    (F.DS,      0x04b, "ds_xor_b64"),
    (F.DS,      0x04c, "ds_mskor_b64"),
    (F.DS,      0x050, "ds_cmpstore_b64"),
    (F.DS,      0x060, "ds_add_rtn_u64"),
    (F.DS,      0x061, "ds_sub_rtn_u64"),
    (F.DS,      0x062, "ds_rsub_rtn_u64"),
    (F.DS,      0x063, "ds_inc_rtn_u64"),
    (F.DS,      0x064, "ds_dec_rtn_u64"),
    (F.DS,      0x065, "ds_min_rtn_i64"),
    (F.DS,      0x066, "ds_max_rtn_i64"),
    (F.DS,      0x067, "ds_min_rtn_u64"),
    (F.DS,      0x068, "ds_max_rtn_u64"),
    (F.DS,      0x069, "ds_and_rtn_b64"),
    (F.DS,      0x06a, "ds_or_rtn_b64"),
    (F.DS,      0x06b, "ds_xor_rtn_b64"),
    (F.DS,      0x06c, "ds_mskor_rtn_b64"),
    (F.DS,      0x06d, "ds_storexchg_rtn_b64"),
    (F.DS,      0x06e, "ds_storexchg_2addr_rtn_b64"),
    (F.DS,      0x06f, "ds_storexchg_2addr_stride64_rtn_b64"),
    (F.DS,      0x070, "ds_cmpstore_rtn_b64"),
    (F.DS,      0x0a0, "ds_store_b8_d16_hi"),
    (F.DS,      0x0a1, "ds_store_b16_d16_hi"),
    (F.DS,      0x0a2, "ds_load_u8_d16"),
    (F.DS,      0x0a3, "ds_load_u8_d16_hi"),
    (F.DS,      0x0a4, "ds_load_i8_d16"),
    (F.DS,      0x0a5, "ds_load_i8_d16_hi"),
    (F.DS,      0x0a6, "ds_load_u16_d16"),
    (F.DS,      0x0a7, "ds_load_u16_d16_hi"),
    # DS lane permutations (no LDS access; counted by DScnt)
    (F.DS,      0x035, "ds_swizzle_b32", "k:ds_load d32 s32 +lanes"),
    (F.DS,      0x0b2, "ds_permute_b32", "k:ds_load d32 s32 s32 +lanes"),
    (F.DS,      0x0b3, "ds_bpermute_b32", "k:ds_load d32 s32 s32 +lanes"),
    # VGLOBAL
    (F.VGLOBAL, 0x010, "global_load_u8"),
    (F.VGLOBAL, 0x011, "global_load_i8"),
    (F.VGLOBAL, 0x012, "global_load_u16"),
    (F.VGLOBAL, 0x013, "global_load_i16"),
    (F.VGLOBAL, 0x014, "global_load_b32"),
    (F.VGLOBAL, 0x015, "global_load_b64"),
    (F.VGLOBAL, 0x016, "global_load_b96"),
    (F.VGLOBAL, 0x017, "global_load_b128"),
    (F.VGLOBAL, 0x018, "global_store_b8"),
    (F.VGLOBAL, 0x019, "global_store_b16"),
    (F.VGLOBAL, 0x01a, "global_store_b32"),
    (F.VGLOBAL, 0x01b, "global_store_b64"),
    (F.VGLOBAL, 0x01c, "global_store_b96"),
    (F.VGLOBAL, 0x01d, "global_store_b128"),
    (F.VGLOBAL, 0x02b, "global_inv"),
    (F.VGLOBAL, 0x02c, "global_wb"),
    (F.VGLOBAL, 0x033, "global_atomic_swap_b32"),
    (F.VGLOBAL, 0x034, "global_atomic_cmpswap_b32"),
    (F.VGLOBAL, 0x035, "global_atomic_add_u32"),
    (F.VGLOBAL, 0x036, "global_atomic_sub_u32"),
    (F.VGLOBAL, 0x038, "global_atomic_min_i32"),
    (F.VGLOBAL, 0x039, "global_atomic_min_u32"),
    (F.VGLOBAL, 0x03a, "global_atomic_max_i32"),
    (F.VGLOBAL, 0x03b, "global_atomic_max_u32"),
    (F.VGLOBAL, 0x03c, "global_atomic_and_b32"),
    (F.VGLOBAL, 0x03d, "global_atomic_or_b32"),
    (F.VGLOBAL, 0x03e, "global_atomic_xor_b32"),
    (F.VGLOBAL, 0x03f, "global_atomic_inc_u32"),
    (F.VGLOBAL, 0x040, "global_atomic_dec_u32"),
    (F.VGLOBAL, 0x01e, "global_load_d16_u8"),
    (F.VGLOBAL, 0x01f, "global_load_d16_i8"),
    (F.VGLOBAL, 0x020, "global_load_d16_b16"),
    (F.VGLOBAL, 0x021, "global_load_d16_hi_u8"),
    (F.VGLOBAL, 0x022, "global_load_d16_hi_i8"),
    (F.VGLOBAL, 0x023, "global_load_d16_hi_b16"),
    (F.VGLOBAL, 0x024, "global_store_d16_hi_b8"),
    (F.VGLOBAL, 0x025, "global_store_d16_hi_b16"),
    (F.VGLOBAL, 0x041, "global_atomic_swap_b64"),
    (F.VGLOBAL, 0x042, "global_atomic_cmpswap_b64"),
    (F.VGLOBAL, 0x043, "global_atomic_add_u64"),
    (F.VGLOBAL, 0x044, "global_atomic_sub_u64"),
    (F.VGLOBAL, 0x045, "global_atomic_min_i64"),
    (F.VGLOBAL, 0x046, "global_atomic_min_u64"),
    (F.VGLOBAL, 0x047, "global_atomic_max_i64"),
    (F.VGLOBAL, 0x048, "global_atomic_max_u64"),
    (F.VGLOBAL, 0x049, "global_atomic_and_b64"),
    (F.VGLOBAL, 0x04a, "global_atomic_or_b64"),
    (F.VGLOBAL, 0x04b, "global_atomic_xor_b64"),
    (F.VGLOBAL, 0x04c, "global_atomic_inc_u64"),
    (F.VGLOBAL, 0x04d, "global_atomic_dec_u64"),
    (F.VGLOBAL, 0x051, "global_atomic_min_num_f32"),
    (F.VGLOBAL, 0x052, "global_atomic_max_num_f32"),
    (F.VGLOBAL, 0x056, "global_atomic_add_f32"),
    # VSCRATCH: private-segment (scratch) accesses; vaddr and saddr are offsets into it
    (F.VSCRATCH, 0x010, "scratch_load_u8"),
    (F.VSCRATCH, 0x011, "scratch_load_i8"),
    (F.VSCRATCH, 0x012, "scratch_load_u16"),
    (F.VSCRATCH, 0x013, "scratch_load_i16"),
    (F.VSCRATCH, 0x014, "scratch_load_b32"),
    (F.VSCRATCH, 0x015, "scratch_load_b64"),
    (F.VSCRATCH, 0x016, "scratch_load_b96"),
    (F.VSCRATCH, 0x017, "scratch_load_b128"),
    (F.VSCRATCH, 0x018, "scratch_store_b8"),
    (F.VSCRATCH, 0x019, "scratch_store_b16"),
    (F.VSCRATCH, 0x01a, "scratch_store_b32"),
    (F.VSCRATCH, 0x01b, "scratch_store_b64"),
    (F.VSCRATCH, 0x01c, "scratch_store_b96"),
    (F.VSCRATCH, 0x01d, "scratch_store_b128"),
    (F.VSCRATCH, 0x01e, "scratch_load_d16_u8"),
    (F.VSCRATCH, 0x01f, "scratch_load_d16_i8"),
    (F.VSCRATCH, 0x020, "scratch_load_d16_b16"),
    (F.VSCRATCH, 0x021, "scratch_load_d16_hi_u8"),
    (F.VSCRATCH, 0x022, "scratch_load_d16_hi_i8"),
    (F.VSCRATCH, 0x023, "scratch_load_d16_hi_b16"),
    (F.VSCRATCH, 0x024, "scratch_store_d16_hi_b8"),
    (F.VSCRATCH, 0x025, "scratch_store_d16_hi_b16"),
    # VFLAT: a 64-bit flat address that falls in the LDS, private or global aperture
    (F.VFLAT,   0x010, "flat_load_u8"),
    (F.VFLAT,   0x011, "flat_load_i8"),
    (F.VFLAT,   0x012, "flat_load_u16"),
    (F.VFLAT,   0x013, "flat_load_i16"),
    (F.VFLAT,   0x014, "flat_load_b32"),
    (F.VFLAT,   0x015, "flat_load_b64"),
    (F.VFLAT,   0x016, "flat_load_b96"),
    (F.VFLAT,   0x017, "flat_load_b128"),
    (F.VFLAT,   0x018, "flat_store_b8"),
    (F.VFLAT,   0x019, "flat_store_b16"),
    (F.VFLAT,   0x01a, "flat_store_b32"),
    (F.VFLAT,   0x01b, "flat_store_b64"),
    (F.VFLAT,   0x01c, "flat_store_b96"),
    (F.VFLAT,   0x01d, "flat_store_b128"),
    (F.VFLAT,   0x01e, "flat_load_d16_u8"),
    (F.VFLAT,   0x01f, "flat_load_d16_i8"),
    (F.VFLAT,   0x020, "flat_load_d16_b16"),
    (F.VFLAT,   0x021, "flat_load_d16_hi_u8"),
    (F.VFLAT,   0x022, "flat_load_d16_hi_i8"),
    (F.VFLAT,   0x023, "flat_load_d16_hi_b16"),
    (F.VFLAT,   0x024, "flat_store_d16_hi_b8"),
    (F.VFLAT,   0x025, "flat_store_d16_hi_b16"),
    (F.VFLAT,   0x033, "flat_atomic_swap_b32"),
    (F.VFLAT,   0x034, "flat_atomic_cmpswap_b32"),
    (F.VFLAT,   0x035, "flat_atomic_add_u32"),
    (F.VFLAT,   0x036, "flat_atomic_sub_u32"),
    (F.VFLAT,   0x038, "flat_atomic_min_i32"),
    (F.VFLAT,   0x039, "flat_atomic_min_u32"),
    (F.VFLAT,   0x03a, "flat_atomic_max_i32"),
    (F.VFLAT,   0x03b, "flat_atomic_max_u32"),
    (F.VFLAT,   0x03c, "flat_atomic_and_b32"),
    (F.VFLAT,   0x03d, "flat_atomic_or_b32"),
    (F.VFLAT,   0x03e, "flat_atomic_xor_b32"),
    (F.VFLAT,   0x03f, "flat_atomic_inc_u32"),
    (F.VFLAT,   0x040, "flat_atomic_dec_u32"),
    (F.VFLAT,   0x041, "flat_atomic_swap_b64"),
    (F.VFLAT,   0x042, "flat_atomic_cmpswap_b64"),
    (F.VFLAT,   0x043, "flat_atomic_add_u64"),
    (F.VFLAT,   0x044, "flat_atomic_sub_u64"),
    (F.VFLAT,   0x045, "flat_atomic_min_i64"),
    (F.VFLAT,   0x046, "flat_atomic_min_u64"),
    (F.VFLAT,   0x047, "flat_atomic_max_i64"),
    (F.VFLAT,   0x048, "flat_atomic_max_u64"),
    (F.VFLAT,   0x049, "flat_atomic_and_b64"),
    (F.VFLAT,   0x04a, "flat_atomic_or_b64"),
    (F.VFLAT,   0x04b, "flat_atomic_xor_b64"),
    (F.VFLAT,   0x04c, "flat_atomic_inc_u64"),
    (F.VFLAT,   0x04d, "flat_atomic_dec_u64"),
    (F.VFLAT,   0x051, "flat_atomic_min_num_f32"),
    (F.VFLAT,   0x052, "flat_atomic_max_num_f32"),
    (F.VFLAT,   0x056, "flat_atomic_add_f32"),
]

# float ops whose second source is an integer (class mask, exponent, segment): no modifiers there
_ONE_FLOAT_SOURCE = {"v_cmp_class_f32", "v_cmpx_class_f32", "v_ldexp_f32", "v_cmp_class_f64",
                     "v_cmpx_class_f64", "v_ldexp_f64", "v_trig_preop_f64"}
# float -> int32 ops whose VOP3 form still has an omod field (LLVM: VOP_I32_F*_SPECIAL_OMOD)
_INT_RESULT_OMOD = {"v_cvt_i32_f32", "v_cvt_u32_f32", "v_cvt_i32_f64", "v_cvt_u32_f64",
                    "v_frexp_exp_i32_f64"}
_TYPE_RE = re.compile(r"(?<=_)([biuf])(\d+)(?=_|$)")
_TRANS = {"v_exp_f32", "v_log_f32", "v_rcp_f32", "v_rcp_iflag_f32", "v_rsq_f32", "v_sqrt_f32",
          "v_sin_f32", "v_cos_f32"}
_SOPP_KIND = {"s_nop": "shint", "s_clause": "shint", "s_delay_alu": "shint", "s_wait_alu": "shint",
              "s_sendmsg": "shint", "s_barrier_wait": "sbarrier", "s_endpgm": "sendpgm",
              "s_wait_idle": "swait"}
# integer VALU ops whose VOP3 form has a clamp bit (saturating integer arithmetic)
_INT_CLAMP = re.compile(r"v_(add|sub|subrev)_(nc|co|co_ci)_[iu]32$|v_(mad|mul)_[iu]32_[iu]24$|"
                        r"v_mad_co_[iu]64_[iu]32$|v_(add|sub)_nc_[iu]16$|v_mad_[iu]16$|"
                        r"v_mad_[iu]32_[iu]16$")
_N_SRC = {Fmt.SOP1: 1, Fmt.SOP2: 2, Fmt.SOPC: 2, Fmt.SOPK: 0, Fmt.SOPP: 0,
          Fmt.VOP1: 1, Fmt.VOP2: 2, Fmt.VOPC: 2, Fmt.VOP3: 3, Fmt.VOP3SD: 2}


def _vop3_op(fmt: Fmt, op: int, flags: set) -> int | None:
    if "literal_k" in flags or "no_e64" in flags:
        return None                      # v_fmamk/v_fmaak/v_readfirstlane_b32: no _e64 form
    return {Fmt.VOPC: op, Fmt.VOP2: 0x100 + op, Fmt.VOP1: 0x180 + op}.get(fmt)


def _derive(fmt: Fmt, op: int, name: str, spec: str = "") -> OpInfo:
    types = [int(w) for _, w in _TYPE_RE.findall(name)]
    first = types[0] if types else 0
    last = types[-1] if types else 0
    flags: set[str] = set()
    kind, data, dst = "salu", 0, max(32, first) if first else 0
    srcs: list[int] = [max(32, last)] * _N_SRC.get(fmt, 0)
    if any(t[0] == "i" for t in _TYPE_RE.findall(name)):
        flags.add("signed")

    if fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPK):
        if "saveexec" in name or "wrexec" in name:
            flags.add("saveexec")
        if fmt == Fmt.SOPK:
            flags.add("simm16")
    elif fmt == Fmt.SOPC:
        dst = 0
    elif fmt == Fmt.SOPP:
        dst = 0
        kind = ("sbranch" if name.startswith(("s_branch", "s_cbranch")) else
                _SOPP_KIND.get(name, "swait" if name.startswith("s_wait_") else "shint"))
    elif fmt == Fmt.SMEM:
        kind, data, dst, srcs = "smem", last, max(32, last), [64, 32]
    elif fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC, Fmt.VOP3, Fmt.VOP3SD):
        kind = "vtrans" if name in _TRANS else "valu"
        if last == 16:                                # 16-bit operands keep their width
            srcs = [16] * len(srcs)
            if fmt == Fmt.VOP3 and _INT_CLAMP.match(name):
                flags.add("opsel")                    # LLVM 19 (fake16): only these have op_sel
        if first == 16:
            dst = 16
        if fmt == Fmt.VOPC:
            dst = 32                                  # lane mask (wave32)
            flags.add("cmpx" if name.startswith("v_cmpx_") else "writes_vcc")
        if fmt == Fmt.VOP3SD or name.startswith(("v_add_co_ci", "v_sub_co_ci", "v_subrev_co_ci")):
            flags.add("carry_out")
        # VOP3 input/output modifiers: neg/abs on float sources, clamp, omod (float results)
        tt = _TYPE_RE.findall(name)
        fsrc = bool(tt) and tt[-1] in (("f", "32"), ("f", "64")) and "ubyte" not in name
        fdst = bool(tt) and tt[0] in (("f", "32"), ("f", "64"))
        nmods = 0
        if fsrc:
            nmods = 1 if name in _ONE_FLOAT_SOURCE else -1
        elif name == "v_cndmask_b32":
            nmods = 2
        if nmods:
            flags.add("neg")
            if fmt != Fmt.VOP3SD:                     # VOP3SD has no abs field
                flags.add("abs")
            flags.add(f"mods{nmods if nmods > 0 else 3}")
        if ((fsrc or fdst) and "class" not in name) or _INT_CLAMP.match(name):
            flags.add("clamp")
        if (fdst and fmt != Fmt.VOPC) or name in _INT_RESULT_OMOD:
            flags.add("omod")
    elif fmt == Fmt.DS:
        w = last
        two = "_2addr" in name
        if two:
            flags.add("2addr")
        if "stride64" in name:
            flags.add("stride64")
        nd = 2 if two else 1
        if "_load_" in name:
            kind, data, dst, srcs = "ds_load", w * nd, max(32, w) * nd, [32]
        elif "_store_" in name:
            kind, data, dst, srcs = "ds_store", w * nd, 0, [32] + [max(32, w)] * nd
        else:
            kind, data = "ds_atomic", w
            rtn = "_rtn_" in name
            if rtn:
                flags.add("returns")
            if "cmpstore" in name or "mskor" in name:
                nd = 2
            srcs = [32] + [w] * nd
            dst = (w * (2 if two else 1)) if rtn else 0
    elif fmt in (Fmt.VGLOBAL, Fmt.VSCRATCH, Fmt.VFLAT):
        va = 32 if fmt == Fmt.VSCRATCH else 64        # a private offset / a 64-bit address
        if name in ("global_inv", "global_wb"):
            kind, dst, srcs = "cache", 0, []
        elif "_load_" in name:
            kind, data, dst, srcs = "vmem_load", w if (w := last) else 0, max(32, last), [va]
        elif "_store_" in name:
            kind, data, dst, srcs = "vmem_store", last, 0, [va, max(32, last)]
        else:
            kind, data, dst = "vmem_atomic", last, last
            srcs = [va, 2 * last if "cmpswap" in name else last]
            flags.add("th_return")                    # returns iff th[0] (TH_ATOMIC_RETURN)
    if "_d16" in name:
        flags.add("d16")

    explicit: list[int] = []
    for tok in spec.split():
        if tok.startswith("+"):
            flags.add(tok[1:])
        elif tok.startswith("k:"):
            kind = tok[2:]
        elif tok[0] == "d":
            dst = int(tok[1:])
        elif tok[0] == "n":
            srcs = srcs[:1] * int(tok[1:]) if srcs else [max(32, last)] * int(tok[1:])
        elif tok[0] == "s":
            explicit.append(int(tok[1:]))
        else:
            raise ValueError(f"bad spec token {tok!r} for {name}")
    if explicit:
        srcs = explicit
    assert kind in KINDS, (name, kind)
    return OpInfo(name, fmt, op, _vop3_op(fmt, op, flags), dst, tuple(srcs), data, kind,
                  frozenset(flags))


OPCODES: list[OpInfo] = [_derive(*row) for row in _TABLE]
_BY_KEY: dict[tuple[Fmt, int], OpInfo] = {}
_BY_VOP3: dict[int, OpInfo] = {}
_BY_NAME: dict[str, OpInfo] = {}
for _i in OPCODES:
    assert (_i.fmt, _i.op) not in _BY_KEY, _i
    assert _i.name not in _BY_NAME, _i
    _BY_KEY[(_i.fmt, _i.op)] = _i
    _BY_NAME[_i.name] = _i
    if _i.fmt in (Fmt.VOP3, Fmt.VOP3SD):
        _BY_VOP3[_i.op] = _i
    elif _i.vop3_op is not None:
        _BY_VOP3[_i.vop3_op] = _i


def lookup(fmt: Fmt, op: int) -> OpInfo | None:
    """OpInfo for an opcode of a format. For Fmt.VOP3/VOP3SD, `op` is the 10-bit VOP3 opcode
    and the result may be a promoted VOP1/VOP2/VOPC op (check info.fmt)."""
    if fmt in (Fmt.VOP3, Fmt.VOP3SD):
        return _BY_VOP3.get(op)
    return _BY_KEY.get((fmt, op))


def by_name(name: str) -> OpInfo:
    """OpInfo by LLVM mnemonic; _e32/_e64 suffixes are accepted."""
    base = re.sub(r"_e(32|64)$", "", name)
    try:
        return _BY_NAME[base]
    except KeyError:
        raise KeyError(f"unknown opcode {name!r}") from None
