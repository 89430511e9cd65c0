"""OAS vs best-fixed vs oracle by leave-one-conversation-out, and the oracle / end-to-end table.

``loco_policies``: for each conversation ``g``, the ridge router (``oas.fit_router``) and the
best fixed action per budget are fitted on the other conversations; on ``g`` the router picks
``argmax_a mu_a`` (``oas``) and its calibrated variant (``oas-calibrated``), best-fixed plays the
training set's best action at the row's budget and the oracle takes ``max_a y_a``. Accuracy per
budget and overall, and the gain of each over best-fixed, are means over conversations with
Student-t intervals on ``G - 1`` df (``retcon.inference.group_mean_interval``; docs/statistics.md).

``side_by_side``: several paired-data files (e.g. oracle protocol, end to end with the gold type,
end to end) next to each other: accuracy per action per budget, crossovers with the wild cluster
bootstrap interval, OAS gain over best-fixed with its CI, retrieval recall and classifier accuracy.
The gap from the oracle protocol to end to end splits into retrieval (oracle -> end to end with the
gold type) and type errors (gold type -> predicted type).

References: MODEL §6 (crossover), §8 (policies, grouped CIs).
"""

from __future__ import annotations

import math

import numpy as np

from retcon.errors import InputError
from retcon.vocab import ACTIONS

POLICY_NAMES = ("best-fixed", "oas", "oas-calibrated", "oracle")


def loco_policies(key, data, *, alpha: float = 0.1) -> dict:
    """Leave-one-conversation-out scores of best-fixed, OAS (argmax, calibrated) and the oracle.

    Args:
      key: JAX key (split per held-out group).
      data: ``oas.PairedData`` with at least 3 groups.
      alpha: harm bound of the calibrated variant.

    Returns:
      JSON-ready dict: ``budgets``; ``accuracy[policy]`` and ``gain[policy]`` (minus best-fixed),
      each ``{"point", "lower", "upper"}`` lists over the budgets then ``overall`` (last entry).

    References: MODEL §8.
    """
    import jax

    from oas._evaluate import best_fixed_actions
    from retcon.inference import group_mean_interval

    groups = np.asarray(data.group_id).astype(str)
    uniq = list(dict.fromkeys(groups.tolist()))
    if len(uniq) < 3:
        raise InputError(f"loco_policies: need at least 3 conversations; got {len(uniq)}.")
    y = np.asarray(data.outcomes, dtype=np.float64)
    b = np.asarray(data.budget, dtype=np.float64)
    budgets = np.array(sorted(set(b.tolist())))
    chosen = {p: np.zeros(data.n, dtype=np.int64) for p in POLICY_NAMES}
    for i, g in enumerate(uniq):
        test = groups == g
        train = data.take(~test)
        router = _fit(jax.random.fold_in(key, i), train, alpha, len(uniq) - 1)
        feats = np.asarray(data.features, dtype=np.float64)[test]
        chosen["oas"][test] = router.choose(feats, b[test], "argmax")
        chosen["oas-calibrated"][test] = router.choose(feats, b[test], "calibrated")
        bf = best_fixed_actions(train.outcomes, np.asarray(train.budget, np.float64), budgets)
        chosen["best-fixed"][test] = bf[np.searchsorted(budgets, b[test])]
        chosen["oracle"][test] = np.argmax(y[test], axis=1)
    mask = np.concatenate([b[:, None] == budgets[None, :], np.ones((data.n, 1), bool)], axis=1)
    rows = np.arange(data.n)
    score = {p: y[rows, chosen[p]] for p in POLICY_NAMES}
    out: dict = {"budgets": budgets.tolist(), "n_groups": len(uniq), "accuracy": {}, "gain": {}}
    for p in POLICY_NAMES:
        for name, v in (("accuracy", score[p]), ("gain", score[p] - score["best-fixed"])):
            if name == "gain" and p == "best-fixed":
                continue
            vals = np.repeat(v[:, None], mask.shape[1], axis=1)
            ci = group_mean_interval(vals, groups, mask)
            out[name][p] = {
                "point": [float(x) for x in np.asarray(ci.estimate)],
                "lower": [float(x) for x in np.asarray(ci.lower)],
                "upper": [float(x) for x in np.asarray(ci.upper)],
            }
    return out


