"""Round trip against LLVM: random legal instructions for every opcode in isa.OPCODES are
assembled with llvm-mc-19, decoded with isa.decode, and isa.disassemble must print exactly what
`llvm-mc-19 -disassemble` prints for the same bytes.

The instruction generator is independent of isa.disasm: it writes assembly text from templates;
LLVM canonicalises it. Seeds are fixed (printed on failure)."""
from __future__ import annotations

import random
import re
import shutil
import subprocess

import pytest

import isa
from isa import Fmt

LLVM_MC = shutil.which("llvm-mc-19")
MCPU = ["-arch=amdgcn", "-mcpu=gfx1200"]
SEED = 20250612
PER_OP = 12         # random instances per opcode

needs_llvm = pytest.mark.skipif(
    LLVM_MC is None, reason="llvm-mc-19 not found: apt-get install -y llvm-19 (Debian 12)")

# ----------------------------------------------------------------------------- operands


class Gen:
    """Random operand text. `lit` tracks whether a literal was used (one per instruction)."""

    def __init__(self, rng: random.Random):
        self.r = rng
        self.lit = False
        self.lit_value: int | None = None
        self.sgprs = 0          # scalar values read by a VALU instruction (constant bus, limit 2)

    # registers
    def sreg(self, bits=32, dst=False, special=True) -> str:
        r = self.r
        n = max(1, bits // 32)
        if n == 1:
            if special and r.random() < 0.25:
                return r.choice(["vcc_lo", "vcc_hi", "m0", "exec_lo", "exec_hi", "ttmp3", "ttmp9",
                                 "ttmp15"] + ([] if dst else ["null"]))
            return f"s{r.randrange(0, 106)}"
        if special and n == 2 and r.random() < 0.2:
            return r.choice(["vcc", "exec", "ttmp[4:5]", "ttmp[14:15]"])
        align = 2 if n == 2 else 4
        hi = 106 - n
        base = r.randrange(0, hi // align + 1) * align
        return f"s[{base}:{base + n - 1}]"

    lo128 = False       # 16-bit operands of _e32 forms: v0..v127 only (bit 7 selects .h)

    def vreg(self, bits=32) -> str:
        n = max(1, bits // 32)
        base = self.r.randrange(0, 128 if (bits == 16 and self.lo128) else 257 - n)
        return f"v{base}" if n == 1 else f"v[{base}:{base + n - 1}]"

    def inline(self, bits=32, floats=True) -> str:
        r = self.r
        if floats and r.random() < 0.3:
            return r.choice(["0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0",
                             "0.15915494309189532" if bits == 64 else "0.15915494"])
        return str(r.randint(-16, 64))

    def literal(self, bits=32) -> str:
        r = self.r
        if self.lit_value is not None and (bits != 16 or self.lit_value < 1 << 16):
            v = self.lit_value
        elif self.lit_value is not None:
            return self.inline(bits)
        elif bits == 16:
            v = r.choice([r.randrange(65, 1 << 16), 0x3C00, 0xFFF0, 0x8000])
        else:
            v = r.choice([r.randrange(65, 1 << 31), r.randrange(0x80000000, 1 << 32),
                          0x3F800000, 0x40490FDB, 0xFFFFFFEF, 0x12345678])
            if bits == 64:
                v &= 0x7FFFFFFF
        self.lit_value = v
        self.lit = True
        return f"0x{v:x}"

    def ssrc(self, bits=32, literal=True) -> str:
        """Scalar-ALU source."""
        x = self.r.random()
        if x < 0.5:
            return self.sreg(bits)
        if x < 0.8 or not literal or (self.lit and bits == 64):
            return self.inline(bits)
        return self.literal(bits)

    def vsrc(self, bits=32, literal=True, sgpr=True) -> str:
        """VALU source (VGPR, SGPR, inline constant or literal) respecting the constant bus."""
        x = self.r.random()
        bus_ok = self.sgprs < 2
        if x < 0.55 or (not bus_ok and x < 0.8):
            return self.vreg(bits)
        if x < 0.75 and sgpr and bus_ok:
            self.sgprs += 1
            return self.sreg(bits, special=bits == 32)
        if x < 0.92 or not literal or (bits == 64 and self.lit) or not (bus_ok or self.lit):
            return self.inline(bits)
        if not self.lit:
            self.sgprs += 1
        return self.literal(bits)


# ----------------------------------------------------------------------------- per format

_SOPP_SIMPLE = {
    "s_nop": lambda r: str(r.randrange(0, 16)),
    "s_denorm_mode": lambda r: str(r.randrange(0, 16)),
    "s_round_mode": lambda r: str(r.randrange(0, 16)),
    "s_clause": lambda r: hex(r.randrange(0, 64)),
    "s_barrier_wait": lambda r: r.choice(["-1", "0xffff", "0", "5"]),
    "s_branch": lambda r: str(r.randrange(-300, 300)),
    "s_endpgm": lambda r: "",
    "s_code_end": lambda r: "",
    "s_wait_idle": lambda r: "",
    "s_wait_alu": lambda r: hex(r.choice([0xFFFE, 0xFFFD, 0xF1FF, 0x0FFF, r.randrange(0, 1 << 16),
                                          0xFF9F & ~(1 << r.randrange(16))])),
    "s_wait_loadcnt_dscnt": lambda r: hex(r.randrange(0, 64) << 8 | r.randrange(0, 64)),
    "s_wait_storecnt_dscnt": lambda r: hex(r.randrange(0, 64) << 8 | r.randrange(0, 64)),
    "s_sendmsg": lambda r: "sendmsg(%s)" % r.choice(
        ["MSG_INTERRUPT", "MSG_HS_TESSFACTOR", "MSG_DEALLOC_VGPRS", "MSG_GS_ALLOC_REQ",
         "MSG_RTN_GET_REALTIME"]),
}
_INSTID = ["VALU_DEP_1", "VALU_DEP_2", "VALU_DEP_3", "VALU_DEP_4", "TRANS32_DEP_1",
           "TRANS32_DEP_2", "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1", "SALU_CYCLE_2",
           "SALU_CYCLE_3"]


def _delay_alu(r: random.Random) -> str:
    parts = [f"instid0({r.choice(_INSTID)})"]
    if r.random() < 0.6:
        parts.append(f"instskip({r.choice(['NEXT', 'SKIP_1', 'SKIP_2', 'SKIP_3', 'SKIP_4'])})")
        parts.append(f"instid1({r.choice(_INSTID)})")
    return " | ".join(parts)


def gen_sopp(info, g: Gen) -> str:
    r = g.r
    name = info.name
    if name == "s_delay_alu":
        arg = _delay_alu(r)
    elif name in _SOPP_SIMPLE:
        arg = _SOPP_SIMPLE[name](r)
    elif name.startswith("s_cbranch"):
        arg = str(r.randrange(-300, 300))
    elif name.startswith("s_wait_"):
        arg = hex(r.randrange(0, 64 if name != "s_wait_kmcnt" else 32))
    elif name in _SOPP_U16:
        arg = str(r.choice([r.randrange(0, 65), r.randrange(0, 1 << 16)]))
    elif name == "s_ttracedata_imm":
        arg = hex(r.randrange(0, 1 << 16))
    elif name == "s_sendmsghalt":
        arg = _SOPP_SIMPLE["s_sendmsg"](r)
    elif name == "s_waitcnt":
        arg = " ".join(f"{c}({r.randrange(0, m)})" for c, m in
                       (("vmcnt", 64), ("expcnt", 8), ("lgkmcnt", 64)) if r.random() < 0.6) or "0"
    elif name in ("s_barrier_leave", "s_endpgm_saved", "s_wakeup", "s_ttracedata", "s_icache_inv"):
        arg = ""
    else:
        raise AssertionError(name)
    return f"{name} {arg}".strip()


_SOPP_U16 = ("s_setkill", "s_sethalt", "s_sleep", "s_trap", "s_setprio", "s_incperflevel",
             "s_decperflevel")
_HWREGS = ["HW_REG_MODE", "HW_REG_STATUS", "HW_REG_GPR_ALLOC", "HW_REG_HW_ID1", "HW_REG_IB_STS",
           "HW_REG_SHADER_CYCLES_LO", "HW_REG_TRAP_CTRL", "3", "52"]


def _hwreg(r: random.Random) -> str:
    reg = r.choice(_HWREGS)
    if r.random() < 0.4:
        return f"hwreg({reg})"
    return f"hwreg({reg}, {r.randrange(32)}, {r.randrange(1, 33)})"


def gen_sopk(info, g: Gen) -> str:
    r, name = g.r, info.name
    if name == "s_getreg_b32":
        return f"{name} {g.sreg(32, dst=True)}, {_hwreg(r)}"
    if name == "s_setreg_b32":
        return f"{name} {_hwreg(r)}, {g.sreg(32)}"
    if name == "s_setreg_imm32_b32":
        return f"{name} {_hwreg(r)}, {g.literal()}"
    if name == "s_call_b64":
        return f"{name} {g.sreg(64, dst=True, special=False)}, {r.randrange(-(1 << 15), 1 << 15)}"
    return f"{name} {g.sreg(32, dst=True)}, 0x{r.randrange(0, 1 << 16):x}"


def gen_salu(info, g: Gen) -> str:
    name, fmt = info.name, info.fmt
    ops = []
    if fmt == Fmt.SOPK:
        return gen_sopk(info, g)
    if "sendmsg" in info.flags:
        msg = g.r.choice(["MSG_RTN_GET_DOORBELL", "MSG_RTN_GET_REALTIME", "MSG_RTN_SAVE_WAVE",
                          "MSG_RTN_GET_TBA", "MSG_RTN_GET_SE_AID_ID"])
        return f"{name} {g.sreg(info.dst_bits, dst=True, special=False)}, sendmsg({msg})"
    if name.startswith(("s_movrel", "s_rfe")):     # relative / return addresses: SGPRs only
        dst = [g.sreg(info.dst_bits, dst=True, special=False)] if info.dst_bits else []
        return f"{name} {', '.join(dst + [g.sreg(info.src_bits[0], special=False)])}"
    if name in ("s_setpc_b64", "s_swappc_b64"):
        dst = f"{g.sreg(64, dst=True, special=False)}, " if info.dst_bits else ""
        return f"{name} {dst}{g.sreg(64, special=False)}"
    if name in ("s_fmamk_f32", "s_fmaak_f32"):
        k = g.literal()
        a, b = g.ssrc(32, literal=False), g.sreg(32)
        return f"{name} {g.sreg(32, dst=True)}, " + (f"{a}, {k}, {b}" if name == "s_fmamk_f32" else f"{a}, {b}, {k}")
    if name in ("s_barrier_signal", "s_barrier_signal_isfirst", "s_barrier_init",
                "s_barrier_join", "s_get_barrier_state"):      # a barrier id: m0 or a constant
        dst = f"{g.sreg(32, dst=True)}, " if info.dst_bits else ""
        return f"{name} {dst}{g.r.choice(['-1', 'm0', '-2', '3'])}"
    if info.dst_bits:
        ops.append(g.sreg(info.dst_bits, dst=True))
    for b in info.src_bits:
        ops.append(g.ssrc(b))
    return f"{name} {', '.join(ops)}"


def gen_smem(info, g: Gen) -> str:
    r, name = g.r, info.name
    base = g.sreg(128 if "buffer" in info.flags else 64, special=False)
    x = r.random()
    off = r.choice([r.randrange(0, 1 << 8), r.randrange(0, 1 << 23), -r.randrange(1, 1 << 23)])
    offt = f"-0x{-off:x}" if off < 0 else f"0x{off:x}"
    if name == "s_dcache_inv":
        return name
    if "prefetch" in name:          # [base,] offset, soffset or null, the prefetch count
        soff = r.choice(["null", g.sreg(32, special=False)])
        ops = [offt, soff, str(r.randrange(32))]
        return f"{name} {', '.join(ops if name.endswith('_pc_rel') else [base, *ops])}"
    if x < 0.5:
        tail = offt
    else:
        tail = f"{g.sreg(32, special=False)} offset:{offt}"
    if name.startswith("s_atc_probe"):
        return f"{name} {r.randrange(8)}, {base}, {tail}"
    dst = g.sreg(info.dst_bits, dst=True, special=False)
    pol = r.choice(["", "", " th:TH_LOAD_NT", " th:TH_LOAD_HT scope:SCOPE_DEV", " scope:SCOPE_SYS",
                    " th:TH_LOAD_LU", " th:TH_LOAD_BYPASS scope:SCOPE_SYS"])
    return f"{info.name} {dst}, {base}, {tail}{pol}"


def _vop3_mods(info, g: Gen, srcs: list[str]) -> tuple[list[str], str]:
    r = g.r
    nmods = next((int(f[-1]) for f in info.flags if f.startswith("mods")), 0)
    out = []
    for i, s in enumerate(srcs):
        is_reg = s[0] in "sv" or s.startswith(("vcc", "exec", "m0", "ttmp"))
        if i < nmods and is_reg:
            if "abs" in info.flags and r.random() < 0.25:
                s = f"|{s}|"
            if "neg" in info.flags and r.random() < 0.3:
                s = "-" + s
        out.append(s)
    tail = ""
    if "opsel" in info.flags and r.random() < 0.5:
        tail += " op_sel:[" + ",".join(r.choice("01") for _ in range(len(srcs) + 1)) + "]"
    if "clamp" in info.flags and r.random() < 0.3:
        tail += " clamp"
    if "omod" in info.flags and r.random() < 0.3:
        tail += r.choice([" mul:2", " mul:4", " div:2"])
    return out, tail


def _fp_src(info, g: Gen, bits: int, literal=True, sgpr=True) -> str:
    s = g.vsrc(bits, literal=literal, sgpr=sgpr)
    return s


def gen_valu(info, g: Gen, e64: bool) -> str:
    r = g.r
    name, fl = info.name, info.flags
    sb = list(info.src_bits)
    if name == "v_nop":
        return "v_nop"
    if name == "v_readfirstlane_b32":
        return f"{name}{'_e64' if e64 else ''} {g.sreg(32, dst=True)}, {g.vreg()}"
    if name == "v_readlane_b32":
        return f"{name} {g.sreg(32, dst=True)}, {g.vreg()}, {r.choice([g.sreg(32), g.inline(floats=False)])}"
    if name == "v_writelane_b32":
        g.sgprs = 1
        a = r.choice([g.sreg(32), g.inline(floats=False), g.literal()])
        return f"{name} {g.vreg()}, {a}, {r.choice([g.sreg(32), g.inline(floats=False)])}"
    if name.startswith("v_s_"):           # scalar-float transcendentals: SGPR dst, scalar src
        srcs, tail = _vop3_mods(info, g, [g.ssrc(info.src_bits[0])])
        return f"{name} {g.sreg(32, dst=True, special=False)}, {srcs[0]}{tail}"
    if "no_e64" in fl and info.fmt == Fmt.VOP1 and info.dst_bits and "sdst" not in fl:
        return f"{name} {g.vreg()}, {g.vreg()}"     # v_swap_b32 ...: one encoding, VGPRs only
    if name.startswith("v_movrel"):                 # relative addressing: VGPR operands only
        return f"{name}{'_e64' if e64 else '_e32'} {g.vreg()}, {g.vreg()}"
    if "fi_bc" in fl:                      # v_permlane*16: VGPR data, lane selects, FI/BC
        sel = g.vreg() if name.endswith("_var_b32") else ", ".join(
            r.choice([g.sreg(32), g.inline(floats=False), g.literal()]) for _ in range(2))
        tail = r.choice(["", " op_sel:[1,0]", " op_sel:[0,1]", " op_sel:[1,1]"])
        return f"{name} {g.vreg()}, {g.vreg()}, {sel}{tail}"
    if name in ("v_fmamk_f32", "v_fmaak_f32", "v_fmamk_f16", "v_fmaak_f16"):
        bits = info.src_bits[0]
        g.lo128 = bits == 16
        k = g.literal(bits)
        g.sgprs = 1
        s0 = g.vsrc(bits, literal=False)
        vd, v1 = g.vreg(bits), g.vreg(bits)
        return f"{name} {vd}, {s0}, {k}, {v1}" if "fmamk" in name else f"{name} {vd}, {s0}, {v1}, {k}"
    g.lo128 = not e64 and info.fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC)
    suffix = "_e64" if e64 and info.fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC) else (
        "_e32" if info.fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC) else "")
    ops = []
    mask_sgpr = None
    if info.fmt == Fmt.VOPC:
        if "cmpx" not in fl:
            ops.append(g.sreg(32, dst=True, special=False) if e64 and r.random() < 0.7 else "vcc_lo")
    elif info.dst_bits:
        ops.append(g.vreg(info.dst_bits))
    carry = "carry_out" in fl
    if carry:
        ops.append(g.sreg(32, dst=True, special=False) if (e64 or info.fmt == Fmt.VOP3SD)
                   and r.random() < 0.7 else "vcc_lo")
    if name.startswith("v_cndmask_b") or (carry and info.fmt == Fmt.VOP2):
        mask_sgpr = g.sreg(32, special=False) if e64 and r.random() < 0.7 else "vcc_lo"
        g.sgprs += 1
        sb = sb[:2]
    if name in ("v_lshlrev_b64", "v_lshrrev_b64", "v_ashrrev_i64", "v_div_fmas_f32", "v_div_fmas_f64"):
        g.sgprs = 1             # 64-bit shifts: constant bus limit 1; v_div_fmas reads VCC
    if name in ("v_qsad_pk_u16_u8", "v_mqsad_pk_u16_u8"):
        g.sgprs = 1             # 64-bit sources: constant bus limit 1
    srcs = []
    vop3 = e64 or info.fmt in (Fmt.VOP3, Fmt.VOP3SD)
    for i, b in enumerate(sb):
        if not vop3 and i >= 1:
            srcs.append(g.vreg(b))
        else:
            srcs.append(g.vsrc(b))
    tail = ""
    if vop3:
        srcs, tail = _vop3_mods(info, g, srcs)
    ops += srcs
    if mask_sgpr:
        ops.append(mask_sgpr)
    return f"{name}{suffix} {', '.join(ops)}{tail}"


