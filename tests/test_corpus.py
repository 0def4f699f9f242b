"""The OpenCL C corpus against the project's ISA tables, disassembler and model.

Every OpenCL C firmware kernel (the corpus and the others), built by dcu.toolchain with stock
flags (and each manifest entry's own options): every opcode clang emits, both halves of a
VOPD pair included, must be in isa/, must disassemble exactly as llvm-objdump-19 prints it,
and must be implemented by the model. Each kernel built with VOPD on and off gives the same
results on the model. The RTL backends refuse a kernel with an instruction the RTL SIMD
does not execute before they elaborate anything.
"""
from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

import dcu
import isa
from dcu import toolchain
from dcu.backends.rtlcheck import RtlUnsupportedError, kernel_instructions, unsupported
from firmware_tests.manifest import HERE, TESTS
from tests.asmutil import needs_llvm
from tests.test_isa_roundtrip import norm

pytestmark = needs_llvm

CL_TESTS = [t for t in TESTS if t.source.endswith(".cl")]
# (source, wgp, options) of every OpenCL C build the manifest asks for
BUILDS = sorted({(t.source, t.wgp, t.cl_options) for t in CL_TESTS})
_SUFFIX = re.compile(r"_e(32|64)$|_dpp$")


def _objdump_lines(path: Path):
    """(address, text, mnemonics) of every instruction llvm-objdump-19 prints; a VOPD line has
    both halves' mnemonics."""
    for line in toolchain.objdump(path).splitlines():
        m = re.match(r"^\s+(\S.*?)\s*//\s*([0-9A-Fa-f]{12}):", line)
        if not m:
            continue
        text = m.group(1)
        names = [part.split()[0] for part in text.split(" :: ")]
        yield int(m.group(2), 16), text, names


def _in_isa(name: str) -> bool:
    if name.startswith("v_dual_"):
        try:
            from isa.vopd import BASE
        except ImportError:
            return False
        return "v_" + name[len("v_dual_"):] in BASE.values()
    try:
        isa.by_name(name)
    except KeyError:
        return False
    return True


def _model_name(name: str) -> str:
    """The model's name of an opcode: a VOPD half performs its VOP1/VOP2 operation."""
    return "v_" + name[len("v_dual_"):] if name.startswith("v_dual_") else name


def _survey() -> tuple[dict, dict]:
    """Every opcode of every build: {mnemonic: first (build, pc, text)}, and the problems of
    each opcode: {mnemonic: [reason, ...]}."""
    from sim.execute import IMPLEMENTED
    seen, problems = {}, defaultdict(list)
    for source, wgp, options in BUILDS:
        path = toolchain.build(Path(HERE) / source, wgp=wgp, options=options)
        with open(path, "rb") as fh:
            text = ELFFile(fh).get_section_by_name(".text")
            code, base = text.data(), text["sh_addr"]
        where = f"{source}{' ' + ' '.join(options) if options else ''}"
        for pc, llvm_text, names in _objdump_lines(path):
            off = pc - base
            words = [int.from_bytes(code[off + 4 * k: off + 4 * k + 4], "little") for k in range(4)]
            try:
                mine = isa.disassemble(isa.decode(words, pc))
            except isa.DecodeError as e:
                mine = f"<{e}>"
            for name in (_SUFFIX.sub("", n) for n in names):
                seen.setdefault(name, (where, pc, llvm_text))
                reasons = problems[name]
                if not _in_isa(name) and "not in isa/" not in reasons:
                    reasons.append("not in isa/")
                if norm(mine) != norm(llvm_text) and not any(r.startswith("disassembles") for r in reasons):
                    reasons.append(f"disassembles as {mine!r}, llvm-objdump-19 {llvm_text!r} "
                                   f"({where} at 0x{pc:x})")
                if _model_name(name) not in IMPLEMENTED and "not implemented by the model" not in reasons:
                    reasons.append("not implemented by the model")
    return seen, {k: v for k, v in problems.items() if v}


