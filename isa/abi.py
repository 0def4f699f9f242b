"""The dispatch of one kernel as the gfx12 kernel ABI hands it to a DCU.

The launcher (``dcu.prepare``) fills a :class:`Dispatch` from the kernel descriptor and the
launch arguments; the reference model (``sim.model``) and the RTL backends both start their
waves from it, so it lives here, beside the ISA tables both of them import, rather than in
either (LLVM AMDGPUUsage, "Code Object V5 Metadata", "Kernel Descriptor" and "Initial Kernel
Execution State").
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Dispatch", "DEFAULT_MODE"]

#: MODE[7:0] of a wave whose kernel descriptor keeps clang-19's defaults for OpenCL C on
#: gfx1200: round to nearest even and denormals kept, in every precision (FLOAT_ROUND_MODE_*
#: 0, FLOAT_DENORM_MODE_* 3).
DEFAULT_MODE = 0xF0


@dataclass
class Dispatch:
    """One kernel dispatch: where its code starts, its grid, and what each wave starts with.

    The two instruction budgets bound the reference model's run; the RTL backends bound
    theirs in cycles instead.
    """
    entry: int                       # byte address of the first instruction
    grid: tuple[int, int, int]       # workgroups per dimension
    block: tuple[int, int, int]      # work-items per workgroup per dimension
    vgprs: int                       # VGPRs allocated to each wave
    lds_bytes: int                   # LDS allocated to each workgroup
    kernarg_addr: int = 0
    user_sgprs: dict[int, int] = field(default_factory=dict)  # SGPR index -> initial value
    workitem_id_dims: int = 3        # how many of v0's packed x/y/z fields the kernel enabled
    max_instructions: int = 50_000_000
    scratch_lane_bytes: int = 0      # private segment bytes per lane (0: none)
    scratch_base: int = 0            # private segments of a workgroup's waves, one after the other
    max_wave_instructions: int | None = None   # stop a wave (a spinning one) after this many
    mode: int = DEFAULT_MODE         # MODE[7:0] each wave starts with (descriptor FLOAT_* fields)
