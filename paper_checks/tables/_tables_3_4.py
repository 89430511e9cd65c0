"""Table 4 of the paper beside ours: gain over retention per operator and budget, with both
intervals and whether the paper's value lies in ours.

``table_4(key, paired)`` takes paired data (``oas.PairedData``: outcomes of ret, merge, abstract,
rewrite per question and budget) and, for each operator and each of the paper's budgets 16 / 32 /
64 / 128, measures the paired gain ``acc(o) - acc(ret)`` and the helped / harmed counts, with two
intervals: the paper's (question-level paired percentile bootstrap, 10,000 replicates by default;
MODEL §11, "Inference") and ours (conversation-level: the Student-t interval of per-conversation
mean gains on ``G - 1`` df, ``retcon.inference.group_mean_interval``; docs/statistics.md). Each
cell carries the paper's published value (``paper_checks._published.TABLE_4``), the difference
ours minus the paper's, and whether the paper's value lies in each of our intervals.

This is the comparison only. The paper's design (its 75-question stratified sample, cheapest-first
packing, alphanumeric token counts, capped records) is what the paired data must come from for
the cells to be comparable; a cell measured on other paired data compares other experiments.

References: MODEL §11 (protocol, Table 4).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from paper_checks._published import OPERATORS, TABLE_4, TABLE_4_BUDGETS, in_interval
from retcon.bootstrap import resample_draws
from retcon.errors import InputError
from retcon.inference import group_mean_interval
from retcon.vocab import ACTIONS


class Table4Cell(NamedTuple):
    """One cell: operator x budget, the paper's value beside ours."""

    operator: str
    budget: int
    n: int  # questions at this budget
    paper: float
    paper_interval: tuple[float | None, float | None]
    ours: float | None  # None where no question has this budget
    helped: int
    harmed: int
    question_interval: tuple[float | None, float | None]  # paper's unit: question bootstrap
    conversation_interval: tuple[float | None, float | None]  # ours: conversation-level t
    difference: float | None  # ours - paper
    paper_in_question_interval: bool | None
    paper_in_conversation_interval: bool | None


def _finite(x) -> float | None:
    x = float(x)
    return round(x, 6) if np.isfinite(x) else None


def question_bootstrap(key: jax.Array, diff, n_resamples: int = 10_000, level: float = 0.95):
    """Percentile interval of the mean of ``diff`` (n,) over ``n_resamples`` question resamples.

    The paper's unit (MODEL §11): questions drawn with replacement, paired (one draw keeps a
    question's operator and retention outcomes together, since ``diff`` is their difference).
    Returns ``(lo, hi)``.
    """
    diff = np.asarray(diff, dtype=np.float64)
    if diff.ndim != 1 or len(diff) == 0:
        raise InputError(
            f"question_bootstrap: diff must be a non-empty (n,) array; got {diff.shape}."
        )
    idx = resample_draws(key, len(diff), n_resamples)  # numpy, seeded by the key: no compile
    means = diff[idx].mean(axis=1)
    a = (1.0 - level) / 2.0
    return float(np.quantile(means, a)), float(np.quantile(means, 1.0 - a))


