"""The parsed-release cache (``io/engine/cache.py``): a warm load gives the release a cold load gives, from
memory-mapped Arrow files; every kind of change gives a new key; an entry whose bytes differ from the
digests written with it (bytes flipped anywhere, a file set to ``[]``) is a miss said in one line and
rewritten, so a command gives what it gives with ``--no-cache``; crafted entries are never trusted (no
code runs); the folder is private and a shared one is refused; the size limit evicts the least recently
used and notes about it say the current limit; ``--no-cache``, ``cache``, ``cache clear``, ``cache --limit``."""
from __future__ import annotations

import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from conftest import SYNTHETIC, harness_line, write_jsonl
from voxmem_analysis.cli import main
from conftest import run_cli
from voxmem_analysis.io import Release, ScoringRules, load_release
from voxmem_analysis.io.engine import cache
from voxmem_analysis.io.voxmem.release import cache_key

FRAMES = ("frame", "registry", "items", "judge2", "ablation")


@pytest.fixture
def cache_folder(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(folder))
    monkeypatch.setattr(cache, "_WARNED", set())
    return folder


def _key(root: Path, rules=ScoringRules()) -> str:
    return cache_key(root, rules)


def _entry(root: Path, folder: Path, rules=ScoringRules()) -> Path:
    return folder / f"release-{_key(root, rules)}"


def assert_same_release(a: Release, b: Release) -> None:
    for name in FRAMES:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert_frame_equal(x, y)
    assert [p.as_dict() for p in a.problems] == [p.as_dict() for p in b.problems]
    assert a.meta == b.meta and a.stats == b.stats and a.rules == b.rules and a.path == b.path


# ----------------------------------------------------------------------------- round trip
def test_warm_load_is_the_cold_release(tiny_release, cache_folder):
    write_jsonl(tiny_release / "judge2" / "a.jsonl", [harness_line(judge="gpt-5.6-luna", verdict=False)])
    (tiny_release / "release.json").write_text(json.dumps({"name": "tiny", "nested": {"a": [1, 2.5, None]}}))
    fresh = load_release(tiny_release, cache=False)
    cold = load_release(tiny_release, cache=True)
    assert len(cache.entries()) == 1
    warm = load_release(tiny_release, cache=True)
    assert warm is not cold and isinstance(warm, Release)
    assert_same_release(fresh, warm)
    assert warm.meta["nested"] == {"a": [1, 2.5, None]} and warm.judge2.height == 1 and warm.ablation is None
    assert warm.stats["rows"] == 8 and warm.frame.height == 8
    assert len(cache.entries()) == 1


def test_synthetic_release_round_trip_is_mapped_not_copied(cache_folder):
    fresh = load_release(SYNTHETIC, cache=True)
    warm = load_release(SYNTHETIC, cache=True)
    assert_same_release(fresh, warm)
    assert warm.model_order() == fresh.model_order() and warm.frame["budget"].dtype == fresh.frame["budget"].dtype
    entry = _entry(SYNTHETIC, cache_folder)
    if Path("/proc/self/maps").exists():   # the warm frames are the entry's pages, not a copy of them
        maps = Path("/proc/self/maps").read_text()
        assert str(entry / "frame.arrow") in maps and str(entry / "judge2.arrow") in maps
    # each distinct long text is stored once: well under the 600 bytes per row of the frame in memory
    assert (entry / "frame.arrow").stat().st_size / fresh.frame.height < 420
    assert sorted(p.name for p in entry.iterdir()) == ["ablation.arrow", "entry.json", "entry.sha256", "frame.arrow",
                                                       "items.arrow", "judge2.arrow", "problems.json", "registry.arrow"]


