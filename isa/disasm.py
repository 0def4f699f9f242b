"""Disassembler: Inst -> LLVM 19 text (as `llvm-mc-19 -disassemble -mcpu=gfx1200` prints it)."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .opcodes import Fmt
from . import dpp as D
from . import operands as O
from . import vopd as VD

if TYPE_CHECKING:   # annotations only: the decoder imports this module
    from .decoder import Inst

_SENDMSG = {1: "MSG_INTERRUPT", 2: "MSG_HS_TESSFACTOR", 3: "MSG_DEALLOC_VGPRS", 9: "MSG_GS_ALLOC_REQ",
            128: "MSG_RTN_GET_DOORBELL", 129: "MSG_RTN_GET_DDID", 130: "MSG_RTN_GET_TMA",
            131: "MSG_RTN_GET_REALTIME", 132: "MSG_RTN_SAVE_WAVE", 133: "MSG_RTN_GET_TBA",
            134: "MSG_RTN_GET_TBA_TO_PC", 135: "MSG_RTN_GET_SE_AID_ID"}
_INSTID = ["NO_DEP", "VALU_DEP_1", "VALU_DEP_2", "VALU_DEP_3", "VALU_DEP_4", "TRANS32_DEP_1",
           "TRANS32_DEP_2", "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1", "SALU_CYCLE_2",
           "SALU_CYCLE_3"]
_INSTSKIP = ["SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4"]
# s_wait_alu depctr fields in LLVM's print order: (name, shift, width); defaults are all-ones
_DEPCTR = [("depctr_hold_cnt", 7, 1), ("depctr_sa_sdst", 0, 1), ("depctr_va_vdst", 12, 4),
           ("depctr_va_sdst", 9, 3), ("depctr_va_ssrc", 8, 1), ("depctr_va_vcc", 1, 1),
           ("depctr_vm_vsrc", 2, 3)]
_SCOPE = ["", " scope:SCOPE_SE", " scope:SCOPE_DEV", " scope:SCOPE_SYS"]
_TH_LOAD = {1: "NT", 2: "HT", 4: "NT_RT", 5: "RT_NT", 6: "NT_HT", 7: "NT_WB"}
_OMOD = ["", " mul:2", " mul:4", " div:2"]
_HEX_SOPP = {"s_clause", "s_round_mode", "s_wait_loadcnt", "s_wait_storecnt", "s_wait_samplecnt", "s_wait_bvhcnt",
             "s_wait_expcnt", "s_wait_dscnt", "s_wait_kmcnt", "s_wait_loadcnt_dscnt",
             "s_wait_storecnt_dscnt"}
_NO_OPERAND_SOPP = {"s_wait_idle", "s_code_end", "s_barrier_leave", "s_icache_inv", "s_endpgm_saved",
                    "s_wakeup", "s_ttracedata"}
_HEX_SOPP |= {"s_wait_event", "s_ttracedata_imm"}
# LLVM 19's names of the gfx1200 hardware registers (s_getreg/s_setreg), by id
_HWREG = {1: "MODE", 2: "STATUS", 4: "STATE_PRIV", 5: "GPR_ALLOC", 6: "LDS_ALLOC", 7: "IB_STS",
          10: "PERF_SNAPSHOT_DATA", 11: "PERF_SNAPSHOT_PC_LO", 12: "PERF_SNAPSHOT_PC_HI",
          15: "PERF_SNAPSHOT_DATA1", 16: "PERF_SNAPSHOT_DATA2", 17: "EXCP_FLAG_PRIV",
          18: "EXCP_FLAG_USER", 19: "TRAP_CTRL", 20: "SCRATCH_BASE_LO", 21: "SCRATCH_BASE_HI",
          23: "HW_ID1", 24: "HW_ID2", 29: "SHADER_CYCLES_LO", 30: "SHADER_CYCLES_HI",
          31: "DVGPR_ALLOC_LO", 32: "DVGPR_ALLOC_HI"}


def _hex(v: int) -> str:
    return f"0x{v:x}" if v >= 0 else f"-0x{-v:x}"


def _u16(v: int) -> str:
    """LLVM's u16 immediate: decimal if it is an inline integer (0..64), else hex."""
    return str(v) if v <= 64 else f"0x{v:x}"


