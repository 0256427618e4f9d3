"""Reading inputs into tidy frames: VoxMem releases, LongMemEval verdicts and Audio MultiChallenge
releases and runs, all through one reader skeleton (:mod:`.engine`).  The loaders below are the entry points."""
from voxmem_analysis.io.amc import AmcRelease, AmcRuns, load_amc, load_amc_runs
from voxmem_analysis.io.fingerprint import release_fingerprint
from voxmem_analysis.io.longmemeval import LongMemEvalData, load_longmemeval, select_judge
from voxmem_analysis.io.meta import BENCHMARK_ID, is_amc_release, release_benchmark
from voxmem_analysis.io.provenance import ManifestData, ReleaseProvenance
from voxmem_analysis.io.scoring import ScoringRules
from voxmem_analysis.io.voxmem.release import Release, load_release

__all__ = ["load_release", "Release", "load_longmemeval", "LongMemEvalData", "select_judge", "load_amc", "AmcRelease",
           "load_amc_runs", "AmcRuns", "ScoringRules", "release_fingerprint", "is_amc_release", "release_benchmark",
           "BENCHMARK_ID", "ReleaseProvenance", "ManifestData"]