def gen_vop3p(info, g: Gen) -> str:
    """VOP3P: random sources (constant bus respected) and op_sel / op_sel_hi / neg_lo / neg_hi
    lists; the mixed-precision FMAs take -x / |x| instead of the neg lists."""
    r = g.r
    n = len(info.src_bits)
    mix = info.name.startswith("v_fma_mix")
    srcs = []
    for _ in range(n):
        s = g.vsrc(32, literal=not mix)          # the mixed FMAs take no literal
        if mix and s[0] in "sv" and r.random() < 0.3:
            s = f"|{s}|" if r.random() < 0.5 else f"-{s}"
        srcs.append(s)
    lst = lambda: "[" + ",".join(r.choice("01") for _ in range(n)) + "]"
    tail = ""
    for key, p in (("op_sel", 0.4), ("op_sel_hi", 0.4)):
        if r.random() < p:
            tail += f" {key}:{lst()}"
    if "neg" in info.flags and not mix:
        for key in ("neg_lo", "neg_hi"):
            if r.random() < 0.3:
                tail += f" {key}:{lst()}"
    if r.random() < 0.2:
        tail += " clamp"
    return f"{info.name} {g.vreg()}, {', '.join(srcs)}{tail}"


def gen_ds(info, g: Gen) -> str:
    r = g.r
    ops = []
    if info.dst_bits:
        ops.append(g.vreg(info.dst_bits))
    ops.append(g.vreg())
    for b in info.src_bits[1:]:
        ops.append(g.vreg(b))
    if "2addr" in info.flags:
        tail = ""
        if r.random() < 0.8:
            tail += f" offset0:{r.randrange(0, 256)}"
        if r.random() < 0.8:
            tail += f" offset1:{r.randrange(0, 256)}"
    else:
        tail = r.choice(["", f" offset:{r.randrange(0, 1 << 16)}", f" offset:{r.randrange(0, 64)}"])
    return f"{info.name} {', '.join(ops)}{tail}"


