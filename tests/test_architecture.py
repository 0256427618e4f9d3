"""The shape of the package (issues 16 and 21), checked by reading its source with ``ast``.

* (a) a lower layer never imports a higher one (module- and function-level imports alike);
* (b) the package root holds at most 12 modules;
* (c) no module is longer than 800 lines, no function longer than 80 lines of code (docstring,
  comments and blank lines aside) or with more than 12 parameters (a settings dataclass instead);
* (d) at most 2 imports of another voxmem module's ``_private`` names across the package;
* (e) one vocabulary: no function takes the confidence level as ``ci`` (it is ``ci_level``);
* (f) no use of another package's private names (``pd._config``, ``from pkg._mod import ...``,
  ``getattr(obj, "_name")``), no method of another package's object replaced, no stub put in
  ``sys.modules``: speed comes from doing less, not from internals;
* (g) the library reads only the environment variables a user is told about (:data:`ALLOWED_ENV`);
* (h) the import graph (module- and function-level imports) has no cycle between modules;
* (i) at most :data:`MAX_INNER_IMPORTS` internal imports sit inside functions across the package, each
  where the command line's start-up needs it and saying so in a ``# start-up: ...`` comment.

The layers are those of CONTRIBUTING.md.  Nothing is imported or run: the tests read files.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "voxmem_analysis"
NAME = "voxmem_analysis"

#: Layer of each root module / subpackage: an import may only go to the same or a lower layer.
LAYERS: dict[str, int] = {
    "errors": 0, "taxonomy": 0, "artifacts": 0, "output": 0, "paths": 0, "stamp": 0, "textlimits": 0, "writing": 0,
    "console": 0, "io": 1, "stats": 1,
    "analysis": 2,
    "plots": 3,
    "reproduce": 4,
    "synth": 5,
    "commands": 6, "cli": 6, "__main__": 6,
}
#: The package itself (``from voxmem_analysis import __version__``) is metadata, importable by all.
ROOT_LAYER = 0
MAX_ROOT_MODULES = 12
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80
MAX_PARAMETERS = 12
MAX_PRIVATE_IMPORTS = 2

#: Internal imports allowed inside functions, across the package (start-up needs only).
MAX_INNER_IMPORTS = 20
#: The comment an internal import inside a function carries, on its line or the line above.
STARTUP_REASON = "# start-up:"

#: Environment variables the library may read, each one told to the user (README, ``--help``):
#: the repository root, the traceback of an internal error, the cache folder, the bootstrap's limits.
ALLOWED_ENV: frozenset[str] = frozenset({
    "VOXMEM_ROOT",                  # paths.ROOT_ENV
    "VOXMEM_DEBUG",                 # cli.DEBUG_ENV
    "VOXMEM_CACHE_DIR", "XDG_CACHE_HOME",           # the parsed-release cache folder (io/cache.py)
    "VOXMEM_BOOTSTRAP_MEMORY", "VOXMEM_MAX_N_BOOT",  # stats/resources.py
})
#: Underscore names of other packages that are documented public API.
PUBLIC_UNDERSCORE: frozenset[str] = frozenset({"os._exit", "sys._getframe"})
#: Methods of ``sys.modules`` (and of ``os.environ``) that write to it.
_WRITING_METHODS = frozenset({"setdefault", "update", "pop", "popitem", "clear", "__setitem__", "__delitem__"})


@functools.lru_cache(maxsize=None)
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the module (``ast.walk``, once per test session)."""
    return tuple(ast.walk(_parse(path)))


def _modules(package: Path = PACKAGE) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path: Path, package: Path = PACKAGE) -> str:
    return path.relative_to(package).as_posix()


