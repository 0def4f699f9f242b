"""dcu.toolchain: tool discovery, assembling, compiling, linking and the build cache."""

import os
import subprocess
from pathlib import Path

import pytest

from dcu import toolchain
from dcu.toolchain import ToolchainError, ToolNotFoundError

ASM_OK = """
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
  .text
  .globl k
  .p2align 8
  .type k,@function
k:
  s_mov_b32 s0, 1
  s_endpgm
.Lk_end:
  .size k, .Lk_end-k
  .rodata
  .p2align 6
  .amdhsa_kernel k
    .amdhsa_next_free_vgpr 1
    .amdhsa_next_free_sgpr 1
  .end_amdhsa_kernel
"""

CL_OK = """
__kernel void fill(__global uint *out, uint v) {
  out[__builtin_amdgcn_workitem_id_x()] = v;
}
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test gets an empty cache, so cache hits are the test's own."""
    monkeypatch.setattr(toolchain, "CACHE_DIR", tmp_path / "cache")
    return tmp_path / "cache"


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def elf_header(path):
    data = Path(path).read_bytes()
    assert data[:4] == b"\x7fELF"
    e_type = int.from_bytes(data[16:18], "little")
    e_machine = int.from_bytes(data[18:20], "little")
    return e_type, e_machine


@pytest.mark.parametrize("name", ["llvm-mc", "clang", "ld.lld", "llvm-objdump"])
def test_find_tool_finds_llvm19(name):
    path = toolchain.find_tool(name)
    assert os.access(path, os.X_OK)
    assert "19" in toolchain.tool_version(name)


def test_missing_tool_names_apt_command(monkeypatch, tmp_path):
    monkeypatch.setitem(toolchain.TOOLS, "clang", "clang-does-not-exist-19")
    monkeypatch.setattr(toolchain, "LLVM_DIR", tmp_path / "nothing")
    monkeypatch.delenv("DCU_LLVM_BIN", raising=False)
    with pytest.raises(ToolNotFoundError) as ei:
        toolchain.find_tool("clang")
    assert "apt-get install -y llvm-19 clang-19 lld-19" in str(ei.value)


def test_unknown_tool_name():
    with pytest.raises(ValueError, match="unknown tool"):
        toolchain.find_tool("gcc")


def test_assemble_links_a_shared_code_object(tmp_path, private_cache):
    out = toolchain.assemble(write(tmp_path, "k.s", ASM_OK))
    assert out.parent == private_cache and out.suffix == ".hsaco"
    assert elf_header(out) == (3, 224)  # ET_DYN, EM_AMDGPU


def test_assemble_is_cached_and_keyed_on_source(tmp_path):
    src = write(tmp_path, "k.s", ASM_OK)
    first = toolchain.assemble(src)
    stamp = first.stat().st_mtime_ns
    again = toolchain.assemble(src)
    assert again == first and again.stat().st_mtime_ns == stamp  # not rebuilt
    src.write_text(ASM_OK.replace("s_mov_b32 s0, 1", "s_mov_b32 s0, 2"))
    changed = toolchain.assemble(src)
    assert changed != first
    assert changed.read_bytes() != first.read_bytes()


def test_assemble_error_carries_stderr(tmp_path):
    src = write(tmp_path, "bad.s", ASM_OK.replace("s_mov_b32 s0, 1", "s_frobnicate s0"))
    with pytest.raises(ToolchainError) as ei:
        toolchain.assemble(src)
    assert "invalid instruction" in ei.value.stderr
    assert "s_frobnicate" in str(ei.value)
    assert ei.value.cmd and "llvm-mc" in ei.value.cmd[0]


def test_compile_cl_cu_and_wgp_modes_differ(tmp_path):
    src = write(tmp_path, "fill.cl", CL_OK)
    cu = toolchain.compile_cl(src)
    wgp = toolchain.compile_cl(src, wgp=True)
    assert cu != wgp
    assert elf_header(cu) == (3, 224)
    from dcu.codeobj import CodeObject

    assert CodeObject(cu).kernel("fill").wgp_mode is False
    assert CodeObject(wgp).kernel("fill").wgp_mode is True


def test_compile_error_carries_clang_stderr(tmp_path):
    src = write(tmp_path, "bad.cl", "__kernel void k(__global int *a) { a[0] = undeclared_thing; }")
    with pytest.raises(ToolchainError) as ei:
        toolchain.compile_cl(src)
    assert "undeclared_thing" in ei.value.stderr
    assert "error" in ei.value.stderr


def test_undefined_function_fails_at_link(tmp_path):
    src = write(tmp_path, "ext.cl", "float f(float);\n"
                "__kernel void k(__global float *a) { a[0] = f(a[0]); }")
    with pytest.raises(ToolchainError) as ei:
        toolchain.compile_cl(src)
    assert "undefined" in ei.value.stderr


