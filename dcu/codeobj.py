"""Read AMDGPU code objects (ELF64, EM_AMDGPU = 224) built for gfx1200.

A linked code object (``.hsaco``) is a position-independent shared object whose
loadable segments start at virtual address 0. ``KernelInfo.image`` is that whole
loaded image (code, kernel descriptors, ``__constant`` data), so that the
PC-relative addressing clang emits for constant tables works once the image is
copied to device memory at any base address ``B`` (use ``KernelInfo.image_at(B)``,
which applies the ``R_AMDGPU_RELATIVE64`` dynamic relocations) and waves start at
``B + entry``. ``code``/``code_base`` are the ``.text`` bytes and their address
for consumers that only need instructions (disassembly, instruction fetch).

Descriptor layout (LLVM AMDGPUUsage, "Kernel Descriptor"): +0 group
segment (LDS) bytes, +4 private segment bytes per lane, +8 kernarg size, +16
entry offset (i64, relative to the descriptor), +44 rsrc3, +48 rsrc1, +52 rsrc2,
+56 kernel code properties (u16).

Argument metadata comes from the ``NT_AMDGPU_METADATA`` note (type 32, msgpack).
clang always emits it. An assembly kernel has it only if its ``.s`` file has an
``.amdgpu_metadata`` block; without one, ``KernelInfo.args`` is empty and the
launcher lays out the arguments itself (explicit arguments in order at their
natural alignment). An unlinked ``.o`` is linked first through
:func:`dcu.toolchain.link`, so its entry relocation is resolved by ld.lld.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

__all__ = [
    "CodeObjectError",
    "KernelArg",
    "KernelInfo",
    "CodeObject",
    "load_code_object",
    "EM_AMDGPU",
    "NT_AMDGPU_METADATA",
    "EF_AMDGPU_MACH_GFX1200",
]

EM_AMDGPU = 224
NT_AMDGPU_METADATA = 32
EF_AMDGPU_MACH_MASK = 0xFF
EF_AMDGPU_MACH_GFX1200 = 0x48
R_AMDGPU_RELATIVE64 = 13
DESCRIPTOR_SIZE = 64


class CodeObjectError(ValueError):
    """The file is not a usable gfx1200 code object."""


@dataclass(frozen=True)
class KernelArg:
    """One kernel argument from the metadata note.

    Attributes
    ----------
    name : str or None
        Argument name (``None`` for hidden arguments and unnamed ones).
    offset : int
        Byte offset in the kernarg segment.
    size : int
        Size in bytes.
    value_kind : str
        ``global_buffer``, ``by_value``, ``dynamic_shared_pointer``, or a
        ``hidden_*`` kind (``hidden_block_count_x``, ``hidden_group_size_x``, ...).
    address_space : str or None
        ``global``, ``constant``, ``local``, ... for pointers, else ``None``.
    type_name : str or None
        Source-level type, e.g. ``"float*"``.
    """

    name: str | None
    offset: int
    size: int
    value_kind: str
    address_space: str | None = None
    type_name: str | None = None

    @property
    def hidden(self) -> bool:
        """True for arguments the runtime fills in (value_kind ``hidden_*``)."""
        return self.value_kind.startswith("hidden_")

    @property
    def is_buffer(self) -> bool:
        """True for a pointer to global or constant memory."""
        return self.value_kind == "global_buffer"


@dataclass(frozen=True)
class KernelInfo:
    """Everything needed to dispatch one kernel of a code object.

    Attributes
    ----------
    name : str
        Kernel name.
    code : bytes
        The ``.text`` section (all kernels of the code object).
    code_base : int
        Virtual address of ``code[0]``.
    entry : int
        Virtual address of the kernel's first instruction (descriptor address
        plus the i64 at descriptor +16).
    code_size : int or None
        Size in bytes of the kernel's function symbol, if known.
    descriptor_address : int
        Virtual address of the 64-byte kernel descriptor ``NAME.kd``.
    descriptor : bytes
        The raw descriptor.
    group_segment_size : int
        Static LDS bytes per workgroup (descriptor +0).
    private_segment_size : int
        Scratch bytes per lane (descriptor +4).
    kernarg_size : int
        Kernarg segment bytes (descriptor +8).
    rsrc1, rsrc2, rsrc3 : int
        COMPUTE_PGM_RSRC1/2/3 (descriptor +48, +52, +44).
    properties : int
        Kernel code properties (descriptor +56, u16).
    vgpr_count : int
        VGPRs used: metadata ``.vgpr_count``, else :attr:`vgpr_alloc`.
    vgpr_alloc : int
        VGPRs allocated per the descriptor granule, ``(rsrc1[5:0] + 1) * 8`` in
        wave32 (``* 4`` in wave64).
    sgpr_count : int or None
        SGPRs used (metadata ``.sgpr_count``); ``None`` without metadata, since
        gfx10+ descriptors do not encode it.
    user_sgpr_count : int
        rsrc2[5:1].
    workgroup_id_enable : tuple of bool
        rsrc2[7], [8], [9]: workgroup id X, Y, Z enabled.
    workitem_id_enable : int
        rsrc2[12:11]: 0 = X only, 1 = X and Y, 2 = X, Y and Z.
    kernarg_ptr : bool
        properties[3]: s[0:1] holds the kernarg segment address.
    wave32 : bool
        properties[10].
    wgp_mode : bool
        rsrc1[29].
    args : tuple of KernelArg
        All arguments in metadata order, hidden ones included; empty when the
        code object has no metadata for this kernel.
    kernarg_align : int
        Metadata ``.kernarg_segment_align`` (8 if absent).
    reqd_workgroup_size : tuple of int or None
        ``reqd_work_group_size`` from the source, if given.
    max_flat_workgroup_size : int or None
        Metadata ``.max_flat_workgroup_size``.
    image : bytes
        The whole loaded image, starting at virtual address 0.
    relocations : tuple of (int, int)
        ``(offset, addend)`` of every ``R_AMDGPU_RELATIVE64`` dynamic relocation.
    metadata : dict
        The kernel's raw metadata map (empty without metadata).
    """

    name: str
    code: bytes = field(repr=False)
    code_base: int
    entry: int
    code_size: int | None
    descriptor_address: int
    descriptor: bytes = field(repr=False)
    group_segment_size: int
    private_segment_size: int
    kernarg_size: int
    rsrc1: int
    rsrc2: int
    rsrc3: int
    properties: int
    vgpr_count: int
    vgpr_alloc: int
    sgpr_count: int | None
    user_sgpr_count: int
    workgroup_id_enable: tuple[bool, bool, bool]
    workitem_id_enable: int
    kernarg_ptr: bool
    wave32: bool
    wgp_mode: bool
    args: tuple[KernelArg, ...]
    kernarg_align: int
    reqd_workgroup_size: tuple[int, int, int] | None
    max_flat_workgroup_size: int | None
    image: bytes = field(repr=False, compare=False)
    relocations: tuple[tuple[int, int], ...] = field(repr=False, compare=False)
    metadata: dict = field(repr=False, compare=False, hash=False)

    @property
    def float_mode(self) -> int:
        """MODE[7:0] the kernel's waves start with: FLOAT_ROUND_MODE_32 (rsrc1[13:12]) and
        _16_64 ([15:14]) in bits 3:0, FLOAT_DENORM_MODE_32 ([17:16]) and _16_64 ([19:18]) in
        bits 7:4 (LLVM AMDGPUUsage, compute_pgm_rsrc1). clang-19's default is 0xf0."""
        return _bits(self.rsrc1, 19, 12)

    @property
    def uses_dynamic_stack(self) -> bool:
        """properties[11]: the kernel's stack may outgrow :attr:`private_segment_size`."""
        return bool(_bits(self.properties, 11, 11))

    @property
    def enable_private_segment(self) -> bool:
        """rsrc2[0]: waves get a private (scratch) segment (gfx12: architected flat scratch)."""
        return bool(_bits(self.rsrc2, 0, 0))

    @property
    def lds_bytes(self) -> int:
        """Alias of :attr:`group_segment_size`."""
        return self.group_segment_size

    @property
    def explicit_args(self) -> tuple[KernelArg, ...]:
        """The arguments a caller passes (hidden ones removed)."""
        return tuple(a for a in self.args if not a.hidden)

    @property
    def hidden_args(self) -> tuple[KernelArg, ...]:
        """The arguments the launcher fills in itself."""
        return tuple(a for a in self.args if a.hidden)

    def image_at(self, base: int) -> bytes:
        """Return :attr:`image` relocated for loading at virtual address ``base``.

        Parameters
        ----------
        base : int
            Device address the image will be copied to.

        Returns
        -------
        bytes
            The image with every ``R_AMDGPU_RELATIVE64`` slot set to
            ``base + addend``.
        """
        return _relocate(self.image, self.relocations, base)


