"""Magnitude, not only direction: identify the reader from paired data, predict the crossover.

``identify_report`` fits the reader of MODEL §2 (``oas.identify``) to paired data that carry
the ``evidence_structure`` column, predicts every operator's ``dU(B)`` on held-out groups (out of
fold, ``oas.out_of_fold``) and compares predicted with observed crossovers
(``oas.compare_crossovers``), overall and per stratum of raw evidence length; then it runs the
diagnostics that say which assumption breaks where they disagree:

- ``cut_partial``: under ``cut`` packing the model credits a truncated unit with the kept share of
  its tokens; the diagnostic compares predicted and observed success on rows where some evidence
  unit is cut (per action);
- ``multi_unit``: predicted vs observed crossover for queries with one evidence unit and with
  several (multi-session evidence);
- ``phi_by_budget``: the reader refitted on the rows of each budget separately; a fidelity that
  drifts with the budget breaks the model's budget-free ``phi``.

References: MODEL §2 (reader, packing), §6 (crossover), §8 (grouped CIs).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jax
import numpy as np

from oas._identify_misfit import format_misfit_attribution, misfit_attribution
from oas._strata import length_strata, stratum_label
from oas._structure import check_identifiable, paired_structure
from retcon.vocab import ACTIONS, OPERATORS, VOCABULARIES


def _params_table(fit, vocabulary: str) -> list[dict]:
    types = VOCABULARIES[vocabulary]
    rows = []

    def add(name, t, est, lo, hi, ok):
        if ok:
            rows.append(
                {
                    "parameter": name,
                    "type": t,
                    "estimate": float(est),
                    "lower": float(lo),
                    "upper": float(hi),
                }
            )

    p, lo, hi, ok = fit.params, fit.lower, fit.upper, fit.identified
    add("g", "all", p.acc_guess, lo.acc_guess, hi.acc_guess, bool(ok.acc_guess))
    for t, name in enumerate(types):
        add("a", name, p.acc_raw[t], lo.acc_raw[t], hi.acc_raw[t], bool(ok.acc_raw[t]))
    for j, o in enumerate(OPERATORS):
        for t, name in enumerate(types):
            add(
                f"phi_{o}",
                name,
                p.fidelity[j, t],
                lo.fidelity[j, t],
                hi.fidelity[j, t],
                bool(ok.fidelity[j, t]),
            )
    return rows


def _comparison_dict(c) -> dict:
    return {
        "budgets": c.budgets.tolist(),
        "n_rows": c.n_rows,
        "n_groups": c.n_groups,
        "crossover": c.crossover,
        "predicted": {o: c.predicted[j].tolist() for j, o in enumerate(OPERATORS)},
        "predicted_lower": {o: c.predicted_lower[j].tolist() for j, o in enumerate(OPERATORS)},
        "predicted_upper": {o: c.predicted_upper[j].tolist() for j, o in enumerate(OPERATORS)},
        "observed": {o: c.observed[j].tolist() for j, o in enumerate(OPERATORS)},
        "observed_lower": {o: c.observed_lower[j].tolist() for j, o in enumerate(OPERATORS)},
        "observed_upper": {o: c.observed_upper[j].tolist() for j, o in enumerate(OPERATORS)},
        "truth": None
        if c.truth is None
        else {o: c.truth[j].tolist() for j, o in enumerate(OPERATORS)},
    }


def _truth(data):
    cols = [f"meta_p_{a}" for a in ACTIONS]
    if all(c in data.meta for c in cols):
        return np.stack([data.meta[c].astype(np.float64) for c in cols], axis=1)
    return None


def raw_evidence_tokens(structure) -> np.ndarray:
    """``(n,)`` raw evidence tokens of each row (the ``ret`` context's evidence records)."""
    return np.where(structure.evidence[:, 0], structure.lengths[:, 0], 0.0).sum(-1)


#: The stages ``identify_report`` reports to its ``progress`` callback, in order.
IDENTIFY_STAGES = (
    "fit and bootstrap refits",
    "out-of-fold prediction",
    "crossovers",
    "diagnostics",
)


def identify_report(
    data,
    *,
    key: jax.Array,
    folds: int = 5,
    n_resamples: int = 200,
    n_strata: int = 3,
    diagnostics: bool = True,
    level: float = 0.95,
    progress: Callable[[int, int, str], None] | None = None,
) -> dict:
    """Parameters with CIs, predicted vs observed crossovers (overall, per stratum), diagnostics.

    Args:
      data: ``PairedData`` with the ``evidence_structure`` column in every row.
      key: JAX key (fits, folds, bootstraps).
      folds: group folds of the out-of-fold prediction (clipped to the number of groups; the
        number of groups is leave-one-group-out).
      n_resamples: bootstrap refits per fit and group resamples of the observed curves.
      n_strata: strata of raw evidence length (``oas.length_strata``: quantiles over queries,
        closed below, the last open above, empty strata dropped); 1 for none.
      diagnostics: run the assumption diagnostics.
      level: CI level.
      progress: ``progress(done, total, stage)`` called as each of ``IDENTIFY_STAGES`` begins
        (the diagnostics only when run) and once at the end; it never changes a number.

    Returns:
      a JSON-ready dict (``parameters``, ``compress_ratio``, ``overall``, ``strata``,
      ``single_cluster``, ``diagnostics``, ...).

    References: MODEL §2, §6, §8.
    """
    from oas._identify import identify, reader_rows
    from oas._out_of_fold import compare_crossovers, out_of_fold, single_cluster_crossover

    n_groups = check_identifiable(data)
    structure = paired_structure(data)
    slot = data.query_type_slot
    y = data.outcomes
    groups = data.group_id.astype(str)
    folds = int(min(max(2, folds), n_groups))
    n_stages = len(IDENTIFY_STAGES) - (0 if diagnostics else 1)

    def stage(i: int) -> None:
        if progress is not None:
            progress(i, n_stages, IDENTIFY_STAGES[i] if i < n_stages else "done")

    k_fit, k_oof, k_cmp, k_diag = jax.random.split(key, 4)
    rows = reader_rows(structure, data.budget, slot, y, groups)  # the support, computed once
    stage(0)
    fit = identify(k_fit, rows, n_resamples=n_resamples, level=level)
    stage(1)
    oof = out_of_fold(k_oof, rows, folds=folds, n_resamples=n_resamples, level=level)
    truth = _truth(data)
    stage(2)

    def compare(mask, k):
        return compare_crossovers(
            k,
            oof.p[mask],
            oof.p_boot[:, mask],
            data.budget[mask],
            y[mask],
            groups[mask],
            truth=None if truth is None else truth[mask],
            n_resamples=max(n_resamples, 200),
            level=level,
        )

    everything = np.ones(data.n, bool)
    overall = compare(everything, jax.random.fold_in(k_cmp, 0))
    raw_len = raw_evidence_tokens(structure)
    strata = []
    stratum_of_row = np.zeros(data.n, np.int64)
    stratum_names = ["all"]
    if n_strata > 1:
        st = length_strata(raw_len, data.query_id, n_strata)  # the one rule (oas._strata)
        stratum_of_row = st.stratum
        stratum_names = [stratum_label(lo, hi) for lo, hi in zip(st.lower, st.upper)]
        for s in range(len(st.median)):
            m = st.stratum == s
            if np.unique(groups[m]).size < 2:
                continue
            c = compare(m, jax.random.fold_in(k_cmp, 1 + s))
            strata.append(
                {
                    "label": stratum_label(st.lower[s], st.upper[s]),
                    "lower_tokens": float(st.lower[s]),
                    "upper_tokens": _finite(st.upper[s]),
                    **_comparison_dict(c),
                }
            )
    single = None
    types_present = np.flatnonzero(fit.n_rows)
    if types_present.size == 1:
        _, first = np.unique(data.query_id.astype(str), return_index=True)
        single = single_cluster_crossover(fit, raw_len[first], slot=int(types_present[0]))
    out = {
        "n_rows": int(data.n),
        "n_queries": int(np.unique(data.query_id.astype(str)).size),
        "n_groups": int(n_groups),
        "folds": folds,
        "n_resamples": int(n_resamples),
        "level": level,
        "packing": sorted(set(structure.packing.tolist())),
        "vocabulary": data.vocabulary,
        "n_params": fit.n_params,
        "log_likelihood": fit.log_likelihood,
        "parameters": _params_table(fit, data.vocabulary),
        "compress_ratio": {
            o: {
                t: _finite(fit.compress_ratio[j, i])
                for i, t in enumerate(VOCABULARIES[data.vocabulary])
            }
            for j, o in enumerate(OPERATORS)
        },
        "overall": _comparison_dict(overall),
        "strata": strata,
        "single_cluster": single,
        "misfit": misfit_attribution(
            jax.random.fold_in(k_diag, 999),
            rows,
            fit.theta,
            stratum_of_row,
            stratum_names=stratum_names,
        ),
    }
    if diagnostics:
        stage(3)
        out["diagnostics"] = _diagnostics(data, rows, oof, k_diag, level, n_resamples)
    stage(n_stages)
    return out


def _finite(x):
    x = float(x)
    return x if np.isfinite(x) else None


def _diagnostics(data, rows, oof, key, level, n_resamples) -> dict:
    from oas._identify import identify
    from oas._out_of_fold import compare_crossovers

    y = data.outcomes
    groups = data.group_id.astype(str)
    structure, frac = rows.structure, rows.support
    diag: dict = {}
    # partial support: rows where an action's evidence is cut (0 < s < 1)
    cut = {}
    for j, a in enumerate(ACTIONS):
        m = (frac[:, j] > 0) & (frac[:, j] < 1)
        if m.sum():
            cut[a] = {
                "rows": int(m.sum()),
                "predicted": float(oof.p[m, j].mean()),
                "observed": float(y[m, j].mean()),
                "mean_kept_share": float(frac[m, j].mean()),
            }
    diag["cut_partial"] = cut
    # one evidence unit vs several
    n_units = structure.evidence[:, 0].sum(-1)
    multi = {}
    for name, m in (("single_unit", n_units == 1), ("multi_unit", n_units > 1)):
        if np.unique(groups[m]).size >= 2:
            c = compare_crossovers(
                jax.random.fold_in(key, len(multi)),
                oof.p[m],
                oof.p_boot[:, m],
                data.budget[m],
                y[m],
                groups[m],
                n_resamples=max(n_resamples, 200),
                level=level,
            )
            multi[name] = {"rows": int(m.sum()), "crossover": c.crossover}
    diag["multi_unit"] = multi
    # fidelity refitted per budget
    per_budget = []
    for i, b in enumerate(np.unique(data.budget)):
        m = data.budget == b
        fit = identify(
            jax.random.fold_in(key, 100 + i),
            rows.take(m),
            n_resamples=min(n_resamples, 100),
            level=level,
        )
        per_budget.append({"budget": float(b), "parameters": _params_table(fit, data.vocabulary)})
    diag["phi_by_budget"] = per_budget
    return diag


def format_report(rep: dict) -> str:
    """Plain-text tables: the parameters, and predicted vs observed crossovers."""
    lines = [
        f"identified reader (MODEL §2), {rep['n_rows']} rows, {rep['n_queries']} queries, "
        f"{rep['n_groups']} groups, packing {','.join(rep['packing'])}, "
        f"{rep['n_params']} parameters, {int(100 * rep['level'])}% grouped-bootstrap CIs",
        f"{'parameter':<14}{'type':<20}{'estimate':>10}{'CI':>22}",
    ]
    for r in rep["parameters"]:
        ci = "[{:.3f}, {:.3f}]".format(r["lower"], r["upper"])
        lines.append(f"{r['parameter']:<14}{r['type']:<20}{r['estimate']:>10.3f}{ci:>22}")
    lines.append("")
    lines.append(
        f"crossover B* (tokens), predicted out of fold ({rep['folds']} group folds; interval: "
        "parameters + the held-out groups' sampling) vs observed"
    )
    lines.append(f"{'set':<22}{'operator':<10}{'predicted':>28}{'observed':>28}{'truth':>10}")
    sets = [("all", rep["overall"])] + [(s["label"], s) for s in rep["strata"]]
    for name, c in sets:
        for o in OPERATORS:
            x = c["crossover"][o]
            tr = x["truth"]["budget"] if x["truth"] else None
            lines.append(
                f"{name:<22}{o:<10}{_fmt(x.get('predictive', x['predicted'])):>28}"
                f"{_fmt(x['observed']):>28}"
                f"{'' if tr is None else f'{tr:.0f}':>10}"
            )
    if rep.get("misfit"):
        lines.append("")
        lines.append(format_misfit_attribution(rep["misfit"]))
    if rep.get("single_cluster"):
        lines.append("")
        lines.append("single-cluster closed route (MODEL §6, theory.crossover):")
        for o, x in rep["single_cluster"].items():
            lines.append(f"  {o:<10}{_fmt(x)}")
    return "\n".join(lines)


def _fmt(x: dict) -> str:
    from theory import format_crossover

    return format_crossover(x.get("budget"), x.get("lower"), x.get("upper"), str(x.get("status")))


def plot_report(rep: dict, path) -> Path:
    """Predicted (band: parameter CI) vs observed (band: group CI) ``dU(B)`` per operator."""
    from retcon.plots import OPERATOR_COLORS, budget_axis, new_figure, save

    c = rep["overall"]
    b = np.asarray(c["budgets"])
    fig, axes = new_figure(3, width=13 / 3, height=3.8, sharey=True)
    for ax, o in zip(axes, OPERATORS):
        color = OPERATOR_COLORS[o]
        ax.plot(b, c["observed"][o], "o-", color="black", label="observed", markersize=3)
        ax.fill_between(
            b, c["observed_lower"][o], c["observed_upper"][o], color="gray", alpha=0.3, linewidth=0
        )
        ax.plot(b, c["predicted"][o], "-", color=color, label="predicted (out of fold)")
        ax.fill_between(
            b,
            c["predicted_lower"][o],
            c["predicted_upper"][o],
            color=color,
            alpha=0.25,
            linewidth=0,
        )
        if c["truth"] is not None:
            ax.plot(b, c["truth"][o], ":", color="tab:red", label="truth")
        for kind, line in (("predicted", color), ("observed", "black")):
            x = c["crossover"][o][kind]["budget"]
            if x is not None:
                ax.axvline(x, color=line, linestyle="--", linewidth=0.8, label=f"{kind} crossover")
        ax.axhline(0, color="black", linewidth=0.6)
        budget_axis(ax)
        ax.set_title(o)
        # each panel its own legend: the predicted line is in the operator's colour (one legend
        # on the first panel gave the other two merge's colour)
        ax.legend(fontsize=6)
    axes[0].set_ylabel("dU = U(o) - U(ret)")
    fig.tight_layout()
    return save(fig, path, dpi=120)


__all__ = ["format_report", "identify_report", "plot_report", "raw_evidence_tokens"]