def gen_vglobal(info, g: Gen) -> str:
    r = g.r
    if info.kind == "cache":
        return info.name + r.choice(["", " scope:SCOPE_SE", " scope:SCOPE_DEV", " scope:SCOPE_SYS"])
    sa = r.random() < 0.5
    if info.fmt == Fmt.VSCRATCH:      # 32-bit offsets, each of vaddr and saddr optional
        vaddr = g.vreg() if r.random() < 0.6 else "off"
        saddr = g.sreg(32, special=False) if sa else "off"
    elif info.fmt == Fmt.VFLAT:       # a 64-bit address, no saddr operand
        vaddr, saddr = g.vreg(64), None
    else:
        vaddr = g.vreg(32 if sa else 64)
        saddr = g.sreg(64, special=False) if sa else "off"
    ops = []
    kind = info.kind
    ret = False
    if kind == "vmem_atomic":
        ret = r.random() < 0.5
    if kind == "vmem_load" or ret:
        ops.append(g.vreg(info.dst_bits))
    ops.append(vaddr)
    if kind != "vmem_load":
        ops.append(g.vreg(info.src_bits[1]))
    if saddr is not None:
        ops.append(saddr)
    off = r.choice([0, r.randrange(-(1 << 23), 1 << 23), r.randrange(-64, 64)])
    tail = f" offset:{off}" if off else ""
    if kind == "vmem_load":
        pol = r.choice(["", "", " th:TH_LOAD_NT", " th:TH_LOAD_HT", " th:TH_LOAD_LU", " th:TH_LOAD_NT_RT",
                        " th:TH_LOAD_RT_NT", " th:TH_LOAD_NT_HT", " th:TH_LOAD_BYPASS scope:SCOPE_SYS"])
    elif kind == "vmem_store":
        pol = r.choice(["", "", " th:TH_STORE_NT", " th:TH_STORE_HT", " th:TH_STORE_RT_WB",
                        " th:TH_STORE_NT_RT", " th:TH_STORE_RT_NT", " th:TH_STORE_NT_HT",
                        " th:TH_STORE_NT_WB", " th:TH_STORE_BYPASS scope:SCOPE_SYS"])
    else:
        pol = (r.choice([" th:TH_ATOMIC_RETURN", " th:TH_ATOMIC_NT_RETURN"]) if ret else
               r.choice(["", "", " th:TH_ATOMIC_NT", " th:TH_ATOMIC_CASCADE_RT scope:SCOPE_DEV"]))
    if not pol and r.random() < 0.4:
        pol += r.choice([" scope:SCOPE_SE", " scope:SCOPE_DEV", " scope:SCOPE_SYS"])
    return f"{info.name} {', '.join(ops)}{tail}{pol}"


