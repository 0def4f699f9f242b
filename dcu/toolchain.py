"""LLVM 19 front end: assemble gfx1200 assembly, compile OpenCL C, link code objects.

OpenCL C is compiled as clang's driver compiles it for a ROCm target: stock code
generation (VOPD dual issue included), clang's OpenCL declarations
(``-finclude-default-header``) and AMD's device library (``opencl.bc``, ``ocml.bc``,
``ockl.bc`` and the ``oclc_*`` controls of Debian's ``rocm-device-libs``) linked as
builtin bitcode, so that math functions, work-item functions, atomics and sub-group
functions are AMD's own. That library predates gfx1200: its ISA-version control is
assembled from ``dcu/include/oclc_isa_version_1200.ll``.

Every build goes through a content-addressed cache under ``<repo>/build/cache/``:
the key hashes the source bytes, the device header and library (for OpenCL C), the
flags and the tool versions, so an unchanged kernel is never rebuilt and a changed
header, library or compiler is never served stale.

Notes
-----
The assembler is run with ``-triple=amdgcn-amd-amdhsa`` rather than the
``-arch=amdgcn``: with ``-arch`` llvm-mc picks the
``amdgcn-pc-linux-gnu`` triple and rejects the ``.amdhsa_kernel`` and
``.amdgpu_metadata`` directives that kernels need.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

__all__ = [
    "ToolchainError",
    "ToolNotFoundError",
    "REPO_ROOT",
    "CACHE_DIR",
    "DEVICE_HEADER",
    "MCPU",
    "device_library",
    "cl_flags",
    "find_tool",
    "tool_version",
    "assemble",
    "compile_cl",
    "link",
    "build",
    "objdump",
    "TOOLS",
]

REPO_ROOT = Path(__file__).resolve().parent.parent
# $DCU_CACHE_DIR overrides, e.g. for a read-only checkout.
CACHE_DIR = Path(os.environ.get("DCU_CACHE_DIR") or REPO_ROOT / "build" / "cache")
DEVICE_HEADER = REPO_ROOT / "dcu" / "include" / "dcu_device.h"
ISA_VERSION_SOURCE = REPO_ROOT / "dcu" / "include" / "oclc_isa_version_1200.ll"
MCPU = "gfx1200"
LLVM_DIR = Path("/usr/lib/llvm-19/bin")  # Debian's unversioned names, searched last
INSTALL_HINT = "apt-get install -y llvm-19 clang-19 lld-19"

# Where Debian (and ROCm) put the device library's bitcode; $DCU_DEVICE_LIB_DIR first.
DEVICE_LIB_DIRS = (Path("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"), Path("/usr/lib/amdgcn/bitcode"),
                   Path("/opt/rocm/amdgcn/bitcode"), Path("/opt/rocm/lib/llvm/lib/clang/amdgcn/bitcode"))
DEVICE_LIB_HINT = "apt-get install -y rocm-device-libs"
DEVICE_LIBS = ("opencl", "ocml", "ockl")

# Bump to invalidate every cached artefact when the build recipe changes.
_RECIPE_VERSION = "2"

TOOLS = {
    "llvm-mc": "llvm-mc-19",
    "clang": "clang-19",
    "ld.lld": "ld.lld-19",
    "llvm-objdump": "llvm-objdump-19",
    "llvm-as": "llvm-as-19",
}

ASM_FLAGS = ("-triple=amdgcn-amd-amdhsa", f"-mcpu={MCPU}", "-filetype=obj")
CL_FLAGS = (
    "-x", "cl", "-cl-std=CL2.0",
    "-target", "amdgcn-amd-amdhsa", f"-mcpu={MCPU}",
    "-O2", "-nogpulib",
    "-Xclang", "-finclude-default-header",
)
# --no-undefined: a kernel calling an undefined function (e.g. get_global_id
# without the device header) must fail here, not at run time.
LINK_FLAGS = ("-shared", "--no-undefined")


class ToolchainError(RuntimeError):
    """A tool failed (or is missing).

    Attributes
    ----------
    cmd : list of str
        The command line that failed (empty if no command ran).
    stderr : str
        The tool's diagnostic output.
    """

    def __init__(self, message: str, cmd: list[str] | None = None, stderr: str = ""):
        self.cmd = list(cmd or [])
        self.stderr = stderr
        text = message
        if stderr:
            text += "\n" + stderr.rstrip()
        super().__init__(text)


class ToolNotFoundError(ToolchainError):
    """An LLVM 19 tool is not installed."""


def find_tool(name: str) -> str:
    """Return the path of an LLVM 19 tool.

    Parameters
    ----------
    name : str
        Unversioned tool name: ``"llvm-mc"``, ``"clang"``, ``"ld.lld"``,
        ``"llvm-objdump"`` or ``"llvm-as"``.

    Returns
    -------
    str
        Absolute path of the executable. ``$DCU_LLVM_BIN`` (a directory) is
        searched first, then ``PATH`` for the ``-19`` suffixed name, then
        ``LLVM_DIR`` (``/usr/lib/llvm-19/bin``).

    Raises
    ------
    ToolNotFoundError
        If the tool cannot be found; the message names the apt command.
    """
    if name not in TOOLS:
        raise ValueError(f"unknown tool {name!r}; known: {', '.join(sorted(TOOLS))}")
    versioned = TOOLS[name]
    candidates = []
    env_dir = os.environ.get("DCU_LLVM_BIN")
    if env_dir:
        candidates += [Path(env_dir) / versioned, Path(env_dir) / name]
    found = shutil.which(versioned)
    if found:
        return found
    candidates.append(LLVM_DIR / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    raise ToolNotFoundError(
        f"{versioned} not found (needed to build gfx1200 code); install it with: {INSTALL_HINT}"
    )


@functools.lru_cache(maxsize=None)
def tool_version(name: str) -> str:
    """Return the first line of ``<tool> --version`` (part of every cache key)."""
    exe = find_tool(name)
    proc = subprocess.run([exe, "--version"], capture_output=True, text=True)
    out = (proc.stdout or proc.stderr).strip()
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return " ".join(lines[:2]) if lines else exe


def _run(cmd: list[str], what: str, extra_note: str = "") -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        msg = f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}"
        if extra_note:
            msg += "\n" + extra_note
        raise ToolchainError(msg, cmd, proc.stderr or proc.stdout)


def _read_source(src: str | os.PathLike) -> tuple[Path, bytes]:
    path = Path(src)
    if not path.is_file():
        raise FileNotFoundError(f"source file not found: {path}")
    return path, path.read_bytes()


def _cache_path(stem: str, parts: list[bytes | str], suffix: str = ".hsaco") -> Path:
    h = hashlib.sha256()
    for p in [_RECIPE_VERSION, *parts]:
        b = p.encode() if isinstance(p, str) else p
        # Length prefix so that part boundaries cannot alias.
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return CACHE_DIR / f"{stem}-{h.hexdigest()[:20]}{suffix}"


def _scratch(prefix: str):
    # Inside the cache directory, so that os.replace() never crosses filesystems.
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(prefix=prefix, dir=CACHE_DIR)


def _publish(tmp: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    # os.replace is atomic: parallel test workers never see a half-written file.
    os.replace(tmp, dest)
    return dest


def _link_into(obj: Path, dest: Path, tmpdir: Path, label: Path, note: str = "") -> Path:
    out = tmpdir / "out.hsaco"
    _run([find_tool("ld.lld"), *LINK_FLAGS, str(obj), "-o", str(out)], f"linking {label}", note)
    return _publish(out, dest)


def assemble(src: str | os.PathLike) -> Path:
    """Assemble a gfx1200 ``.s`` file and link it into a code object.

    Parameters
    ----------
    src : path-like
        Assembly source. A kernel needs an ``.amdhsa_kernel`` block; argument
        metadata is present only if the file has an ``.amdgpu_metadata`` block.

    Returns
    -------
    pathlib.Path
        The linked code object (``.hsaco``) in the build cache.

    Raises
    ------
    ToolchainError
        If llvm-mc or ld.lld fails; carries the tool's stderr.
    """
    path, data = _read_source(src)
    dest = _cache_path(path.stem, ["asm", data, *ASM_FLAGS, *LINK_FLAGS,
                                   tool_version("llvm-mc"), tool_version("ld.lld")])
    if dest.is_file():
        return dest
    with _scratch("dcu-asm-") as td:
        obj = Path(td) / "out.o"
        _run([find_tool("llvm-mc"), *ASM_FLAGS, str(path), "-o", str(obj)], f"assembling {path}")
        return _link_into(obj, dest, Path(td), path)


# The library's oclc_* controls, chosen from the OpenCL options as clang's ROCm driver
# chooses them (clang/lib/Driver/ToolChains/AMDGPU.cpp): each is "on" when one of its
# options is given. Wave32 and code object v5 are gfx1200's defaults.
_CONTROL_OPTIONS = {
    "oclc_daz_opt": ("-cl-denorms-are-zero",),
    "oclc_finite_only": ("-cl-finite-math-only", "-cl-fast-relaxed-math"),
    "oclc_unsafe_math": ("-cl-unsafe-math-optimizations", "-cl-fast-relaxed-math"),
    "oclc_correctly_rounded_sqrt": ("-cl-fp32-correctly-rounded-divide-sqrt",),
}
_FIXED_CONTROLS = ("oclc_wavefrontsize64_off", "oclc_abi_version_500")


def _device_lib_dir() -> Path:
    env = os.environ.get("DCU_DEVICE_LIB_DIR")
    dirs = ([Path(env)] if env else []) + list(DEVICE_LIB_DIRS)
    for d in dirs:
        if all((d / f"{name}.bc").is_file() for name in DEVICE_LIBS):
            return d
    raise ToolchainError(
        "the ROCm device library (opencl.bc, ocml.bc, ockl.bc and the oclc_*.bc controls), which "
        "every OpenCL C kernel links, was not found in " + ", ".join(str(d) for d in dirs)
        + f"; install it with: {DEVICE_LIB_HINT} (or point $DCU_DEVICE_LIB_DIR at its bitcode directory)")


def _isa_version_bitcode() -> Path:
    """The gfx1200 ISA-version control, assembled from its LLVM IR into the cache."""
    text = ISA_VERSION_SOURCE.read_bytes()
    dest = _cache_path(ISA_VERSION_SOURCE.stem, ["llvm-as", text, tool_version("llvm-as")], ".bc")
    if not dest.is_file():
        with _scratch("dcu-as-") as td:
            out = Path(td) / "out.bc"
            _run([find_tool("llvm-as"), str(ISA_VERSION_SOURCE), "-o", str(out)],
                 f"assembling {ISA_VERSION_SOURCE}")
            _publish(out, dest)
    return dest


@functools.lru_cache(maxsize=None)
def _file_digest(path: Path, size: int, mtime_ns: int) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def device_library(options: Sequence[str] = ()) -> list[Path]:
    """Bitcode files an OpenCL C kernel compiled with ``options`` links, in link order.

    Raises
    ------
    ToolchainError
        If the library is not installed; the message names the apt command.
    """
    d = _device_lib_dir()
    names = list(DEVICE_LIBS) + list(_FIXED_CONTROLS)
    for control, switches in _CONTROL_OPTIONS.items():
        names.append(control + ("_on" if any(o in switches for o in options) else "_off"))
    missing = [n for n in names if not (d / f"{n}.bc").is_file()]
    if missing:
        raise ToolchainError(f"the device library in {d} lacks {', '.join(m + '.bc' for m in missing)}; "
                             f"reinstall it with: {DEVICE_LIB_HINT}")
    return [d / f"{n}.bc" for n in names] + [_isa_version_bitcode()]


def _library_key(libs: Sequence[Path]) -> list[str]:
    out = []
    for lib in libs:
        st = lib.stat()
        out.append(f"{lib.name}:{_file_digest(lib, st.st_size, st.st_mtime_ns)}")
    return out


def cl_flags(wgp: bool = False, options: Sequence[str] = ()) -> list[str]:
    """clang's flags for an OpenCL C kernel, less the device library and the header."""
    flags = list(CL_FLAGS)
    if not wgp:
        flags.append("-mcumode")
    return flags + list(options)


