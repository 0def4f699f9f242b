"""The blocks that can be written out as Verilog on their own (``dcu verilog --top NAME``).

Each entry builds a fresh component from a :class:`~hdl.config.DCUConfig` (a design with a
``Memory`` can be elaborated only once).
"""
from __future__ import annotations

from typing import Callable

from .config import DCUConfig

__all__ = ["TOPS", "make_top"]


def _dcu(cfg):
    from .top.dcu import DCU
    return DCU(cfg)


def _hosttop(cfg):
    from .top.hosttop import HostTop
    return HostTop(cfg, mem_bytes=64 * 1024, mem_base=0x1000_0000)


def _simd(cfg):
    from .simd.simd import SIMD
    return SIMD(cfg)


def _lds(cfg):
    from .mem.lds import LDS
    return LDS(cfg)


def _l0(cfg):
    from .mem.vmem import VecMemUnit
    return VecMemUnit(cfg)


def _l0_map(cfg):
    from .mem.vmem import VecMemUnit
    return VecMemUnit(cfg, map_ranges=16)    # as the simulation hosts build it (dcu.memmodel.HOST_MAP_RANGES)


def _icache(cfg):
    from .mem.icache import ICache
    return ICache(cfg)


def _scache(cfg):
    from .mem.scache import ScalarCache
    return ScalarCache(cfg)


def _dispatcher(cfg):
    from .top.dispatch import Dispatcher
    return Dispatcher(cfg)


def _barrier(cfg):
    from .top.barrier import WorkgroupBarrier
    return WorkgroupBarrier(cfg)


def _valu_fp(cfg):
    from .simd.valu_fp import VALUFloat
    return VALUFloat(cfg.lanes, stages=3)   # as the SIMD has it


def _valu_int(cfg):
    from .simd.valu_int import VALUInt
    return VALUInt(cfg.lanes)


def _scalar_alu(cfg):
    from .simd.scalar_alu import ScalarALU
    return ScalarALU()


def _decode(cfg):
    from amaranth.utils import ceil_log2
    from .simd.decode import DecodeStage
    return DecodeStage(tag_width=max(1, ceil_log2(cfg.wave_ids)))


def _frontend(cfg):
    from .simd.frontend import FrontEnd
    return FrontEnd(cfg)


def _vgpr(cfg):
    from .simd.vgpr import VgprBanks
    return VgprBanks(cfg)


def _trans_shared(cfg):
    from .simd.transshare import SharedTrans
    return SharedTrans(cfg, cfg.simds)


TOPS: dict[str, tuple[Callable, str]] = {
    "dcu": (_dcu, "the dual compute unit (hdl/top/dcu.py)"),
    "hosttop": (_hosttop, "the DCU with a 64 KiB RTL memory and a host port (hdl/top/hosttop.py)"),
    "simd": (_simd, "one SIMD32: front end, issue and scalar pipe, vector pipe (hdl/simd/simd.py)"),
    "lds": (_lds, "the two-half LDS (hdl/mem/lds.py)"),
    "l0": (_l0, "one CU's vector memory unit: coalescer, L0, return queues (hdl/mem/vmem.py)"),
    "l0_map": (_l0_map, "the vector memory unit with a 16-range buffer map, as HostTop's simulations have it"),
    "icache": (_icache, "the shared instruction cache (hdl/mem/icache.py)"),
    "scache": (_scache, "the shared scalar cache (hdl/mem/scache.py)"),
    "dispatcher": (_dispatcher, "the workgroup dispatcher (hdl/top/dispatch.py)"),
    "barrier": (_barrier, "the workgroup barrier unit (hdl/top/barrier.py)"),
    "valu_fp": (_valu_fp, "the FP32 vector ALU, the SIMD's lanes (hdl/simd/valu_fp.py)"),
    "valu_int": (_valu_int, "the integer vector ALU, the SIMD's lanes (hdl/simd/valu_int.py)"),
    "scalar_alu": (_scalar_alu, "the SIMD's scalar ALU: 32 bits a cycle (hdl/simd/scalar_alu.py)"),
    "decode": (_decode, "the SIMD's decode stage: one decoder from two ROMs (hdl/simd/decode.py)"),
    "frontend": (_frontend, "the SIMD's fetch, instruction buffers, wave selection and decode "
                            "(hdl/simd/frontend.py)"),
    "vgpr": (_vgpr, "the SIMD's VGPR file: two banks of RAM rows (hdl/simd/vgpr.py)"),
    "trans_shared": (_trans_shared, "the DCU's shared transcendental unit and its arbiter (hdl/simd/transshare.py)"),
}


def make_top(name: str, config: DCUConfig):
    """A fresh component for block ``name`` of :data:`TOPS`; ValueError names the choices."""
    try:
        factory, _ = TOPS[name]
    except KeyError:
        raise ValueError(f"unknown top {name!r}; choose one of {', '.join(TOPS)}") from None
    return factory(config)