def gen_inst(info, rng: random.Random, variant: int) -> str:
    g = Gen(rng)
    fmt = info.fmt
    if fmt == Fmt.SOPP:
        return gen_sopp(info, g)
    if fmt in (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC, Fmt.SOPK):
        return gen_salu(info, g)
    if fmt == Fmt.SMEM:
        return gen_smem(info, g)
    if fmt == Fmt.DS:
        return gen_ds(info, g)
    if fmt in (Fmt.VGLOBAL, Fmt.VSCRATCH, Fmt.VFLAT):
        return gen_vglobal(info, g)
    if fmt == Fmt.VOP3P:
        return gen_vop3p(info, g)
    e64 = info.vop3_op is not None and variant % 2 == 1
    return gen_valu(info, g, e64)


# ----------------------------------------------------------------------------- LLVM

_ENC_RE = re.compile(r"^\s*(\S.*?)\s*;\s*encoding:\s*\[([^\]]*)\]")


def assemble(lines: list[str]) -> list[bytes]:
    """Assemble one instruction per line; return the bytes of each. Fails on any error."""
    src = "\n".join(lines) + "\n"
    p = subprocess.run([LLVM_MC, *MCPU, "-show-encoding"], input=src, capture_output=True, text=True)
    errs = [ln for ln in p.stderr.splitlines() if "error" in ln]
    if errs:
        bad = []
        for ln in errs:
            m = re.match(r"<stdin>:(\d+):", ln)
            bad.append(f"{ln}\n    {lines[int(m.group(1)) - 1] if m else ''}")
        raise AssertionError(f"llvm-mc rejected {len(errs)} lines:\n" + "\n".join(bad[:30]))
    out = []
    for ln in p.stdout.splitlines():
        m = _ENC_RE.match(ln)
        if m:
            out.append(bytes(int(b, 16) for b in m.group(2).split(",")))
    assert len(out) == len(lines), (len(out), len(lines))
    return out