def _dotted(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _unit(dotted: str) -> str | None:
    """The layer unit of a dotted module name: its root module or subpackage (None: the package itself)."""
    parts = dotted.split(".")
    if parts[0] != NAME:
        raise ValueError(dotted)
    return parts[1] if len(parts) > 1 else None


def _layer(unit: str | None) -> int:
    if unit is None:
        return ROOT_LAYER
    if unit not in LAYERS:
        raise AssertionError(f"{NAME}.{unit} has no layer: add it to LAYERS here and to CONTRIBUTING.md")
    return LAYERS[unit]


def _resolve(node: ast.ImportFrom, here: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = here.split(".") if is_package else here.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path, package: Path = PACKAGE) -> list[tuple[int, str]]:
    """``(line, dotted target)`` of every import of the package in ``path``, at any depth."""
    here = _dotted(path, package)
    out = []
    for node in _nodes(path):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == NAME]
        elif isinstance(node, ast.ImportFrom):
            mod = _resolve(node, here, path.name == "__init__.py")
            if mod.split(".")[0] != NAME:
                continue
            if mod == NAME:   # `from voxmem_analysis import taxonomy` imports the submodule
                for a in node.names:
                    sub = package / a.name
                    out.append((node.lineno, f"{NAME}.{a.name}" if sub.is_dir() or sub.with_suffix(".py").exists()
                                else NAME))
            else:
                out.append((node.lineno, mod))
    return out


def _layer_violations(package: Path = PACKAGE) -> list[str]:
    bad = []
    for path in _modules(package):
        src_unit = _unit(_dotted(path, package))
        if src_unit is None:       # voxmem_analysis/__init__.py: the lazy public facade
            continue
        for line, target in _imports(path, package):
            dst_unit = _unit(target)
            if dst_unit != src_unit and _layer(dst_unit) > _layer(src_unit):
                bad.append(f"{_rel(path, package)}:{line} ({src_unit}, layer {_layer(src_unit)}) imports {target} "
                           f"({dst_unit}, layer {_layer(dst_unit)})")
    return bad


def _code_lines(node: ast.AST, lines: list[str]) -> int:
    body = getattr(node, "body", [])
    doc = set()
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc = set(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(1 for i in range(node.lineno, node.end_lineno + 1)
               if i not in doc and lines[i - 1].strip() and not lines[i - 1].strip().startswith("#"))


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Parameters of a function, ``*args`` and ``**kwargs`` included, a method's ``self``/``cls`` not."""
    a = node.args
    names = [x.arg for x in (*a.posonlyargs, *a.args)]
    skip = 1 if names and names[0] in ("self", "cls") else 0
    return len(names) - skip + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)


def oversized(package: Path = PACKAGE) -> list[str]:
    """Modules over :data:`MAX_MODULE_LINES` lines, functions over :data:`MAX_FUNCTION_LINES` lines of code
    or :data:`MAX_PARAMETERS` parameters: ``"path: N lines"``, ``"path:line name: N lines of code"``, ``"... N parameters"``."""
    out = []
    for path in _modules(package):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        if len(lines) > MAX_MODULE_LINES:
            out.append(f"{_rel(path, package)}: {len(lines)} lines")
        for node in _nodes(path):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n, k = _code_lines(node, lines), _parameters(node)
                where = f"{_rel(path, package)}:{node.lineno} {node.name}"
                if n > MAX_FUNCTION_LINES:
                    out.append(f"{where}: {n} lines of code")
                if k > MAX_PARAMETERS:
                    out.append(f"{where}: {k} parameters")
    return out