def _delay_alu(v: int) -> str:
    if v == 0:
        return "0"
    parts = []
    id0, skip, id1 = v & 0xF, (v >> 4) & 7, (v >> 7) & 0xF
    def iid(x):
        return _INSTID[x] if x < len(_INSTID) else "/* invalid instid value */"
    if id0:
        parts.append(f"instid0({iid(id0)})")
    if skip:
        parts.append(f"instskip({_INSTSKIP[skip] if skip < len(_INSTSKIP) else '/* invalid instskip value */'})")
    if id1:
        parts.append(f"instid1({iid(id1)})")
    return " | ".join(parts)


def _depctr(v: int) -> str:
    if v & 0x60:                   # bits 5,6 belong to no field: not a symbolic encoding
        return f"0x{v:x}"
    vals = [(n, (v >> s) & ((1 << w) - 1), (1 << w) - 1) for n, s, w in _DEPCTR]
    nondefault = any(x != d for _, x, d in vals)
    return " ".join(f"{n}({x})" for n, x, d in vals if x != d or not nondefault)


def _sendmsg(v: int) -> str:
    if v > 0xFF:
        return str(v)
    if v in _SENDMSG:
        return f"sendmsg({_SENDMSG[v]})"
    return f"sendmsg({v}, 0, 0)"


def _waitcnt(v: int) -> str:
    """The legacy s_waitcnt counters (gfx11+ layout): those not at their all-ones default,
    or all three when every one is."""
    cnts = [("vmcnt", v >> 10 & 0x3F, 0x3F), ("expcnt", v & 7, 7), ("lgkmcnt", v >> 4 & 0x3F, 0x3F)]
    every = all(x == d for _, x, d in cnts)
    return " ".join(f"{n}({x})" for n, x, d in cnts if every or x != d)


def _hwreg(v: int) -> str:
    """hwreg(register[, offset, width]) of an s_getreg/s_setreg simm16."""
    reg, offset, width = v & 0x3F, v >> 6 & 0x1F, (v >> 11 & 0x1F) + 1
    name = f"HW_REG_{_HWREG[reg]}" if reg in _HWREG else str(reg)
    return f"hwreg({name})" if (offset, width) == (0, 32) else f"hwreg({name}, {offset}, {width})"


def _sopk(inst: Inst) -> str:
    info, f = inst.info, inst.f
    name, k, sd = info.name, f["simm16"], O.sreg_name(f["sdst"], info.dst_bits or 32)
    if name == "s_getreg_b32":
        return f"{name} {sd}, {_hwreg(k)}"
    if name == "s_setreg_b32":
        return f"{name} {_hwreg(k)}, {sd}"
    if name == "s_setreg_imm32_b32":
        return f"{name} {_hwreg(k)}, {O.literal_text(inst.literal)}"
    if name == "s_call_b64":
        return f"{name} {sd}, {k}"
    return f"{name} {sd}, 0x{k:x}"


def _sopp(inst: Inst) -> str:
    name, v = inst.name, inst.f["simm16"]
    if name == "s_endpgm":
        return name if v == 0 else f"{name} {v}"
    if name in _NO_OPERAND_SOPP:
        return name
    if name == "s_branch" or name.startswith("s_cbranch_"):
        return f"{name} {v}"
    if name == "s_delay_alu":
        return f"{name} {_delay_alu(v)}"
    if name == "s_wait_alu":
        return f"{name} {_depctr(v)}"
    if name in ("s_sendmsg", "s_sendmsghalt"):
        return f"{name} {_sendmsg(v)}"
    if name == "s_waitcnt":
        return f"{name} {_waitcnt(v)}"
    if name in _HEX_SOPP:
        return f"{name} 0x{v:x}"
    return f"{name} {_u16(v)}"


def _fp64(inst: Inst, bits: int) -> bool:
    """A 64-bit source of an f64 opcode is a double (its literal is the high half)."""
    return bits == 64 and "_f64" in inst.info.name


def _f16_const(inst: Inst, code: int, bits: int) -> str | None:
    """An inline float constant as a source of an f16 op prints as a number ("1.0"), unlike
    the 16-bit integer ops' hex pattern; None for any other operand."""
    name = inst.info.name
    if bits != 16 or not O.FLOAT_FIRST <= code <= O.FLOAT_LAST or not name.endswith("_f16") \
            or inst.fmt == Fmt.SOPC:          # s_cmp_*_f16 prints the f16 pattern in hex
        return None
    return O.operand_name(code, 32)


