"""Every number of the main-results artifacts against the paper (data/paper/published.csv).

Runs on the calibrated synthetic release ``data/synthetic``; skipped, with the reason, when it
is not there.  Comparators and tolerances are the published file's (``approx``: within
``tolerance``; ``lt``: below; ``le``: at most ``value + tolerance``).
"""
from __future__ import annotations

import pandas as pd
import pytest

from voxmem_analysis import artifacts, load_release
from voxmem_analysis.reproduce import published as paper

from conftest import SYNTHETIC

pytestmark = pytest.mark.skipif(not (SYNTHETIC / "predictions").is_dir(),
                                reason="calibrated synthetic release data/synthetic is not there yet")

ARTIFACTS = ("table15", "table16", "table17", "fig5", "fig8", "groups")


@pytest.fixture(scope="module")
def release():
    return load_release(SYNTHETIC)


def compare(release, name: str, **params) -> pd.DataFrame:
    """Published rows of ``name`` joined with the reproduced long table; ``ok`` per row."""
    long = artifacts.to_long(artifacts.compute(name, release, **params), name)
    pub = paper.published()
    m = pub[pub["artifact"] == name].merge(long, on=["artifact", "row", "column"], how="left",
                                           suffixes=("_published", ""))
    diff = (m["value"] - m["value_published"]).abs()
    m["ok"] = [
        (not pd.isna(v)) and (d <= tol + 1e-9 if c == "approx" else (v < p if c == "lt" else v <= p + tol + 1e-9))
        for v, p, d, c, tol in zip(m["value"], m["value_published"], diff, m["comparator"], m["tolerance"])
    ]
    return m


@pytest.mark.parametrize("name", ARTIFACTS)
def test_artifact_matches_paper(release, name):
    m = compare(release, name)
    assert len(m) > 0, f"no published numbers for {name}"
    missing = m[m["value"].isna()]
    assert missing.empty, f"{name}: labels not produced: {list(zip(missing['row'], missing['column']))}"
    bad = m[~m["ok"]]
    assert bad.empty, f"{name}: outside tolerance:\n{bad[['row', 'column', 'value_published', 'value', 'tolerance']]}"


def test_pairing_rule_reproduces_printed_digits(release):
    """C.6 pairing ("all_budgets") reproduces more calibrated numbers to the printed digit than no pairing."""
    def misses(pairing):
        n = 0
        for name in ("table15", "table16", "table17", "fig5", "groups"):
            m = compare(release, name, pairing=pairing)
            m = m[(m["comparator"] == "approx") & (m["kind"] != "emergent")]
            n += int(((m["value"] - m["value_published"]).abs() > 0.5 * 10.0 ** (-m["decimals"]) + 1e-9).sum())
        return n
    assert misses("all_budgets") < misses("none")