def llvm_disassemble(blobs: list[bytes]) -> list[str]:
    src = "\n".join(" ".join(f"0x{b:02x}" for b in blob) for blob in blobs) + "\n"
    p = subprocess.run([LLVM_MC, *MCPU, "-disassemble"], input=src, capture_output=True, text=True)
    assert "warning" not in p.stderr, p.stderr[:2000]
    lines = [ln.strip() for ln in p.stdout.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(".text")]
    assert len(lines) == len(blobs), (len(lines), len(blobs), p.stderr[:500])
    return lines


def norm(s: str) -> str:
    return " ".join(s.replace(",", ", ").split()).replace(" ,", ",")


# ----------------------------------------------------------------------------- tests

GROUPS = {
    "scalar": (Fmt.SOP1, Fmt.SOP2, Fmt.SOPC, Fmt.SOPK, Fmt.SOPP, Fmt.SMEM),
    "vop12": (Fmt.VOP1, Fmt.VOP2),
    "vopc": (Fmt.VOPC,),
    "vop3": (Fmt.VOP3, Fmt.VOP3SD),
    "vop3p": (Fmt.VOP3P,),
    "memory": (Fmt.DS, Fmt.VGLOBAL, Fmt.VSCRATCH, Fmt.VFLAT),
}


def build_cases(fmts, seed=SEED, per_op=PER_OP):
    rng = random.Random(seed)
    cases = []
    for info in isa.OPCODES:
        if info.fmt not in fmts:
            continue
        for k in range(per_op):
            cases.append((info, gen_inst(info, rng, k)))
    return cases


