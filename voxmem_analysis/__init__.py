"""VoxMem analysis workbook: load verdict tables, regenerate every table and figure of the paper.

>>> from voxmem_analysis import load_release
>>> release = load_release("data/synthetic")        # doctest: +SKIP
>>> release.frame                                    # the tidy verdict frame (polars)  # doctest: +SKIP
"""
from voxmem_analysis.errors import InputError, MissingDataError, Problem, VoxMemDataError

__version__ = "0.1.0"

__all__ = ["load_release", "Release", "ScoringRules", "VoxMemDataError", "MissingDataError", "InputError", "Problem",
           "__version__"]


def __getattr__(name):
    if name in ("load_release", "Release"):
        # start-up: io.release imports polars (0.16-0.4 s); `import voxmem_analysis` stays 1 ms (cli, notebooks)
        from voxmem_analysis.io import release as loading
        return getattr(loading, name)
    if name == "ScoringRules":
        from voxmem_analysis.io.scoring import ScoringRules  # start-up: io.scoring imports polars too
        return ScoringRules
    raise AttributeError(name)