def mean_cell(key: jax.Array, values, groups, paper: float | None, n_resamples: int) -> dict:
    """One cell: the mean of ``values`` (one per question), both intervals, the paper beside it.

    Args:
      key: JAX key of the question bootstrap.
      values: shape ``(n,)``, one value per question (a gain, a fit share, an indicator).
      groups: shape ``(n,)``, the questions' conversations (the conversation interval's unit).
      paper: the paper's value, or ``None`` where its table has no such cell.
      n_resamples: question-bootstrap replicates.

    Returns:
      ``n``, ``ours``, ``question_interval``, ``conversation_interval``, ``paper``,
      ``difference`` and the two ``paper_in_*_interval`` flags (``None`` where not defined).

    References: MODEL §11 (inference: both units).
    """
    values = np.asarray(values, np.float64)
    n = len(values)
    if n == 0:
        return {
            "n": 0,
            "ours": None,
            "question_interval": [None, None],
            "conversation_interval": [None, None],
            "paper": paper,
            "difference": None,
            "paper_in_question_interval": None,
            "paper_in_conversation_interval": None,
        }
    ours = float(values.mean())
    q_lo, q_hi = question_bootstrap(key, values, n_resamples)
    gi = group_mean_interval(values, np.asarray(groups).astype(str))
    c_lo, c_hi = float(np.ravel(gi.lower)[0]), float(np.ravel(gi.upper)[0])
    c_ok = bool(np.isfinite([c_lo, c_hi]).all())
    return {
        "n": n,
        "ours": _finite(ours),
        "question_interval": [_finite(q_lo), _finite(q_hi)],
        "conversation_interval": [_finite(c_lo), _finite(c_hi)] if c_ok else [None, None],
        "paper": paper,
        "difference": None if paper is None else _finite(ours - paper),
        "paper_in_question_interval": None if paper is None else in_interval(paper, q_lo, q_hi),
        "paper_in_conversation_interval": None
        if paper is None or not c_ok
        else in_interval(paper, c_lo, c_hi),
    }


def table_4(
    key: jax.Array,
    paired,
    *,
    n_resamples: int = 10_000,
    published: dict = TABLE_4,
    budgets: tuple = TABLE_4_BUDGETS,
) -> list[Table4Cell]:
    """The 12 cells of Table 4 (operator x budget 16 / 32 / 64 / 128), paper beside ours.

    Args:
      key: JAX key; cell ``(operator, budget)`` uses ``fold_in(key, 4 * i + j)`` (operator ``i``,
        budget ``j``), so the cells' bootstraps never share draws.
      paired: ``oas.PairedData``; rows at other budgets are ignored.
      n_resamples: question-bootstrap replicates (the paper: 10,000).
      published, budgets: the paper's cells and budgets; ``TABLE_3`` and ``TABLE_3_BUDGETS`` make
        Table 3 (LongMemEval gains, the same cell shape; its published h/h are not given).

    Returns:
      a list of ``Table4Cell`` in the paper's order (operator, then budget).

    References: MODEL §11 (Table 4, inference).
    """
    y = np.asarray(paired.outcomes, dtype=np.float64)
    budget = np.asarray(paired.budget, dtype=np.float64)
    groups = np.asarray(paired.group_id).astype(str)
    cells = []
    for i, op in enumerate(OPERATORS):
        diff = y[:, ACTIONS.index(op)] - y[:, ACTIONS.index("ret")]
        for j, b in enumerate(budgets):
            pub, d = published[(op, b)], diff[budget == b]
            k = jax.random.fold_in(key, 4 * i + j)
            c = mean_cell(k, d, groups[budget == b], pub.value, n_resamples)
            cells.append(
                Table4Cell(
                    op,
                    b,
                    c["n"],
                    pub.value,
                    (pub.lo, pub.hi),
                    c["ours"],
                    int((d > 0).sum()),
                    int((d < 0).sum()),
                    tuple(c["question_interval"]),
                    tuple(c["conversation_interval"]),
                    c["difference"],
                    c["paper_in_question_interval"],
                    c["paper_in_conversation_interval"],
                )
            )
    return cells


def table_4_json(cells: list[Table4Cell]) -> list[dict]:
    """The ``tables.table_4`` block of ``--json``: one object per cell."""
    return [c._asdict() for c in cells]


def _f(x, signed: bool = False) -> str:
    return "-" if x is None else (f"{x:+.3f}" if signed else f"{x:.3f}")


def _iv(iv, signed: bool = False) -> str:
    return "-" if iv is None or iv[0] is None else f"[{_f(iv[0], signed)}, {_f(iv[1], signed)}]"


def _yes(x) -> str:
    return "-" if x is None else ("yes" if x else "no")


