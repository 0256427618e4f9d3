"""Names and titles of the registered artifacts, read from the source of the artifact modules
without importing them, so ``voxmem-analysis table --list`` does not pay for pandas, SciPy,
statsmodels or matplotlib.  ``tests/test_cli_startup.py`` checks it matches the registry."""
from __future__ import annotations

import ast
import importlib.util

__all__ = ["catalogue"]


def _registrations(tree: ast.AST):
    """``(name, title node)`` of every ``artifact("name", title=...)`` / ``_artifact(...)`` call
    (as a decorator or called directly)."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("artifact", "_artifact") and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value, next((k.value for k in node.keywords if k.arg == "title"), None)


def catalogue() -> dict[str, str] | None:
    """``{name: title}`` of every ``artifact("name", title="...")`` registration; None when a module cannot be
    read this way (the caller then imports the registry)."""
    from voxmem_analysis.artifacts import ARTIFACT_MODULES

    out: dict[str, str] = {}
    for mod in ARTIFACT_MODULES:
        spec = importlib.util.find_spec(mod)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        with open(spec.origin, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), filename=spec.origin)
        for name, title in _registrations(tree):
            if not isinstance(title, ast.Constant) or not isinstance(title.value, str):
                return None
            out[name] = title.value
    return out