def _src(inst: Inst, key: str, bits: int) -> str:
    code = inst.f[key]
    if code == O.LITERAL and bits == 16 and inst.fmt in (Fmt.SOP2, Fmt.SOPC):
        return O.salu_f16_literal_text(inst.literal, inst.fmt == Fmt.SOPC)
    return _f16_const(inst, code, bits) or O.operand_name(code, bits, inst.literal, _fp64(inst, bits))


def _vop3_src(inst: Inst, i: int, bits: int, mods: bool) -> str:
    code = inst.f[f"src{i}"]
    t = _f16_const(inst, code, bits) or O.operand_name(code, bits, inst.literal, _fp64(inst, bits))
    if not mods:
        return t
    if inst.f.get("abs", 0) >> i & 1:
        t = f"|{t}|"
    elif inst.f["neg"] >> i & 1 and O.is_immediate(inst.f[f"src{i}"]):
        return f"neg({t})"                 # LLVM's form for a negated constant
    if inst.f["neg"] >> i & 1:
        t = "-" + t
    return t


def _th(inst: Inst) -> str:
    th, scope = inst.f["th"], inst.f["scope"]
    text = ""
    if th:
        kind = inst.info.kind
        if kind == "vmem_atomic":
            if th & 4:
                tail = ("CASCADE" + ("_NT" if th & 2 else "_RT")) if scope >= 2 else f"0x{th:x}"
            elif th & 2:
                tail = "NT" + ("_RETURN" if th & 1 else "")
            elif th & 1:
                tail = "RETURN"
            else:
                tail = f"0x{th:x}"
            text = f" th:TH_ATOMIC_{tail}"
        else:
            store = kind in ("vmem_store",)
            if not store and th == 7:
                text = " th:0x7"
            elif th == 3:
                text = " th:TH_" + ("STORE_" if store else "LOAD_") + (
                    "BYPASS" if scope == 3 else ("RT_WB" if store else "LU"))
            else:
                text = " th:TH_" + ("STORE_" if store else "LOAD_") + _TH_LOAD[th]
    return text + _SCOPE[scope]


def _swizzle_bits(and_mask: int, or_mask: int, xor_mask: int) -> str:
    """BITMASK_PERM pattern: per lane-id bit (MSB first) 0, 1, p(reserve) or i(nvert)."""
    p0, p1 = (or_mask ^ xor_mask), ((0x1F & and_mask) | or_mask) ^ xor_mask
    return "".join(("1" if p0 & m else "0") if (p0 ^ p1) & m == 0 else ("i" if p0 & m else "p")
                   for m in (16, 8, 4, 2, 1))


def _swizzle(off: int) -> str:
    """LLVM 19's text of a ds_swizzle_b32 offset (rotate/FFT modes print as a number)."""
    if off & 0xFF00 == 0x8000:
        return "swizzle(QUAD_PERM," + ",".join(str(off >> (2 * i) & 3) for i in range(4)) + ")"
    if off & 0x8000:
        return str(off)
    and_mask, or_mask, xor_mask = off & 0x1F, off >> 5 & 0x1F, off >> 10 & 0x1F
    if and_mask == 0x1F and or_mask == 0 and bin(xor_mask).count("1") == 1:
        return f"swizzle(SWAP,{xor_mask})"
    if and_mask == 0x1F and or_mask == 0 and xor_mask and not xor_mask & (xor_mask + 1):
        return f"swizzle(REVERSE,{xor_mask + 1})"
    group = 0x20 - and_mask
    if group > 1 and not group & (group - 1) and or_mask < group and not xor_mask:
        return f"swizzle(BROADCAST,{group},{or_mask})"
    return f'swizzle(BITMASK_PERM,"{_swizzle_bits(and_mask, or_mask, xor_mask)}")'