def check_roundtrip(cases, seed):
    texts = [t for _, t in cases]
    blobs = assemble(texts)
    llvm = llvm_disassemble(blobs)
    fails = []
    for (info, text), blob, ref in zip(cases, blobs, llvm):
        words = [int.from_bytes(blob[i:i + 4], "little") for i in range(0, len(blob), 4)]
        try:
            inst = isa.decode(words + [0xDEADBEEF], pc=0x100)
        except isa.DecodeError as e:
            fails.append(f"{text!r}: {e}")
            continue
        mine = isa.disassemble(inst)
        problems = []
        if inst.name != info.name:
            problems.append(f"decoded as {inst.name}")
        if inst.size != len(blob):
            problems.append(f"size {inst.size} != {len(blob)}")
        if norm(mine) != norm(ref):
            problems.append(f"text {mine!r} != llvm {ref!r}")
        if problems:
            fails.append(f"{text!r} [{blob.hex()}]: " + "; ".join(problems))
    assert not fails, f"seed {seed}: {len(fails)}/{len(cases)} mismatches:\n" + "\n".join(fails[:40])


@needs_llvm
@pytest.mark.parametrize("group", sorted(GROUPS))
def test_roundtrip(group):
    seed = SEED + sorted(GROUPS).index(group)
    print(f"seed {seed}")
    cases = build_cases(GROUPS[group], seed)
    assert cases
    check_roundtrip(cases, seed)


