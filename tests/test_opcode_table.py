"""docs/opcodes.md is what scripts/gen_opcode_table.py makes of isa/, the model and the RTL
now, and README's "What works" quotes its opcode counts."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import isa
from tests.asmutil import needs_llvm

ROOT = Path(__file__).resolve().parent.parent


def _counts() -> tuple[int, int, int]:
    """(opcodes, model, RTL) as the code has them, not as any document says."""
    import hdl.simd
    import sim.execute

    def base(names):
        return {re.sub(r"_e(32|64)$", "", n) for n in names}
    names = {i.name for i in isa.OPCODES}
    return len(names), len(names & base(sim.execute.IMPLEMENTED)), len(names & base(hdl.simd.IMPLEMENTED))


@needs_llvm
def test_opcode_table_is_current():
    _counts()                       # the model and the RTL import: their columns are not left empty
    r = subprocess.run([sys.executable, "scripts/gen_opcode_table.py", "--check"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_opcode_counts_in_the_table_and_readme():
    total, model, rtl = _counts()
    head = (ROOT / "docs" / "opcodes.md").read_text()[:2000]
    assert f"{total} opcodes." in head and f"({model} implemented)" in head and f"({rtl} implemented;" in head
    readme = (ROOT / "README.md").read_text()
    works = readme[readme.index("## What works"):]
    works = works[:works.index("\n## ", 1)]
    for n, what in ((total, "opcodes in isa/"), (model, "opcodes the model executes"),
                    (rtl, "opcodes the RTL executes")):
        assert re.search(rf"\b{n} (gfx1200 )?opcodes\b", works), f"README's What works does not give the {n} {what}"
