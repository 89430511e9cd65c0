"""The paper's nine claims, each measured on its sources and graded by its rule.

The fourth layer of ``paper_checks`` (above the foundations, ``rules`` and ``tables``; below the
report, the studies and the runner). ``_sources`` is where the numbers come from (theory, sim, OAS,
LoCoMo or the user's ``--paired`` files, behind one memoizing ``Workspace``, which also builds the
``--design paper`` tables); ``_base`` is what every claim shares (the ``needs`` decorator, the
grading and its operating characteristics); ``_reversal`` (claims 1-4), ``_scaling`` (claims 5-6)
and ``_router`` (claims 7-9) hold the claims; ``_all`` lists them (``CHECKS``, ``CLAIMS``).
"""
