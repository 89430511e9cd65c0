"""The analyses and figures behind the scripts of ``experiments/`` (a study, not a claim).

Each script in ``experiments/`` is one call, ``paper_checks.run_experiment(name, __doc__, argv)``
(``_run_experiment``): the figures' numbers and drawings are in ``_experiments``, the analyses
with their own options in ``_end_to_end``, ``_recall``, ``_router`` and ``_sweep``, their shared
argument types in ``_args``. They sit on top of the other studies and of the report.
"""
