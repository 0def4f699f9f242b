"""The project's module import graph: no import cycles, and the model and the RTL apart.

The graph is read from the source with ``ast``, not by importing: an edge for every
``import`` and ``from ... import`` statement wherever it stands (module level or inside a
function, so an import hidden in a function to dodge a cycle still counts) and for
``importlib.import_module("literal")``, except under ``if TYPE_CHECKING:``, which never runs
(a name wanted for annotations only). ``from pkg import name`` points at ``pkg.name`` when
that is a module of the project, else at ``pkg``. Importing a submodule also runs its
package's ``__init__``; that implicit edge is left out, since every package here imports its
own submodules and the parent is always loaded first.

No module reaches for another's private names either: :func:`private_uses` finds every
``from M import _x`` and ``M._x`` (``M`` a module of the project under any name it was imported
as) in the packages, ``tests/``, ``bench/`` and ``scripts/``. A name another module needs is
public; helpers the tests share live in the test-support modules (``tests/asmutil.py`` ...).
A test's ``monkeypatch.setattr(module, "_x", ...)`` names a string, not a use, and stays allowed:
replacing a module's internals is what such a test is for.

``python tests/test_imports.py`` prints every cycle (one per strongly connected component) and
every private name used across modules.
"""
from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("isa", "sim", "hdl", "dcu", "firmware_tests")


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> source file, for every module of the project's packages."""
    mods = {}
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name of a (possibly relative) ``from`` import's module."""
    if level == 0:
        return name or ""
    base = module.split(".")
    base = base[:len(base) - level + (1 if is_package else 0)]
    return ".".join(base + ([name] if name else []))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` blocks."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo += node.orelse
            continue
        todo += ast.iter_child_nodes(node)


def _imported_names(tree: ast.AST, module: str, is_package: bool, mods: dict) -> set[str]:
    """The project modules one module's source imports."""
    out = set()

    def add(name: str):
        # ``import a.b.c`` may name an attribute path: keep the longest project module prefix
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in mods:
                out.add(".".join(parts[:i]))
                return

    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            src = _absolute(module, is_package, node.level, node.module)
            for alias in node.names:
                sub = f"{src}.{alias.name}"
                add(sub if sub in mods else src)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            add(node.args[0].value)
    out.discard(module)   # a package's ``from . import name`` of one of its own names
    return out


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the project modules it imports."""
    mods = project_modules(root)
    graph = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        graph[name] = _imported_names(tree, name, path.name == "__init__.py", mods)
    return graph


def strong_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    comps.append(sorted(comp))
    return comps


def shortest_cycle(graph: dict[str, set[str]], start: str, within: set[str]) -> list[str]:
    """The shortest import path from ``start`` back to itself through ``within``."""
    prev, queue = {start: None}, deque([start])
    while queue:
        v = queue.popleft()
        if start in graph[v]:
            path = [start]
            while v is not None:
                path.append(v)
                v = prev[v]
            return path[::-1]
        for w in sorted(graph[v] & within):
            if w not in prev:
                prev[w] = v
                queue.append(w)
    raise ValueError(f"{start} is on no cycle")


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import loops: strongly connected components of more than one module."""
    return [comp for comp in strong_components(graph) if len(comp) > 1]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per import loop: the shortest through the loop's first module."""
    return [shortest_cycle(graph, comp[0], set(comp)) for comp in loops(graph)]


def describe_loops(graph: dict[str, set[str]]) -> list[str]:
    """One line per import loop: its shortest cycle, then every module of the loop."""
    return [f"{' -> '.join(shortest_cycle(graph, comp[0], set(comp)))}   (loop: {', '.join(comp)})"
            for comp in loops(graph)]


def crossings(graph: dict[str, set[str]], own: str, other: str) -> list[str]:
    """Import chains by which a module of package ``own`` loads one of package ``other``."""
    found = set()
    for start in (m for m in graph if m.split(".")[0] == own):
        prev, queue = {start: None}, deque([start])
        while queue:
            v = queue.popleft()
            if v.split(".")[0] == other:
                chain = [v]
                while prev[chain[-1]] is not None:
                    chain.append(prev[chain[-1]])
                found.add(" -> ".join(reversed(chain)))
                continue
            for w in sorted(graph[v] - prev.keys()):
                prev[w] = v
                queue.append(w)
    return sorted(found)


# -- private names -------------------------------------------------------------------------
SCRIPT_DIRS = ("tests", "bench", "scripts")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def checked_files(root: Path = ROOT) -> dict[str, Path]:
    """Dotted name -> file, for the project's modules and the tests' and scripts' files.

    A file under ``tests/`` or ``bench/`` is also known by its bare name (``test_fp32``): the
    tests' folders are on ``sys.path`` for pytest, cocotb and the bench scripts."""
    files = project_modules(root)
    for folder in SCRIPT_DIRS:
        for path in sorted((root / folder).rglob("*.py")):
            files[".".join(path.relative_to(root).with_suffix("").parts)] = path
    return files


def _module_of(name: str, files: dict[str, Path], bare: dict[str, str]) -> str | None:
    return name if name in files else bare.get(name)


def _private_uses_in(tree: ast.AST, module: str, is_package: bool, files: dict, bare: dict) -> list[tuple[int, str]]:
    """(line, "M._x") for each private name of another module ``tree`` imports or reads."""
    found, bound = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and _module_of(alias.name, files, bare):
                    bound[alias.asname] = _module_of(alias.name, files, bare)
                elif not alias.asname:          # ``import a.b`` binds ``a``
                    top = alias.name.split(".")[0]
                    if _module_of(top, files, bare):
                        bound[top] = _module_of(top, files, bare)
        elif isinstance(node, ast.ImportFrom):
            src = _absolute(module, is_package, node.level, node.module)
            for alias in node.names:
                sub = _module_of(f"{src}.{alias.name}", files, bare)
                if sub:
                    bound[alias.asname or alias.name] = sub
                elif _is_private(alias.name) and _module_of(src, files, bare) not in (None, module):
                    found.append((node.lineno, f"{_module_of(src, files, bare)}.{alias.name}"))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _is_private(node.attr)):
            continue
        chain, base = [], node.value
        while isinstance(base, ast.Attribute):
            chain.append(base.attr)
            base = base.value
        if not (isinstance(base, ast.Name) and base.id in bound):
            continue
        owner = ".".join([bound[base.id], *reversed(chain)])
        owner = _module_of(owner, files, bare) or owner
        if owner in files and owner != module:
            found.append((node.lineno, f"{owner}.{node.attr}"))
    return found


def private_uses(root: Path = ROOT) -> list[str]:
    """``path:line: M._x`` for each private name of a project module used by another file."""
    files = checked_files(root)
    bare = {name.rsplit(".", 1)[-1]: name for name in files if name.split(".")[0] in ("tests", "bench")}
    out = []
    for name, path in files.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for line, use in _private_uses_in(tree, name, path.name == "__init__.py", files, bare):
            out.append(f"{path.relative_to(root)}:{line}: {use}")
    return sorted(out)


# -- tests ---------------------------------------------------------------------------------
def test_graph_reads_the_project():
    g = import_graph()
    assert {"isa.decoder", "sim.execute", "hdl.simd", "dcu.launch", "firmware_tests.manifest"} <= set(g)
    assert "hdl.layouts" in g["hdl.simd.simd"] and "isa" in g["sim.execute"] | g["sim.model"]


def _tree(root: Path, files: dict[str, str]) -> dict[str, set[str]]:
    for pkg in PACKAGES:
        (root / pkg).mkdir()
        (root / pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (root / name).write_text(text)
    return import_graph(root)


def test_graph_sees_function_level_relative_and_dynamic_imports(tmp_path):
    g = _tree(tmp_path, {
        "isa/a.py": "from .b import f\n",
        "isa/b.py": "def f():\n    from isa import c\n",
        "isa/c.py": "import importlib\nmod = importlib.import_module('isa.a')\n",
        "isa/d.py": "from typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n    from .a import f\nelse:\n    import isa.c\n",
        "sim/e.py": "from isa.a import f\nimport numpy\n",
    })
    assert g["isa.a"] == {"isa.b"} and g["isa.b"] == {"isa.c"} and g["isa.c"] == {"isa.a"}
    assert g["isa.d"] == {"isa.c"} and g["sim.e"] == {"isa.a"}
    assert cycles(g) == [["isa.a", "isa.b", "isa.c", "isa.a"]]
    assert describe_loops(g) == ["isa.a -> isa.b -> isa.c -> isa.a   (loop: isa.a, isa.b, isa.c)"]


def test_crossings_follow_chains(tmp_path):
    g = _tree(tmp_path, {"sim/a.py": "from isa import b\n", "isa/b.py": "from hdl.c import x\n", "hdl/c.py": ""})
    assert crossings(g, "sim", "hdl") == ["sim.a -> isa.b -> hdl.c"]
    assert crossings(g, "hdl", "sim") == []


def test_no_import_cycles():
    found = describe_loops(import_graph())
    assert not found, "import cycles:\n" + "\n".join(found)


def test_model_and_rtl_do_not_import_each_other():
    g = import_graph()
    bad = crossings(g, "hdl", "sim") + crossings(g, "sim", "hdl")
    assert not bad, "hdl/ and sim/ must stay apart:\n" + "\n".join(bad[:20])


def test_private_uses_are_found(tmp_path):
    for folder in SCRIPT_DIRS:
        (tmp_path / folder).mkdir()
    _tree(tmp_path, {
        "isa/a.py": "_x = 1\ny = 2\n\ndef _f():\n    return _x\n",
        "isa/b.py": "from .a import _x, y\nfrom isa import a as A\nimport isa.a\nprint(A._f, isa.a._x, A.y)\n",
        "sim/c.py": "from isa import a\nprint(a.__name__, a.y)\n",
        "tests/helper.py": "_z = 3\n",
    })
    (tmp_path / "tests" / "test_d.py").write_text("import helper\nfrom tests.helper import _z\nprint(helper._z)\n")
    (tmp_path / "tests" / "test_e.py").write_text("def test(monkeypatch):\n"
                                                  "    import isa.a\n    monkeypatch.setattr(isa.a, '_x', 0)\n")
    assert private_uses(tmp_path) == ["isa/b.py:1: isa.a._x", "isa/b.py:4: isa.a._f", "isa/b.py:4: isa.a._x",
                                      "tests/test_d.py:2: tests.helper._z", "tests/test_d.py:3: tests.helper._z"]


def test_no_private_names_across_modules():
    found = private_uses()
    assert not found, ("private names used outside their module (make them public, or move a "
                       "shared test helper into a test-support module):\n" + "\n".join(found))


if __name__ == "__main__":
    print("\n".join(describe_loops(import_graph())) or "no import cycles")
    print("\n".join(private_uses()) or "no private names used across modules")