def _fit(key, train, alpha: float, n_groups: int):
    """``oas.fit_router`` with as many ridge folds (<= 5) as the training groups allow."""
    from oas import fit_router

    for n_folds in range(min(5, max(2, n_groups - 1)), 1, -1):
        try:
            return fit_router(key, train, alpha=alpha, n_folds=n_folds)
        except InputError as e:
            if "n_folds" not in str(e):
                raise
    return fit_router(key, train, alpha=alpha, n_folds=2)


def crossover_ci(key, data, *, n_resamples: int = 1000, level: float = 0.95) -> dict:
    """Per operator: the crossover budget ``B*`` of the mean curves and a wild-cluster-bootstrap
    interval (docs/statistics.md).

    The curve is the mean over conversations of per-conversation ``dU`` curves; each replicate
    perturbs every conversation's curve by one Webb weight
    (``retcon.inference.wild_delta_curve_replicates``); the interval is
    ``theory.crossover_interval`` of the resampled curves (a replicate without a root counts as
    crossing below or above the grid, ``0`` or ``inf``), with the share of replicates that have a
    root on the grid (``p_crossover``).

    References: MODEL §6 (crossover on a sampled curve); docs/statistics.md.
    """
    from retcon.inference import wild_delta_curve_replicates
    from theory import crossover_interval

    b = np.asarray(data.budget, dtype=np.float64)
    budgets = np.unique(b)
    point, reps = wild_delta_curve_replicates(
        key,
        data.outcomes,
        np.asarray(data.group_id).astype(str),
        b,
        budgets,
        n_resamples=int(n_resamples),
    )
    ci = crossover_interval(budgets, point, reps, level=level)
    out = {}
    for j, o in enumerate(ACTIONS[1:]):
        out[o] = {
            "crossover_budget": _none_if_nan(ci.crossover_budget[j]),
            "status": str(ci.status[j]),
            "lower": _none_if_nan(ci.lower[j]),
            "upper": _none_if_nan(ci.upper[j]),
            "p_crossover": float(ci.found_share[j]),
        }
    return out


def _none_if_nan(x) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