def test_cache_key_includes_the_device_header(tmp_path, monkeypatch):
    header = write(tmp_path, "dcu_device.h", "#define DCU_VALUE 3u\n")
    monkeypatch.setattr(toolchain, "DEVICE_HEADER", header)
    src = write(tmp_path, "h.cl", "__kernel void k(__global uint *a) { a[0] = DCU_VALUE; }")
    first = toolchain.compile_cl(src)
    header.write_text("#define DCU_VALUE 5u\n")
    second = toolchain.compile_cl(src)
    assert first != second


def test_missing_device_library_names_the_package(tmp_path, monkeypatch):
    monkeypatch.setattr(toolchain, "DEVICE_LIB_DIRS", (tmp_path / "nothing",))
    monkeypatch.delenv("DCU_DEVICE_LIB_DIR", raising=False)
    src = write(tmp_path, "gid.cl", "__kernel void k(__global float *a) { a[get_global_id(0)] = 1.0f; }")
    with pytest.raises(ToolchainError) as ei:
        toolchain.compile_cl(src)
    assert "apt-get install -y rocm-device-libs" in str(ei.value)
    assert str(tmp_path / "nothing") in str(ei.value)


LIBM = """
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void k(__global float *a, __global const half *h) {
  size_t i = get_global_id(0);
  float x = a[i];
  a[i] = exp(x) + log(x) + sin(x) + cos(x) + pow(x, 1.5f) + tanh(x) + erf(x) + exp2(x)
         + vload_half(i, h) + sub_group_reduce_add(x) + (float)get_sub_group_local_id();
}
"""


def test_device_library_resolves_math_and_work_item_functions(tmp_path):
    """The library's functions link (no undefined symbol) and its controls follow the options."""
    from dcu.codeobj import CodeObject
    out = toolchain.compile_cl(write(tmp_path, "libm.cl", LIBM))
    assert "k" in CodeObject(out).kernels
    names = [p.name for p in toolchain.device_library()]
    assert names[:3] == ["opencl.bc", "ocml.bc", "ockl.bc"]
    assert "oclc_correctly_rounded_sqrt_off.bc" in names and "oclc_wavefrontsize64_off.bc" in names
    assert names[-1].startswith("oclc_isa_version_1200")
    exact = [p.name for p in toolchain.device_library(["-cl-fp32-correctly-rounded-divide-sqrt"])]
    assert "oclc_correctly_rounded_sqrt_on.bc" in exact
    fast = [p.name for p in toolchain.device_library(["-cl-fast-relaxed-math"])]
    assert {"oclc_finite_only_on.bc", "oclc_unsafe_math_on.bc", "oclc_daz_opt_off.bc"} <= set(fast)


VOPD_CL = """
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void k(__global float4 *a, __global float4 *b) {
  uint i = get_local_id(0);
  float4 x = a[i], y = b[i];
  a[i] = x * y + 2.0f;  b[i] = x + y;
}
"""


def test_stock_flags_pair_vopd(tmp_path):
    assert "v_dual_" in toolchain.objdump(toolchain.compile_cl(write(tmp_path, "pairs.cl", VOPD_CL)))


def test_options_reach_clang_and_the_key(tmp_path):
    src = write(tmp_path, "div.cl", "__kernel void k(__global float *a) { a[0] = a[1] / a[2]; }")
    stock = toolchain.compile_cl(src)
    exact = toolchain.compile_cl(src, options=["-cl-fp32-correctly-rounded-divide-sqrt"])
    assert stock != exact
    assert "v_div_fixup_f32" in toolchain.objdump(exact) and "v_div_fixup_f32" not in toolchain.objdump(stock)


def test_build_dispatches_on_suffix(tmp_path):
    s = write(tmp_path, "k.s", ASM_OK)
    linked = toolchain.build(s)
    assert elf_header(linked)[0] == 3
    # .o: link it
    obj = tmp_path / "k.o"
    subprocess.run([toolchain.find_tool("llvm-mc"), *toolchain.ASM_FLAGS, str(s), "-o", str(obj)],
                   check=True)
    assert elf_header(obj)[0] == 1  # ET_REL
    from_obj = toolchain.build(obj)
    assert elf_header(from_obj)[0] == 3
    # .hsaco and .co: used as they are
    co = tmp_path / "k.co"
    co.write_bytes(linked.read_bytes())
    assert toolchain.build(linked) == linked
    assert toolchain.build(co) == co
    # .cl
    assert elf_header(toolchain.build(write(tmp_path, "f.cl", CL_OK)))[0] == 3


def test_build_rejects_unknown_suffix_and_missing_file(tmp_path):
    with pytest.raises(ToolchainError, match="unsupported suffix"):
        toolchain.build(write(tmp_path, "k.cpp", "int x;"))
    with pytest.raises(FileNotFoundError):
        toolchain.build(tmp_path / "nope.s")


def test_objdump_shows_llvm_disassembly(tmp_path):
    text = toolchain.objdump(toolchain.assemble(write(tmp_path, "k.s", ASM_OK)))
    assert "s_mov_b32 s0, 1" in text and "s_endpgm" in text