def _ds(inst: Inst) -> str:
    info, f = inst.info, inst.f
    name = info.name
    if "2addr" in info.flags:
        offs = ""
        if f["offset0"]:
            offs += f" offset0:{f['offset0']}"
        if f["offset1"]:
            offs += f" offset1:{f['offset1']}"
    elif name == "ds_swizzle_b32":
        off = f["offset0"] | f["offset1"] << 8
        offs = f" offset:{_swizzle(off)}" if off else ""
    else:
        off = f["offset0"] | f["offset1"] << 8
        offs = f" offset:{off}" if off else ""
    ops = []
    if info.dst_bits:
        ops.append(O.vreg_name(f["vdst"], info.dst_bits))
    ops.append(O.vreg_name(f["addr"]))
    for k, bits in zip(("data0", "data1"), info.src_bits[1:]):
        ops.append(O.vreg_name(f[k], bits))
    return f"{name} {', '.join(ops)}{offs}"


def _vmem_addr(inst: Inst) -> tuple[str, str | None]:
    """(vaddr, saddr) text of a VGLOBAL, VSCRATCH or VFLAT instruction; VFLAT has no saddr."""
    f, fmt = inst.f, inst.fmt
    saddr = f["saddr"]
    if fmt == Fmt.VFLAT:
        return O.vreg_name(f["vaddr"], 64), None
    if fmt == Fmt.VSCRATCH:     # 32-bit offsets: vaddr only if sve, saddr an SGPR or off
        return (O.vreg_name(f["vaddr"]) if f["sve"] else "off",
                "off" if saddr == O.SOFFSET_NONE else O.sreg_name(saddr))
    if saddr == O.SOFFSET_NONE:
        return O.vreg_name(f["vaddr"], 64), "off"
    return O.vreg_name(f["vaddr"]), O.sreg_name(saddr, 64)


def _vglobal(inst: Inst) -> str:
    info, f = inst.info, inst.f
    if info.kind == "cache":
        return info.name + _SCOPE[f["scope"]]
    vaddr, sa = _vmem_addr(inst)
    ops = []
    if info.kind == "vmem_load" or (info.kind == "vmem_atomic" and f["th"] & 1):
        ops.append(O.vreg_name(f["vdst"], info.dst_bits))
    ops.append(vaddr)
    if info.kind != "vmem_load":
        ops.append(O.vreg_name(f["vsrc"], info.src_bits[1]))
    if sa is not None:
        ops.append(sa)
    off = f" offset:{f['ioffset']}" if f["ioffset"] else ""
    return f"{info.name} {', '.join(ops)}{off}{_th(inst)}"


def _smem(inst: Inst) -> str:
    info, f = inst.info, inst.f
    name = info.name
    dst = O.sreg_name(f["sdata"], info.dst_bits)
    base = O.sreg_name(2 * f["sbase"], 128 if "buffer" in info.flags else 64)
    if name == "s_dcache_inv":
        return name
    if "prefetch" in name:      # base (not for _pc_rel), offset, soffset, then sdata as a number
        soff = "null" if f["soffset"] == O.SOFFSET_NONE else O.sreg_name(f["soffset"])
        ops = [_hex(f["ioffset"]), soff, str(f["sdata"])]
        return f"{name} {', '.join(ops if name.endswith('_pc_rel') else [base, *ops])}"
    if f["soffset"] == O.SOFFSET_NONE:
        off = _hex(f["ioffset"])
    else:
        off = f"{O.sreg_name(f['soffset'])} offset:{_hex(f['ioffset'])}"
    if name.startswith("s_atc_probe"):
        return f"{name} {f['sdata']}, {base}, {off}"
    th = f["th"]
    text = f" th:TH_LOAD_{_TH_LOAD.get(th) or ('BYPASS' if f['scope'] == 3 else 'LU')}" if th else ""
    return f"{info.name} {dst}, {base}, {off}{text}{_SCOPE[f['scope']]}"


