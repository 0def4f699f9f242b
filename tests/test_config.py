"""hdl.config: presets, groups, validation and variants."""

import dataclasses

import pytest

from hdl.config import PRESETS, ConfigError, DCUConfig, Implementation, Latencies, Policies, Sizes, get_config


def test_preset_names_and_sizes():
    assert set(PRESETS) == {"default", "tiny", "rdna1", "fpga"}
    d, t, r, f = (get_config(n) for n in ("default", "tiny", "rdna1", "fpga"))
    assert (d.cus, d.simds_per_cu, d.simds) == (2, 2, 4)
    assert (d.lanes, t.lanes, r.lanes, f.lanes) == (32, 32, 32, 4)
    assert (d.trans_lanes, f.trans_lanes) == (8, 1)
    assert (d.wave_slots, t.wave_slots, r.wave_slots, f.wave_slots) == (4, 2, 20, 2)
    assert (d.vgprs_per_simd, t.vgprs_per_simd, r.vgprs_per_simd, f.vgprs_per_simd) == (256, 128, 1024, 128)
    assert [c.lds_bytes_per_half for c in (d, t, r, f)] == [16384, 4096, 65536, 4096]
    assert [c.l0_bytes for c in (d, t, r, f)] == [4096, 2048, 16384, 2048]
    assert all(c.l0_ways == 4 and c.l0_line == 128 for c in (d, t, r, f))
    assert [c.lds_banks for c in (d, t, r, f)] == [32, 32, 32, 4]
    assert [c.coalesce_lanes for c in (d, t, r, f)] == [32, 32, 32, 4]
    assert [c.request_rows for c in (d, t, r, f)] == [1, 1, 1, 8]
    assert all(c.vgpr_granule == 8 and c.sgprs_per_wave == 106 for c in (d, t, r, f))
    assert all(c.scalar_cache_line == 64 and c.icache_line == 64 for c in (d, t, r, f))
    assert [c.fetch_bytes for c in (d, t, r, f)] == [64, 64, 64, 32]
    assert d.valu_dep_latency == 5
    assert f.valu_cycles == 8 and d.valu_cycles == 1
    assert d.l0_sets == 4096 // (4 * 128)
    assert r.return_order == "in_order" and d.return_order == "per_wave"
    # the FPGA's economies and stages
    for flag in ("shared_multiplier", "shared_mem_request", "coalesce_in_place",
                 "lds_in_place", "scalar_cache_stage", "coalesce_stage"):
        assert [getattr(c, flag) for c in (d, t, r, f)] == [False, False, False, True], flag
    assert all(c.name == n for n, c in PRESETS.items())


def test_request_rows_need_a_reader_in_place_and_a_row_per_ex_cycle():
    f = get_config("fpga")
    assert f.request_lanes == 4 and f.replace(request_in_rows=False).request_rows == 1
    assert f.replace(lanes=8, coalesce_lanes=8).request_rows == 4     # rows follow the lanes
    for change in (dict(lds_in_place=False), dict(coalesce_in_place=False), dict(shared_mem_request=False)):
        with pytest.raises(ConfigError, match="request_in_rows needs shared_mem_request"):
            f.replace(**change)
    with pytest.raises(ConfigError, match=r"lds_banks \(8\) must be at most lanes \(4\)"):
        f.replace(lds_banks=8)


def test_get_config_errors_list_presets():
    with pytest.raises(ConfigError) as ei:
        get_config("huge")
    for n in PRESETS:
        assert n in str(ei.value)
    cfg = DCUConfig()
    assert get_config(cfg) is cfg


