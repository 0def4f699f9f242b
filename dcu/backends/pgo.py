"""Profile-guided builds of the ``verilator`` backend's program (docs/toolflow.md,
"Profile-guided builds").

clang compiles the per-cycle C++ once with instrumentation, the result runs the
:data:`TRAINING` kernels, and clang compiles it again with the counts. Branch layout and
inlining then follow what a kernel makes the DCU do: timed alternately with the plain
build, the ``default`` DCU ran ``divergence_cl``, which is not a training kernel, 1.31x
faster at best (1.34x in median), with the same outputs and the same instruction count
within 0.3 %.

The training kernels are fixed, so two machines build the same program from the same
design; each is run only if the configuration holds it and its image fits the build's
memory. :func:`tools` says whether this machine can do it; ``DCU_VERILATOR_PGO=0`` turns it
off.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from ..admission import ResourceError, check_kernel

__all__ = ["TRAINING", "ProfileTools", "tools", "training_images"]

# Kernels that exercise the DCU's main paths: LDS with barriers and FMA (matmul_tile_cl),
# LDS atomics (lds_histogram_cl), an LDS reduction that the small presets hold too
# (lds_reduce_asm), the FP32 and integer VALUs, and partial waves with divergent control.
# divergence_cl, the kernel `dcu bench sim-speed` times, is left out.
TRAINING = ("matmul_tile_cl", "lds_histogram_cl", "lds_reduce_asm", "float_ops_cl", "int_alu_cl",
            "partial_wave_cl")
LLVM_PROFDATA = ("llvm-profdata-19", "llvm-profdata")
INSTALL_HINT = "apt-get install -y libclang-rt-19-dev llvm-19 (clang's profile runtime and llvm-profdata)"


@dataclass(frozen=True)
class ProfileTools:
    """What a profile-guided build needs: clang's profile runtime (linked by hand: Debian's
    clang 19 looks for it under a per-target directory that its package does not use) and
    ``llvm-profdata``."""
    runtime: Path
    profdata: str

    def generate(self, opt: str, directory: Path) -> dict:
        """make's variables for the instrumented build, writing its counts into ``directory``."""
        return {"OPT_FAST": f"{opt} -fprofile-generate={directory}",
                "USER_LDLIBS": f"{self.runtime} -u__llvm_profile_runtime"}

    def use(self, opt: str, profile: Path) -> dict:
        """make's variables for the build that uses ``profile`` (code the training did not
        reach, such as the -O0 construction code, is compiled without counts: no warning)."""
        return {"OPT_FAST": f"{opt} -fprofile-use={profile} -Wno-profile-instr-unprofiled "
                            "-Wno-profile-instr-out-of-date"}

    def merge(self, raw: list[Path], out: Path) -> None:
        """The counts of the instrumented runs (``raw``) in one profile ``out``."""
        subprocess.run([self.profdata, "merge", "-o", str(out), *map(str, raw)], check=True,
                       capture_output=True, text=True)


def tools(compiler: str | None) -> ProfileTools | None:
    """The profile tools for ``compiler`` (the build's ``CXX``), or None: with no clang, no
    profile runtime or no llvm-profdata, or with ``DCU_VERILATOR_PGO=0``. gcc is not used
    this way: its profile-guided program gave wrong results (docs/toolflow.md, "Profile-guided builds")."""
    if os.environ.get("DCU_VERILATOR_PGO", "1") == "0" or not compiler or "clang" not in compiler:
        return None
    profdata = next((p for p in LLVM_PROFDATA if shutil.which(p)), None)
    r = subprocess.run([compiler, "-print-resource-dir"], capture_output=True, text=True)
    if profdata is None or r.returncode != 0:
        return None
    names = {"libclang_rt.profile.a", f"libclang_rt.profile-{platform.machine()}.a"}
    runtime = next((p for p in sorted(Path(r.stdout.strip()).glob("lib/*/libclang_rt.profile*.a"))
                    if p.name in names), None)
    return ProfileTools(runtime, profdata) if runtime else None


def training_images(cfg, mem_bytes: int, mem_base: int) -> list[tuple[str, object]]:
    """``(name, HostImage)`` of each :data:`TRAINING` kernel that ``cfg`` holds and whose
    image fits a top of ``mem_bytes`` at ``mem_base`` (arguments from the manifest's
    generator, seed 0)."""
    import numpy as np
    from firmware_tests.manifest import get, path
    from ..hostimage import host_image, memory_size_for
    from ..prepare import load_program, prepare

    out = []
    for name in TRAINING:
        t = get(name)
        kernel = load_program(path(t)).kernel(t.kernel)
        try:
            check_kernel(cfg, kernel, t.block)
        except ResourceError:
            continue
        prep = prepare(kernel, t.grid, t.block, t.make_args(np.random.default_rng(0)))
        img = host_image(prep, cfg, bool(kernel.wgp_mode))
        if img.base == mem_base and memory_size_for(img.used_bytes) <= mem_bytes:
            out.append((name, img))
    return out