def _key(v) -> str:
    """A cell's naming column: ``-`` for None, a float (an accuracy) to 3 decimals."""
    return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def _signed_cell(c: dict) -> tuple:
    return True, c["ours"], c["paper"], "", ""


def cells_markdown(
    heading: list[str],
    cells,
    keys=("row", "budget"),
    *,
    pair: str | None = None,
    align: str = "---",
    parts=_signed_cell,
) -> list[str]:
    """One table of ``TABLES.md`` whose cells are ``mean_cell``'s: ``heading``, the header, then
    per cell its naming columns ``keys``, ``n``, ours, both intervals, the paper's value, ours -
    paper and the in-interval flags.

    Args:
      heading: the lines before the table's header.
      cells: the table's cells (dicts).
      keys: the columns that name a cell, before ``n``.
      pair: the name of a column after ours and (``paper <pair>``) after the paper's value, or
        ``None`` for neither; ``align`` is their delimiter cell.
      parts: ``cell -> (signed, ours, paper, ours_pair, paper_pair)`` (default: the signed
        ``ours`` and ``paper``, no pair columns).
    """
    p_ours, p_paper = (f" {pair} |", f" paper {pair} |") if pair else ("", "")
    lines = [
        *heading,
        f"| {' | '.join(keys)} | n | ours |{p_ours} question interval | conversation interval | "
        f"paper |{p_paper} ours - paper | in q | in c |",
        f"|---|---:|---:|---:|{align}|---|---|---:|{align}|---:|---|---|"
        if pair
        else "|" + "---|" * (len(keys) + 8),  # one per column of the header
    ]
    for c in cells:
        signed, ours, paper, ours_pair, paper_pair = parts(c)
        q_ours, q_paper = (f" {ours_pair} |", f" {paper_pair} |") if pair else ("", "")
        lines.append(
            "| " + " | ".join(_key(c[k]) for k in keys) + f" | {c['n']} | {_f(ours, signed)} |"
            f"{q_ours} {_iv(c['question_interval'])} | {_iv(c['conversation_interval'])} | "
            f"{_f(paper, signed)} |{q_paper} {_f(c['difference'], True)} | "
            f"{_yes(c['paper_in_question_interval'])} | "
            f"{_yes(c['paper_in_conversation_interval'])} |"
        )
    return lines


def table_4_markdown(
    cells: list[Table4Cell],
    title: str = "Table 4: LoCoMo",
    nesting: str = ", the stricter one with questions nested in 10 conversations",
) -> str:
    """A gain table (Table 4, or Table 3 with its title) as a markdown table for ``TABLES.md``.

    Args:
      cells: the table's cells.
      title: the heading's table and data set (``"Table 3: LongMemEval"`` for Table 3).
      nesting: what the conversation interval's unit adds, after "ours (...)" ("" where each
        question is its own group, as on LongMemEval).
    """
    lines = [
        f"## {title}, gain over retention (paper beside ours)",
        "",
        "Question interval: the paper's unit (question-level paired bootstrap). Conversation "
        f"interval: ours (per-conversation means, Student-t on G - 1 df){nesting}. "
        "`in q` / `in c`: the paper's value lies in our question / conversation interval.",
        "",
        "| operator | budget | n | paper | paper interval | ours | h/h | question interval | "
        "conversation interval | ours - paper | in q | in c |",
        "|---|---:|---:|---:|---|---:|---|---|---|---:|---|---|",
    ]
    for c in cells:
        lines.append(
            f"| {c.operator} | {c.budget} | {c.n} | {_f(c.paper, True)} | "
            f"{_iv(c.paper_interval, True)} | {_f(c.ours, True)} | {c.helped}/{c.harmed} | "
            f"{_iv(c.question_interval, True)} | {_iv(c.conversation_interval, True)} | "
            f"{_f(c.difference, True)} | {_yes(c.paper_in_question_interval)} | "
            f"{_yes(c.paper_in_conversation_interval)} |"
        )
    return "\n".join(lines) + "\n"
