"""Tokens beside accuracy: what each action puts in the reader's context and what it generates.

Per action and budget of paired data (MODEL §8):

* ``context_tokens``: the tokens the action places in context per question, its records packed
  under the budget (``theory.pack_reference`` with the row's packing, from ``evidence_structure``;
  MODEL §2);
* ``generated_tokens``: the tokens the operator wrote to make its records (its write cost;
  ``meta_tokens_<action>``, which ``retcon pair`` records; 0 for ``ret``);
* the gain over retention per thousand context tokens and per thousand generated tokens:
  ``1000 (y_o - y_ret) / tokens`` as a ratio of per-conversation means, with the Student-t
  interval over conversations (``retcon.inference``).

Rows without ``evidence_structure`` have unknown context tokens (NaN), rows without
``meta_tokens_*`` unknown generated tokens: the table says so rather than guessing.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from oas._structure import paired_structure
from retcon.inference import group_means, group_t_interval
from retcon.vocab import ACTIONS
from theory import pack_reference


class TokenRow(NamedTuple):
    """One action at one budget (token counts per question, means over conversations).

    Attributes:
      action, budget, groups: what and over how many conversations.
      accuracy, accuracy_ci: mean outcome and its interval.
      context_tokens, generated_tokens: per question (NaN where unknown).
      gain, gain_ci: ``y_action - y_ret`` and its interval (0 for ``ret``).
      gain_per_1k_context, gain_per_1k_context_ci: ``1000 gain / context_tokens`` per conversation,
        averaged, with its interval (NaN for ``ret``).
      gain_per_1k_generated, gain_per_1k_generated_ci: the same per generated token.
    """

    action: str
    budget: float
    groups: int
    accuracy: float
    accuracy_ci: tuple[float, float]
    context_tokens: float
    generated_tokens: float
    gain: float
    gain_ci: tuple[float, float]
    gain_per_1k_context: float
    gain_per_1k_context_ci: tuple[float, float]
    gain_per_1k_generated: float
    gain_per_1k_generated_ci: tuple[float, float]


def context_tokens(data) -> np.ndarray:
    """``(n, 4)`` tokens each action places in context, packed under the row's budget; NaN where
    the row has no ``evidence_structure``."""
    n = len(data.budget)
    out = np.full((n, len(ACTIONS)), np.nan)
    if "evidence_structure" not in data.meta:
        return out
    have = np.array([v is not None for v in data.meta["evidence_structure"]], dtype=bool)
    if not have.any():
        return out
    idx = np.flatnonzero(have)
    st = paired_structure(data).take(idx)
    budget = np.asarray(data.budget, dtype=np.float64)[idx]
    for mode in np.unique(st.packing):
        m = st.packing == mode
        for j in range(len(ACTIONS)):
            kept = pack_reference(st.lengths[m, j], budget[m], str(mode))
            out[idx[m], j] = kept.sum(axis=-1)
    return out


def generated_tokens(data) -> np.ndarray:
    """``(n, 4)`` tokens each operator generated (``meta_tokens_<action>``; 0 for ``ret``, NaN
    where unknown)."""
    n = len(data.budget)
    out = np.full((n, len(ACTIONS)), np.nan)
    out[:, 0] = 0.0
    for j, a in enumerate(ACTIONS[1:], 1):
        col = data.meta.get(f"meta_tokens_{a}")
        if col is not None:
            out[:, j] = np.array([np.nan if v is None else float(v) for v in col], dtype=np.float64)
    return out


def _ci(values: np.ndarray, level: float) -> tuple[float, tuple[float, float]]:
    v = values[np.isfinite(values)]
    if v.size == 0:
        return float("nan"), (float("nan"), float("nan"))
    ci = group_t_interval(v, level=level)
    return float(ci.estimate[0]), (float(ci.lower[0]), float(ci.upper[0]))


def token_table(data, *, level: float = 0.95) -> list[TokenRow]:
    """``TokenRow`` per action and budget of ``data`` (``oas.PairedData``), budgets ascending.

    References: MODEL §2 (packing), §3 (``dU``), §8 (paired data); docs/statistics.md.
    """
    y = np.asarray(data.outcomes, dtype=np.float64)
    groups = np.asarray(data.group_id)
    budget = np.asarray(data.budget, dtype=np.float64)
    ctx, gen = context_tokens(data), generated_tokens(data)
    rows = []
    for b in np.unique(budget):
        at = budget == b
        g = groups[at]
        for j, a in enumerate(ACTIONS):
            acc = group_means(y[at, j], g)
            gain = group_means(y[at, j] - y[at, 0], g)
            c = group_means(ctx[at, j], g, np.isfinite(ctx[at, j]))
            w = group_means(gen[at, j], g, np.isfinite(gen[at, j]))
            with np.errstate(invalid="ignore", divide="ignore"):
                per_c = np.where(c > 0, 1000.0 * gain / c, np.nan)
                per_w = np.where(w > 0, 1000.0 * gain / w, np.nan)
            if j == 0:
                per_c = per_w = np.full_like(gain, np.nan)
            acc_e, acc_ci = _ci(acc, level)
            gain_e, gain_ci = _ci(gain, level)
            pc_e, pc_ci = _ci(per_c, level)
            pw_e, pw_ci = _ci(per_w, level)
            rows.append(
                TokenRow(
                    a,
                    float(b),
                    int(np.isfinite(acc).sum()),
                    acc_e,
                    acc_ci,
                    float(np.nanmean(c)) if np.isfinite(c).any() else float("nan"),
                    float(np.nanmean(w)) if np.isfinite(w).any() else float("nan"),
                    gain_e,
                    gain_ci,
                    pc_e,
                    pc_ci,
                    pw_e,
                    pw_ci,
                )
            )
    return rows


def token_json(rows: list[TokenRow]) -> list[dict]:
    """``token_table`` as JSON-ready dicts (intervals as ``[lower, upper]``; NaN as ``null`` when
    written through ``retcon.output``)."""
    return [
        {k: list(v) if isinstance(v, tuple) else v for k, v in r._asdict().items()} for r in rows
    ]


def token_markdown(rows: list[TokenRow]) -> str:
    """``token_table`` as a markdown table (evaluation.md's "Tokens beside accuracy")."""

    def f(v, fmt):
        return "n/a" if not np.isfinite(v) else format(v, fmt)

    lines = [
        "## Tokens beside accuracy",
        "",
        "Per question: the tokens each action places in context (packed under the budget) and "
        "the tokens its operator generated; the gain over retention per 1,000 of each, with 95% "
        "intervals over conversations (oas/_tokens.py).",
        "",
        "| budget | action | accuracy | context tokens | generated tokens | gain per 1k context | gain per 1k generated |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        pc, pw = r.gain_per_1k_context_ci, r.gain_per_1k_generated_ci
        lines.append(
            f"| {r.budget:g} | {r.action} | {f(r.accuracy, '.3f')} | {f(r.context_tokens, '.0f')} | "
            f"{f(r.generated_tokens, '.0f')} | {f(r.gain_per_1k_context, '+.3f')} "
            f"[{f(pc[0], '+.3f')}, {f(pc[1], '+.3f')}] | {f(r.gain_per_1k_generated, '+.3f')} "
            f"[{f(pw[0], '+.3f')}, {f(pw[1], '+.3f')}] |"
        )
    return "\n".join(lines) + "\n"