def test_every_opcode_in_a_group():
    fmts = {f for g in GROUPS.values() for f in g}
    assert all(i.fmt in fmts for i in isa.OPCODES)


def _mod_probe_lines():
    """For every op with a VOP3 form: a plain VGPR-operand line and one line per modifier."""
    lines, meta = [], []
    for info in isa.OPCODES:
        if info.vop3_fmt is None or info.name in ("v_readlane_b32", "v_writelane_b32") \
                or "fi_bc" in info.flags:          # op_sel there is FI/BC (gen_valu)
            continue
        fl = info.flags
        sfx = "_e64" if info.fmt in (Fmt.VOP1, Fmt.VOP2, Fmt.VOPC) else ""
        ops = []
        if info.fmt == Fmt.VOPC:
            if "cmpx" not in fl:
                ops.append("s4")
        elif "sdst" in fl:
            ops.append("s10")
        elif info.dst_bits:
            ops.append("v[10:11]" if info.dst_bits == 64 else "v10")
        if "carry_out" in fl:
            ops.append("s6")
        srcs = [f"v[{20 + 2 * i}:{21 + 2 * i}]" if b == 64 else f"v{20 + 2 * i}"
                for i, b in enumerate(info.src_bits)]
        if info.name.startswith("v_s_"):
            srcs = ["s20"]
        if info.name.startswith("v_cndmask_b") or ("carry_out" in fl and info.fmt == Fmt.VOP2):
            srcs[2] = "s8"
        nmods = next((int(f[-1]) for f in fl if f.startswith("mods")), 0)
        variants = [("base", "", None, True), ("clamp", " clamp", None, "clamp" in fl),
                    ("omod", " mul:2", None, "omod" in fl),
                    ("opsel", " op_sel:[1" + ",0" * len(srcs) + "]", None, "opsel" in fl)]
        for i in range(len(srcs)):
            variants.append((f"neg{i}", "", ("-{}", i), "neg" in fl and i < nmods))
            if info.vop3_fmt != Fmt.VOP3SD:    # llvm-mc accepts |x| there but drops it
                variants.append((f"abs{i}", "", ("|{}|", i), "abs" in fl and i < nmods))
        for tag, tail, wrap, ok in variants:
            s = list(srcs)
            if wrap:
                s[wrap[1]] = wrap[0].format(s[wrap[1]])
            lines.append(f"{info.name}{sfx} {', '.join(ops + s)}{tail}")
            meta.append((info.name, tag, ok))
    return lines, meta


