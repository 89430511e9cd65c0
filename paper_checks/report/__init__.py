"""The report of a run: REPORT.md and report.json, the lines of text, report.html and the figures.

The fifth layer of ``paper_checks`` (above the foundations, ``rules``, ``tables`` and ``claims``;
below the studies, which append their sections with ``_report.append_section``, and the runner).
``_report`` renders the claims' results as markdown, JSON and text, ``_html`` as one
self-contained page, ``_figures`` draws the figures from a ``Workspace``'s sources. Nothing here
measures or grades: it writes what the layers below computed.
"""
