"""Names and titles of the registered artifacts without importing the artifact modules
(:func:`voxmem_analysis.artifacts.source_titles`), so ``voxmem-analysis table --list`` does not pay for
pandas, SciPy, statsmodels or matplotlib.  ``tests/test_cli_startup.py`` checks it matches the registry."""
from __future__ import annotations

from voxmem_analysis.artifacts import source_titles as catalogue

__all__ = ["catalogue"]