def _fmt_ci(p, lo, hi) -> str:
    return f"{p:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def side_by_side(results: dict[str, dict]) -> str:
    """A Markdown table of the runs in ``results`` (name -> ``end_to_end_report`` output)."""
    from theory import format_crossover

    names = list(results)
    first = results[names[0]]
    budgets = [int(x) for x in first["summary"]["budgets"]]
    lines = ["| | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for a in ACTIONS:
        for i, B in enumerate(budgets):
            cells = [f"{r['summary']['accuracy'][a][i]:.3f}" for r in results.values()]
            lines.append(f"| acc {a} @ {B} | " + " | ".join(cells) + " |")
    for o in ACTIONS[1:]:
        cells = []
        for r in results.values():
            c = r["crossover"][o]
            text = format_crossover(
                c["crossover_budget"], c["lower"], c["upper"], c.get("status", "none")
            )
            cells.append(f"{text} (p={c['p_crossover']:.2f})")
        lines.append(f"| crossover {o} B* [95% CI] | " + " | ".join(cells) + " |")
    for p in ("oas", "oas-calibrated", "oracle"):
        cells = []
        for r in results.values():
            g = r["policies"]["gain"][p]
            cells.append(_fmt_ci(g["point"][-1], g["lower"][-1], g["upper"][-1]))
        lines.append(f"| {p} - best-fixed (overall) | " + " | ".join(cells) + " |")
    for p in POLICY_NAMES:
        cells = [f"{r['policies']['accuracy'][p]['point'][-1]:.3f}" for r in results.values()]
        lines.append(f"| accuracy {p} (overall) | " + " | ".join(cells) + " |")
    cells = []
    for r in results.values():
        rr = r.get("retrieval_recall")
        cells.append(
            "1 (gold)"
            if rr is None
            else f"{rr['cluster']:.3f} (packed @{budgets[0]}: {rr['packed'][0]:.3f}, "
            f"@{budgets[-1]}: {rr['packed'][-1]:.3f})"
        )
    lines.append("| retrieval recall of gold evidence | " + " | ".join(cells) + " |")
    cells = []
    for r in results.values():
        tc = r.get("type_classifier")
        cells.append("1 (gold)" if tc is None else f"{tc['accuracy']:.3f}")
    lines.append("| type accuracy | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def retrieval_recall_summary(data) -> dict | None:
    """Mean retrieval recall of the gold evidence per budget (packed units) and over the cluster.

    Reads the end-to-end rows' ``meta_retrieval_recall`` (per row) and
    ``meta_retrieval_recall_cluster`` (per question); ``None`` when the rows have neither (the
    oracle protocol).

    Returns:
      ``{"budgets", "packed" (list per budget), "cluster"}``.
    """
    meta = getattr(data, "meta", None) or {}
    if "meta_retrieval_recall" not in meta or "meta_retrieval_recall_cluster" not in meta:
        return None
    b = np.asarray(data.budget, dtype=np.float64)
    budgets = sorted(set(b.tolist()))
    rec = np.asarray(meta["meta_retrieval_recall"], dtype=np.float64)
    _, first = np.unique(np.asarray(data.query_id).astype(str), return_index=True)
    cluster = np.asarray(meta["meta_retrieval_recall_cluster"], dtype=np.float64)[first]
    return {
        "budgets": budgets,
        "packed": [float(rec[b == B].mean()) for B in budgets],
        "cluster": float(cluster.mean()),
    }


def paired_report(
    key, data, *, n_resamples: int = 1000, type_classifier: dict | None = None
) -> dict:
    """Summary, crossover CIs, LOCO policies and retrieval recall of one paired data set.

    Args:
      key: JAX key.
      data: ``oas.PairedData`` (oracle or end-to-end rows), at least 3 groups.
      n_resamples: bootstrap replicates of the crossover and policy CIs.
      type_classifier: the classifier's report (``CrossFit.as_json``) when the types were predicted.

    Returns:
      ``{"summary", "crossover", "policies"}``, plus ``retrieval_recall`` for end-to-end rows and
      ``type_classifier`` when given: one entry of ``side_by_side``'s ``results``.

    References: MODEL §6, §8.
    """
    import jax

    from oas.real._pair import summarize

    out = {
        "summary": summarize(data),
        "crossover": crossover_ci(jax.random.fold_in(key, 1), data, n_resamples=n_resamples),
        "policies": loco_policies(jax.random.fold_in(key, 2), data),
    }
    recall = retrieval_recall_summary(data)
    if recall is not None:
        out["retrieval_recall"] = recall
    if type_classifier is not None:
        out["type_classifier"] = type_classifier
    return out


def end_to_end_report(key, path, *, n_resamples: int = 1000) -> dict:
    """``paired_report`` of one paired-data file, with its sidecar's classifier report."""
    import json
    from pathlib import Path

    from oas import read_paired

    meta = Path(f"{path}.meta.json")
    summary = {}
    if meta.is_file():
        summary = json.loads(meta.read_text(encoding="utf-8")).get("summary", {}) or {}
    out = {"path": str(path)}
    out.update(
        paired_report(
            key,
            read_paired(path),
            n_resamples=n_resamples,
            type_classifier=summary.get("type_classifier"),
        )
    )
    return out


def gap_split(results: dict) -> dict:
    """The overall OAS gain over best-fixed (and OAS accuracy) lost to retrieval and to type errors.

    Args:
      results: ``side_by_side``'s runs by name; needs ``oracle``, ``e2e-gold-type`` and ``e2e``.

    Returns:
      ``oas_gain`` and ``oas_accuracy`` per run, and the losses: retrieval = oracle minus end to
      end with the gold type, type = end to end with the gold type minus end to end. ``{}`` when a
      run is missing.
    """
    names = ("oracle", "e2e-gold-type", "e2e")
    if not all(n in results for n in names):
        return {}
    g = {n: results[n]["policies"]["gain"]["oas"]["point"][-1] for n in names}
    acc = {n: results[n]["policies"]["accuracy"]["oas"]["point"][-1] for n in names}
    return {
        "oas_gain": g,
        "oas_accuracy": acc,
        "gain_lost_to_retrieval": g["oracle"] - g["e2e-gold-type"],
        "gain_lost_to_type": g["e2e-gold-type"] - g["e2e"],
        "accuracy_lost_to_retrieval": acc["oracle"] - acc["e2e-gold-type"],
        "accuracy_lost_to_type": acc["e2e-gold-type"] - acc["e2e"],
    }