@needs_llvm
def test_vop3_modifier_flags():
    """The neg/abs/mods<N>/clamp/omod flags say exactly which VOP3 modifiers LLVM accepts."""
    lines, meta = _mod_probe_lines()
    p = subprocess.run([LLVM_MC, *MCPU, "-show-encoding"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True)
    rejected = {int(m.group(1)) - 1 for m in re.finditer(r"<stdin>:(\d+):\d+: error", p.stderr)}
    wrong = [f"{lines[i]!r}: flags say {'legal' if ok else 'illegal'}, llvm-mc "
             f"{'rejects' if i in rejected else 'accepts'}"
             for i, (name, tag, ok) in enumerate(meta) if (i not in rejected) != ok]
    assert not wrong, "\n".join(wrong[:40])


@needs_llvm
def test_fp64_literals():
    """A literal on a double operand is the double's high half: LLVM prints it in hex, or as
    the inline constant / 0 the whole double equals; 32-bit operands of f64 ops are plain."""
    lines = ["v_add_f64 v[0:1], 0x40080000, v[2:3]", "v_fma_f64 v[0:1], v[2:3], 0x3ff80000, -v[4:5]",
             "v_cmp_class_f64 vcc_lo, 0x80000001, v2", "v_ldexp_f64 v[0:1], v[2:3], 0x45",
             "v_trig_preop_f64 v[0:1], 0x3fc4c988, v7", "v_div_scale_f64 v[0:1], s4, v[2:3], 0x7ff00000, v[2:3]"]
    raw = [bytes([0xFF, 0x04, 0x00, 0x04]) + v.to_bytes(4, "little")     # v_add_f64_e32, literal src0
           for v in (0x3FF0_0000, 0, 0xBFE0_0000, 0x3FC4_5F30, 0x4010_0000)]
    blobs = assemble(lines) + raw
    ref = llvm_disassemble(blobs)
    mine = [isa.disassemble(isa.decode([int.from_bytes(b[i:i + 4], "little") for i in range(0, len(b), 4)]))
            for b in blobs]
    assert [norm(m) for m in mine] == [norm(r) for r in ref]
    assert ref[len(lines):len(lines) + 3] == ["v_add_f64_e32 v[0:1], 1.0, v[2:3]", "v_add_f64_e32 v[0:1], 0, v[2:3]",
                                              "v_add_f64_e32 v[0:1], -0.5, v[2:3]"]


def _firmware_sources():
    from pathlib import Path
    fw = Path(__file__).resolve().parent.parent / "firmware_tests"
    return sorted(list(fw.glob("*.cl")) + list(fw.glob("*.s")))


@needs_llvm
@pytest.mark.parametrize("src", _firmware_sources(), ids=lambda p: p.name)
def test_firmware_kernel_disassembly(src):
    """Every instruction of every firmware kernel decodes, and disassembles exactly as
    llvm-objdump-19 prints it (linear sweep over .text; s_code_end padding included)."""
    from elftools.elf.elffile import ELFFile

    from dcu import toolchain
    path = toolchain.build(src)        # a kernel that does not build is a failure, not a skip
    ref_text = toolchain.objdump(path)
    with open(path, "rb") as fh:
        text = ELFFile(fh).get_section_by_name(".text")
        code, base = text.data(), text["sh_addr"]
    ref = {}
    for line in ref_text.splitlines():
        m = re.match(r"^\s+(\S.*?)\s*//\s*([0-9A-Fa-f]{12}):", line)
        if m:
            ref[int(m.group(2), 16)] = m.group(1)
    prog = isa.decode_program(code, base)
    bad = [f"0x{i.pc:x}: {isa.disassemble(i)!r} != llvm {ref.get(i.pc)!r}"
           for i in prog if norm(isa.disassemble(i)) != norm(ref.get(i.pc, ""))]
    assert len(prog) == len(ref)
    assert not bad, "\n".join(bad[:20])


_SALU_F16_CODES = [1, 106, 124, 125, 128, 129, 192, 193, 208, *range(240, 249), 251, 253]
_SALU_F16_LITERALS = [0x3C00, 0x3118, 0xBC00, 0x7E00, 0x8000, 0xFFFF, 0x12345678, 0xFFFF3C00,
                      0x13C00, 0x10000, 5, 64, 65, 0xFFFFFFF0, 0xFFFFFFEF, 0x80000000,
                      0x3F800000, 0x3E22F983]


def _salu_f16_encodings():
    """Every scalar f16 opcode with each source slot set to registers, every inline constant and
    literals that probe LLVM's per-operand-type printing (raw bytes: llvm-mc folds some)."""
    out = []
    for info in isa.OPCODES:
        if not (info.name.startswith("s_") and "_f16" in info.name):
            continue
        for slot in range(len(info.src_bits)):
            for code, lit in [(c, None) for c in _SALU_F16_CODES] + [(255, v) for v in _SALU_F16_LITERALS]:
                s0, s1 = (code, 3) if slot == 0 else (3, code)
                if info.fmt == Fmt.SOP1:
                    w = 0b101111101 << 23 | 2 << 16 | info.op << 8 | s0
                elif info.fmt == Fmt.SOP2:
                    w = 0b10 << 30 | info.op << 23 | 2 << 16 | s1 << 8 | s0
                else:
                    w = 0b101111110 << 23 | info.op << 16 | s1 << 8 | s0
                out.append(w.to_bytes(4, "little") + (b"" if lit is None else lit.to_bytes(4, "little")))
    return out


@needs_llvm
def test_salu_f16_operand_text():
    """The 30 scalar f16 opcodes disassemble as llvm-mc-19 does for every source kind: SOP2 f16
    sources print like an f16 operand, s_cmp_*_f16's inline floats as f16 hex patterns, SOP1
    and s_cvt_pk_rtz_f16_f32 sources as 32-bit operands."""
    blobs = _salu_f16_encodings()
    assert len({b[:4] for b in blobs if len(b) == 4}) >= 30 * len(_SALU_F16_CODES)
    ref = llvm_disassemble(blobs)
    bad = []
    for blob, r in zip(blobs, ref):
        words = [int.from_bytes(blob[i:i + 4], "little") for i in range(0, len(blob), 4)]
        mine = isa.disassemble(isa.decode(words + [0]))
        if norm(mine) != norm(r):
            bad.append(f"[{blob.hex()}] {mine!r} != llvm {r!r}")
    assert not bad, f"{len(bad)}/{len(blobs)}:\n" + "\n".join(bad[:30])