# ----------------------------------------------------------------------------- other packages' internals
def _trees(path: Path) -> list[tuple[tuple[ast.AST, ...], int]]:
    """``(nodes, line offset)`` of the module and of every string in it that is Python code (code it
    sends to a kernel or a subprocess): a statement besides a docstring, and no prose."""
    out = [(_nodes(path), 0)]
    for node in _nodes(path):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" in node.value \
                and ("import " in node.value or "def " in node.value):
            try:
                sub = ast.parse(node.value)
            except (SyntaxError, ValueError):
                continue
            if any(not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)) for n in sub.body):
                out.append((tuple(ast.walk(sub)), node.lineno - 1))
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _foreign_names(nodes) -> dict[str, str]:
    """Names bound by an import of another package -> what they name (``pd`` -> ``pandas``)."""
    out = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] != NAME:
                    out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] != NAME:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _chain(node: ast.Attribute) -> tuple[str | None, list[str]]:
    """``pd.io._x`` -> ("pd", ["io", "_x"]); a chain not rooted in a name -> (None, [...])."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    return (node.id if isinstance(node, ast.Name) else None), attrs[::-1]


def _is_sys_modules(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "modules" and isinstance(node.value, ast.Name) \
        and node.value.id == "sys"


def _local_functions(nodes) -> set[str]:
    return {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _internals_in(nodes: tuple[ast.AST, ...], rel: str, offset: int = 0) -> list[str]:
    out = []
    foreign, local_funcs = _foreign_names(nodes), _local_functions(nodes)

    @functools.lru_cache(maxsize=None)
    def read() -> set[str]:   # the attributes the module reads (an attribute read and assigned: a replaced method)
        return {ast.unparse(n) for n in nodes if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)}

    for node in nodes:
        line = f"{rel}:{getattr(node, 'lineno', 0) + offset}"
        if isinstance(node, ast.Import):
            out += [f"{line} import {a.name}" for a in node.names
                    if a.name.split(".")[0] != NAME and any(_private(p) for p in a.name.split("."))]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] != NAME:
            if any(_private(p) for p in (node.module or "").split(".")):
                out.append(f"{line} from {node.module} import ...")
            out += [f"{line} from {node.module} import {a.name}" for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            root, attrs = _chain(node)
            dotted = ".".join([foreign.get(root, root or "?"), *attrs])
            if root in foreign and _private(attrs[-1]) and dotted not in PUBLIC_UNDERSCORE \
                    and f"{root}.{'.'.join(attrs)}" not in PUBLIC_UNDERSCORE:
                out.append(f"{line} {root}.{'.'.join(attrs)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2 \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
                and _private(node.args[1].value):
            out.append(f"{line} {node.func.id}(..., {node.args[1].value!r})")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                for el in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(el, ast.Subscript) and _is_sys_modules(el.value):
                        out.append(f"{line} sys.modules[...] written")
                    elif isinstance(node, ast.Assign) and isinstance(el, ast.Attribute) \
                            and not (isinstance(el.value, ast.Name) and el.value.id in ("self", "cls")):
                        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                        if any(isinstance(v, ast.Lambda) or (isinstance(v, ast.Name) and v.id in local_funcs)
                               for v in values) and ast.unparse(el) in read():   # an existing method, replaced
                            out.append(f"{line} a method replaced: {ast.unparse(el)} = ...")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and _is_sys_modules(node.func.value) and node.func.attr in _WRITING_METHODS:
            out.append(f"{line} sys.modules.{node.func.attr}(...)")
    return out


def private_internals(package: Path = PACKAGE) -> list[str]:
    """Every use of another package's private names, every method of another object replaced by a
    function of ours, every write to ``sys.modules`` (in the code and in code strings it runs elsewhere)."""
    out = []
    for path in _modules(package):
        for nodes, offset in _trees(path):
            out += _internals_in(nodes, _rel(path, package), offset)
    return sorted(set(out), key=lambda f: (f.split(":")[0], int(f.split(":")[1].split()[0]), f))


# ----------------------------------------------------------------------------- environment variables
def _string_constants(package: Path = PACKAGE) -> dict[str, set[str]]:
    """``NAME -> {values}`` of every module-level ``NAME = "text"`` in the package (``A = mod.B`` follows ``B``)."""
    direct: dict[str, set[str]] = {}
    aliases: dict[str, str] = {}
    for path in _modules(package):
        for node in _parse(path).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in (t for t in targets if isinstance(t, ast.Name)):
                    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                        direct.setdefault(t.id, set()).add(node.value.value)
                    elif isinstance(node.value, (ast.Attribute, ast.Name)):
                        aliases[t.id] = node.value.attr if isinstance(node.value, ast.Attribute) else node.value.id
    for name, target in aliases.items():
        direct.setdefault(name, set()).update(direct.get(target, set()))
    return direct


def _env_key(node: ast.AST, consts: dict[str, set[str]], loops: dict[str, ast.AST]) -> set[str] | None:
    """The names an environment key may hold; None if it cannot be told from the source."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
    if isinstance(node, ast.Name) and name in loops:
        keys = [_env_key(e, consts, {}) for e in getattr(loops[name], "elts", [])]
        return set().union(*keys) if keys and all(k is not None for k in keys) else None
    return consts.get(name) if name else None


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name) \
        and node.value.id == "os"