def test_every_opcode_clang_emits_is_in_isa_disassembles_and_runs():
    seen, problems = _survey()
    assert len(seen) >= 250, f"only {len(seen)} distinct opcodes in the corpus"
    assert any(n.startswith("v_dual_") for n in seen), "no VOPD pair in the stock builds"
    lines = [f"{name}: {'; '.join(reasons)}" for name, reasons in sorted(problems.items())]
    assert not problems, f"{len(problems)} of {len(seen)} opcodes fail:\n" + "\n".join(lines)


# ------------------------------------------------------------------------ VOPD
def _vopd_words(test) -> int:
    from dcu.firmware import program
    kernel = program(test).kernel(test.kernel)
    return sum(f.form == "VOPD" for f in kernel_instructions(kernel))


def test_stock_builds_have_vopd_words():
    """Stock flags pair instructions in several kernels, so the RTL runs of the firmware set
    execute VOPD words."""
    with_vopd = [t.name for t in CL_TESTS if _vopd_words(t)]
    assert len(with_vopd) >= 3, with_vopd



FOREIGN_KERNEL = """
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void foreign(__global const float4 *a, __global float4 *c, float d) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  float4 x = a[i];
  c[i] = x * x / d + (float4)(1.0f, 2.0f, 3.0f, 4.0f) * x;
}
"""


def test_code_object_from_plain_clang_runs_as_it_is(tmp_path):
    """A code object built by clang-19's own driver, not by dcu.toolchain: stock flags (VOPD
    pairs, WGP mode, no -mcumode), no device library and no project header. The model runs it
    within OpenCL C's 2.5 ulp for the division and the rounding of the rest."""
    src, hsaco = _write(tmp_path, "foreign.cl", FOREIGN_KERNEL), tmp_path / "foreign.hsaco"
    subprocess.run([toolchain.find_tool("clang"), "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa",
                    "-mcpu=gfx1200", "-O2", "-nogpulib", str(src), "-o", str(hsaco)], check=True)
    kernel = dcu.load_program(hsaco).kernel("foreign")
    assert kernel.wgp_mode and any(f.form == "VOPD" for f in kernel_instructions(kernel))
    a = np.random.default_rng(7).uniform(0.5, 2.0, 4 * 128).astype(np.float32)
    run = dcu.launch(kernel, grid=(2,), block=(64,), args=[a, np.zeros_like(a), np.float32(3.0)], backend="model")
    x = a.astype(np.float64).reshape(-1, 4)
    want = (x * x / 3.0 + np.array([1.0, 2.0, 3.0, 4.0]) * x).ravel()
    ulps = np.abs(run.buffers[1] - want) / np.spacing(want.astype(np.float32)).astype(np.float64)
    assert ulps.max() <= 3.0, ulps.max()


# --------------------------------------------------------------------------- RTL refusal
VOPD_KERNEL = """
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void pairs(__global float4 *a, __global float4 *b) {
  uint i = get_local_id(0);
  float4 x = a[i], y = b[i];
  a[i] = x * y + 2.0f;  b[i] = x + y;
}
"""

ASM_KERNEL = """
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
  .text
  .globl k
  .p2align 8
  .type k,@function
k:
  s_load_b64 s[2:3], s[0:1], 0x0
  s_mov_b32 s4, 0x40400000
  {body}
  v_mov_b32 v1, s4
  v_lshlrev_b32 v0, 2, v0
  s_wait_kmcnt 0
  global_store_b32 v0, v1, s[2:3]
  s_endpgm
.Lk_end:
  .size k, .Lk_end-k
  .rodata
  .p2align 6
  .amdhsa_kernel k
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_kernarg_size 8
    .amdhsa_next_free_vgpr 4
    .amdhsa_next_free_sgpr 8
    .amdhsa_wavefront_size32 1
    .amdhsa_workgroup_processor_mode 0
  .end_amdhsa_kernel
"""