def test_empty_release_and_nested_columns_round_trip(tmp_path, cache_folder):
    """No prediction at all; an item table with list, struct and all-null columns; long and
    non-ASCII names: each read back from its entry (a hit), equal to the fresh load."""
    empty = tmp_path / "empty"
    (empty / "predictions").mkdir(parents=True)
    (empty / "predictions" / "p.jsonl").write_text("")
    odd = tmp_path / "odd"
    write_jsonl(odd / "predictions" / "p.jsonl", [harness_line(model="M" * 300 + " é 🎧", response="ünïcödé " * 50,
                                                               extra_field={"a": [1, 2]}, null_only=None)])
    (odd / "items.jsonl").write_text(json.dumps({"item_id": "q_00010_8k", "question_id": "q_00010", "tags": ["x", "y"],
                                                 "meta": {"k": 1}, "nothing": None}) + "\n")
    for root, height in ((empty, 0), (odd, 1)):
        fresh = load_release(root, strict=False, cache=True)
        hit = cache.read_release(_key(root), root, ScoringRules(), Release)
        assert hit is not None and hit.frame.height == height
        assert_same_release(fresh, hit)
    assert hit.items.schema == pl.Schema({"item_id": pl.String, "question_id": pl.String, "tags": pl.List(pl.String),
                                          "meta": pl.Struct({"k": pl.Int64}), "nothing": pl.Null})
    assert len(cache.entries()) == 2


def test_no_pickle_in_an_entry(tiny_release, cache_folder):
    load_release(tiny_release, cache=True)
    entry = _entry(tiny_release, cache_folder)
    for p in entry.iterdir():
        head = p.read_bytes()[:6]
        assert head.startswith(b"ARROW1") if p.suffix == ".arrow" else head[:1] in (b"{", b"[") or p.suffix == ".sha256"
    manifest = json.loads((entry / "entry.json").read_text())
    assert manifest["format"] == cache.FORMAT and manifest["key"] == _key(tiny_release)
    assert manifest["release"] == str(tiny_release.resolve())
    assert manifest["frames"]["ablation"] is None and manifest["frames"]["frame"]["rows"] == 8


def test_no_cache_by_default_in_the_library_and_the_old_variable_is_gone(tiny_release, cache_folder, monkeypatch, tmp_path):
    monkeypatch.setenv("VOXMEM_RELEASE_CACHE", str(tmp_path / "run"))
    load_release(tiny_release)
    assert cache.entries() == [] and not (tmp_path / "run").exists() and not cache_folder.exists()
    assert not hasattr(cache, "CACHE_ENV")


# ----------------------------------------------------------------------------- keys
def _one_file(root: Path) -> Path:
    return root / "predictions" / "b" / "all.jsonl"


def test_same_size_same_mtime_content_change_is_seen(tiny_release, cache_folder):
    load_release(tiny_release, cache=True)
    path = _one_file(tiny_release)
    st = path.stat()
    text = path.read_text()
    changed = text.replace('"response": "paused"', '"response": "pausex"', 1)
    assert len(changed) == len(text) and changed != text
    path.write_text(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))   # same size, same mtime: only the bytes differ
    rel = load_release(tiny_release, cache=True)
    assert "pausex" in rel.frame["response"].to_list()
    assert len(cache.entries()) == 2


def test_mtime_size_added_and_removed_files_change_the_key(tiny_release, cache_folder):
    keys = [_key(tiny_release)]
    path = _one_file(tiny_release)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))            # touched
    keys.append(_key(tiny_release))
    with open(path, "a") as fh:                                             # grown
        fh.write("\n")
    keys.append(_key(tiny_release))
    extra = write_jsonl(tiny_release / "predictions" / "c" / "more.jsonl", [harness_line(model="Model-C")])
    keys.append(_key(tiny_release))                                         # added
    rel = load_release(tiny_release, cache=True)
    assert "Model-C" in rel.frame["model"].to_list()
    extra.unlink()
    keys.append(_key(tiny_release))                                         # removed
    assert len(set(keys)) == len(keys) - 1 and keys[-1] == keys[2]          # removing restores the earlier state
    rel = load_release(tiny_release, cache=True)
    assert "Model-C" not in rel.frame["model"].to_list()