def _relocate(image: bytes, relocations, base: int) -> bytes:
    if not relocations:
        return image
    buf = bytearray(image)
    for off, addend in relocations:
        struct.pack_into("<Q", buf, off, (base + addend) & (2**64 - 1))
    return bytes(buf)


def _bits(value: int, hi: int, lo: int) -> int:
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)


def _decode_str(v: Any) -> Any:
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, dict):
        return {_decode_str(k): _decode_str(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_decode_str(x) for x in v]
    return v


class CodeObject:
    """A gfx1200 code object loaded from disk.

    Parameters
    ----------
    path : path-like
        A linked code object (``.hsaco``/``.co``, ELF ``ET_DYN``) or a
        relocatable object (``.o``, ``ET_REL``), which is linked first.

    Attributes
    ----------
    path : pathlib.Path
        The file given.
    linked_path : pathlib.Path
        The linked file actually read (differs from ``path`` for a ``.o``).
    kernels : dict of str to KernelInfo
        Every kernel (every ``NAME.kd`` symbol), by name.
    image : bytes
        Loaded image from virtual address 0.
    code : bytes
        The ``.text`` section.
    code_base : int
        Virtual address of the ``.text`` section.
    metadata : dict
        The decoded ``NT_AMDGPU_METADATA`` map (empty if absent).

    Raises
    ------
    CodeObjectError
        If the file is not an ELF64 AMDGPU gfx1200 code object or is malformed.
    FileNotFoundError
        If the file does not exist.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"code object not found: {self.path}")
        data = self.path.read_bytes()
        self.linked_path = self.path
        elf = self._open(data)
        if elf.header.e_type == "ET_REL":
            from . import toolchain  # deferred: reading a linked object needs no LLVM

            self.linked_path = toolchain.link(self.path)
            data = self.linked_path.read_bytes()
            elf = self._open(data)
        if elf.header.e_type != "ET_DYN":
            raise CodeObjectError(
                f"{self.path}: ELF type {elf.header.e_type}; expected a linked code object "
                "(ET_DYN) or a relocatable object (ET_REL)")
        self._load(elf)

    def _open(self, data: bytes) -> ELFFile:
        import io

        try:
            elf = ELFFile(io.BytesIO(data))
        except ELFError as e:
            raise CodeObjectError(f"{self.path}: not an ELF file ({e})") from None
        if elf.elfclass != 64 or not elf.little_endian:
            raise CodeObjectError(f"{self.path}: not a little-endian ELF64 file")
        mach = elf.header.e_machine
        if mach not in ("EM_AMDGPU", EM_AMDGPU):
            raise CodeObjectError(
                f"{self.path}: e_machine is {mach}, expected EM_AMDGPU ({EM_AMDGPU})")
        gfx = elf.header.e_flags & EF_AMDGPU_MACH_MASK
        if gfx != EF_AMDGPU_MACH_GFX1200:
            raise CodeObjectError(
                f"{self.path}: built for EF_AMDGPU_MACH 0x{gfx:02x}, expected gfx1200 "
                f"(0x{EF_AMDGPU_MACH_GFX1200:02x}); rebuild with -mcpu=gfx1200")
        return elf

    def _load(self, elf: ELFFile) -> None:
        # Image: every PT_LOAD at its virtual address; .bss-like tails are zero.
        loads = [s for s in elf.iter_segments() if s.header.p_type == "PT_LOAD"]
        if not loads:
            raise CodeObjectError(f"{self.path}: no loadable segments")
        end = max(s.header.p_vaddr + s.header.p_memsz for s in loads)
        image = bytearray(end)
        for s in loads:
            va, filesz = s.header.p_vaddr, s.header.p_filesz
            image[va:va + filesz] = s.data()[:filesz]
        self.image = bytes(image)

        text = elf.get_section_by_name(".text")
        if text is None:
            raise CodeObjectError(f"{self.path}: no .text section")
        self.code = text.data()
        self.code_base = text.header.sh_addr

        self.relocations = self._dynamic_relocations(elf)
        self.metadata = self._read_metadata(elf)
        meta_by_symbol = {}
        for k in self.metadata.get("amdhsa.kernels", []) or []:
            sym = k.get(".symbol") or (str(k.get(".name", "")) + ".kd")
            meta_by_symbol[sym] = k

        symbols = self._symbols(elf)
        self.kernels: dict[str, KernelInfo] = {}
        for sname, (value, size, stype) in sorted(symbols.items()):
            if not sname.endswith(".kd") or stype not in ("STT_OBJECT", "STT_NOTYPE"):
                continue
            meta = meta_by_symbol.get(sname, {})
            name = str(meta.get(".name", sname[:-3]))
            func = symbols.get(name)
            self.kernels[name] = self._kernel(name, value, meta,
                                              func[1] if func and func[1] else None)

    def _symbols(self, elf: ELFFile) -> dict[str, tuple[int, int, str]]:
        out: dict[str, tuple[int, int, str]] = {}
        for secname in (".dynsym", ".symtab"):
            sec = elf.get_section_by_name(secname)
            if sec is None:
                continue
            for sym in sec.iter_symbols():
                if sym.name and sym.entry.st_shndx != "SHN_UNDEF":
                    out.setdefault(sym.name, (sym.entry.st_value, sym.entry.st_size,
                                              sym.entry.st_info.type))
        return out

    def _dynamic_relocations(self, elf: ELFFile) -> tuple[tuple[int, int], ...]:
        relocs = []
        for sec in elf.iter_sections():
            if sec.header.sh_type not in ("SHT_RELA", "SHT_REL") or not (sec.header.sh_flags & 2):
                continue  # only allocated (dynamic) relocation sections matter at load
            for r in sec.iter_relocations():
                rtype = r.entry.r_info_type
                if rtype == 0:
                    continue
                if rtype != R_AMDGPU_RELATIVE64:
                    raise CodeObjectError(
                        f"{self.path}: dynamic relocation type {rtype} at 0x{r.entry.r_offset:x} "
                        "is not supported (only R_AMDGPU_RELATIVE64); does the kernel call "
                        "an external function?")
                relocs.append((r.entry.r_offset, r.entry.get("r_addend", 0)))
        return tuple(relocs)

    def _read_metadata(self, elf: ELFFile) -> dict:
        for sec in elf.iter_sections():
            if sec.header.sh_type != "SHT_NOTE":
                continue
            for note in sec.iter_notes():
                if note["n_name"] == "AMDGPU" and note["n_type"] == NT_AMDGPU_METADATA:
                    desc = note["n_desc"]
                    if isinstance(desc, str):
                        desc = desc.encode("latin-1")
                    try:
                        meta = msgpack.unpackb(desc, raw=False, strict_map_key=False)
                    except Exception as e:  # msgpack raises several unrelated types
                        raise CodeObjectError(
                            f"{self.path}: unreadable NT_AMDGPU_METADATA note ({e})") from None
                    return _decode_str(meta)
        return {}

    def _kernel(self, name: str, kd_addr: int, meta: dict, code_size: int | None) -> KernelInfo:
        if kd_addr + DESCRIPTOR_SIZE > len(self.image):
            raise CodeObjectError(
                f"{self.path}: descriptor {name}.kd at 0x{kd_addr:x} lies outside the image")
        kd = self.image[kd_addr:kd_addr + DESCRIPTOR_SIZE]
        group, private, kernarg = struct.unpack_from("<III", kd, 0)
        (entry_off,) = struct.unpack_from("<q", kd, 16)
        rsrc3, rsrc1, rsrc2 = struct.unpack_from("<III", kd, 44)
        (props,) = struct.unpack_from("<H", kd, 56)
        entry = kd_addr + entry_off
        if not (self.code_base <= entry < self.code_base + len(self.code)):
            raise CodeObjectError(
                f"{self.path}: kernel {name} entry 0x{entry:x} is outside .text "
                f"[0x{self.code_base:x}, 0x{self.code_base + len(self.code):x})")
        wave32 = bool(_bits(props, 10, 10))
        vgpr_alloc = (_bits(rsrc1, 5, 0) + 1) * (8 if wave32 else 4)
        vgpr_count = int(meta.get(".vgpr_count", vgpr_alloc))
        sgpr = meta.get(".sgpr_count")
        args = tuple(
            KernelArg(
                name=a.get(".name"),
                offset=int(a[".offset"]),
                size=int(a[".size"]),
                value_kind=str(a[".value_kind"]),
                address_space=a.get(".address_space"),
                type_name=a.get(".type_name"),
            )
            for a in meta.get(".args", []) or []
        )
        reqd = meta.get(".reqd_workgroup_size")
        mfw = meta.get(".max_flat_workgroup_size")
        return KernelInfo(
            name=name,
            code=self.code,
            code_base=self.code_base,
            entry=entry,
            code_size=code_size,
            descriptor_address=kd_addr,
            descriptor=bytes(kd),
            group_segment_size=group,
            private_segment_size=private,
            kernarg_size=kernarg,
            rsrc1=rsrc1,
            rsrc2=rsrc2,
            rsrc3=rsrc3,
            properties=props,
            vgpr_count=vgpr_count,
            vgpr_alloc=vgpr_alloc,
            sgpr_count=None if sgpr is None else int(sgpr),
            user_sgpr_count=_bits(rsrc2, 5, 1),
            workgroup_id_enable=(bool(_bits(rsrc2, 7, 7)), bool(_bits(rsrc2, 8, 8)),
                                 bool(_bits(rsrc2, 9, 9))),
            workitem_id_enable=_bits(rsrc2, 12, 11),
            kernarg_ptr=bool(_bits(props, 3, 3)),
            wave32=wave32,
            wgp_mode=bool(_bits(rsrc1, 29, 29)),
            args=args,
            kernarg_align=int(meta.get(".kernarg_segment_align", 8)),
            reqd_workgroup_size=tuple(int(x) for x in reqd) if reqd else None,
            max_flat_workgroup_size=None if mfw is None else int(mfw),
            image=self.image,
            relocations=self.relocations,
            metadata=meta,
        )

    def kernel(self, name: str) -> KernelInfo:
        """Return the kernel called ``name``.

        Raises
        ------
        KeyError
            If there is no such kernel; the message lists the kernels that exist.
        """
        try:
            return self.kernels[name]
        except KeyError:
            have = ", ".join(sorted(self.kernels)) or "(none)"
            raise KeyError(f"no kernel {name!r} in {self.path}; kernels: {have}") from None

    def image_at(self, base: int) -> bytes:
        """Return :attr:`image` relocated for loading at ``base`` (see :meth:`KernelInfo.image_at`)."""
        return _relocate(self.image, self.relocations, base)

    def __repr__(self) -> str:
        return f"CodeObject({str(self.path)!r}, kernels={sorted(self.kernels)})"


def load_code_object(path: str | os.PathLike) -> CodeObject:
    """Load a linked (``.hsaco``/``.co``) or relocatable (``.o``) code object.

    See :class:`CodeObject`.
    """
    return CodeObject(path)
