"""Kernel admission: whether a kernel and workgroup shape fit a DCU configuration, and how
many of its waves a SIMD keeps resident (occupancy).

Every backend launches through these checks, so a kernel that asks for more VGPRs, SGPRs,
LDS or wave slots than the configuration has is refused before launch, with the numbers.
Occupancy is the fewest waves any one resource allows, the rule of LLVM AMDGPU's estimate
(``AMDGPUSubtarget::getOccupancyWithLocalMemSize``, ``GCNSubtarget::getOccupancyWithNumVGPRs``).
"""

from __future__ import annotations

import math
from typing import Any

from hdl.config import MAX_VGPRS_PER_WAVE, MAX_WORKGROUP_SIZE, WAVE_SIZE, DCUConfig

__all__ = ["ResourceError", "VCC_SGPRS", "block_dims", "vgpr_alloc", "occupancy_limits", "occupancy",
           "check_kernel"]

# LLVM's metadata `.sgpr_count` includes VCC's two registers, which live beside
# s0..s105 (encodings 106/107), so the metadata count may exceed the addressable
# SGPRs by this much.
VCC_SGPRS = 2


class ResourceError(ValueError):
    """A kernel or launch needs more resources than the configuration has."""


def block_dims(block: int | tuple[int, ...] | list[int]) -> tuple[int, int, int]:
    """A workgroup shape as (x, y, z), from 1 to 3 positive ints."""
    dims = (block,) if isinstance(block, int) else tuple(block)
    if not 1 <= len(dims) <= 3 or any(not isinstance(d, int) or d < 1 for d in dims):
        raise ValueError(f"block must be 1 to 3 positive ints, got {block!r}")
    return tuple(dims) + (1,) * (3 - len(dims))  # type: ignore[return-value]


def vgpr_alloc(cfg: DCUConfig, vgprs: int) -> int:
    """VGPRs allocated for a wave using ``vgprs``: rounded up to the granule (at least one)."""
    if vgprs < 0:
        raise ValueError(f"vgprs must be >= 0, got {vgprs}")
    g = cfg.vgpr_granule
    return max(1, math.ceil(vgprs / g)) * g


def occupancy_limits(cfg: DCUConfig, vgprs: int, lds_bytes: int = 0, waves_per_workgroup: int = 1,
                     wgp: bool = False) -> dict[str, int]:
    """Waves per SIMD allowed by each resource on its own.

    Parameters
    ----------
    cfg : DCUConfig
        The configuration.
    vgprs : int
        VGPRs per wave.
    lds_bytes : int, optional
        LDS bytes per workgroup.
    waves_per_workgroup : int, optional
        Waves in one workgroup.
    wgp : bool, optional
        WGP mode: a workgroup may use both CUs' SIMDs and both LDS halves.

    Returns
    -------
    dict
        ``{"wave_slots": n, "vgprs": n, "lds": n}``; ``"lds"`` is the wave
        slots when the kernel uses no LDS. The LDS limit counts whole
        workgroups, ``floor(LDS available / lds_bytes)``, spread over the
        SIMDs that share that LDS, rounded up like LLVM's occupancy estimate.
    """
    if waves_per_workgroup < 1:
        raise ValueError(f"waves_per_workgroup must be >= 1, got {waves_per_workgroup}")
    if lds_bytes < 0:
        raise ValueError(f"lds_bytes must be >= 0, got {lds_bytes}")
    by_vgpr = cfg.vgprs_per_simd // vgpr_alloc(cfg, vgprs)
    if vgprs > MAX_VGPRS_PER_WAVE:
        by_vgpr = 0
    if lds_bytes == 0:
        by_lds = cfg.wave_slots
    else:
        sharing = cfg.simds if wgp else cfg.simds_per_cu
        groups = cfg.lds_bytes_per_workgroup(wgp) // lds_bytes
        by_lds = math.ceil(groups * waves_per_workgroup / sharing)
    return {"wave_slots": cfg.wave_slots, "vgprs": by_vgpr, "lds": min(by_lds, cfg.wave_slots)}


def occupancy(cfg: DCUConfig, vgprs: int, lds_bytes: int = 0, waves_per_workgroup: int = 1,
              wgp: bool = False) -> int:
    """Waves per SIMD a kernel can keep resident (0 if it cannot run at all).

    ``min(wave_slots, floor(vgprs_per_simd / vgpr_alloc(vgprs)), LDS limit)``;
    see :func:`occupancy_limits` for the parameters and the LDS rule.
    """
    return min(occupancy_limits(cfg, vgprs, lds_bytes, waves_per_workgroup, wgp).values())