def test_every_rule_is_part_of_the_key_strictness_is_not(tiny_release, cache_folder):
    harness = ScoringRules(convention="harness")
    other_filter = ScoringRules(output_filter_pattern="never matches this")
    assert len({_key(tiny_release), _key(tiny_release, harness), _key(tiny_release, other_filter)}) == 3
    a = load_release(tiny_release, cache=True)
    b = load_release(tiny_release, cache=True, rules=harness)
    assert b.rules.convention == "harness" and a.rules.convention == "paper"
    assert not a.frame["scored"].equals(b.frame["scored"])   # one prediction is ungraded
    c = load_release(tiny_release, cache=True, strict=False)   # the same release: the same entry
    assert_frame_equal(c.frame, a.frame)
    assert len(cache.entries()) == 2
    # an entry read back under other rules (same key forced) is refused: its JSON names its rules
    assert cache.read_release(_key(tiny_release), tiny_release, harness, Release) is None
    assert cache.read_release(_key(tiny_release), tiny_release, ScoringRules(), Release) is not None


def test_cached_errors_still_raise_in_strict_mode(tmp_path, cache_folder):
    from voxmem_analysis.errors import VoxMemDataError

    root = tmp_path / "bad"
    write_jsonl(root / "predictions" / "p.jsonl", [harness_line(), "{oops"])
    for _ in range(2):
        with pytest.raises(VoxMemDataError, match="malformed_json"):
            load_release(root, cache=True)
        rel = load_release(root, strict=False, cache=True)
        assert rel.stats["rejected_lines"] == 1 and [p.line for p in rel.errors()] == [2]
    assert len(cache.entries()) == 1


# ----------------------------------------------------------------------------- crafted entries
class _Payload:
    """Unpickling this creates ``path``: the shape of the exploit of issue 21."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def _pickle_exploit(marker: Path) -> bytes:
    blob = pickle.dumps(_Payload(str(marker)))
    assert not marker.exists()
    return blob


def test_old_pickle_entry_with_a_valid_digest_runs_no_code(tiny_release, cache_folder, tmp_path):
    import hashlib

    marker = tmp_path / "pwned"
    payload = _pickle_exploit(marker)
    cache_folder.mkdir(mode=0o700)
    old = cache_folder / f"release-{_key(tiny_release)}.pickle"   # today's entry name, magic and digest
    old.write_bytes(b"voxmem-cache-v1\n" + hashlib.sha256(payload).digest() + payload)
    entry = _entry(tiny_release, cache_folder)
    entry.mkdir(mode=0o700)
    for name in ("entry.json", "problems.json", "frame.arrow", "registry.arrow"):   # and inside the new entry
        (entry / name).write_bytes(payload)
    rel = load_release(tiny_release, cache=True)
    assert rel.frame.height == 8 and not marker.exists()
    assert cache.read_release(_key(tiny_release), tiny_release, ScoringRules(), Release) is not None   # rewritten, whole
    assert not marker.exists()
    assert [e.release for e in cache.entries() if e.path == old] == [None]   # listed as unreadable, never read
    assert cache.clear(cache_folder)[0] == 2 and not old.exists()             # and cleared with the rest
    pickle.loads(payload)   # the payload is live: unpickling it would have left the marker
    assert marker.exists()


def _manifest(entry: Path) -> dict:
    return json.loads((entry / "entry.json").read_text())


def _set_manifest(entry: Path, change) -> None:
    m = _manifest(entry)
    change(m)
    (entry / "entry.json").write_text(json.dumps(m))


def _other_schema(entry: Path) -> None:
    """frame.arrow replaced by a valid Arrow file of another schema, its size declared."""
    pl.DataFrame({"x": [1, 2, 3]}).write_ipc(entry / "frame.arrow")

    def declare(m):
        m["frames"]["frame"]["bytes"] = (entry / "frame.arrow").stat().st_size
    _set_manifest(entry, declare)


def _other_schema_declared(entry: Path) -> None:
    """... and its schema and rows declared too: still not a verdict frame."""
    _other_schema(entry)

    def declare(m):
        m["frames"]["frame"].update(rows=3, schema=[["x", "Int64"]])
    _set_manifest(entry, declare)


def _view_out_of_bounds(entry: Path) -> None:
    """frame.arrow with the schema, rows and declared size of the real one, but the `model` column's
    text views point past the end of their buffer: only a full validation sees it (reading it
    unchecked would read memory that is not the file's)."""
    import struct

    import pyarrow as pa

    with pa.OSFile(str(entry / "frame.arrow"), "rb") as fh:
        table = pa.ipc.open_file(fh).read_all()
    n = table.num_rows
    views = b"".join(struct.pack("<iIii", 100, 0x41414141, 0, 1_000_000) for _ in range(n))
    bad = pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(views), pa.py_buffer(b"abcd" * 10)])
    bad.validate()                                      # passes the cheap check
    i = table.schema.get_field_index("model")
    table = table.set_column(i, table.schema.field(i), bad)
    with pa.OSFile(str(entry / "frame.arrow"), "wb") as fh, pa.ipc.new_file(fh, table.schema) as writer:
        writer.write_table(table)

    def declare(m):
        m["frames"]["frame"]["bytes"] = (entry / "frame.arrow").stat().st_size
    _set_manifest(entry, declare)


