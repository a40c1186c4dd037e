"""The package's shape, checked: no import cycle (imports inside functions count) and no function over 60 lines."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hsi"

#: lines of code (not blank, not comments, not the docstring) a function may have
MAX_FUNCTION_LINES = 60


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imported(node: ast.AST, module: str, is_package: bool, modules: dict[str, Path]) -> list[str]:
    """The hsi modules an import statement loads (the deepest module each imported name resolves to)."""
    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = (module if is_package else module.rpartition(".")[0]).split(".")
            base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    return [r for r in (resolve(n) for n in names if n.startswith("hsi")) if r and r != module]


def import_graph() -> dict[str, set[str]]:
    """Module -> the hsi modules it imports anywhere (module level, functions, type-checking blocks)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[name] = {dep for node in ast.walk(tree)
                       for dep in _imported(node, name, path.name == "__init__.py", modules)}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    doc = node.body[0] if node.body and isinstance(node.body[0], ast.Expr) and \
        isinstance(getattr(node.body[0], "value", None), ast.Constant) and \
        isinstance(node.body[0].value.value, str) else None
    count = 0
    for number in range(node.lineno, node.end_lineno + 1):
        if doc is not None and doc.lineno <= number <= doc.end_lineno:
            continue
        text = lines[number - 1].strip()
        if text and not text.startswith("#"):
            count += 1
    return count


def test_no_function_over_60_lines():
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _code_lines(node, lines)
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name} ({n} lines)")
    assert long == []


#: packages below :mod:`hsi.collection` (the public face of collections, and pack files): none may import it
LAYERS_BELOW_COLLECTION = ("hsi.io", "hsi.preprocess", "hsi.scenes", "hsi.data", "hsi.models", "hsi.training")


def upward_imports(graph: dict[str, set[str]], upper: str, below: tuple[str, ...]) -> list[str]:
    """``module -> imported`` for each module of ``below`` that imports ``upper`` or a module inside it."""
    def inside(name: str, package: str) -> bool:
        return name == package or name.startswith(package + ".")

    return sorted(f"{m} -> {d}" for m, deps in graph.items() if any(inside(m, b) for b in below)
                  for d in deps if inside(d, upper))


def test_upward_import_finder_finds_one():
    graph = {"hsi.data.datamodule": {"hsi.collection.pack"}, "hsi.collection.pack": {"hsi.data.sources"}}
    assert upward_imports(graph, "hsi.collection", ("hsi.data",)) == ["hsi.data.datamodule -> hsi.collection.pack"]


def test_nothing_below_collection_imports_it():
    assert upward_imports(import_graph(), "hsi.collection", LAYERS_BELOW_COLLECTION) == []


def class_swaps(source: str) -> list[int]:
    """Lines that assign an object's ``__class__`` (a class chosen at run time instead of at construction)."""
    return [node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, (ast.Assign, ast.AugAssign,
                                                                                    ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Attribute) and target.attr == "__class__"]


def test_class_swap_finder_finds_one():
    assert class_swaps("class A:\n    def f(self):\n        self.__class__ = B\n") == [3]
    assert class_swaps("x = y.__class__\n") == []


def test_no_class_is_swapped_at_run_time():
    swaps = [f"{path.relative_to(PACKAGE.parent)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
             for line in class_swaps(path.read_text(encoding="utf-8"))]
    assert swaps == []