def compile_cl(src: str | os.PathLike, wgp: bool = False, options: Sequence[str] = ()) -> Path:
    """Compile an OpenCL C kernel file for gfx1200 and link it.

    Parameters
    ----------
    src : path-like
        OpenCL C source (OpenCL 2.0). clang's OpenCL declarations are included and
        AMD's device library is linked (see :func:`device_library`);
        ``dcu/include/dcu_device.h`` is force-included after them when it exists.
    wgp : bool, optional
        Compile for WGP mode (a workgroup may span both CUs). The default is CU
        mode (``-mcumode``).
    options : sequence of str, optional
        Further clang options, e.g. ``-cl-fp32-correctly-rounded-divide-sqrt``; those
        that select a device-library control select it as clang's driver does.

    Returns
    -------
    pathlib.Path
        The linked code object (``.hsaco``) in the build cache.

    Raises
    ------
    ToolchainError
        If clang or ld.lld fails (carries the tool's stderr), or the device library
        is not installed.
    """
    path, data = _read_source(src)
    options = tuple(options)
    flags = cl_flags(wgp, options)
    libs = device_library(options)
    for lib in libs:
        flags += ["-Xclang", "-mlink-builtin-bitcode", "-Xclang", str(lib)]
    header = b""
    if DEVICE_HEADER.is_file():
        header = DEVICE_HEADER.read_bytes()
        flags += ["-include", str(DEVICE_HEADER)]
    dest = _cache_path(path.stem, ["cl", data, header, *flags, *_library_key(libs), *LINK_FLAGS,
                                   tool_version("clang"), tool_version("ld.lld")])
    if dest.is_file():
        return dest
    with _scratch("dcu-cl-") as td:
        obj = Path(td) / "out.o"
        _run([find_tool("clang"), *flags, "-c", str(path), "-o", str(obj)], f"compiling {path}")
        return _link_into(obj, dest, Path(td), path)