def test_config_is_frozen_and_replace_validates():
    d = get_config("default")
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.lanes = 16  # type: ignore[misc]
    v = d.replace(lanes=16, coalesce_lanes=16, wave_policy="round_robin")
    assert v.lanes == 16 and v.valu_cycles == 2 and d.lanes == 32
    with pytest.raises(ConfigError, match="lanes must divide 32"):
        d.replace(lanes=3)
    with pytest.raises(ConfigError, match="return_order"):
        d.replace(return_order="random")
    # the SIMD takes memory returns a VGPR row at a time: a line request's lanes fit one
    with pytest.raises(ConfigError, match=r"coalesce_lanes \(32\) must be at most the lanes of a response beat \(8"):
        d.replace(lanes=8)
    assert d.replace(lanes=8, coalesce_lanes=8).resp_lanes == 8 and d.resp_lanes == 32
    with pytest.raises(ConfigError, match="scalar_cache_stage must be a bool"):
        d.replace(scalar_cache_stage=1)
    for gone in ("trans_shared", "trans_mul_regs"):      # one transcendental unit, no options
        with pytest.raises(ConfigError, match="unknown DCUConfig field"):
            d.replace(**{gone: 1})
    with pytest.raises(ConfigError, match="unknown DCUConfig field"):
        d.replace(lane=16)
    with pytest.raises(ConfigError, match="multiple of vgpr_granule"):
        d.replace(vgprs_per_simd=100)
    with pytest.raises(ConfigError, match="power-of-two number of sets"):
        d.replace(l0_bytes=3 * 1024)
    for bad in (16, 48, 128):   # a fetch is an aligned part of a cache line (32: the smallest tested)
        with pytest.raises(ConfigError, match="fetch_bytes must be a power of two from 32 to icache_line"):
            d.replace(fetch_bytes=bad)
    with pytest.raises(ConfigError, match="lds_banks is at least 4"):     # a window holds a lane's 4 dwords
        d.replace(lds_banks=2)
    for bad in (6, 64):
        with pytest.raises(ConfigError, match="lds_banks"):
            d.replace(lds_banks=bad)
    with pytest.raises(ConfigError, match="must be an int"):
        d.replace(wave_slots=2.5)
    with pytest.raises(ConfigError, match="> 0"):
        d.replace(wave_slots=0)
    with pytest.raises(ConfigError, match="coalesce_lanes is at most 32"):
        d.replace(coalesce_lanes=64)
    with pytest.raises(ConfigError, match="coalesce_lanes must be a power of two"):
        d.replace(coalesce_lanes=12)
    assert d.to_dict()["sizes"]["lds_bytes_per_half"] == 16384 and d.to_dict()["name"] == "default"


def test_settings_from_the_command_line():
    """``FIELD=VALUE`` strings (``dcu fpga --set``) read by the field's type, validated like
    ``replace``, the variant named after them; a malformed one names what is expected."""
    f = get_config("fpga")
    v = f.with_settings(["wave_slots=4", "request_in_rows=false", "coalesce_stage=0", "wave_policy=round_robin"])
    assert (v.wave_slots, v.request_in_rows, v.coalesce_stage, v.wave_policy) == (4, False, False, "round_robin")
    assert v.name == "fpga+wave_slots=4+request_in_rows=false+coalesce_stage=0+wave_policy=round_robin"
    assert v.lanes == f.lanes and f.with_settings([]) is f
    for bad, needle in ((["lanes"], "expected FIELD=VALUE"), (["lane=2"], "expected FIELD=VALUE"),
                        (["name=x"], "expected FIELD=VALUE"), (["lanes=two"], "lanes takes an integer"),
                        (["coalesce_stage=yes"], "takes true or false"), (["lanes=3"], "lanes must divide 32")):
        with pytest.raises(ConfigError, match=needle):
            f.with_settings(bad)


def test_lds_per_workgroup_cu_and_wgp_mode():
    d = get_config("default")
    assert d.lds_bytes_per_workgroup() == d.lds_bytes_per_workgroup(False) == 16384
    assert d.lds_bytes_per_workgroup(True) == 32768


def test_groups_hold_the_fields_and_read_through_the_config():
    """Each field lives in one group; the configuration reads it by name, builds from fields
    or whole groups, and refuses a field no group has."""
    f = get_config("fpga")
    assert (f.sizes.lanes, f.latencies.valu_dep_latency, f.policies.return_order, f.impl.shared_multiplier) == \
        (f.lanes, f.valu_dep_latency, f.return_order, f.shared_multiplier) == (4, 5, "per_wave", True)
    names = [{x.name for x in dataclasses.fields(g)} for g in (Sizes, Latencies, Policies, Implementation)]
    assert sum(map(len, names)) == len(set().union(*names))          # no field in two groups
    assert DCUConfig(name="x", sizes=f.sizes, impl=f.impl) == DCUConfig(name="x", **{
        n: getattr(f, n) for n in set().union(names[0], names[3])})
    assert f.replace(impl=f.impl) == f and f.replace(l0_hit_latency=7).latencies == Latencies(l0_hit_latency=7)
    with pytest.raises(AttributeError, match="no attribute 'lane'"):
        f.lane  # noqa: B018
    with pytest.raises(ConfigError, match="unknown DCUConfig field"):
        DCUConfig(lane=4)
    # a group validates its own fields, the configuration the rules that join groups
    with pytest.raises(ConfigError, match="lanes must divide 32"):
        Sizes(lanes=3)
    with pytest.raises(ConfigError, match="memory_latency must be >= 0"):
        Latencies(memory_latency=-1)
    with pytest.raises(ConfigError, match=r"coalesce_lanes \(32\) must be at most the lanes of a response beat"):
        DCUConfig(sizes=Sizes(lanes=4))


def test_config_survives_pickle_and_copy():
    """Configurations cross process boundaries (``dcu verify --jobs``) and are dict keys."""
    import copy
    import pickle
    f = get_config("fpga")
    for g in (pickle.loads(pickle.dumps(f)), copy.deepcopy(f), copy.copy(f)):
        assert g == f and hash(g) == hash(f) and g.lanes == 4