def check_kernel(cfg: DCUConfig, kernel: Any, block: int | tuple[int, ...] | list[int],
                 wgp: bool | None = None) -> int:
    """Check that a kernel and workgroup shape fit the configuration.

    Parameters
    ----------
    cfg : DCUConfig
        The configuration.
    kernel : KernelInfo-like
        Anything with ``name``, ``vgpr_count``, ``sgpr_count`` (may be None),
        ``group_segment_size`` and optionally ``reqd_workgroup_size``,
        ``max_flat_workgroup_size`` and ``wgp_mode``
        (:class:`dcu.codeobj.KernelInfo`).
    block : int or tuple of int
        Workgroup size (x[, y[, z]]).
    wgp : bool, optional
        WGP mode; defaults to the kernel's ``wgp_mode``.

    Returns
    -------
    int
        The occupancy (waves per SIMD) of this kernel.

    Raises
    ------
    ResourceError
        With the numbers, when the kernel needs more VGPRs (more than 256 or
        than a SIMD has), SGPRs or LDS than this configuration has, when the
        block does not match the kernel's required or maximum size, or when
        one workgroup has more waves than the CU (both CUs in WGP mode) can hold.
    """
    name = getattr(kernel, "name", "?")
    dims = block_dims(block)
    threads = math.prod(dims)
    waves = math.ceil(threads / WAVE_SIZE)
    if wgp is None:
        wgp = bool(getattr(kernel, "wgp_mode", False))
    where = f"kernel {name!r} on config {cfg.name!r}"

    vgprs = int(kernel.vgpr_count)
    if vgprs > MAX_VGPRS_PER_WAVE:
        raise ResourceError(f"{where}: needs {vgprs} VGPRs per wave, at most "
                            f"{MAX_VGPRS_PER_WAVE} are addressable")
    alloc = vgpr_alloc(cfg, vgprs)
    if alloc > cfg.vgprs_per_simd:
        raise ResourceError(f"{where}: needs {vgprs} VGPRs (allocated {alloc}) per wave, "
                            f"a SIMD has {cfg.vgprs_per_simd}")
    sgprs = getattr(kernel, "sgpr_count", None)
    if sgprs is not None and sgprs > cfg.sgprs_per_wave + VCC_SGPRS:
        raise ResourceError(f"{where}: needs {sgprs} SGPRs (VCC included), a wave has "
                            f"{cfg.sgprs_per_wave} + {VCC_SGPRS} for VCC")
    lds = int(getattr(kernel, "group_segment_size", 0))
    avail = cfg.lds_bytes_per_workgroup(wgp)
    if lds > avail:
        raise ResourceError(f"{where}: needs {lds} bytes of LDS per workgroup, "
                            f"{'WGP' if wgp else 'CU'} mode gives {avail}")
    reqd = getattr(kernel, "reqd_workgroup_size", None)
    if reqd and tuple(reqd) != dims:
        raise ResourceError(f"{where}: block {dims} differs from the kernel's "
                            f"reqd_work_group_size {tuple(reqd)}")
    mfw = getattr(kernel, "max_flat_workgroup_size", None) or MAX_WORKGROUP_SIZE
    if threads > mfw:
        raise ResourceError(f"{where}: block of {threads} work-items exceeds the kernel's "
                            f"maximum workgroup size {mfw}")
    occ = occupancy(cfg, vgprs, lds, waves, wgp)
    sharing = cfg.simds if wgp else cfg.simds_per_cu
    per_simd_cap = min(cfg.wave_slots, cfg.vgprs_per_simd // alloc)
    if math.ceil(waves / sharing) > per_simd_cap:
        slots = f"{cfg.wave_slots} slot" + "s" * (cfg.wave_slots != 1)
        raise ResourceError(
            f"{where}: a workgroup of {threads} work-items is {waves} waves; the "
            f"{'DCU' if wgp else 'CU'} holds {sharing * per_simd_cap} waves of this kernel "
            f"({sharing} SIMDs x {per_simd_cap}: {slots}, "
            f"{cfg.vgprs_per_simd} VGPRs / {alloc})")
    return occ
