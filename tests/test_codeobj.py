"""dcu.codeobj: descriptors, entry points, metadata and the loaded image.

Expected values come from the directives in the sources below and, for
addresses, from llvm-objdump-19 (an independent reader of the same file).
"""

import os
import re
import struct
import subprocess
import sys

import pytest

from dcu import toolchain
from dcu.codeobj import CodeObject, CodeObjectError, KernelInfo, load_code_object

# Two kernels, the second with argument metadata including a hidden argument.
ASM_META = """
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
  .text
  .globl first
  .p2align 8
  .type first,@function
first:
  s_endpgm
.Lfirst_end:
  .size first, .Lfirst_end-first

  .globl store_one
  .p2align 8
  .type store_one,@function
store_one:
  s_load_b64 s[2:3], s[0:1], 0x0
  v_mov_b32 v1, 1
  v_lshlrev_b32 v0, 2, v0
  s_wait_kmcnt 0
  global_store_b32 v0, v1, s[2:3]
  s_endpgm
.Lstore_one_end:
  .size store_one, .Lstore_one_end-store_one

  .rodata
  .p2align 6
  .amdhsa_kernel first
    .amdhsa_next_free_vgpr 1
    .amdhsa_next_free_sgpr 1
    .amdhsa_workgroup_processor_mode 0
  .end_amdhsa_kernel

  .p2align 6
  .amdhsa_kernel store_one
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_next_free_vgpr 10
    .amdhsa_next_free_sgpr 4
    .amdhsa_group_segment_fixed_size 256
    .amdhsa_private_segment_fixed_size 16
    .amdhsa_kernarg_size 24
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_system_sgpr_workgroup_id_y 1
    .amdhsa_system_sgpr_workgroup_id_z 0
    .amdhsa_system_vgpr_workitem_id 1
    .amdhsa_workgroup_processor_mode 1
  .end_amdhsa_kernel

  .amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name: store_one
    .symbol: store_one.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 256
    .private_segment_fixed_size: 16
    .wavefront_size: 32
    .sgpr_count: 4
    .vgpr_count: 10
    .max_flat_workgroup_size: 128
    .reqd_workgroup_size: [ 32, 2, 1 ]
    .args:
      - { .name: out, .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global, .type_name: 'int*' }
      - { .name: count, .offset: 8, .size: 4, .value_kind: by_value, .type_name: uint }
      - { .offset: 16, .size: 4, .value_kind: hidden_block_count_x }
  - .name: first
    .symbol: first.kd
    .kernarg_segment_size: 0
    .kernarg_segment_align: 4
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .sgpr_count: 1
    .vgpr_count: 1
    .max_flat_workgroup_size: 256
    .args: []
  .end_amdgpu_metadata
"""

ASM_NO_META = """
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
  .text
  .globl bare
  .p2align 8
  .type bare,@function
bare:
  s_endpgm
.Lbare_end:
  .size bare, .Lbare_end-bare
  .rodata
  .p2align 6
  .amdhsa_kernel bare
    .amdhsa_next_free_vgpr 17
    .amdhsa_next_free_sgpr 1
  .end_amdhsa_kernel
"""

CL_TWO = """
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void scale(__global float *a, float s, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x();
  if (i < n) a[i] *= s;
}
__kernel void other(__global int *a) { a[0] = 1; }
"""

