"""Data gates: can these rows test a claim at all? Checked before any rule reads them.

A rule turns per-group contrasts into a verdict; rows that carry no contrast make every rule
read nonsense (a reader right on no row has ``dU = 0`` everywhere, and a reversal rule reads
FAIL). The gates say so first, as a verdict word of its own, ``NOT TESTABLE``, never FAIL and
never PASS:

* ``outcome_gate``: the outcome has no variance overall (the reader answered no question
  correctly, or every one), or none in any cell (budget) the claim needs;
* ``identical_actions``: actions whose outcomes are the same on every row (merge and rewrite
  offline, the same text) are one action: named once and counted once wherever a claim corrects
  for several operators;
* ``groups_gate``: fewer groups than the claim's rule needs, with the count.

Pure functions of arrays (``(n, A)`` outcomes, ``(n,)`` groups and budgets), so ``--paired``
files and LoCoMo pass the same gates.

References: MODEL §3 (``U_B(a)``, the paired outcomes), §8 (metrics: the group is the unit).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from retcon.errors import InputError


class Gate(NamedTuple):
    """One gate's answer: ``testable`` False with ``reason`` (one sentence) when the rows cannot
    test the claim; ``reason`` empty when they can."""

    testable: bool
    reason: str = ""


def _and(words: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _constant_words(value: float, who: str) -> str:
    if value == 0.0:
        return f"{who} answered no question correctly"
    if value == 1.0:
        return f"{who} answered every question correctly"
    return f"every outcome of {who} is {value:g}"


def outcome_gate(outcomes, cell=None, needed=None, *, who: str = "the reader") -> Gate:
    """Does the outcome vary, overall and in some cell the claim needs?

    Args:
      outcomes: ``(n, A)`` paired outcomes (every action of every row; NaN: not observed).
      cell: ``(n,)`` the cell of each row (its budget); None: one cell.
      needed: the cells the claim needs (e.g. the tightest and loosest budgets); None: every
        cell present. A needed cell with no row counts as without variance.
      who: the reader's name in the reason.

    Returns:
      ``Gate``: not testable when no finite outcome varies overall, or when in every needed cell
      all finite outcomes (every action, every row) are one value: then every contrast of the
      cell is 0 whatever the truth.
    """
    y = np.asarray(outcomes, dtype=np.float64)
    if y.ndim != 2:
        raise InputError(f"outcome_gate: outcomes must have shape (n, A); got {y.shape}.")
    fin = np.isfinite(y)
    if not fin.any():
        return Gate(False, f"{who} has no observed outcome")
    vals = np.unique(y[fin])
    if vals.size == 1:
        return Gate(False, _constant_words(float(vals[0]), who))
    if cell is None:
        return Gate(True)
    c = np.asarray(cell).reshape(-1)
    if c.shape[0] != y.shape[0]:
        raise InputError(f"outcome_gate: cell has {c.shape[0]} rows; outcomes has {y.shape[0]}.")
    cells = np.unique(c) if needed is None else np.asarray(list(needed))
    flat = []
    for v in cells:
        rows = y[c == v]
        u = np.unique(rows[np.isfinite(rows)])
        if u.size > 1:
            return Gate(True)
        flat.append(float(u[0]) if u.size else float("nan"))
    where = f"at budget{'s' if len(cells) > 1 else ''} {_and([f'{float(v):g}' for v in cells])}"
    if all(np.isfinite(flat)) and len(set(flat)) == 1:
        return Gate(
            False, f"{_constant_words(flat[0], who)} {where} (the budgets this claim needs)"
        )
    parts = ", ".join(f"{_cell_words(f)} at {float(v):g}" for v, f in zip(cells, flat))
    return Gate(
        False,
        f"{who}'s outcome does not vary {where} (the budgets this claim needs): {parts}",
    )


def _cell_words(value: float) -> str:
    if not np.isfinite(value):
        return "no row"
    return "all wrong" if value == 0 else "all right" if value == 1 else f"all {value:g}"


class Identical(NamedTuple):
    """Actions whose outcomes are the same on every row.

    ``distinct``: one name per set of identical actions (the first in the given order);
    ``same``: each set with more than one member, in order; ``words``: the sentence for the
    report ("merge and rewrite are the same records here"), empty when all differ;
    ``first``: ``{action: the first action of its set}`` for every later member of a set (on
    LoCoMo ``{"rewrite": "merge"}``).
    """

    distinct: tuple[str, ...]
    same: tuple[tuple[str, ...], ...]
    words: str
    first: dict[str, str]


def identical_actions(outcomes, names: Sequence[str]) -> Identical:
    """Sets of actions with identical outcomes on every row (NaN equal to NaN).

    Args:
      outcomes: ``(n, A)``; names: the ``A`` action names, in the columns' order.

    Returns:
      ``Identical``: two actions with the same outcome on every row are one action to every
      claim (a correction for several operators counts them once).
    """
    y = np.asarray(outcomes, dtype=np.float64)
    if y.ndim != 2 or y.shape[1] != len(names):
        raise InputError(
            f"identical_actions: outcomes must have shape (n, {len(names)}); got {y.shape}."
        )
    sets: list[list[int]] = []
    for k in range(y.shape[1]):
        for s in sets:
            if np.array_equal(y[:, s[0]], y[:, k], equal_nan=True):
                s.append(k)
                break
        else:
            sets.append([k])
    same = tuple(tuple(names[k] for k in s) for s in sets if len(s) > 1)
    words = "; ".join(
        f"{_and(s)} are the same records here (the same outcome on every row): counted once"
        for s in same
    )
    first = {names[k]: names[s[0]] for s in sets for k in s[1:]}
    return Identical(tuple(names[s[0]] for s in sets), same, words, first)


def groups_gate(group_id, need: int, *, who: str = "the data") -> Gate:
    """Enough groups for the rule? Not testable with the count when fewer than ``need``.

    Args:
      group_id: ``(n,)`` the group of each row; need: the least number of groups the rule needs.
    """
    g = len(np.unique(np.asarray(group_id).astype(str)))
    if g < int(need):
        return Gate(
            False,
            f"{who} has {g} group{'s' if g != 1 else ''} (conversations or users); "
            f"this claim's rule needs at least {int(need)}",
        )
    return Gate(True)


def first_closed(*gates: Gate) -> Gate:
    """The first gate that is not passed (the reason a claim is not testable), else a pass."""
    return next((g for g in gates if not g.testable), Gate(True))
