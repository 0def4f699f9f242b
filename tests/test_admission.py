"""dcu.admission: occupancy arithmetic and the kernel resource checks made before launch."""

from types import SimpleNamespace

import pytest

from dcu.admission import ResourceError, check_kernel, occupancy, occupancy_limits, vgpr_alloc
from hdl.config import DCUConfig, get_config


def kern(vgprs=8, sgprs=10, lds=0, reqd=None, mfw=None, wgp=False, name="k"):
    return SimpleNamespace(name=name, vgpr_count=vgprs, sgpr_count=sgprs, group_segment_size=lds,
                           reqd_workgroup_size=reqd, max_flat_workgroup_size=mfw, wgp_mode=wgp)


@pytest.mark.parametrize("vgprs,alloc", [(0, 8), (1, 8), (8, 8), (9, 16), (64, 64), (65, 72), (256, 256)])
def test_vgpr_alloc_rounds_to_granule(vgprs, alloc):
    assert vgpr_alloc(get_config("default"), vgprs) == alloc


@pytest.mark.parametrize("preset,vgprs,expected", [
    ("default", 8, 4),     # wave slots limit
    ("default", 64, 4),    # 256 / 64 = 4
    ("default", 65, 3),    # 256 / 72 = 3
    ("default", 129, 1),   # 256 / 136 = 1
    ("rdna1", 24, 20),     # 1024 / 24 = 42, 20 slots
    ("rdna1", 128, 8),
    ("rdna1", 256, 4),
    ("tiny", 100, 1),
])
def test_occupancy_vgpr_limit(preset, vgprs, expected):
    assert occupancy(get_config(preset), vgprs) == expected


def test_occupancy_lds_limit_cu_and_wgp():
    d = get_config("default")
    # 8 KiB per workgroup of 2 waves: 2 groups in a 16 KiB half -> 4 waves over 2 SIMDs
    assert occupancy_limits(d, 8, 8192, 2)["lds"] == 2
    assert occupancy(d, 8, 8192, 2) == 2
    # WGP mode: 32 KiB shared by 4 SIMDs -> 4 groups x 2 waves / 4 = 2
    assert occupancy(d, 8, 8192, 2, wgp=True) == 2
    assert occupancy(d, 8, 16384, 1) == 1
    assert occupancy(d, 8, 16385, 1) == 0  # does not fit a half
    assert occupancy(d, 8, 16385, 1, wgp=True) == 1


def test_occupancy_matches_the_cdna2_example():
    # AMD's published CDNA 2 (MI200) LDS occupancy example: 64 KB LDS per CU, 4 SIMDs, 8 waves
    # per SIMD. 64 KB per 128-work-item (2 x wave64) workgroup -> 1 wave per SIMD;
    # 2 KB per workgroup -> 8.
    cdna = DCUConfig(cus=1, simds_per_cu=4, wave_slots=8, vgprs_per_simd=512,
                     lds_bytes_per_half=65536)
    assert occupancy(cdna, 42, 65536, 2) == 1
    assert occupancy(cdna, 42, 2048, 2) == 8


def test_check_kernel_accepts_and_returns_occupancy():
    assert check_kernel(get_config("default"), kern(vgprs=64), (64,)) == 4
    assert check_kernel(get_config("rdna1"), kern(vgprs=40, lds=4096), 256) == 20


@pytest.mark.parametrize("k,block,preset,needle", [
    (kern(vgprs=257), (32,), "rdna1", "257 VGPRs"),
    (kern(vgprs=136), (32,), "tiny", "a SIMD has 128"),
    (kern(sgprs=109), (32,), "default", "109 SGPRs"),
    (kern(lds=16385), (32,), "default", "16385 bytes of LDS"),
    (kern(reqd=(64, 1, 1)), (32,), "default", "reqd_work_group_size"),
    (kern(mfw=64), (128,), "default", "maximum workgroup size 64"),
    (kern(), (160,), "tiny", "5 waves"),       # tiny CU: 2 SIMDs x 2 slots = 4 waves
    (kern(vgprs=129), (96,), "default", "3 waves"),  # 1 wave/SIMD by VGPRs, 2 SIMDs
])
def test_check_kernel_resource_errors(k, block, preset, needle):
    with pytest.raises(ResourceError) as ei:
        check_kernel(get_config(preset), k, block)
    assert needle in str(ei.value)
    assert "'k'" in str(ei.value) and preset in str(ei.value)


def test_check_kernel_vcc_allowance_and_wgp_mode():
    d = get_config("default")
    check_kernel(d, kern(sgprs=108), (32,))          # 106 + VCC
    check_kernel(d, kern(sgprs=None), (32,))         # assembly without metadata
    check_kernel(d, kern(lds=20000, wgp=True), (32,))  # both halves in WGP mode
    with pytest.raises(ResourceError):
        check_kernel(d, kern(lds=20000), (32,))
    with pytest.raises(ResourceError):
        check_kernel(d, kern(lds=20000, wgp=True), (32,), wgp=False)
    # a 16-wave workgroup fits the DCU in WGP mode (4 SIMDs x 4 slots), not one CU
    check_kernel(d, kern(), (512,), wgp=True)
    with pytest.raises(ResourceError):
        check_kernel(d, kern(), (512,), wgp=False)


def test_check_kernel_rejects_bad_block():
    with pytest.raises(ValueError):
        check_kernel(get_config("default"), kern(), (0,))
    with pytest.raises(ValueError):
        check_kernel(get_config("default"), kern(), (1, 1, 1, 1))


def test_check_kernel_with_a_compiled_kernel(tmp_path, monkeypatch):
    from dcu import toolchain
    from dcu.codeobj import CodeObject

    monkeypatch.setattr(toolchain, "CACHE_DIR", tmp_path / "cache")
    src = tmp_path / "lds.cl"
    src.write_text("""
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void k(__global uint *a) {
  __local uint tmp[1024];            // 4 KiB of LDS
  uint l = __builtin_amdgcn_workitem_id_x();
  tmp[l] = a[l];
  __builtin_amdgcn_s_barrier();
  a[l] = tmp[63 - l];
}
""")
    k = CodeObject(toolchain.build(src)).kernel("k")
    assert k.group_segment_size == 4096
    assert check_kernel(get_config("default"), k, (64, 1, 1)) == 4
    # tiny: 4 KiB half -> one workgroup (2 waves over 2 SIMDs) -> 1 wave per SIMD
    assert check_kernel(get_config("tiny"), k, (64, 1, 1)) == 1
    with pytest.raises(ResourceError):
        check_kernel(get_config("tiny"), k, (32, 1, 1))
