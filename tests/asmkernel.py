"""A gfx1200 assembly kernel (code and descriptor, no metadata) for tests that launch hand-written
instructions through ``dcu.launch``: buffer arguments are 8-byte addresses from kernarg offset 0
(s[0:1] holds the kernarg address), the workgroup id is in ttmp9 and v0 holds the work-item id.
The float mode is clang's (denormals kept: the assembler's default FLOAT_DENORM_MODE_32 is 0)."""
from __future__ import annotations

from pathlib import Path

import dcu


def source(name: str, body: str, *, vgprs: int = 32, sgprs: int = 32, lds: int = 0,
           private: int = 0) -> str:
    """The ``.s`` text of kernel ``name`` running ``body`` (ending in s_endpgm); ``private`` is
    the private segment's fixed size in bytes per lane, ``lds`` the group segment's."""
    return f"""
  .amdgcn_target "amdgcn-amd-amdhsa--gfx1200"
  .text
  .globl {name}
  .p2align 8
  .type {name},@function
{name}:
{body}
.L{name}_end:
  .size {name}, .L{name}_end-{name}
  .rodata
  .p2align 6
  .amdhsa_kernel {name}
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_user_sgpr_count 2
    .amdhsa_wavefront_size32 1
    .amdhsa_system_sgpr_workgroup_id_x 1
    .amdhsa_next_free_vgpr {vgprs}
    .amdhsa_next_free_sgpr {sgprs}
    .amdhsa_group_segment_fixed_size {lds}
    .amdhsa_private_segment_fixed_size {private}
    .amdhsa_enable_private_segment {int(private > 0)}
    .amdhsa_workgroup_processor_mode 0
    .amdhsa_float_denorm_mode_32 3
  .end_amdhsa_kernel
"""


def load(tmp_path: Path, name: str, body: str, **kw):
    """Assemble and load the kernel (a ``dcu.codeobj.KernelInfo``)."""
    path = tmp_path / f"{name}.s"
    path.write_text(source(name, body, **kw))
    return dcu.load_program(path).kernel(name)
