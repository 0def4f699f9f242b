"""Front end of the RDNA 4 dual compute unit: toolchain, code objects, launch API, CLI.

The launch API (``dcu.load_program``, ``dcu.launch``, ``dcu.RunReport``) lives in
``dcu/launch.py`` and is re-exported here, as docs/ARCHITECTURE.md promises.
It is imported eagerly because ``dcu.launch`` names both the submodule and the
function: binding the function here, once, keeps ``dcu.launch(...)`` callable.
"""

from .toolchain import ToolchainError, build
from .codeobj import CodeObject, CodeObjectError, KernelArg, KernelInfo, load_code_object

try:
    from .launch import RunReport, launch, load_program  # noqa: F401
except ModuleNotFoundError as _e:  # only while dcu/launch.py is not written yet
    if _e.name != f"{__name__}.launch":
        raise

__all__ = [
    "ToolchainError", "build",
    "CodeObject", "CodeObjectError", "KernelArg", "KernelInfo", "load_code_object",
    "load_program", "launch", "RunReport",
]