@pytest.fixture
def no_simulation(monkeypatch):
    """Any elaboration or simulation fails the test: a refusal must come first."""
    from dcu.backends import rtl, verilator

    def forbidden(*a, **k):
        raise AssertionError("the RTL backend was started")
    monkeypatch.setattr(rtl, "run_dispatch", forbidden)
    monkeypatch.setattr(verilator, "run_dispatch", forbidden)


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_stock_vopd_kernel_is_accepted_and_dependent_halves_are_refused(tmp_path, no_simulation):
    """The RTL runs a stock build's VOPD words (each half an operation it executes); a VOPD
    whose halves each read the other's destination is refused before elaboration, by form."""
    kernel = dcu.load_program(_write(tmp_path, "pairs.cl", VOPD_KERNEL)).kernel("pairs")
    assert any(f.form == "VOPD" for f in kernel_instructions(kernel)) and unsupported(kernel) == []
    body = "v_dual_mul_f32 v2, v3, v5 :: v_dual_add_f32 v3, v2, v4"
    kernel = dcu.load_program(_write(tmp_path, "swap.s", ASM_KERNEL.format(body=body))).kernel("k")
    a = np.zeros(32, np.float32)
    with pytest.raises(RtlUnsupportedError, match=r"v_dual_mul_f32 :: v_dual_add_f32 \(VOPD, halves read each "
                                                   r"other's destinations\) at 0x[0-9a-f]+"):
        dcu.launch(kernel, 1, 32, [a], backend="rtl", config="tiny")


def test_instruction_the_rtl_lacks_is_refused_by_name(tmp_path, no_simulation):
    """v_div_fixup_f32 (a division helper): the model runs it, the RTL SIMD does not (it runs
    the SALU float s_add_f32 on its vector pipe's lane 0)."""
    body = "s_add_f32 s4, s4, 0.5\n  v_div_fixup_f32 v2, v1, v1, v1"
    src = _write(tmp_path, "fixup.s", ASM_KERNEL.format(body=body))
    kernel = dcu.load_program(src).kernel("k")
    out = np.zeros(32, np.uint32)
    with pytest.raises(RtlUnsupportedError, match=r"execute 1 of its instructions: v_div_fixup_f32 at 0x[0-9a-f]+;"):
        dcu.launch(kernel, 1, 32, [out], backend="rtl", config="tiny")
    run = dcu.launch(kernel, 1, 32, [out], backend="model")
    assert np.all(run.buffers[0].view(np.float32) == np.float32(3.5))


@pytest.mark.parametrize("backend", ["rtl", "verilator"])
def test_scalar_f16_is_refused_by_name(tmp_path, backend, no_simulation):
    """s_cvt_f16_f32 and s_fmac_f16 (SALU f16): the model runs them, the RTL SIMD does not.
    s4 = 0x40400000; s_cvt_f16_f32 sets its low half to 0.5 (0x3800), s_fmac_f16 adds 3.0 * 1.0
    to it (3.5, 0x4300); the high half stays 0x4040."""
    body = "s_cvt_f16_f32 s4, 0.5\n  s_fmac_f16 s4, 0x4200, 1.0"
    src = _write(tmp_path, "salu_f16.s", ASM_KERNEL.format(body=body))
    kernel = dcu.load_program(src).kernel("k")
    out = np.zeros(32, np.uint32)
    with pytest.raises(RtlUnsupportedError, match=r"execute 2 of its instructions: s_cvt_f16_f32 at "
                       r"0x[0-9a-f]+, s_fmac_f16 at 0x[0-9a-f]+;"):
        dcu.launch(kernel, 1, 32, [out], backend=backend, config="tiny")
    run = dcu.launch(kernel, 1, 32, [out], backend="model")
    assert np.all(run.buffers[0] == 0x4040_4300)


