"""VoxMem analysis workbook: load verdict tables, regenerate every table and figure of the paper.

>>> from voxmem_analysis import load_release
>>> release = load_release("data/synthetic")        # doctest: +SKIP
>>> release.frame                                    # the tidy verdict frame (polars)  # doctest: +SKIP
"""
from voxmem_analysis.errors import InputError, MissingDataError, Problem, VoxMemDataError

__version__ = "0.1.0"

__all__ = ["load_release", "Release", "ScoringRules", "VoxMemDataError", "MissingDataError", "InputError", "Problem",
           "__version__"]


def __getattr__(name):  # lazy: `import voxmem_analysis` stays instant (CLI start-up, notebooks)
    if name in ("load_release", "Release", "ScoringRules"):
        from voxmem_analysis import io  # start-up: io imports polars; `import voxmem_analysis` stays instant
        return getattr(io, name)
    raise AttributeError(name)