def _vop3(inst: Inst) -> str:
    info, f = inst.info, inst.f
    flags = info.flags
    e64 = inst.is_e64
    name = info.name + ("_e64" if e64 and info.name != "v_readfirstlane_b32" else "")
    mods = "neg" in flags or "abs" in flags
    srcs = [_vop3_src(inst, i, b, mods) for i, b in enumerate(info.src_bits)]
    ops = []
    if info.fmt == Fmt.VOPC:
        if "cmpx" not in flags:
            ops.append(O.sreg_name(f["vdst"]))
    elif "sdst" in flags:
        ops.append(O.sreg_name(f["vdst"], info.dst_bits))
    elif info.dst_bits:
        ops.append(O.vreg_name(f["vdst"], info.dst_bits))
    if inst.fmt == Fmt.VOP3SD:
        ops.append(O.sreg_name(f["sdst"]))
    if info.name.startswith("v_cndmask_b") or ("carry_out" in flags and info.fmt == Fmt.VOP2):
        srcs[2] = O.sreg_name(f["src2"])
    ops += srcs
    text = f"{name} {', '.join(ops)}" if ops else name
    if "fi_bc" in flags and f["opsel"] & 3:
        text += f" op_sel:[{f['opsel'] & 1},{f['opsel'] >> 1 & 1}]"
    if "opsel" in flags and f.get("opsel"):
        nsrc = 3 if "mac" in flags else len(info.src_bits)      # a mac op's src2 is vdst
        bits = [f["opsel"] >> i & 1 for i in range(nsrc)] + [f["opsel"] >> 3 & 1]
        text += " op_sel:[" + ",".join(map(str, bits)) + "]"
    if f["clamp"] and "clamp" in flags:
        text += " clamp"
    if "omod" in flags:
        text += _OMOD[f["omod"]]
    return text


def _dpp_mod(text: str, i: int, d: D.Dpp) -> str:
    if d.abs >> i & 1:
        text = f"|{text}|"
    return "-" + text if d.neg >> i & 1 else text


def _dpp(inst: Inst) -> str:
    """A DPP16/DPP8 form: ``name_dpp`` (VOPC: no suffix) or ``name_e64_dpp``, the operands with
    src0 the DPP VGPR, then the DPP controls."""
    info, f, d, fmt = inst.info, inst.f, inst.dpp, inst.fmt
    ctl = D.controls_text(d)
    if fmt in (Fmt.VOP3, Fmt.VOP3SD):
        ops = _vop3(replace(inst, dpp=None, f={**f, "src0": O.VGPR0 + d.vsrc0})).partition(" ")[2]
        return f"{info.name}_e64_dpp {ops} {ctl}"
    sb = info.src_bits
    s0 = _dpp_mod(O.vreg_name(d.vsrc0, sb[0]), 0, d)
    if fmt == Fmt.VOP1:
        return f"{info.name}_dpp {O.vreg_name(f['vdst'], info.dst_bits)}, {s0} {ctl}"
    s1 = O.vreg_name(f["vsrc1"], sb[1])
    if fmt == Fmt.VOPC:
        ops = [s0, _dpp_mod(s1, 1, d)] if "cmpx" in info.flags else ["vcc_lo", s0, _dpp_mod(s1, 1, d)]
        return f"{info.name} {', '.join(ops)} {ctl}"
    vd = O.vreg_name(f["vdst"], info.dst_bits)
    if D.integer_src1(info):
        s1 = f"sext({s1})" if d.neg & 2 else s1
        return f"{info.name}_dpp {vd}, {s0}, {s1} {ctl}"
    if "carry_out" in info.flags:
        ops = [vd, "vcc_lo", s0, s1, "vcc_lo"]
    elif "reads_vcc" in info.flags:         # LLVM prints src1's modifiers around "v1, vcc_lo"
        ops = [vd, s0, _dpp_mod(f"{s1}, vcc_lo", 1, d)]
    else:
        ops = [vd, s0, _dpp_mod(s1, 1, d)]
    return f"{info.name}_dpp {', '.join(ops)} {ctl}"


def _bitlist(v: int, n: int) -> str:
    return "[" + ",".join(str(v >> i & 1) for i in range(n)) + "]"


def _vop3p(inst: Inst) -> str:
    """VOP3P: op_sel / op_sel_hi (default all ones; v_fma_mix*: all zeros) / neg_lo / neg_hi
    lists, one entry per source; v_fma_mix* print neg_lo as -x and neg_hi as |x|."""
    info, f = inst.info, inst.f
    n = len(info.src_bits)
    mix = info.name.startswith("v_fma_mix")
    srcs = []
    for i in range(n):
        code = f[f"src{i}"]
        packed_half = info.name.startswith("v_pk_") or (info.name == "v_dot2_f32_f16" and i < 2)
        if code == O.LITERAL and packed_half:          # two halves: printed as one hex dword
            t = O.literal_text(inst.literal, 16) if inst.literal < 0x10000 else f"0x{inst.literal:x}"
        else:
            t = O.operand_name(code, 32, inst.literal)
        if mix and f["neg_hi"] >> i & 1:
            t = f"|{t}|"
        if mix and f["neg"] >> i & 1:
            t = "-" + t
        srcs.append(t)
    text = f"{info.name} {O.vreg_name(f['vdst'])}, {', '.join(srcs)}"
    full = (1 << n) - 1
    if f["opsel"]:
        text += " op_sel:" + _bitlist(f["opsel"], n)
    if (f["opsel_hi"] & full) != (0 if mix else full):
        text += " op_sel_hi:" + _bitlist(f["opsel_hi"], n)
    if not mix and f["neg"]:
        text += " neg_lo:" + _bitlist(f["neg"], n)
    if not mix and f["neg_hi"]:
        text += " neg_hi:" + _bitlist(f["neg_hi"], n)
    if f["clamp"]:
        text += " clamp"
    return text


