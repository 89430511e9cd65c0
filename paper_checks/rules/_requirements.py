"""What each claim needs of the real paired data, checked before the claim is measured.

Every ``check_*`` of ``paper_checks.claims._all`` declares its ``Needs`` beside its definition (the
``needs`` decorator there). Data that lack a column, a group or a budget the claim needs give that
claim INCONCLUSIVE with the missing piece named: never a crash, never a silently smaller claim.
The format's required columns (ids, ``query_type``, ``budget``, the four ``y_*``, features) are
already guaranteed by ``oas.read_paired``; what varies between valid files is checked here.

References: docs/paired-data.md (columns), docs/paper-checks.md ("Your own model").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from paper_checks.rules._gates import first_closed, groups_gate, outcome_gate


class Needs(NamedTuple):
    """A claim's requirements on each real-data unit it grades.

    Attributes:
      columns: names from ``COLUMNS`` that must be present in every row.
      min_groups: distinct ``group_id`` values (G) the claim's intervals need.
      min_budgets: distinct ``budget`` values (a reversal or a crossover needs at least 2).
      readers: ``"main"`` (the first reader) or ``"second"`` (every reader after it, claim 4).
      cells: the budgets whose outcomes the claim's contrast reads (``paper_checks.rules._gates``):
        ``"all"``, ``"ends"`` (the tightest and the loosest) or ``"loosest"``.
    """

    columns: tuple = ()
    min_groups: int = 2
    min_budgets: int = 1
    readers: str = "main"
    cells: str = "all"


def needed_budgets(budget, cells: str) -> np.ndarray | None:
    """The budgets of ``cells`` (``Needs.cells``) among the rows' ``budget``; None: all."""
    b = np.unique(np.asarray(budget, dtype=np.float64))
    if cells == "all" or not b.size:
        return None
    return b[[0, -1]] if cells == "ends" else b[-1:]


def gate(paired, needs: Needs, unit: str):
    """The data gates (``paper_checks.rules._gates``) for one real unit: too few groups, or an
    outcome without variance in every budget the claim reads. Returns ``Gate``."""
    return first_closed(
        groups_gate(paired.group_id, needs.min_groups, who=unit),
        outcome_gate(
            paired.outcomes,
            paired.budget,
            needed_budgets(paired.budget, needs.cells),
            who=f"the reader of {unit}",
        ),
    )


def _row_gaps(values) -> int:
    v = np.asarray(values, dtype=np.float64)
    return int((~np.isfinite(v)).sum())


def _cluster_tokens(paired) -> int:
    """Rows without ``len(C)`` (``cluster_tokens``, filled from ``evidence_structure`` where the
    file gives that instead: ``paper_checks._paired.fill_cluster_tokens``)."""
    if paired.cluster_tokens is None:
        return paired.n
    return _row_gaps(paired.cluster_tokens)


# column -> (what it is, rows of `paired` that lack it)
COLUMNS: dict[str, tuple[str, Callable]] = {
    "cluster_tokens": (
        "len(C) per row: column 'cluster_tokens', or 'evidence_structure' (the summed lengths of "
        "ret's evidence records)",
        _cluster_tokens,
    ),
}


def unmet(paired, needs: Needs, unit: str) -> list[str]:
    """Every requirement of ``needs`` that ``paired`` (the unit named ``unit``) does not meet, one
    sentence each naming the column and how much of it is missing; empty when all are met."""
    gaps = []
    for col in needs.columns:
        what, lacking = COLUMNS[col]
        k = lacking(paired)
        if k:
            gaps.append(
                f"needs column '{col}' in every row ({what}); {unit} lacks it in {k} of "
                f"{paired.n} rows"
            )
    # too few groups is a data gate (``gate``: NOT TESTABLE), checked before these
    nb = len(np.unique(np.asarray(paired.budget, dtype=np.float64)))
    if nb < needs.min_budgets:
        gaps.append(
            f"needs at least {needs.min_budgets} distinct budgets (column 'budget'); {unit} has {nb}"
        )
    return gaps
