"""The subcommands of ``voxmem-analysis``: command NAME runs as ``run(args)`` of ``commands/NAME.py``, its options
declared in :mod:`._parsers`.  Commands raise the errors of :mod:`voxmem_analysis.errors`; only
:func:`voxmem_analysis.cli.main` prints them and picks the exit code."""