def environment_reads(package: Path = PACKAGE) -> list[str]:
    """``"path:line NAME"`` of every environment variable the library reads (``os.environ.get``,
    ``os.environ[...]``, ``os.getenv``, ``in os.environ``, ``os.environ.setdefault``); ``?`` when the
    name cannot be told from the source."""
    consts, out = _string_constants(package), []
    for path in _modules(package):
        loops = {n.target.id: n.iter for n in _nodes(path) if isinstance(n, ast.For) and isinstance(n.target, ast.Name)}
        for node in _nodes(path):
            key = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args and (
                    (_is_environ(node.func.value) and node.func.attr in ("get", "setdefault", "pop"))
                    or (node.func.attr == "getenv" and isinstance(node.func.value, ast.Name) and node.func.value.id == "os")):
                key = node.args[0]
            elif isinstance(node, ast.Subscript) and _is_environ(node.value) and isinstance(node.ctx, ast.Load):
                key = node.slice
            elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators) \
                    and any(isinstance(o, (ast.In, ast.NotIn)) for o in node.ops):
                key = node.left
            if key is not None:
                names = _env_key(key, consts, loops)
                out += [f"{_rel(path, package)}:{node.lineno} {n}" for n in sorted(names or {"?"})]
    return out


def forbidden_environment_reads(package: Path = PACKAGE) -> list[str]:
    return [f for f in environment_reads(package) if f.split()[-1] not in ALLOWED_ENV]


def private_imports() -> list[str]:
    """Imports of a ``_private`` name from another module, or of a private module from outside its package."""
    out = []
    for path in _modules():
        here = _dotted(path)
        own_package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
        for node in _nodes(path):
            if isinstance(node, ast.ImportFrom):
                mod = _resolve(node, here, path.name == "__init__.py")
                if mod.split(".")[0] != NAME:
                    continue
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        out.append(f"{_rel(path)}:{node.lineno} from {mod} import {a.name}")
                private_mod = [p for p in mod.split(".") if p.startswith("_") and not p.startswith("__")]
                if private_mod and not mod.startswith(own_package + ".") and mod.rsplit(".", 1)[0] != own_package:
                    out.append(f"{_rel(path)}:{node.lineno} from {mod} (a private module of another package)")
    return out


# ----------------------------------------------------------------------------- the import graph
def _module_targets(path: Path, node: ast.Import | ast.ImportFrom, package: Path) -> list[str]:
    """The modules of the package an import statement names (``from pkg import sub``: the submodule)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == NAME]
    mod = _resolve(node, _dotted(path, package), path.name == "__init__.py")
    if mod.split(".")[0] != NAME:
        return []
    base = package.parent.joinpath(*mod.split("."))
    subs = [f"{mod}.{a.name}" for a in node.names
            if (base / a.name).is_dir() or (base / f"{a.name}.py").exists()]
    return subs if len(subs) == len(node.names) else [mod, *subs]


@functools.lru_cache(maxsize=None)
def _parents(path: Path) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in _nodes(path) for child in ast.iter_child_nodes(parent)}


def _in_function(node: ast.AST, parents: dict) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return True
    return False


def _internal_imports(package: Path = PACKAGE):
    """``(path, import node, target modules, inside a function)`` of every import of the package's modules."""
    for path in _modules(package):
        parents = _parents(path)
        for node in _nodes(path):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = _module_targets(path, node, package)
                if targets:
                    yield path, node, targets, _in_function(node, parents)


def import_graph(package: Path = PACKAGE) -> dict[str, dict[str, int]]:
    """``{module: {module it imports: line}}`` (relative paths), module- and function-level imports alike.
    The package root's imports inside functions are its lazy public facade (``__getattr__``): counted by
    :func:`inner_imports`, not edges (every module may import ``__version__`` from the root)."""
    files = {_dotted(p, package): _rel(p, package) for p in _modules(package)}
    graph: dict[str, dict[str, int]] = {rel: {} for rel in files.values()}
    for path, node, targets, inner in _internal_imports(package):
        here = _rel(path, package)
        if inner and here == "__init__.py":
            continue
        for t in targets:
            while t not in files and "." in t:
                t = t.rsplit(".", 1)[0]
            if files.get(t, here) != here:
                graph[here].setdefault(files[t], node.lineno)
    return graph