def link(obj: str | os.PathLike) -> Path:
    """Link a relocatable gfx1200 object (``.o``) into a code object.

    Parameters
    ----------
    obj : path-like
        ELF relocatable object produced by llvm-mc or clang.

    Returns
    -------
    pathlib.Path
        The linked code object in the build cache.
    """
    path, data = _read_source(obj)
    dest = _cache_path(path.stem, ["link", data, *LINK_FLAGS, tool_version("ld.lld")])
    if dest.is_file():
        return dest
    with _scratch("dcu-ld-") as td:
        return _link_into(path, dest, Path(td), path)


def build(path: str | os.PathLike, wgp: bool = False, options: Sequence[str] = ()) -> Path:
    """Turn any supported input into a linked code object.

    Parameters
    ----------
    path : path-like
        ``.s`` (assembled), ``.cl`` (compiled), ``.o`` (linked), or
        ``.hsaco`` / ``.co`` (returned as is).
    wgp : bool, optional
        WGP mode for OpenCL C (ignored for other inputs: assembly states its
        mode in ``.amdhsa_workgroup_processor_mode``).
    options
        For OpenCL C: see :func:`compile_cl` (ignored for other inputs).

    Returns
    -------
    pathlib.Path
        Path of a linked code object.

    Raises
    ------
    ToolchainError
        For an unsupported suffix or a failing tool.
    FileNotFoundError
        If ``path`` does not exist.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"file not found: {p}")
    suffix = p.suffix.lower()
    if suffix == ".s":
        return assemble(p)
    if suffix == ".cl":
        return compile_cl(p, wgp=wgp, options=options)
    if suffix == ".o":
        return link(p)
    if suffix in (".hsaco", ".co"):
        return p
    raise ToolchainError(
        f"cannot build {p}: unsupported suffix {p.suffix!r} "
        "(expected .s, .cl, .o, .hsaco or .co)")


def objdump(path: str | os.PathLike) -> str:
    """Return ``llvm-objdump -d`` of a code object (LLVM's disassembly, an oracle)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"file not found: {p}")
    cmd = [find_tool("llvm-objdump"), "-d", f"--mcpu={MCPU}", str(p)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolchainError(f"llvm-objdump failed on {p}", cmd, proc.stderr)
    return proc.stdout