def _link_elsewhere(entry: Path, target: Path) -> None:
    outside = target / "outside.arrow"
    shutil.copy(entry / "frame.arrow", outside)
    (entry / "frame.arrow").unlink()
    (entry / "frame.arrow").symlink_to(outside)


def _entry_is_a_link(entry: Path, target: Path) -> None:
    moved = target / "moved-entry"
    shutil.move(str(entry), moved)
    entry.symlink_to(moved, target_is_directory=True)


def _fifo(entry: Path) -> None:
    (entry / "entry.json").unlink()
    os.mkfifo(entry / "entry.json")   # opening it to read would block for ever


CRAFTED = {
    "manifest not json": lambda e, t: (e / "entry.json").write_text("{not json"),
    "manifest a list": lambda e, t: (e / "entry.json").write_text("[1, 2]"),
    "manifest nested too deep": lambda e, t: (e / "entry.json").write_text("[" * 100_000 + "]" * 100_000),
    "stats a list": lambda e, t: _set_manifest(e, lambda m: m["values"].__setitem__("stats", [1])),
    "meta missing": lambda e, t: _set_manifest(e, lambda m: m["values"].pop("meta")),
    "bytes a bool": lambda e, t: _set_manifest(e, lambda m: m["frames"]["frame"].__setitem__("bytes", True)),
    "rows a string": lambda e, t: _set_manifest(e, lambda m: m["frames"]["frame"].__setitem__("rows", "8")),
    "rows wrong": lambda e, t: _set_manifest(e, lambda m: m["frames"]["frame"].__setitem__("rows", 7)),
    "huge declared size": lambda e, t: _set_manifest(e, lambda m: m["frames"]["frame"].__setitem__("bytes", 10**15)),
    "required frame absent": lambda e, t: _set_manifest(e, lambda m: m["frames"].__setitem__("frame", None)),
    "another version": lambda e, t: _set_manifest(e, lambda m: m["libraries"].__setitem__("voxmem_analysis", "0.0")),
    "another layout": lambda e, t: _set_manifest(e, lambda m: m["layout"].pop()),
    "another key": lambda e, t: _set_manifest(e, lambda m: m.__setitem__("key", "0" * 32)),
    "another format": lambda e, t: _set_manifest(e, lambda m: m.__setitem__("format", "voxmem-release-cache/1")),
    "problem line a string": lambda e, t: (e / "problems.json").write_text(json.dumps(
        [{"code": "x", "severity": "error", "message": "m", "file": None, "line": "3", "field": None, "count": 1}])),
    "problem extra key": lambda e, t: (e / "problems.json").write_text(json.dumps(
        [{"code": "x", "severity": "error", "message": "m", "file": None, "line": 3, "field": None, "count": 1,
          "__class__": "os.system"}])),
    "problems missing": lambda e, t: (e / "problems.json").unlink(),
    "ipc of another schema": lambda e, t: _other_schema(e),
    "ipc of another schema, declared": lambda e, t: _other_schema_declared(e),
    "ipc text views out of bounds": lambda e, t: _view_out_of_bounds(e),
    "ipc truncated": lambda e, t: os.truncate(e / "frame.arrow", (e / "frame.arrow").stat().st_size // 2),
    "ipc garbage of the declared size": lambda e, t: (e / "frame.arrow").write_bytes(
        os.urandom((e / "frame.arrow").stat().st_size)),
    "ipc footer damaged": lambda e, t: _flip(e / "frame.arrow", -40),
    "ipc empty": lambda e, t: (e / "frame.arrow").write_bytes(b""),
    "ipc link to a file elsewhere": _link_elsewhere,
    "entry a link to a folder elsewhere": _entry_is_a_link,
    "manifest a fifo": lambda e, t: _fifo(e),
    "manifest a folder": lambda e, t: ((e / "entry.json").unlink(), (e / "entry.json").mkdir()),
}


def _flip(path: Path, at: int) -> None:
    blob = bytearray(path.read_bytes())
    for i in range(at, at + 16):
        blob[i] ^= 0xFF
    path.write_bytes(bytes(blob))


@pytest.mark.parametrize("craft", sorted(CRAFTED))
def test_crafted_or_damaged_entry_is_a_miss_and_rewritten(tiny_release, cache_folder, tmp_path, craft):
    good = load_release(tiny_release, cache=True)
    entry = _entry(tiny_release, cache_folder)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    CRAFTED[craft](entry, elsewhere)
    assert cache.read_release(_key(tiny_release), tiny_release, ScoringRules(), Release) is None
    rel = load_release(tiny_release, cache=True)
    assert_same_release(rel, good)
    assert entry.is_dir() and not entry.is_symlink()                                           # rewritten in place
    assert_same_release(cache.read_release(_key(tiny_release), tiny_release, ScoringRules(), Release), good)
    assert [p.name for p in elsewhere.iterdir()] in ([], ["outside.arrow"], ["moved-entry"])   # nothing followed out


def test_an_entry_planted_under_another_key_is_not_read(tiny_release, cache_folder, tmp_path):
    """A whole, valid entry of another release renamed to this release's key: its JSON names its key."""
    other = tmp_path / "other"
    write_jsonl(other / "predictions" / "p.jsonl", [harness_line(model="Planted")])
    load_release(other, cache=True)
    os.rename(_entry(other, cache_folder), _entry(tiny_release, cache_folder))
    rel = load_release(tiny_release, cache=True)
    assert "Planted" not in rel.frame["model"].to_list() and rel.frame.height == 8


# ----------------------------------------------------------------------------- the folder
def test_folder_is_created_private(tiny_release, cache_folder):
    old = os.umask(0)
    try:
        load_release(tiny_release, cache=True)
    finally:
        os.umask(old)
    assert stat.S_IMODE(cache_folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(_entry(tiny_release, cache_folder).stat().st_mode) == 0o700


@pytest.mark.parametrize("mode, why", [(0o777, "group and others"), (0o775, "group"), (0o703, "others")])
def test_folder_writable_by_others_is_refused(tiny_release, cache_folder, capsys, mode, why):
    load_release(tiny_release, cache=True)                  # a good entry...
    entry = _entry(tiny_release, cache_folder)
    frame = entry / "frame.arrow"
    before = frame.stat().st_mtime_ns
    cache_folder.chmod(mode)                                  # ... in a folder others can now write
    for _ in range(2):
        rel = load_release(tiny_release, cache=True)
        assert rel.frame.height == 8
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"warning: parsed-release cache not used: {cache_folder} can be written by {why} "
                   f"(mode {mode:o}; `chmod 700` it to use it); running without cache"]   # once, one line
    assert cache.read_release(_key(tiny_release), tiny_release, ScoringRules(), Release) is None     # not read
    assert frame.stat().st_mtime_ns == before                                                 # nor written
    assert main(["cache"]) == 0 and "not used: it can be written" in capsys.readouterr().err
    assert main(["cache", "clear"]) == 2 and entry.exists()
    cache_folder.chmod(0o700)
    assert cache.read_release(_key(tiny_release), tiny_release, ScoringRules(), Release) is not None


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give the folder away")
def test_folder_owned_by_another_user_is_refused(tiny_release, cache_folder, capsys):
    load_release(tiny_release, cache=True)
    os.chown(cache_folder, 65534, -1)
    try:
        assert cache.read_release(_key(tiny_release), tiny_release, ScoringRules(), Release) is None
        assert f"{cache_folder} is owned by another user (uid 65534, you are 0)" in capsys.readouterr().err
    finally:
        os.chown(cache_folder, 0, -1)


def test_unwritable_cache_folder_is_not_an_error(tiny_release, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(blocker / "cache"))   # below a file: cannot be created
    monkeypatch.setattr(cache, "_WARNED", set())
    assert load_release(tiny_release, cache=True).frame.height == 8
    assert f"{blocker / 'cache'} cannot be created" in capsys.readouterr().err


def test_folder_resolution(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(tmp_path / "user"))
    assert cache.cache_dir() == tmp_path / "user"
    monkeypatch.delenv(cache.CACHE_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "voxmem-analysis"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")            # the XDG spec: a relative value is ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "voxmem-analysis"


# ----------------------------------------------------------------------------- size limit
def _releases(tmp_path: Path, n: int) -> list[Path]:
    roots = []
    for i in range(n):
        root = tmp_path / f"r{i}"
        write_jsonl(root / "predictions" / "p.jsonl", [harness_line(model=f"M{i}", response="x" * 4000)])
        roots.append(root)
    return roots


def _age(entry: Path, seconds_ago: float) -> None:
    import time

    t = time.time() - seconds_ago
    os.utime(entry / "entry.json", (t, t))


def test_over_the_limit_the_least_recently_used_go(tmp_path, cache_folder):
    roots = _releases(tmp_path, 4)
    load_release(roots[0], cache=True)
    one = cache.entries()[0].bytes
    cache.set_limit(cache_folder, int(2.5 * one))            # room for two entries
    _age(_entry(roots[0], cache_folder), 300)
    load_release(roots[1], cache=True)
    _age(_entry(roots[1], cache_folder), 200)
    load_release(roots[0], cache=True)                        # a read: r0 is now the most recently used
    load_release(roots[2], cache=True)                        # a third entry: the least recently used (r1) goes
    assert sorted(e.release for e in cache.entries()) == [str(roots[0]), str(roots[2])]
    _age(_entry(roots[0], cache_folder), 100)
    load_release(roots[3], cache=True)                        # now r0 is the oldest
    assert [e.release for e in cache.entries()] == [str(roots[2]), str(roots[3])]
    assert sum(e.bytes for e in cache.entries()) <= int(2.5 * one)


def test_a_release_larger_than_the_limit_is_not_kept_and_cache_says_so(tmp_path, cache_folder, capsys):
    small, big = _releases(tmp_path, 2)
    write_jsonl(big / "predictions" / "more.jsonl", [harness_line(model=f"B{i}", response=f"{i}" + "y" * 4000) for i in range(20)])
    load_release(small, cache=True)
    one = cache.entries()[0].bytes
    cache.set_limit(cache_folder, 3 * one)
    rel = load_release(big, cache=True)
    assert rel.frame.height == 21 and capsys.readouterr().err == ""          # quiet
    assert [e.release for e in cache.entries()] == [str(small)]              # the small one stays
    note = cache.skipped(cache_folder)
    assert note["release"] == str(big) and note["bytes"] > 3 * one and note["limit"] == 3 * one
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"not kept (" in out and f"{big} needs about" in out and "entries: 1" in out


def test_limit_setting_and_cli(tmp_path, cache_folder, capsys):
    assert cache.limit(cache_folder) == (2 * 2**30, "default")
    roots = _releases(tmp_path, 2)
    for r in roots:
        load_release(r, cache=True)
    _age(_entry(roots[0], cache_folder), 100)
    one = max(e.bytes for e in cache.entries())
    assert main(["cache", "--limit", str(one + 10)]) == 0                     # lowering it evicts now
    assert "removed 1 cache entry" in capsys.readouterr().out
    assert [e.release for e in cache.entries()] == [str(roots[1])]
    assert json.loads((cache_folder / "settings.json").read_text()) == {"limit_bytes": one + 10}
    assert main(["cache", "--limit", "5GiB"]) == 0
    assert cache.limit(cache_folder)[0] == 5 * 2**30 and "limit: 5.0 GiB (set in" in capsys.readouterr().out
    assert main(["cache", "--limit", "default"]) == 0
    assert cache.limit(cache_folder) == (2 * 2**30, "default")
    assert main(["cache", "--limit", "lots"]) == 2
    assert "not a size: 'lots'" in capsys.readouterr().err
    (cache_folder / "settings.json").write_text('{"limit_bytes": -5}')       # a bad setting: the default
    assert cache.limit(cache_folder)[0] == 2 * 2**30


@pytest.mark.parametrize("text, n", [("5GiB", 5 * 2**30), ("500MB", 500 * 10**6), ("2G", 2 * 2**30),
                                     ("1.5 GiB", 3 * 2**29), ("123", 123), ("0", 0), ("10kB", 10_000),
                                     ("10KiB", 10_240), ("1TB", 10**12)])
def test_parse_size(text, n):
    assert cache.parse_size(text) == n


@pytest.mark.parametrize("text", ["", "GiB", "-1GiB", "5 gigs", "iB", "1e9"])
def test_parse_size_refuses(text):
    with pytest.raises(ValueError, match="not a size"):
        cache.parse_size(text)


# ----------------------------------------------------------------------------- concurrency
_WRITER = """
import sys
from pathlib import Path
from voxmem_analysis.io.engine import cache
from voxmem_analysis.io import Release, load_release
from voxmem_analysis.io.voxmem.release import cache_key
root = Path(sys.argv[1])
rel = load_release(root, cache=False)
key = cache_key(root, rel.rules)
ok = 0
for _ in range(int(sys.argv[2])):
    ok += cache.write_release(key, rel)
    got = cache.read_release(key, root, rel.rules, Release)
    assert got is None or got.frame.equals(rel.frame), "a torn entry was read"
print(ok)
"""


def test_concurrent_writers_leave_one_whole_entry(tiny_release, cache_folder):
    env = {**os.environ, cache.CACHE_DIR_ENV: str(cache_folder), "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tiny_release), "8"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err for _, err in results]
    assert sum(int(out) for out, _ in results) >= 8          # most writes landed; a lost race is a skipped write
    assert [e.key for e in cache.entries()] == [_key(tiny_release)]
    assert [p.name for p in cache_folder.iterdir() if p.name.startswith(".")] == []   # no temporary left
    assert_same_release(cache.read_release(_key(tiny_release), tiny_release, ScoringRules(), Release),
                        load_release(tiny_release))


def test_stale_temporary_folders_are_swept(tiny_release, cache_folder):
    load_release(tiny_release, cache=True)
    stale = cache_folder / ".tmp-0123-dead"
    stale.mkdir()
    (stale / "frame.arrow").write_bytes(b"x" * 100)
    fresh = cache_folder / ".tmp-4567-alive"
    fresh.mkdir()
    os.utime(stale, (0, 0))
    cache.evict(cache_folder, cache.limit(cache_folder)[0])
    assert not stale.exists() and fresh.exists()              # a write in progress is left alone
    assert cache.clear(cache_folder)[0] == 1 and not fresh.exists()


# ----------------------------------------------------------------------------- command line
def test_cli_uses_the_cache_and_no_cache_bypasses_it(tiny_release, cache_folder, tmp_path, capsys):
    out = tmp_path / "f.parquet"
    assert main(["export-frame", "--data", str(tiny_release), "--out", str(out), "--no-cache"]) == 0
    assert cache.entries() == []
    assert main(["export-frame", "--data", str(tiny_release), "--out", str(out)]) == 0
    assert len(cache.entries()) == 1
    capsys.readouterr()
    assert main(["cache"]) == 0
    shown = capsys.readouterr().out
    size = cache.format_size(cache.entries()[0].bytes)
    assert f"cache folder: {cache_folder}" in shown and "limit: 2.0 GiB (default" in shown
    assert f"entries: 1  size: {size}" in shown and str(tiny_release) in shown
    assert main(["cache", "clear"]) == 0
    assert f"removed 1 cache entry ({size})" in capsys.readouterr().out
    assert cache.entries() == []


def test_cache_reads_and_writes_without_pandas(tiny_release, cache_folder):
    """Loading imports no pandas (README, Performance): neither writing an entry nor reading it does."""
    code = ("import sys\nfrom voxmem_analysis.io import load_release\n"
            f"load_release({str(tiny_release)!r}, cache=True)\nprint('pandas' in sys.modules)")
    env = {**os.environ, cache.CACHE_DIR_ENV: str(cache_folder)}
    for expect_entries in (1, 1):   # cold (writes), then warm (maps)
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert done.stdout.strip() == "False" and len(cache.entries()) == expect_entries


# ----------------------------------------------------------------------------- what is served is what was written
def _commands(root: Path, out: Path, *extra) -> tuple:
    """What two commands give: validate (exit code, output) and a lenient export-frame (exit code, bytes)."""
    rc, text, err = run_cli(["validate", "--data", str(root), *extra])
    rc2, _, _ = run_cli(["export-frame", "--data", str(root), "--lenient", "--out", str(out), *extra])
    return rc, text, rc2, out.read_bytes() if rc2 == 0 else None


def _damaged_release(root: Path) -> Path:
    write_jsonl(root / "predictions" / "b" / "broken.jsonl", ["{oops", harness_line(model="Model-C")])
    return root


def test_bytes_flipped_anywhere_in_an_entry_are_a_miss_and_the_command_gives_what_no_cache_gives(
        tiny_release, cache_folder, tmp_path, capsys):
    """Every file of an entry, several offsets each (first, last and seeded ones), one byte changed in place
    (the size unchanged): the commands' results equal --no-cache, one line on stderr says the entry was
    damaged, and the entry is whole again afterwards."""
    import random

    root = _damaged_release(tiny_release)
    want = _commands(root, tmp_path / "ref.csv", "--no-cache")
    _commands(root, tmp_path / "warm.csv")
    entry = _entry(root, cache_folder)
    names = sorted(p.name for p in entry.iterdir())
    assert {"entry.json", "problems.json", "frame.arrow", "registry.arrow"} <= set(names)
    rng = random.Random(31)
    for name in names:
        size = (entry / name).stat().st_size
        for at in sorted({0, size - 1, *(rng.randrange(size) for _ in range(3))}):
            blob = bytearray((entry / name).read_bytes())
            blob[at] ^= rng.randrange(1, 256)
            (entry / name).write_bytes(bytes(blob))
            capsys.readouterr()
            rc, text, err = run_cli(["validate", "--data", str(root)])
            said = [line for line in err.splitlines() if "cache entry" in line]
            assert said == [f"warning: parsed-release cache entry {entry.name} is damaged ({name}); the release is "
                            "read afresh and the entry rewritten"] or name == "entry.sha256" and len(said) == 1, (name, at, err)
            assert (rc, text) == want[:2], (name, at)
            assert _commands(root, tmp_path / "got.csv")[2:] == want[2:], (name, at)
            assert_same_release(cache.read_release(_key(root), root, ScoringRules(), Release), load_release(root, strict=False))


def test_a_problems_file_emptied_is_not_a_clean_release(tiny_release, cache_folder, tmp_path):
    root = _damaged_release(tiny_release)
    want = _commands(root, tmp_path / "ref.csv", "--no-cache")
    _commands(root, tmp_path / "warm.csv")
    (_entry(root, cache_folder) / "problems.json").write_text("[]")
    assert _commands(root, tmp_path / "got.csv") == want and want[0] == 1


def test_the_note_about_a_release_left_out_says_the_current_limit(tmp_path, cache_folder, capsys):
    small, big = _releases(tmp_path, 2)
    write_jsonl(big / "predictions" / "more.jsonl", [harness_line(model=f"B{i}", response=f"{i}" + "y" * 4000)
                                                     for i in range(20)])
    load_release(small, cache=True)
    cache.set_limit(cache_folder, 30 * 2**10)
    load_release(big, cache=True)
    assert main(["cache"]) == 0 and "over the limit of 30.0 KiB" in capsys.readouterr().out
    assert main(["cache", "--limit", "1MiB"]) == 0
    shown = capsys.readouterr().out
    assert "not kept" not in shown and "over the limit of" not in shown   # the release fits the new limit
    note = {"release": str(big), "bytes": 5 * 2**20, "limit": 30 * 2**10, "when": 0}
    (cache_folder / "skipped.json").write_text(json.dumps(note))
    assert main(["cache"]) == 0 and "over the limit of 1.0 MiB" in capsys.readouterr().out