def _components(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while not comp or comp[-1] != v:
                comp.append(stack.pop())
                on.discard(comp[-1])
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def import_cycles(package: Path = PACKAGE) -> list[str]:
    """One line per set of modules that import each other in a circle, the circle shown with the line of each
    import: ``reproduce/amc.py:88 -> reproduce/scoreboard.py:211 -> reproduce/amc.py``, starting from the
    first module in sorted order."""
    graph, out = import_graph(package), []
    for comp in _components(graph):
        start = min(comp)
        paths, queue = {start: [start]}, [start]
        while queue:                       # shortest way around the circle, breadth first
            v = queue.pop(0)
            for w in sorted(graph[v]):
                if w == start:
                    circle = paths[v] + [start]
                    out.append(" -> ".join(f"{a}:{graph[a][b]}" for a, b in zip(circle, circle[1:])) + f" -> {start}")
                    queue = []
                    break
                if w in comp and w not in paths:
                    paths[w] = paths[v] + [w]
                    queue.append(w)
    return sorted(out)


def inner_imports(package: Path = PACKAGE) -> list[tuple[str, bool]]:
    """``("path:line import ...", says why)`` of every internal import inside a function: ``says why`` when
    the import's (last) line, or a comment line right above it, carries :data:`STARTUP_REASON`."""
    out = []
    for path, node, _targets, inner in _internal_imports(package):
        if inner:
            lines = path.read_text(encoding="utf-8").splitlines()
            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            said = STARTUP_REASON in lines[node.end_lineno - 1] or (above.startswith("#") and STARTUP_REASON in above)
            out.append((f"{_rel(path, package)}:{node.lineno} {ast.unparse(node)}", said))
    return out


def inner_import_findings(package: Path = PACKAGE, limit: int = MAX_INNER_IMPORTS) -> list[str]:
    """Internal imports inside functions without their start-up reason, and, when there are more than
    ``limit``, one line saying so (``"N internal imports inside functions, at most LIMIT"``)."""
    found = inner_imports(package)
    out = [f"{where}: no '{STARTUP_REASON} ...' reason" for where, said in found if not said]
    if len(found) > limit:
        out.append(f"{len(found)} internal imports inside functions, at most {limit}")
    return out


# ----------------------------------------------------------------------------- the checks
def test_the_layer_table_names_every_root_module_and_subpackage():
    units = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    units |= {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert sorted(units - set(LAYERS)) == []


def test_no_lower_layer_imports_a_higher_one():
    assert _layer_violations() == []


def test_the_layer_check_catches_an_upward_import(tmp_path):
    # stats/ importing plots/ (function level) and io/ importing an analysis: both must be reported
    fake = tmp_path / NAME
    for sub in ("stats", "io", "plots", "analysis"):
        (fake / sub).mkdir(parents=True)
        (fake / sub / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "stats" / "x.py").write_text("def f():\n    from voxmem_analysis.plots import style\n")
    (fake / "io" / "y.py").write_text("from voxmem_analysis.analysis.results import accuracy\n")
    (fake / "analysis" / "z.py").write_text("from voxmem_analysis.io import y\nfrom voxmem_analysis import stats\n")
    bad = _layer_violations(fake)
    assert len(bad) == 2
    assert bad[0].startswith("io/y.py:1 (io, layer 1) imports voxmem_analysis.analysis.results")
    assert bad[1].startswith("stats/x.py:2 (stats, layer 1) imports voxmem_analysis.plots")


def test_root_holds_at_most_12_modules():
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root


def test_no_module_function_or_parameter_list_over_its_limit():
    assert oversized() == [], ("split the module along its jobs, the function into steps; a function taking "
                                      "many settings takes a small frozen dataclass (stats.BootstrapSettings)")



def test_no_private_names_of_other_packages():
    assert private_internals() == [], "use the other package's public API (or say in the report what is missing)"



def test_the_library_reads_only_documented_environment_variables():
    assert forbidden_environment_reads() == [], "an option or argument, not an environment variable"



def test_at_most_two_private_imports_across_modules():
    found = private_imports()
    assert len(found) <= MAX_PRIVATE_IMPORTS, found


def test_no_import_cycle():
    assert import_cycles() == [], "move what both modules need into one of them, or into a third module"




def test_internal_imports_inside_functions_are_few_and_say_why():
    assert inner_import_findings() == [], "import at the top (or measure the start-up need)"



def ci_arguments(package: Path = PACKAGE) -> list[str]:
    """Functions with a parameter named ``ci`` (the deprecated name of ``ci_level``)."""
    out = []
    for path in _modules(package):
        for node in _nodes(path):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                if any(arg.arg == "ci" for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]):
                    out.append(f"{_rel(path, package)}:{node.lineno} {node.name}")
    return out


def test_the_confidence_level_is_called_ci_level():
    assert ci_arguments() == [], "call the confidence level ci_level= (stats.ci_level_alias keeps ci= working)"


def test_the_ci_check_finds_a_ci_argument(tmp_path):
    fake = tmp_path / NAME
    fake.mkdir()
    (fake / "m.py").write_text("def f(x, *, ci=0.95):\n    return x\n\ndef g(x, *, ci_level=0.95):\n    return x\n")
    assert ci_arguments(fake) == ["m.py:1 f"]


@pytest.mark.parametrize("source, n", [
    ("def f():\n    '''doc\n    more'''\n    # comment\n\n    x = 1\n    return x\n", 3),
    ("def g(a,\n      b):\n    return a\n", 3),
])
def test_code_line_count_leaves_out_docstring_comments_and_blanks(source, n):
    node = ast.parse(source).body[0]
    assert _code_lines(node, source.splitlines()) == n


# ----------------------------------------------------------------------------- the checks find what they look for
def _fake(tmp_path, files: dict[str, str]) -> Path:
    fake = tmp_path / NAME
    for rel, text in files.items():
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_text(text)
    return fake


def test_the_size_check_finds_a_long_module_a_long_function_and_many_parameters(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(79))     # with the def line: 80 lines of code
    fake = _fake(tmp_path, {
        "long.py": "x = 1\n" * 801,
        "f.py": f"def eighty(a):\n{body}\n\ndef eighty_one(a):\n{body}    return a\n",
        "p.py": ("def twelve(a, b, c, d, e, f, g, h, i, j, *args, **kwargs):\n    return a\n\n"
                 "class C:\n    def method(self, a, b, c, d, e, f, g, h, i, j, k, l):\n        return a\n\n"
                 "def thirteen(a, b, c, d, e, f, g, h, i, j, k, l, *, m=0):\n    return a\n"),
    })
    assert oversized(fake) == ["f.py:83 eighty_one: 81 lines of code", "long.py: 801 lines",
                               "p.py:8 thirteen: 13 parameters"]


# the forms the warm-kernel runner used (issue 21): each must be found
_INTERNALS = '''\
import os
import sys
import pandas as pd
from concurrent import futures
from multiprocessing import pool as mp_pool
import polars._utils
from numpy import _core

CODE = r"""
import sys, types
from pandas._config.config import _global_config
state = types.ModuleType("_stub")
sys.modules["_stub"] = state
"""


def stop(pool):
    procs = getattr(pool, "_processes", None)
    opts = pd._config.config
    sys.modules.setdefault("rfc3987_syntax", None)
    os._exit(0)                      # documented public API
    return procs, opts, mp_pool.Pool, futures.ProcessPoolExecutor


def poll(kc):
    channel = kc.shell_channel
    whole = channel.get_msg

    async def get_msg(timeout=None):
        return await whole(timeout=timeout)

    channel.get_msg = get_msg
    kc.name = "client"               # an attribute set to a value: fine
'''


def test_the_internals_check_finds_private_names_replaced_methods_and_module_stubs(tmp_path):
    fake = _fake(tmp_path, {"runner.py": _INTERNALS, "own.py": "from voxmem_analysis.runner import stop\n"})
    assert private_internals(fake) == [
        "runner.py:6 import polars._utils",
        "runner.py:7 from numpy import _core",
        "runner.py:11 from pandas._config.config import ...",
        "runner.py:11 from pandas._config.config import _global_config",
        "runner.py:13 sys.modules[...] written",
        "runner.py:18 getattr(..., '_processes')",
        "runner.py:19 pd._config",
        "runner.py:20 sys.modules.setdefault(...)",
        "runner.py:32 a method replaced: channel.get_msg = ...",
    ]


def test_the_environment_check_resolves_names_through_constants_aliases_and_loops(tmp_path):
    fake = _fake(tmp_path, {
        "paths.py": 'import os\nROOT_ENV = "VOXMEM_ROOT"\n\ndef root():\n    return os.environ.get(ROOT_ENV)\n',
        "cache.py": ('import os\nMEMO_ENV = "VOXMEM_ARTIFACT_MEMO"\nDIR_ENV = "VOXMEM_CACHE_DIR"\n\n'
                     'def where():\n    for env in (MEMO_ENV, DIR_ENV):\n        if env in os.environ:\n'
                     '            return os.environ[env]\n    return os.getenv("XDG_CACHE_HOME")\n'),
        "alias.py": "import os\nfrom voxmem_analysis import cache as c\nCACHE = c.MEMO_ENV\n\n"
                    "def on():\n    return bool(os.environ.get(CACHE)), os.environ.get(f'X_{1}')\n",
    })
    assert sorted(environment_reads(fake)) == [
        "alias.py:6 ?", "alias.py:6 VOXMEM_ARTIFACT_MEMO",
        "cache.py:7 VOXMEM_ARTIFACT_MEMO", "cache.py:7 VOXMEM_CACHE_DIR", "cache.py:8 VOXMEM_ARTIFACT_MEMO",
        "cache.py:8 VOXMEM_CACHE_DIR", "cache.py:9 XDG_CACHE_HOME", "paths.py:5 VOXMEM_ROOT"]
    assert sorted(forbidden_environment_reads(fake)) == [
        "alias.py:6 ?", "alias.py:6 VOXMEM_ARTIFACT_MEMO", "cache.py:7 VOXMEM_ARTIFACT_MEMO",
        "cache.py:8 VOXMEM_ARTIFACT_MEMO"]


def test_the_cycle_check_finds_a_circle_through_a_function_level_import(tmp_path):
    fake = _fake(tmp_path, {
        "__init__.py": "__version__ = '1'\n\ndef __getattr__(name):\n    from voxmem_analysis import a\n    return a\n",
        "a.py": "from voxmem_analysis import __version__\nfrom voxmem_analysis.sub import b\n",
        "sub/__init__.py": "",
        "sub/b.py": "import os\n\n\ndef f():\n    from voxmem_analysis.sub.c import g\n    return g\n",
        "sub/c.py": "from ..a import __version__ as v\n",
        "d.py": "from voxmem_analysis import a\n",
    })
    assert import_cycles(fake) == ["a.py:2 -> sub/b.py:5 -> sub/c.py:1 -> a.py"]
    (fake / "sub" / "c.py").write_text("import os\n")
    for cache in (_parse, _nodes, _parents):
        cache.cache_clear()
    assert import_cycles(fake) == []        # the root's lazy facade and __version__ make no circle


def test_the_inner_import_check_counts_them_and_wants_a_start_up_reason(tmp_path):
    fake = _fake(tmp_path, {
        "__init__.py": "def __getattr__(name):\n    # start-up: polars, 200 ms\n    from voxmem_analysis import a\n"
                       "    return a\n",
        "a.py": ("def f():\n    import json\n    from voxmem_analysis import b  # start-up: pandas\n"
                 "    from . import c\n    return json, b, c\n"),
        "b.py": "x = 1\n",
        "c.py": "x = 2\n",
    })
    assert [w for w, _ in inner_imports(fake)] == ["__init__.py:3 from voxmem_analysis import a",
                                                   "a.py:3 from voxmem_analysis import b", "a.py:4 from . import c"]
    assert inner_import_findings(fake, limit=3) == ["a.py:4 from . import c: no '# start-up: ...' reason"]
    assert inner_import_findings(fake, limit=2)[-1] == "3 internal imports inside functions, at most 2"
