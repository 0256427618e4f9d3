"""Table 18, Figure 6 and Appendix D.5 against the paper (data/paper/published.csv), 10,000 resamples."""
from __future__ import annotations

import pytest

from conftest import SYNTHETIC
from test_results_published import compare

from voxmem_analysis import load_release

pytestmark = pytest.mark.skipif(not (SYNTHETIC / "predictions").is_dir(),
                                reason="calibrated synthetic release data/synthetic is not there yet")


@pytest.fixture(scope="module")
def release():
    return load_release(SYNTHETIC)


@pytest.mark.parametrize("name", ("table18", "fig6", "d5"))
def test_artifact_matches_paper(release, name):
    m = compare(release, name, n_boot=10_000, seed=0)
    missing = m[m["value"].isna()]
    assert missing.empty, f"{name}: labels not produced: {list(zip(missing['row'], missing['column']))}"
    bad = m[~m["ok"]]
    assert bad.empty, f"{name}: outside tolerance:\n{bad[['row', 'column', 'value_published', 'value', 'tolerance']]}"
