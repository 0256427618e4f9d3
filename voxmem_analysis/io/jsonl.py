"""Reading JSON Lines the way the harness writes them, shared by every loader.

* Lines are split on ``\\n`` only (``\\r`` stripped; files with bare ``\\r`` line breaks are
  converted before, by :func:`voxmem_analysis.io.files.read_text`): ``str.splitlines`` would also split on
  U+2028, U+2029 and U+0085, which are legal inside JSON strings written with
  ``ensure_ascii=False``, and would shift every later line number.
* A UTF-8 byte-order mark at the start of a file is accepted.
* A repeated key inside one object is reported (the last value would otherwise win silently).
* Pathological input (deep nesting) is a parse error, never a crash.
"""
from __future__ import annotations

import json

__all__ = ["decode", "iter_lines", "parse_line", "parse_object", "not_unicode", "DuplicateKeyError"]


class DuplicateKeyError(ValueError):
    def __init__(self, key: str):
        super().__init__(f"key {key!r} appears twice in one object")
        self.key = key


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKeyError(k)
        out[k] = v
    return out


def decode(raw: bytes) -> str:
    """UTF-8 text of a file (a leading byte-order mark is dropped); raises UnicodeDecodeError."""
    return raw.decode("utf-8-sig")


def iter_lines(text: str):
    """``(line_number, line)`` for every non-blank line, numbered as a text editor does."""
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if line.strip():
            yield lineno, line


def parse_line(line: str):
    """``(object, None)`` or ``(None, (message, field))`` for one line of JSON."""
    try:
        return json.loads(line, object_pairs_hook=_no_duplicates), None
    except DuplicateKeyError as exc:
        return None, (str(exc), exc.key)
    except json.JSONDecodeError as exc:
        return None, (f"not valid JSON ({exc.msg} at column {exc.colno})", None)
    except RecursionError:
        return None, ("not valid JSON (nested too deeply to read)", None)
    except ValueError as exc:  # e.g. numbers too large to convert
        return None, (f"not valid JSON ({exc})", None)


def parse_object(line: str):
    """``(dict, None)`` or ``(None, (code, message, field))`` for a line that must hold one JSON object:
    ``malformed_json`` (see :func:`parse_line`) or ``not_an_object``."""
    obj, bad = parse_line(line)
    if bad is not None:
        return None, ("malformed_json", bad[0], bad[1])
    if not isinstance(obj, dict):
        return None, ("not_an_object", f"line is a JSON {type(obj).__name__}, expected an object", None)
    return obj, None


def not_unicode(value, where: str = "") -> list[str]:
    """Fields (``a.b`` for nested ones) whose name or text holds an unpaired surrogate escape
    (``"\\ud800"``): valid JSON, but no UTF-8 text -- a frame cannot hold it."""
    def bad(text: str) -> bool:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False

    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            name = f"{where}.{k}" if where else str(k)
            if bad(str(k)):
                out.append(name.encode("utf-8", "backslashreplace").decode("utf-8"))
            else:
                out += not_unicode(v, name)
    elif isinstance(value, list):
        for v in value:
            out += not_unicode(v, where)
    elif isinstance(value, str) and bad(value):
        out.append(where)
    return out
