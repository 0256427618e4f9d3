"""Audio MultiChallenge: a release folder (:mod:`.tables`, :mod:`.release`) and users' judged runs through a
manifest (:mod:`.tasks`, :mod:`.results`, :mod:`.runs`)."""
from voxmem_analysis.io.amc.release import AmcRelease, load_amc
from voxmem_analysis.io.amc.runs import AmcRuns, load_amc_runs
from voxmem_analysis.io.amc.tables import AXES, AXIS_LABELS, EDIT_TYPES, INSTRUCTION_TYPES, MODALITIES, VERDICT_COLUMNS
from voxmem_analysis.io.meta import BENCHMARK_ID, is_amc_release

__all__ = ["AmcRelease", "load_amc", "AmcRuns", "load_amc_runs", "AXES", "AXIS_LABELS", "EDIT_TYPES",
           "INSTRUCTION_TYPES", "MODALITIES", "VERDICT_COLUMNS", "BENCHMARK_ID", "is_amc_release"]
