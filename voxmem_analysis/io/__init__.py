"""Reading inputs into tidy frames: VoxMem releases (:mod:`.voxmem`), LongMemEval verdicts
(:mod:`.longmemeval`), Audio MultiChallenge releases and runs (:mod:`.amc`), all through one reader
skeleton (:mod:`.engine`: files, the record front end, the value encoding, the rule engine, the cache).
Nothing here knows about tables or figures.  The loaders below are the entry points, imported when first
used, so that a module of the package (the parsed-release cache) is imported without the readers."""
__all__ = ["load_release", "Release", "load_longmemeval", "LongMemEvalData", "select_judge", "load_amc", "AmcRelease",
           "load_amc_runs", "AmcRuns", "ScoringRules", "release_fingerprint", "is_amc_release", "release_benchmark",
           "BENCHMARK_ID", "ReleaseProvenance", "ManifestData"]


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # start-up: the readers import polars; `voxmem-analysis cache` reads only the cache module of the package
    from voxmem_analysis.io import amc, fingerprint, longmemeval, meta, provenance, scoring
    from voxmem_analysis.io.voxmem import release  # start-up: as above

    return next(getattr(m, name) for m in (release, amc, longmemeval, fingerprint, meta, provenance, scoring)
                if hasattr(m, name))