def test_dpp_form_is_refused_though_its_operation_is_implemented(tmp_path, no_simulation):
    from hdl.simd import IMPLEMENTED
    assert "v_mov_b32" in IMPLEMENTED
    src = _write(tmp_path, "dpp.s", ASM_KERNEL.format(
        body="v_mov_b32_dpp v2, v0 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf"))
    kernel = dcu.load_program(src).kernel("k")
    with pytest.raises(RtlUnsupportedError, match=r"v_mov_b32 \(DPP16\) at 0x[0-9a-f]+"):
        dcu.launch(kernel, 1, 32, [np.zeros(32, np.uint32)], backend="rtl", config="tiny")


def test_clamp_the_rtl_lacks_is_refused(tmp_path, no_simulation):
    """The RTL's transcendental unit does not implement clamp: v_exp_f32 with clamp is refused
    before launch, and so is v_mad_co_u64_u32's (the integer lane writes its low word before
    the high one); the float clamp of the FP32 unit and the integer saturation (llvm.uadd.sat's
    v_add_nc_u32 with clamp, the carry ops') it does execute are not."""
    from hdl.simd import IMPLEMENTED, NO_CLAMP
    assert {"v_exp_f32", "v_mad_co_u64_u32"} <= IMPLEMENTED & NO_CLAMP
    assert not {"v_add_f32", "v_add_nc_u32", "v_add_co_u32"} & NO_CLAMP
    src = _write(tmp_path, "exp.s", ASM_KERNEL.format(body="v_exp_f32_e64 v2, v0 clamp"))
    kernel = dcu.load_program(src).kernel("k")
    with pytest.raises(RtlUnsupportedError, match=r"v_exp_f32 \(clamp\) at 0x[0-9a-f]+"):
        dcu.launch(kernel, 1, 32, [np.zeros(32, np.uint32)], backend="rtl", config="tiny")
    for body in ("v_add_f32_e64 v2, v0, v0 clamp", "v_add_nc_u32_e64 v2, v0, v0 clamp"):
        fine = _write(tmp_path, "fine.s", ASM_KERNEL.format(body=body))
        assert unsupported(dcu.load_program(fine).kernel("k")) == [], body


def test_omod_the_rtl_lacks_is_refused(tmp_path, no_simulation):
    """The transcendental unit has no output modifiers: v_rcp_f32 with mul:2 is refused before
    launch (the RTL would stop on it at execute); omod on the FP32 unit's v_add_f32 is not."""
    from hdl.simd import IMPLEMENTED, NO_OMOD
    assert "v_rcp_f32" in IMPLEMENTED and "v_rcp_f32" in NO_OMOD and "v_add_f32" not in NO_OMOD
    src = _write(tmp_path, "rcp.s", ASM_KERNEL.format(body="v_rcp_f32_e64 v2, v0 mul:2"))
    kernel = dcu.load_program(src).kernel("k")
    with pytest.raises(RtlUnsupportedError, match=r"v_rcp_f32 \(omod\) at 0x[0-9a-f]+"):
        dcu.launch(kernel, 1, 32, [np.zeros(32, np.uint32)], backend="rtl", config="tiny")
    fine = _write(tmp_path, "fine.s", ASM_KERNEL.format(body="v_add_f32_e64 v2, v0, v0 mul:2"))
    assert unsupported(dcu.load_program(fine).kernel("k")) == []


def test_a_word_that_is_no_instruction_is_left_to_the_rtl(tmp_path):
    """0xffffffff is no gfx1200 instruction: the RTL's illegal-instruction trap reports it
    (tests/test_dcu.py), so the check neither refuses it nor reads past it."""
    src = _write(tmp_path, "bad.s", ASM_KERNEL.format(body=".long 0xffffffff\n  s_add_f32 s4, s4, 0.5"))
    kernel = dcu.load_program(src).kernel("k")
    names = [f.name for f in kernel_instructions(kernel)]
    assert names == ["s_load_b64", "s_mov_b32"]
    assert unsupported(kernel) == []
