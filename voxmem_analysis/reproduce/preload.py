"""Imported once by the runner's fork server, before it forks the workers: the libraries every
worker needs (papermill, nbclient, jupytext, nbformat) are then imported once per run instead of
once per worker.

The optional ``rfc3987_syntax`` module is kept out first: jsonschema (under nbformat) imports it
only for IRI format checks, which nbformat never uses, and it builds a parser grammar at import
time (about 3 s on a 2-core machine).
"""
import sys

if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)

try:
    import jupytext  # noqa: F401
    import nbformat  # noqa: F401
    import papermill  # noqa: F401
    import papermill.engines  # noqa: F401
    import nbclient  # noqa: F401
except ImportError:  # a worker imports them itself and reports what is missing
    pass
