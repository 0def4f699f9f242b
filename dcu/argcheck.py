"""A kernel's arguments checked against its metadata before a run (``dcu run --arg``).

The code object's metadata names each argument's C type (``float*``, ``uint``, ``int4*``):
a buffer whose numpy type is of another kind or size, or a scalar of another type, would
run with the wrong bits, so it is refused; a buffer with fewer elements than the grid has
work-items is only worth a warning (a kernel may bound its index).
"""
from __future__ import annotations

import re

__all__ = ["C_TYPES", "element_type", "check_arguments"]

#: C scalar type -> (numpy kind: "f" float, "i" integer, "b" bool, size in bytes)
C_TYPES = {
    "char": ("i", 1), "uchar": ("i", 1), "signed char": ("i", 1), "unsigned char": ("i", 1),
    "short": ("i", 2), "ushort": ("i", 2), "unsigned short": ("i", 2),
    "int": ("i", 4), "uint": ("i", 4), "unsigned int": ("i", 4), "unsigned": ("i", 4),
    "long": ("i", 8), "ulong": ("i", 8), "unsigned long": ("i", 8), "size_t": ("i", 8),
    "int8_t": ("i", 1), "uint8_t": ("i", 1), "int16_t": ("i", 2), "uint16_t": ("i", 2),
    "int32_t": ("i", 4), "uint32_t": ("i", 4), "int64_t": ("i", 8), "uint64_t": ("i", 8),
    "half": ("f", 2), "float": ("f", 4), "double": ("f", 8), "bool": ("b", 1),
}
_VECTOR = re.compile(r"^(.*?)(2|3|4|8|16)$")


def element_type(type_name: str | None) -> tuple[str, int, int] | None:
    """``(kind, bytes, lanes)`` of a C type name's scalar element (``float4*`` -> ``("f", 4, 4)``),
    a pointer's pointee; None for a type this does not know (a struct, ``void*``)."""
    if not type_name:
        return None
    t = re.sub(r"\b(const|volatile|restrict|__global|global|__constant|constant)\b", "", type_name)
    t = " ".join(t.replace("*", " ").split())
    if t in C_TYPES:
        return (*C_TYPES[t], 1)
    m = _VECTOR.match(t)
    if m and m.group(1) in C_TYPES:
        return (*C_TYPES[m.group(1)], int(m.group(2)))
    return None


def _kind_word(kind: str, size: int) -> str:
    return {"f": f"{8 * size}-bit float", "i": f"{8 * size}-bit integer", "b": "bool"}[kind]


def _numpy_kind(dtype) -> str:
    return {"f": "f", "i": "i", "u": "i", "b": "b"}.get(dtype.kind, dtype.kind)


def check_arguments(kernel, specs, values, workgroups: int, work_items: int) -> list[str]:
    """Check each ``--arg`` (``specs``, their materialized ``values``) against ``kernel``'s
    argument metadata. Returns warnings (a buffer with fewer elements than work-items, but
    more than one per workgroup: a flag or one result per workgroup is no sign of a short
    buffer); raises :class:`dcu.errors.UsageError` for a buffer or scalar of the wrong type or
    size."""
    from .errors import UsageError

    explicit = [a for a in getattr(kernel, "args", ()) if not a.hidden]
    warnings = []
    for i, (a, spec, value) in enumerate(zip(explicit, specs, values)):
        want = element_type(a.type_name)
        if want is None:
            continue
        kind, size, lanes = want
        what = f"{a.name}: {a.type_name}" if a.name else a.type_name
        label = f"--arg {spec.text}: argument {i} ({what}) of kernel {kernel.name}"
        got_kind, got_size = _numpy_kind(value.dtype), value.dtype.itemsize
        if (got_kind, got_size) != (kind, size):
            what = "a buffer" if spec.is_buffer else "a scalar"
            raise UsageError(f"{label} takes {_kind_word(kind, size)} elements; {what} of {value.dtype} "
                             f"({_kind_word(got_kind, got_size)}) would be read as the wrong bits")
        if spec.is_buffer:
            elements = value.size // lanes
            if workgroups < elements < work_items:
                warnings.append(f"{label} holds {elements} element(s), the grid has {work_items} work-items: "
                                "fine only if the kernel bounds its index")
    return warnings