def disassemble(inst: Inst) -> str:
    """LLVM 19's text for one instruction (no encoding comment, no leading whitespace)."""
    info, f, fmt = inst.info, inst.f, inst.fmt
    if inst.vopd is not None:
        return VD.text(*inst.vopd, inst.literal)
    if inst.dpp is not None:
        return _dpp(inst)
    name = info.name
    sb = info.src_bits
    if fmt == Fmt.SOPP:
        return _sopp(inst)
    if fmt == Fmt.SOPK:
        return _sopk(inst)
    if name in ("s_fmamk_f32", "s_fmaak_f32"):
        d, a, b = O.sreg_name(f["sdst"]), _src(inst, "ssrc0", 32), _src(inst, "ssrc1", 32)
        k = f"0x{inst.literal:x}"
        return f"{name} {d}, {a}, {k}, {b}" if name == "s_fmamk_f32" else f"{name} {d}, {a}, {b}, {k}"
    if fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC):
        ops = []
        if info.dst_bits:
            ops.append(O.sreg_name(f["sdst"], info.dst_bits))
        for key, bits in zip(("ssrc0", "ssrc1"), sb):
            ops.append(_src(inst, key, bits))
        if "sendmsg" in info.flags:
            ops.append(_sendmsg(f["ssrc0"]))
        return f"{name} {', '.join(ops)}"
    if fmt == Fmt.SMEM:
        return _smem(inst)
    if fmt == Fmt.DS:
        return _ds(inst)
    if fmt in (Fmt.VGLOBAL, Fmt.VSCRATCH, Fmt.VFLAT):
        return _vglobal(inst)
    if fmt in (Fmt.VOP3, Fmt.VOP3SD):
        return _vop3(inst)
    if fmt == Fmt.VOP3P:
        return _vop3p(inst)
    if fmt == Fmt.VOP1:
        if not info.dst_bits:
            return name
        if "sdst" in info.flags:
            return f"{name} {O.sreg_name(f['vdst'])}, {_src(inst, 'src0', sb[0])}"
        sfx = "" if "no_e64" in info.flags else "_e32"   # an op with one encoding: no suffix
        return f"{name}{sfx} {O.vreg_name(f['vdst'], info.dst_bits)}, {_src(inst, 'src0', sb[0])}"
    if fmt == Fmt.VOP2:
        vd = O.vreg_name(f["vdst"], info.dst_bits)
        s0 = _src(inst, "src0", sb[0])
        s1 = O.vreg_name(f["vsrc1"], sb[1])
        if name in ("v_fmamk_f32", "v_fmamk_f16"):
            return f"{name} {vd}, {s0}, 0x{inst.literal:x}, {s1}"
        if name in ("v_fmaak_f32", "v_fmaak_f16"):
            return f"{name} {vd}, {s0}, {s1}, 0x{inst.literal:x}"
        if "carry_out" in info.flags:
            return f"{name}_e32 {vd}, vcc_lo, {s0}, {s1}, vcc_lo"
        if "reads_vcc" in info.flags:
            return f"{name}_e32 {vd}, {s0}, {s1}, vcc_lo"
        return f"{name}_e32 {vd}, {s0}, {s1}"
    if fmt == Fmt.VOPC:
        s0 = _src(inst, "src0", sb[0])
        s1 = O.vreg_name(f["vsrc1"], sb[1])
        if "cmpx" in info.flags:
            return f"{name}_e32 {s0}, {s1}"
        return f"{name}_e32 vcc_lo, {s0}, {s1}"
    raise AssertionError(fmt)
