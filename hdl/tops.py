"""The blocks that can be written out as Verilog on their own (``dcu verilog --top NAME``).

Each entry builds a fresh component from a :class:`~hdl.config.DCUConfig` (a design with a
``Memory`` can be elaborated only once).
"""
from __future__ import annotations

from typing import Callable

from .config import DCUConfig

__all__ = ["TOPS", "make_top"]


def _dcu(cfg):
    from .dcu import DCU
    return DCU(cfg)


def _hosttop(cfg):
    from .hosttop import HostTop
    return HostTop(cfg, mem_bytes=64 * 1024, mem_base=0x1000_0000)


def _simd(cfg):
    from .simd import SIMD
    return SIMD(cfg, external_barrier=True, external_trans=cfg.trans_shared)   # as the DCU has it


def _lds(cfg):
    from .lds import LDS
    return LDS(cfg)


def _l0(cfg):
    from .vmem import VecMemUnit
    return VecMemUnit(cfg)


def _l0_map(cfg):
    from .vmem import VecMemUnit
    return VecMemUnit(cfg, map_ranges=16)    # as the simulation hosts build it (dcu.memmodel.HOST_MAP_RANGES)


def _icache(cfg):
    from .icache import ICache
    return ICache(cfg)


def _scache(cfg):
    from .scache import ScalarCache
    return ScalarCache(cfg)


def _dispatcher(cfg):
    from .dispatch import Dispatcher
    return Dispatcher(cfg)


def _barrier(cfg):
    from .barrier import WorkgroupBarrier
    return WorkgroupBarrier(cfg)


def _valu_fp(cfg):
    from .valu_fp import VALUFloat
    return VALUFloat(cfg.lanes, stages=cfg.valu_stages)


def _valu_int(cfg):
    from .valu_int import VALUInt
    from .valu_int_shared import VALUIntShared
    return VALUIntShared(cfg.lanes, stages=cfg.valu_stages) if cfg.shared_int_datapath else VALUInt(cfg.lanes)


def _salu(cfg):
    from .salu import SALU
    from .salu_shared import SALUShared
    return SALUShared() if cfg.shared_int_datapath else SALU()


def _trans(cfg):
    from .trans import TransUnit
    return TransUnit(cfg)


def _trans_shared(cfg):
    from .transshare import SharedTrans
    return SharedTrans(cfg, cfg.simds)


TOPS: dict[str, tuple[Callable, str]] = {
    "dcu": (_dcu, "the dual compute unit (hdl/dcu.py)"),
    "hosttop": (_hosttop, "the DCU with a 64 KiB RTL memory and a host port (hdl/hosttop.py)"),
    "simd": (_simd, "one SIMD32 with its wave slots, register files and ALUs (hdl/simd.py)"),
    "lds": (_lds, "the two-half LDS (hdl/lds.py)"),
    "l0": (_l0, "one CU's vector memory unit: coalescer, L0, return queues (hdl/vmem.py)"),
    "l0_map": (_l0_map, "the vector memory unit with a 16-range buffer map, as HostTop's simulations have it"),
    "icache": (_icache, "the shared instruction cache (hdl/icache.py)"),
    "scache": (_scache, "the shared scalar cache (hdl/scache.py)"),
    "dispatcher": (_dispatcher, "the workgroup dispatcher (hdl/dispatch.py)"),
    "barrier": (_barrier, "the workgroup barrier unit (hdl/barrier.py)"),
    "valu_fp": (_valu_fp, "the FP32 vector ALU (hdl/valu_fp.py)"),
    "valu_int": (_valu_int, "the integer vector ALU (hdl/valu_int.py)"),
    "salu": (_salu, "the scalar ALU (hdl/salu.py, hdl/salu_shared.py)"),
    "trans": (_trans, "the transcendental unit (hdl/trans.py)"),
    "trans_shared": (_trans_shared, "the DCU's shared transcendental unit and its arbiter (hdl/transshare.py)"),
}


def make_top(name: str, config: DCUConfig):
    """A fresh component for block ``name`` of :data:`TOPS`; ValueError names the choices."""
    try:
        factory, _ = TOPS[name]
    except KeyError:
        raise ValueError(f"unknown top {name!r}; choose one of {', '.join(TOPS)}") from None
    return factory(config)
