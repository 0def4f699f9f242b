"""The one configuration object describing a dual compute unit (DCU).

Pure Python on purpose: the reference model, the launcher and the CLI use it
without importing Amaranth, and the RTL takes its sizes from the same object.

A :class:`DCUConfig` is a name and four groups, each a frozen dataclass validated on its own:
:class:`Sizes` (what the architecture has), :class:`Latencies` (how long it takes),
:class:`Policies` (architectural choices: return order, issue arbitration) and
:class:`Implementation` (how the RTL builds the same architecture: register-file organisation,
pipeline stages, shared units). Every field also reads as an attribute of the configuration
(``cfg.lanes`` is ``cfg.sizes.lanes``), and :meth:`DCUConfig.replace` takes fields by name.

Presets (``PRESETS``):

=========  =====  ==========  ===========  ==========  ==========  =====================
preset     lanes  wave slots  VGPRs/SIMD   LDS/half    L0          purpose
=========  =====  ==========  ===========  ==========  ==========  =====================
default    32     4           256          16 KiB, 32  4 KiB, 32   scaled-down RDNA 4
tiny       32     2           128          4 KiB, 32   2 KiB, 32   fast RTL simulation
rdna1      32     20          1024         64 KiB, 32  16 KiB, 32  RDNA 1 (Navi 10) sizes
fpga       4      2           128          4 KiB, 4    2 KiB, 8    targets an ECP5-85F
=========  =====  ==========  ===========  ==========  ==========  =====================

VGPRs/SIMD counts registers of 32 lanes x 32 bits; LDS/half: bytes and banks; L0: bytes and
the lanes coalesced per line request. Whether a kernel fits a configuration (occupancy and
resource checks) is the launcher's question: :mod:`dcu.admission`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

__all__ = [
    "DCUConfig",
    "Sizes",
    "Latencies",
    "Policies",
    "Implementation",
    "ConfigError",
    "PRESETS",
    "get_config",
    "WAVE_SIZE",
    "MAX_VGPRS_PER_WAVE",
    "MAX_WORKGROUP_SIZE",
]

WAVE_SIZE = 32            # the core runs wave32 only
MAX_VGPRS_PER_WAVE = 256  # v0..v255 is all an instruction can address
MAX_WORKGROUP_SIZE = 1024  # work-items; the OpenCL/HSA limit LLVM assumes

RETURN_ORDERS = ("per_wave", "in_order")
WAVE_POLICIES = ("oldest", "round_robin")


class ConfigError(ValueError):
    """An inconsistent configuration (bad sizes, unknown preset or policy)."""


def _pow2(x: int) -> bool:
    return x > 0 and (x & (x - 1)) == 0


def _type_errors(group: Any) -> list[str]:
    """A field whose value is not of its declared type (``bool`` is not an ``int`` here)."""
    errors = []
    for f in dataclasses.fields(group):
        v = getattr(group, f.name)
        if f.type == "int" and (not isinstance(v, int) or isinstance(v, bool)):
            errors.append(f"{f.name} must be an int, got {v!r}")
        elif f.type == "bool" and not isinstance(v, bool):
            errors.append(f"{f.name} must be a bool, got {v!r}")
    return errors


def _raise(errors: list[str]) -> None:
    if errors:
        raise ConfigError("; ".join(errors))


@dataclass(frozen=True)
class Sizes:
    """What the DCU has: its units, lanes, wave slots, register files and memories.

    Attributes
    ----------
    cus : int
        Compute units in the DCU (2).
    simds_per_cu : int
        SIMDs per CU (2).
    lanes : int
        Physical lanes per SIMD; a wave32 VALU instruction takes
        ``32 // lanes`` cycles (:attr:`valu_cycles`).
    wave_slots : int
        Wave slots per SIMD.
    vgprs_per_simd : int
        VGPR file size per SIMD, in registers of 32 lanes x 32 bits.
    vgpr_granule : int
        VGPR allocation granule (wave32).
    sgprs_per_wave : int
        Addressable SGPRs per wave (s0..s105).
    lds_bytes_per_half : int
        LDS bytes in each of the two halves (one per CU).
    lds_banks : int
        Banks per LDS half (4 bytes wide; a power of two, 4 to 32). A half schedules an
        instruction's accesses in windows of as many dwords as it has banks, whole lanes each
        (docs/memory.md, "LDS"): bank conflicts are resolved, and broadcasts merged, within a
        window, one window after the other.
    l0_bytes, l0_ways, l0_line : int
        Vector L0 cache per CU: size, associativity, line bytes.
    coalesce_lanes : int
        Lanes the vector memory unit's coalescer merges into one line request (a power of
        two, 1 to 32): each group of this many lanes is split into lines on its own, and the
        per-lane store placement and result gather are built this many lanes wide. 32 (one
        request per line of the wave) except on the ``fpga`` preset, where 4, its SIMDs' lane
        count, cuts that logic to an eighth for a request per line of each 4-lane group.
    scalar_cache_bytes, scalar_cache_line : int
        Scalar data cache shared by the DCU.
    icache_bytes, icache_line : int
        Instruction cache shared by the four SIMDs.
    fetch_bytes : int
        Bytes an instruction fetch brings a SIMD's wave (a power of two, 32 up to
        ``icache_line``). Each wave buffers two of them and a loop-target one: 64 (the whole
        cache line), or 32 on the ``fpga`` preset (RDNA's fetch per SIMD and clock), which
        halves those buffers and the cache's answer queues (docs/simd.md, "Fetch").
    trans_lanes : int
        Datapaths of the transcendental unit (``hdl/simd/transseq.py``; a divisor of 32), the
        one the DCU's four SIMDs share: each steps a lane a cycle through the operation.
    """

    cus: int = 2
    simds_per_cu: int = 2
    lanes: int = 32
    wave_slots: int = 4
    vgprs_per_simd: int = 256
    vgpr_granule: int = 8
    sgprs_per_wave: int = 106
    lds_bytes_per_half: int = 16 * 1024
    lds_banks: int = 32
    l0_bytes: int = 4 * 1024
    l0_ways: int = 4
    l0_line: int = 128
    coalesce_lanes: int = 32
    scalar_cache_bytes: int = 4 * 1024
    scalar_cache_line: int = 64
    icache_bytes: int = 8 * 1024
    icache_line: int = 64
    fetch_bytes: int = 64
    trans_lanes: int = 8

    def __post_init__(self) -> None:
        _raise(_type_errors(self))
        errors = [f"{f.name} must be > 0, got {getattr(self, f.name)}" for f in dataclasses.fields(self)
                  if getattr(self, f.name) <= 0]
        _raise(errors)
        # Lanes and granules must divide evenly: the datapath serialises a wave32
        # over 32 // lanes cycles, and cache indexing uses bit fields.
        for n in ("lanes", "trans_lanes"):
            if getattr(self, n) > WAVE_SIZE or WAVE_SIZE % getattr(self, n):
                errors.append(f"{n} must divide {WAVE_SIZE}, got {getattr(self, n)}")
        if self.vgprs_per_simd % self.vgpr_granule:
            errors.append(f"vgprs_per_simd ({self.vgprs_per_simd}) must be a multiple of "
                          f"vgpr_granule ({self.vgpr_granule})")
        for n in ("lds_banks", "coalesce_lanes"):
            if getattr(self, n) > WAVE_SIZE:
                errors.append(f"{n} is at most {WAVE_SIZE} (one per lane), got {getattr(self, n)}")
        if self.lds_banks < 4:
            errors.append(f"lds_banks is at least 4 (a window holds a lane's 4 dwords), got {self.lds_banks}")
        if self.sgprs_per_wave > 106:
            errors.append(f"sgprs_per_wave is at most 106 (s0..s105), got {self.sgprs_per_wave}")
        for n in ("lds_bytes_per_half", "lds_banks", "coalesce_lanes", "l0_line", "l0_ways", "scalar_cache_line",
                  "icache_line", "vgpr_granule"):
            if not _pow2(getattr(self, n)):
                errors.append(f"{n} must be a power of two, got {getattr(self, n)}")
        if not _pow2(self.fetch_bytes) or not 32 <= self.fetch_bytes <= self.icache_line:
            errors.append(f"fetch_bytes must be a power of two from 32 to icache_line ({self.icache_line}), "
                          f"got {self.fetch_bytes}")
        for size, line, ways, what in ((self.l0_bytes, self.l0_line, self.l0_ways, "l0"),
                                       (self.scalar_cache_bytes, self.scalar_cache_line, 1, "scalar_cache"),
                                       (self.icache_bytes, self.icache_line, 1, "icache")):
            if size % (line * ways) or not _pow2(size // (line * ways)):
                errors.append(f"{what}: bytes ({size}) / (line {line} x ways {ways}) must be "
                              "a power-of-two number of sets")
        _raise(errors)


@dataclass(frozen=True)
class Latencies:
    """How long the DCU's operations take, in cycles.

    Attributes
    ----------
    valu_dep_latency : int
        Cycles from a VALU instruction's issue to the issue of a dependent one.
    l0_hit_latency : int
        Cycles from a vector memory issue to its data on an L0 hit.
    memory_latency : int
        Extra cycles of an L0 miss (the backing memory).
    lds_latency : int
        Cycles of an LDS access without bank conflicts.
    scalar_hit_latency : int
        Cycles of a scalar load that hits the scalar cache.
    """

    valu_dep_latency: int = 5
    l0_hit_latency: int = 4
    memory_latency: int = 32
    lds_latency: int = 4
    scalar_hit_latency: int = 4

    def __post_init__(self) -> None:
        _raise(_type_errors(self))
        _raise([f"{f.name} must be > 0, got {getattr(self, f.name)}" for f in dataclasses.fields(self)
                if f.name != "memory_latency" and getattr(self, f.name) <= 0]
               + ([f"memory_latency must be >= 0, got {self.memory_latency}"] if self.memory_latency < 0 else []))


@dataclass(frozen=True)
class Policies:
    """Architectural choices that change the order of events, not the results.

    Attributes
    ----------
    return_order : str
        ``"per_wave"``: memory returns retire in order per wave (RDNA 4);
        ``"in_order"``: one return queue shared by all waves (RDNA 3 and before).
    wave_policy : str
        Issue arbitration among ready waves: ``"oldest"`` or ``"round_robin"``.
    """

    return_order: str = "per_wave"
    wave_policy: str = "oldest"

    def __post_init__(self) -> None:
        errors = []
        if self.return_order not in RETURN_ORDERS:
            errors.append(f"return_order must be one of {RETURN_ORDERS}, got {self.return_order!r}")
        if self.wave_policy not in WAVE_POLICIES:
            errors.append(f"wave_policy must be one of {WAVE_POLICIES}, got {self.wave_policy!r}")
        _raise(errors)


@dataclass(frozen=True)
class Implementation:
    """How the RTL builds the architecture: units shared to save area, requests read in place,
    extra pipeline stages. The ``fpga`` preset sets most of them; each costs or saves
    cycles as described, never changes results.

    Attributes
    ----------
    shared_multiplier : bool
        ``True``: one multiplier per lane serves both vector ALUs (``hdl/simd/lanemul.py``; the
        ``fpga`` preset's, halving the ALUs' DSP blocks). ``False``: each ALU has its own.
    shared_mem_request : bool
        ``True``: each SIMD keeps one request register for its vector memory and LDS
        requests (a whole wave's addresses and data: 6,200 flip-flops), so one kind waits
        while the other's request is not yet taken (the ``fpga`` preset's). ``False``: one
        register each.
    coalesce_in_place : bool
        ``True``: the vector memory unit splits an instruction into line requests straight
        from the SIMD's request register, which stays taken until the last request has left,
        instead of copying it into a register of its own (a whole wave's addresses and data:
        6,200 flip-flops per CU; the ``fpga`` preset's). ``False``: the copy frees the SIMD's
        register as soon as the unit accepts.
    lds_in_place : bool
        ``True``: each LDS half reads the windows of an instruction straight from the SIMD's
        request register, which stays taken until the last window's pass, instead of copying
        the wave's addresses and data into a register of its own at take (5,120 flip-flops
        per half; the ``fpga`` preset's). ``False``: the copy frees the SIMD's register as
        soon as a half takes the instruction.
    request_in_rows : bool
        ``True``: a SIMD keeps its vector memory and LDS request's addresses and data in rows
        of a lane group (:attr:`request_lanes` = ``lanes``, the lanes it writes per EX cycle),
        and the vector memory unit and the LDS read it a row at a time (``VecMemReq`` carries
        the row their ``req_row`` names). On ``fpga`` the rows are a LUT RAM, not 6,144
        flip-flops, and its readers select among rows, not among whole waves. Needs
        ``shared_mem_request``, both ``*_in_place``, and coalescer
        groups and LDS windows of at most ``lanes`` lanes. ``False``: one row, the whole wave,
        a register.
    scalar_cache_stage : bool
        ``True``: the scalar cache registers the finished request it chooses and forms the
        answer's bytes (its lines merged, rotated to the address, extended) in the next cycle
        (the ``fpga`` preset's: the two halves of a path that was 40 ns on the ECP5). A hit
        keeps its latency when ``scalar_hit_latency`` >= 4; an answer from a fill takes a cycle
        more, and a second answer for the same SIMD starts a cycle after the first ends.
        ``False``: one cycle from the choice to the answer's first beat.
    scalar_cache_slots : int
        Requests the scalar cache holds at once (waiting out the hit latency, for memory or
        for their SIMD's port), at least 2; 0 (the default) for ``max(8, scalar_hit_latency +
        4)``, enough to accept one request per cycle while others wait for memory. The
        ``fpga`` preset's 4 still accept one per cycle when all hit, and a fifth request
        waits while four wait for memory (each slot's fields are compared every cycle).
    scalar_cache_reads : int
        Memory reads the scalar cache keeps in flight (its miss table's entries, each
        compared with every lookup): 4, or 2 on the ``fpga`` preset, where a third line to
        read waits for one of them. At most the external port's tags allow.
    scalar_cache_word : int
        Bits of a word of the scalar cache's line memory, which a fill writes one per cycle
        from the 128-byte response: 64, a fill takes 16 cycles and each answer beat picks its
        dword from the word it reads; or 32 (the ``fpga`` preset's), a fill takes 32 cycles
        and a beat reads its dword alone: the fill's select is as wide, the answers' dword
        select goes away, and each read port's copy of the line memory is one block RAM
        instead of two.
    coalesce_stage : bool
        ``True``: the vector memory unit registers the lane fields of the group it splits
        (lines, straddles, faults, offsets, addresses and data, and for each pair of its
        lanes whether their lines match and their bytes overlap, so that a request's lanes
        are the leader's row of those bits, not compares after the leader is picked),
        computed from the request a cycle earlier: the next group's while the current one is
        split, the first group's in a cycle of its own after an instruction is accepted (the
        ``fpga`` preset's: the aperture compares and the request's row read fed the
        coalescer's decisions, on the unit's critical path). The next instruction is
        accepted in the cycle after the split ends, not in its last cycle (the end fed the
        acceptance and its enables), and a group whose lanes are in two lines ends a cycle
        after its last request (a group's last request is known from registers). An
        instruction takes two cycles more to split, and a hit answers ``max(6,
        l0_hit_latency)`` cycles after acceptance, not ``max(5, ...)``. ``False``: the
        coalescer reads the group's lanes in the cycle it splits them.
    """

    shared_multiplier: bool = False
    shared_mem_request: bool = False
    coalesce_in_place: bool = False
    lds_in_place: bool = False
    request_in_rows: bool = False
    scalar_cache_stage: bool = False
    scalar_cache_slots: int = 0
    scalar_cache_reads: int = 4
    scalar_cache_word: int = 64
    coalesce_stage: bool = False

    def __post_init__(self) -> None:
        errors = _type_errors(self)
        _raise(errors)
        if self.scalar_cache_slots < 0 or self.scalar_cache_slots == 1:
            errors.append(f"scalar_cache_slots must be 0 (automatic) or at least 2, got {self.scalar_cache_slots}")
        if self.scalar_cache_reads < 1:
            errors.append(f"scalar_cache_reads must be >= 1, got {self.scalar_cache_reads}")
        if self.scalar_cache_word not in (32, 64):
            errors.append(f"scalar_cache_word must be 32 or 64, got {self.scalar_cache_word}")
        if self.request_in_rows:
            need = [n for n in ("shared_mem_request", "coalesce_in_place", "lds_in_place") if not getattr(self, n)]
            if need:
                errors.append("request_in_rows needs shared_mem_request, coalesce_in_place and lds_in_place "
                              f"(missing: {', '.join(need)})")
        _raise(errors)


_GROUPS = {"sizes": Sizes, "latencies": Latencies, "policies": Policies, "impl": Implementation}
#: The group each field belongs to, by field name.
FIELD_GROUP = {f.name: g for g, cls in _GROUPS.items() for f in dataclasses.fields(cls)}


@dataclass(frozen=True, init=False)
class DCUConfig:
    """Sizes, latencies, policies and implementation options of one dual compute unit.

    Parameters
    ----------
    name : str
        Preset name (``"custom"`` for hand-made configurations).
    sizes, latencies, policies, impl : Sizes, Latencies, Policies, Implementation, optional
        The groups (each defaults to its class's defaults, the ``default`` preset's).
    **fields
        Any group field by name (``lanes=4``), applied to its group.

    Every group field reads as an attribute (``cfg.lanes``, ``cfg.l0_hit_latency``).
    Construction validates each group and the rules that join groups.
    """

    name: str
    sizes: Sizes
    latencies: Latencies
    policies: Policies
    impl: Implementation

    def __init__(self, name: str = "custom", *, sizes: Sizes = Sizes(), latencies: Latencies = Latencies(),
                 policies: Policies = Policies(), impl: Implementation = Implementation(), **fields: Any) -> None:
        unknown = set(fields) - set(FIELD_GROUP)
        if unknown:
            raise ConfigError(f"unknown DCUConfig field(s): {', '.join(sorted(unknown))}")
        if not isinstance(name, str):
            raise ConfigError(f"name must be a str, got {name!r}")
        object.__setattr__(self, "name", name)
        for group, value in (("sizes", sizes), ("latencies", latencies), ("policies", policies), ("impl", impl)):
            changes = {k: v for k, v in fields.items() if FIELD_GROUP[k] == group}
            object.__setattr__(self, group, dataclasses.replace(value, **changes) if changes else value)
        self._check_across_groups()

    def __getattr__(self, field: str) -> Any:
        group = FIELD_GROUP.get(field)
        if group is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {field!r}")
        return getattr(object.__getattribute__(self, group), field)

    def _check_across_groups(self) -> None:
        errors = []
        if self.coalesce_lanes > self.resp_lanes:
            # a line request's lanes go into one result row of the vector memory unit
            errors.append(f"coalesce_lanes ({self.coalesce_lanes}) must be at most the lanes of a "
                          f"response beat ({self.resp_lanes}: lanes)")
        if self.request_in_rows:
            for n in ("coalesce_lanes", "lds_banks"):
                if getattr(self, n) > self.lanes:
                    errors.append(f"{n} ({getattr(self, n)}) must be at most lanes ({self.lanes}), a request row, "
                                  "with request_in_rows")
        _raise(errors)

    # ---- derived sizes -------------------------------------------------------
    @property
    def simds(self) -> int:
        """SIMDs in the DCU."""
        return self.cus * self.simds_per_cu

    @property
    def resp_lanes(self) -> int:
        """Lanes of one vector memory or LDS response beat: a VGPR row (``lanes``), which the SIMD
        writes in one cycle."""
        return self.lanes

    @property
    def request_lanes(self) -> int:
        """Lanes in a row of a SIMD's vector memory and LDS request: ``lanes`` with
        :attr:`request_in_rows`, else the whole wave."""
        return self.lanes if self.request_in_rows else WAVE_SIZE

    @property
    def request_rows(self) -> int:
        """Rows of a SIMD's vector memory and LDS request (``32 // request_lanes``)."""
        return WAVE_SIZE // self.request_lanes

    @property
    def valu_cycles(self) -> int:
        """Cycles a wave32 VALU instruction occupies the SIMD (``32 // lanes``)."""
        return WAVE_SIZE // self.lanes

    @property
    def lds_bytes_total(self) -> int:
        """LDS bytes in the DCU (both halves)."""
        return self.cus * self.lds_bytes_per_half

    @property
    def l0_sets(self) -> int:
        """Sets of the vector L0."""
        return self.l0_bytes // (self.l0_ways * self.l0_line)

    @property
    def wave_ids(self) -> int:
        """Values the RTL's wave-slot fields hold (their shape is ``range(wave_ids)``):
        ``wave_slots``, but at least 2, so that with one slot the field is a bit that is
        always 0 rather than zero bits wide (Yosys writes a zero-width wire as ``[-1:0]``,
        which Verilator's lint refuses)."""
        return max(2, self.wave_slots)

    @property
    def max_waves_per_cu(self) -> int:
        """Wave slots in one CU."""
        return self.simds_per_cu * self.wave_slots

    # ---- resource arithmetic -------------------------------------------------
    def lds_bytes_per_workgroup(self, wgp: bool = False) -> int:
        """LDS bytes one workgroup can use: one half in CU mode, both in WGP mode."""
        return self.lds_bytes_total if wgp else self.lds_bytes_per_half

    # ---- variants and serialisation -----------------------------------------
    def replace(self, **changes: Any) -> "DCUConfig":
        """Return a copy with some fields (any group's, by name, or ``name`` or a whole group)
        changed, validated like a new object."""
        kept = {"name": self.name, **{g: getattr(self, g) for g in _GROUPS}}
        return DCUConfig(**{**kept, **changes})

    def with_settings(self, settings: Sequence[str]) -> "DCUConfig":
        """Return a copy with fields set from ``FIELD=VALUE`` strings (the command line's
        ``--set``), each value read as its field's type (``true``/``false`` or ``1``/``0``
        for a flag), named after this one and the settings (``fpga+lanes=1``).

        Raises
        ------
        ConfigError
            For a malformed setting, an unknown field, a value of the wrong type, or a
            combination the rules refuse.
        """
        if not settings:
            return self
        types = {f.name: f.type for cls in _GROUPS.values() for f in dataclasses.fields(cls)}
        changes: dict[str, Any] = {}
        for item in settings:
            key, eq, text = item.partition("=")
            if not eq or key not in types:
                raise ConfigError(f"bad setting {item!r}: expected FIELD=VALUE with FIELD one of "
                                  f"{', '.join(types)}")
            kind = types[key]
            try:
                if kind == "bool":
                    flag = {"true": True, "1": True, "false": False, "0": False}.get(text.lower())
                    if flag is None:
                        raise ValueError(text)
                    changes[key] = flag
                else:
                    changes[key] = int(text, 0) if kind == "int" else text
            except ValueError:
                raise ConfigError(f"bad setting {item!r}: {key} takes "
                                  f"{'an integer' if kind == 'int' else 'true or false'}") from None
        return self.replace(name="+".join([self.name, *settings]), **changes)

    def to_dict(self) -> dict[str, Any]:
        """The name and the groups' fields as a plain nested dict (for JSON reports)."""
        return dataclasses.asdict(self)


_DEFAULT = DCUConfig(name="default")

PRESETS: Mapping[str, DCUConfig] = {
    "default": _DEFAULT,
    "tiny": _DEFAULT.replace(name="tiny", wave_slots=2, vgprs_per_simd=128,
                             lds_bytes_per_half=4 * 1024, l0_bytes=2 * 1024,
                             scalar_cache_bytes=1024, icache_bytes=2 * 1024),
    # RDNA 1 sizes, with latencies of the order microbenchmarks report for an RX 6900 XT
    # (memory_latency: its L2's); scalar_hit_latency is an estimate.
    "rdna1": _DEFAULT.replace(name="rdna1", wave_slots=20, vgprs_per_simd=1024,
                              lds_bytes_per_half=64 * 1024, l0_bytes=16 * 1024,
                              scalar_cache_bytes=16 * 1024, icache_bytes=32 * 1024,
                              l0_hit_latency=73, memory_latency=200, lds_latency=44,
                              scalar_hit_latency=30, return_order="in_order"),
    # 4 lanes and a one-lane transcendental unit: the DSP blocks the 85F has (dcu bench fpga-budget);
    # 4 LDS banks per half, as many as lanes: a pass serves a window of 4 dwords, and the LDS's
    # selects grow with the window; the coalescer
    # merges 4 lanes per line request: its per-lane logic grows with them; 32-byte instruction
    # fetches halve the SIMDs' line buffers and the instruction cache's answer queues; the scalar
    # cache's request slots and reads in flight, each compared every cycle, are halved, and its
    # line memory holds dwords, not pairs (docs/fpga.md)
    "fpga": _DEFAULT.replace(name="fpga", lanes=4, trans_lanes=1, wave_slots=2, vgprs_per_simd=128,
                             lds_bytes_per_half=4 * 1024, lds_banks=4,
                             l0_bytes=2 * 1024, coalesce_lanes=4,
                             scalar_cache_bytes=1024, icache_bytes=2 * 1024, fetch_bytes=32,
                             shared_multiplier=True, shared_mem_request=True,
                             coalesce_in_place=True, lds_in_place=True, request_in_rows=True,
                             scalar_cache_stage=True, scalar_cache_slots=4,
                             scalar_cache_reads=2, scalar_cache_word=32, coalesce_stage=True),
}


def get_config(name: str | DCUConfig) -> DCUConfig:
    """Return the preset called ``name`` (a :class:`DCUConfig` is returned as is).

    Raises
    ------
    ConfigError
        For an unknown name; the message lists the presets.
    """
    if isinstance(name, DCUConfig):
        return name
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown config {name!r}; presets: {', '.join(PRESETS)}") from None
