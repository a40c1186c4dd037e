"""The package's shape, checked: no import cycle and no import running back up the layers (imports inside
functions count), no function over 60 lines, no class swapped at run time."""

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


#: The layers of the package, lowest first. A module may import modules of its own layer and of the layers below it,
#: never of one above: an import running back up ties a low layer to everything above it (and is a cycle waiting to
#: happen). Each entry is a module or a package (standing for every module inside it); the most specific entry
#: decides. "hsi" is the base layer: the package itself and every module no higher entry names (``hsi.errors``,
#: ``hsi.transaction``, ``hsi._atomic``, ``hsi._paths`` ...), so a new top-level module starts at the bottom.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("hsi",),               # the base (hsi.errors, hsi.transaction, the option rules hsi._checks and hsi._roles ...)
    ("hsi.io",),            # readers and writers of files
    ("hsi.preprocess",),    # transformers and splits on arrays
    ("hsi.scenes",),        # the scene registry, reading through hsi.io
    ("hsi.viz",),           # figures of cubes, maps and splits
    ("hsi.sinks",),         # output formats of a map, drawing previews with hsi.viz
    ("hsi._combinations",),  # torch-free checks of option combinations, looking scenes up in the registry
    ("hsi.data",),          # datasets, loaders, the DataModule
    ("hsi.models", "hsi.classical"),  # networks and the classical baselines
    ("hsi.training",),      # the LightningModule and a training run
    ("hsi.collection",),    # the public face of scene collections, and pack files
    ("hsi.infer",),         # whole-scene inference from a checkpoint
    ("hsi.evaluate",),      # cross-validated evaluation: many training runs
    ("hsi.doctor",),        # checks of a pipeline, using inference
    ("hsi.cli", "hsi.__main__"),  # the command line, on top of everything
)


def _inside(name: str, entry: str) -> bool:
    return name == entry or name.startswith(entry + ".")


def layer_of(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int:
    """The index in ``layers`` of the most specific entry holding ``module`` (0 when none does)."""
    found = [(len(entry), i) for i, entries in enumerate(layers) for entry in entries if _inside(module, entry)]
    return max(found)[1] if found else 0


def upward_imports(graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """``module -> imported`` for each import of a module in a higher layer than the importing one."""
    return sorted(f"{module} -> {dep}" for module, deps in graph.items() for dep in deps
                  if layer_of(dep, layers) > layer_of(module, layers))


def test_upward_import_finder_finds_one():
    layers = (("hsi",), ("hsi.io",), ("hsi._rules",), ("hsi.data",))
    graph = {"hsi.io.envi": {"hsi.errors", "hsi.data.cache"}, "hsi.data.cache": {"hsi.io.envi", "hsi._rules"},
             "hsi._rules": {"hsi.io.envi"}, "hsi._atomic": {"hsi._rules"}, "hsi.errors": set()}
    assert upward_imports(graph, layers) == ["hsi._atomic -> hsi._rules", "hsi.io.envi -> hsi.data.cache"]
    assert layer_of("hsi._new", layers) == 0 and layer_of("hsi", layers) == 0  # unnamed: the base layer
    assert upward_imports({"hsi.data.cache": {"hsi.io.envi"}, "hsi.io.envi": set()}, layers) == []


def test_an_import_added_up_the_real_layers_is_found():
    graph = import_graph()
    reader = next(m for m in sorted(graph) if m.startswith("hsi.io."))
    graph[reader] = graph[reader] | {"hsi.training"}
    assert f"{reader} -> hsi.training" in upward_imports(graph)


def test_every_layer_entry_is_a_module_of_the_package():
    modules = _modules()
    assert [entry for entries in LAYERS for entry in entries if entry not in modules] == []


def test_no_import_runs_back_up_the_layers():
    assert upward_imports(import_graph()) == []


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
