"""The subcommands of ``voxmem-analysis``.

Every command's options are declared once in :mod:`._parsers` (light: building the parsers imports no
pandas or polars), with the input kinds each option applies to.  Command NAME runs as ``run(args)`` of
``commands/NAME.py``, whose imports are at its top; :func:`voxmem_analysis.cli.main` imports that module
only when the command runs.  Internal imports kept inside functions, each for start-up
(``benchmarks/bench_cli.py``):

* ``cli._command_module`` -- the command's module, by name (the command line's dispatch);
* ``table.run`` -- the computation of an artifact (``table --list`` and ``table NAME --help`` stay light);
* ``_guards.n_boot_arg`` -- the ``--n-boot`` limit (the package ``voxmem_analysis.stats`` imports pandas).

Commands raise the errors of :mod:`voxmem_analysis.errors`; only :func:`voxmem_analysis.cli.main` prints
them and picks the exit code.
"""