CL_CONST = """
__constant float tab[8] = {1, 2, 3, 4, 5, 6, 7, 8.5f};
__constant float *__constant ptrs[2] = {&tab[0], &tab[4]};
__kernel void lut(__global float *a, __global const uint *idx) {
  uint i = __builtin_amdgcn_workitem_id_x();
  a[i] = ptrs[idx[i] & 1][i & 3];
}
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(toolchain, "CACHE_DIR", tmp_path / "cache")


def build(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return toolchain.build(p)


def objdump_symbols(path):
    """Function addresses as llvm-objdump-19 sees them."""
    out = subprocess.run([toolchain.find_tool("llvm-objdump"), "-d", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return {m.group(2): int(m.group(1), 16) for m in re.finditer(r"^([0-9a-f]+) <([^>]+)>:", out, re.M)}


def mc_encode(line):
    out = subprocess.run([toolchain.find_tool("llvm-mc"), "-triple=amdgcn-amd-amdhsa",
                          "-mcpu=gfx1200", "-show-encoding"], input=line + "\n",
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"encoding: \[([^\]]*)\]", out)
    return bytes(int(b, 16) for b in m.group(1).split(","))


def test_assembly_kernel_descriptor_and_metadata(tmp_path):
    path = build(tmp_path, "k.s", ASM_META)
    co = CodeObject(path)
    assert sorted(co.kernels) == ["first", "store_one"]
    k = co.kernel("store_one")
    assert isinstance(k, KernelInfo)
    addrs = objdump_symbols(path)
    assert k.entry == addrs["store_one"]
    assert co.kernel("first").entry == addrs["first"]
    # The bytes at the entry are the first instruction, as llvm-mc encodes it.
    off = k.entry - k.code_base
    assert k.code[off:off + 8] == mc_encode("s_load_b64 s[2:3], s[0:1], 0x0")
    assert k.code_size == 36
    assert k.group_segment_size == k.lds_bytes == 256
    assert k.private_segment_size == 16
    assert k.kernarg_size == 24
    assert k.vgpr_count == 10
    assert k.vgpr_alloc == 16           # ceil(10 / 8) granules of 8
    assert k.rsrc1 & 0x3F == 1
    assert k.sgpr_count == 4
    assert k.user_sgpr_count == 2       # the kernarg pointer
    assert k.kernarg_ptr and k.wave32
    assert k.workgroup_id_enable == (True, True, False)
    assert k.workitem_id_enable == 1
    assert k.wgp_mode is True
    assert co.kernel("first").wgp_mode is False
    assert k.reqd_workgroup_size == (32, 2, 1)
    assert k.max_flat_workgroup_size == 128
    assert k.kernarg_align == 8
    names = [(a.name, a.offset, a.size, a.value_kind) for a in k.args]
    assert names == [("out", 0, 8, "global_buffer"), ("count", 8, 4, "by_value"),
                     (None, 16, 4, "hidden_block_count_x")]
    assert k.args[0].address_space == "global" and k.args[0].type_name == "int*"
    assert k.args[0].is_buffer and not k.args[1].is_buffer
    assert [a.name for a in k.explicit_args] == ["out", "count"]
    assert [a.value_kind for a in k.hidden_args] == ["hidden_block_count_x"]
    assert co.kernel("first").args == ()


def test_descriptor_bytes_are_in_the_image(tmp_path):
    k = CodeObject(build(tmp_path, "k.s", ASM_META)).kernel("store_one")
    assert len(k.descriptor) == 64
    assert k.image[k.descriptor_address:k.descriptor_address + 64] == k.descriptor
    assert struct.unpack_from("<q", k.descriptor, 16)[0] == k.entry - k.descriptor_address
    assert k.image[k.code_base:k.code_base + len(k.code)] == k.code


def test_assembly_without_metadata_has_no_args(tmp_path):
    k = CodeObject(build(tmp_path, "bare.s", ASM_NO_META)).kernel("bare")
    assert k.args == ()
    assert k.sgpr_count is None
    assert k.vgpr_alloc == 24 and k.vgpr_count == 24  # 17 VGPRs -> 3 granules
    assert k.metadata == {}
    assert k.wgp_mode is True  # llvm-mc's default for gfx12 unless the directive says 0


def test_unlinked_object_is_linked_first(tmp_path):
    src = tmp_path / "k.s"
    src.write_text(ASM_META)
    obj = tmp_path / "k.o"
    subprocess.run([toolchain.find_tool("llvm-mc"), *toolchain.ASM_FLAGS, str(src), "-o", str(obj)],
                   check=True)
    co = load_code_object(obj)
    assert co.path == obj and co.linked_path != obj
    linked = CodeObject(toolchain.build(src))
    assert co.kernel("store_one").entry == linked.kernel("store_one").entry
    assert co.kernel("store_one").descriptor == linked.kernel("store_one").descriptor


def test_opencl_kernels_and_key_error(tmp_path):
    path = build(tmp_path, "two.cl", CL_TWO)
    co = CodeObject(path)
    assert sorted(co.kernels) == ["other", "scale"]
    k = co.kernel("scale")
    assert k.entry == objdump_symbols(path)["scale"]
    assert k.reqd_workgroup_size == (64, 1, 1)
    assert [(a.offset, a.size, a.value_kind, a.type_name) for a in k.args] == [
        (0, 8, "global_buffer", "float*"), (8, 4, "by_value", "float"), (12, 4, "by_value", "uint")]
    assert k.kernarg_size == 16
    assert k.wgp_mode is False  # -mcumode
    assert k.vgpr_count == k.metadata[".vgpr_count"]
    assert k.vgpr_alloc == (k.rsrc1 & 0x3F) * 8 + 8
    with pytest.raises(KeyError) as ei:
        co.kernel("nope")
    assert "other" in str(ei.value) and "scale" in str(ei.value)


def test_constant_data_and_relative_relocations(tmp_path):
    k = CodeObject(build(tmp_path, "lut.cl", CL_CONST)).kernel("lut")
    assert len(k.relocations) == 2
    base = 0x40000
    img = k.image_at(base)
    assert len(img) == len(k.image)
    ptrs = []
    for off, addend in k.relocations:
        value = struct.unpack_from("<Q", img, off)[0]
        assert value == base + addend
        ptrs.append(addend)
    firsts = sorted(struct.unpack_from("<f", k.image, a)[0] for a in ptrs)
    assert firsts == [1.0, 5.0]  # &tab[0] and &tab[4]
    # unrelocated image keeps the link-time value (0 base) there
    assert struct.unpack_from("<Q", k.image, k.relocations[0][0])[0] in (0, k.relocations[0][1])


def test_rejects_non_elf_and_foreign_elf(tmp_path):
    junk = tmp_path / "junk.hsaco"
    junk.write_bytes(b"not an elf at all")
    with pytest.raises(CodeObjectError, match="not an ELF"):
        CodeObject(junk)
    host_elf = os.path.realpath(sys.executable)  # an x86-64/arm64 ELF: right format, wrong machine
    with pytest.raises(CodeObjectError, match="e_machine"):
        CodeObject(host_elf)
    with pytest.raises(FileNotFoundError):
        CodeObject(tmp_path / "absent.hsaco")


def test_rejects_other_gfx_targets(tmp_path):
    src = tmp_path / "old.s"
    src.write_text("  .text\n  s_endpgm\n")
    obj = tmp_path / "old.o"
    subprocess.run([toolchain.find_tool("llvm-mc"), "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100",
                    "-filetype=obj", str(src), "-o", str(obj)], check=True)
    with pytest.raises(CodeObjectError, match="gfx1200"):
        CodeObject(obj)
