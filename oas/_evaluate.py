"""Evaluation of OAS against fixed policies, the oracle and the MLP, with grouped CIs.

Protocol (held-out groups; docs/oas.md): the groups (conversations, users) are shuffled with the
key and split into train / calibration / test parts (default 50% / 20% / 30% of groups). The ridge
model is fitted on train (penalty by grouped K-fold inside train), tau_B of ``oas-calibrated``
(max accuracy s.t. harm <= alpha) and ``oas-crc`` (conformal risk control) on calibration; the MLP
is trained on train with early stopping on calibration; ``best-fixed`` takes, per budget, the
fixed action with the highest mean outcome on train + calibration; the paper's baselines of Table 8
(``fixed-operator``, ``evidence-fit``, ``knn``; ``oas._baselines``) are fitted on train +
calibration too. Every policy is scored on the test groups only. With a given router the OAS
policies use it instead (the caller makes sure it never saw the test groups).

Metrics per instance, averaged per budget and overall (MODEL §8): accuracy y_chosen; gain over
always-retain y_chosen - y_ret; regret to the oracle max_a y_a - y_chosen; harm 1{y_chosen < y_ret};
consolidation 1{chosen != ret}, and paired differences of accuracy (policy minus best-fixed).
Each is estimated per test group first and then averaged over the test groups, with the Student-t
interval on ``G - 1`` df (``retcon.inference.group_mean_interval``: the few-groups protocol of
docs/statistics.md; LoCoMo's default split leaves 3 test conversations). ``interval="percentile"``
gives the former pooled mean with the grouped percentile bootstrap
(``retcon.bootstrap.grouped_bootstrap_mean``), which under-covers with few groups: 75% at 3 groups,
82% at 5, 92% at 10 for a nominal 95% (the slow test ``test_evaluate_interval_coverage``).

References: MODEL §8 (baselines, metrics).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import numpy as np

from oas._baselines import evidence_fit_rule, knn_router, training_selected_operator
from oas._fit import group_split, router_from_parts
from oas._mlp import fit_mlp, predict_mlp
from oas._paired import PairedData
from oas._policy import argmax_policy, calibrated_policy
from oas._ridge import DEFAULT_PENALTIES, fit_ridge
from oas._router import Router, check_router_overlap
from oas._structure import STRUCTURE_COLUMN, paired_structure
from oas._theory_router import fit_theory_router
from retcon.bootstrap import grouped_bootstrap_mean
from retcon.errors import InputError, check_choice, check_range
from retcon.inference import group_mean_interval
from retcon.vocab import ACTIONS, EVALUATE_INTERVALS

POLICIES = (
    "always-ret",
    "always-merge",
    "always-abstract",
    "always-rewrite",
    "best-fixed",
    "oracle",
    "oas",
    "oas-calibrated",
    "oas-crc",
    "mlp",
    "fixed-operator",
    "evidence-fit",
    "knn",
)
METRICS = ("accuracy", "gain", "regret", "harm_rate", "consolidation_rate")
DIFFERENCES = ("oas", "oas-calibrated", "oas-crc", "mlp")  # each minus best-fixed, accuracy


class Evaluation(NamedTuple):
    """Scores of every policy on the test groups; the last budget slot is "overall".

    Attributes:
      policies: the P policy names (``POLICIES``).
      budgets: shape ``(m,)`` distinct test budgets (tokens).
      point, lower, upper: shape ``(P, 5, m + 1)``: metric (``METRICS`` order) x budget slot.
      diff_point, diff_lower, diff_upper: shape ``(D, m + 1)``: accuracy of ``DIFFERENCES[d]``
        minus ``best-fixed``.
      n_test: shape ``(m + 1,)`` test instances per budget slot.
      choices: shape ``(P, n_test)`` action index chosen by each policy on each test row.
      info: split sizes, alpha, tau_B of the calibrations, best fixed action per budget, and
        ``test_index`` (the rows of ``data`` that were scored, in the order of ``choices``).
    """

    policies: tuple
    budgets: np.ndarray
    point: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    diff_point: np.ndarray
    diff_lower: np.ndarray
    diff_upper: np.ndarray
    n_test: np.ndarray
    choices: np.ndarray
    info: dict


def best_fixed_actions(outcomes, budget, budgets) -> np.ndarray:
    """Per budget in ``budgets``, the action with the highest mean outcome (ties to ``ret``).

    A budget without rows takes the action best over all rows. Returns shape ``(m,)`` int.
    """
    outcomes = np.asarray(outcomes, dtype=np.float64)
    overall = int(np.argmax(outcomes.mean(axis=0)))
    out = []
    for b in budgets:
        rows = budget == b
        out.append(int(np.argmax(outcomes[rows].mean(axis=0))) if rows.any() else overall)
    return np.asarray(out, dtype=np.int64)


#: The stages ``evaluate`` reports to its ``progress`` callback, in order.
EVALUATE_STAGES = (
    "ridge fit and calibration",
    "MLP control",
    "baselines and policies",
    "intervals",
)


def evaluate(
    key: jax.Array,
    data: PairedData,
    *,
    router: Router | None = None,
    alpha: float = 0.1,
    n_folds: int = 5,
    fractions=(0.5, 0.2, 0.3),
    penalties=DEFAULT_PENALTIES,
    n_resamples: int = 2000,
    mlp_options: dict | None = None,
    allow_overlap: bool = False,
    interval: str = "t",
    progress: Callable[[int, int, str], None] | None = None,
) -> Evaluation:
    """Fit on train/calibration groups, score every policy on the test groups, with grouped CIs.

    Args:
      key: root JAX key; split at once into the group split, the ridge folds, the MLP and the
        bootstrap.
      data: paired data.
      router: optional fitted router used for ``oas``, ``oas-calibrated`` and ``oas-crc``.
      alpha: harm bound in [0, 1) for the calibrations (0: the paper's zero-harm rule).
      n_folds: grouped K-fold for the ridge penalty.
      fractions: shares of groups for (train, calibration, test).
      penalties: ridge grid.
      n_resamples: bootstrap replicates (``interval="percentile"`` only).
      mlp_options: keyword arguments for ``fit_mlp``.
      allow_overlap: with a ``router``, score test groups it was fitted or calibrated on (a
        warning) instead of refusing (``InputError``); see ``oas._router.check_router_overlap``.
      interval: ``"t"`` (default): each metric is the mean over test groups of the group's mean,
        with the Student-t interval on ``G - 1`` df; ``"percentile"``: the pooled mean over test
        rows with the grouped percentile bootstrap (fine with many groups, under-covers with few).
      progress: ``progress(done, total, stage)`` called as each of the ``EVALUATE_STAGES``
        begins (``done`` stages finished) and once at the end; it never changes a number.

    Returns:
      ``Evaluation``.

    References: MODEL §8.
    """
    check_range("evaluate: alpha", alpha, 0, 1, low_open=False)
    check_choice("evaluate: interval", interval, EVALUATE_INTERVALS)
    if len(fractions) != 3:
        raise InputError(
            f"evaluate: fractions must give (train, calibration, test); got {fractions}."
        )
    if router is not None and router.vocabulary != data.vocabulary:
        raise InputError(
            f"the router was fitted on vocabulary {router.vocabulary!r}; the data uses "
            f"{data.vocabulary!r}."
        )

    def stage(i: int) -> None:
        if progress is not None:
            n_stages = len(EVALUATE_STAGES)
            progress(i, n_stages, EVALUATE_STAGES[i] if i < n_stages else "done")

    k_split, k_fit, k_mlp, k_boot = jax.random.split(key, 4)
    part = group_split(k_split, data.group_id, fractions)
    train, calib, test = data.take(part == 0), data.take(part == 1), data.take(part == 2)
    overlap = None
    if router is not None:
        overlap = check_router_overlap(
            router, test.group_id, allow_overlap=allow_overlap, where="test groups"
        )
    stage(0)
    if router is None:
        fit = fit_ridge(
            k_fit,
            train.features,
            train.outcomes,
            train.group_id,
            penalties=penalties,
            n_folds=n_folds,
        )
        router = router_from_parts(fit, calib, alpha=alpha, vocabulary=data.vocabulary)
    seen = data.take(part != 2)
    stage(1)
    # the MLP control on the train and calibration groups, like the baselines; its width, decay
    # and stopping epoch come from its own inner grouped CV there (MODEL §8)
    mlp = fit_mlp(k_mlp, seen.features, seen.outcomes, seen.group_id, **(mlp_options or {}))

    stage(2)
    y = test.outcomes
    n = test.n
    budgets = np.unique(test.budget)
    fixed = best_fixed_actions(seen.outcomes, seen.budget, budgets)
    mu = router.utility(test.features)
    operator = training_selected_operator(seen.outcomes)
    knn = knn_router(seen.features, seen.outcomes, seen.group_id, test.features, n_folds=n_folds)
    choices = np.stack(
        [
            *(np.full(n, a) for a in range(len(ACTIONS))),
            fixed[np.searchsorted(budgets, test.budget)],
            np.argmax(y, axis=1),  # oracle; ties go to ret (the first maximum)
            argmax_policy(mu),
            calibrated_policy(mu, test.budget, router.calibrated),
            calibrated_policy(mu, test.budget, router.crc),
            argmax_policy(predict_mlp(mlp, test.features)),
            np.full(n, operator),  # the paper's baselines (Table 8), fitted on seen groups
            evidence_fit_rule(test.features, operator),
            knn.actions,
        ]
    )
    policies, differences = POLICIES, DIFFERENCES
    if STRUCTURE_COLUMN in data.meta:  # the theory router (MODEL §2 reader), fitted on seen groups
        theory_router = getattr(router, "theory", None) or fit_theory_router(
            jax.random.fold_in(k_fit, 1), seen
        )
        pick = theory_router.choose(paired_structure(test), test.budget, test.query_type_slot)
        choices = np.concatenate([choices, pick[None]])
        policies, differences = POLICIES + ("theory",), DIFFERENCES + ("theory",)
    chosen = np.take_along_axis(y[None], choices[..., None], axis=2)[..., 0]  # (P, n)
    per_row = np.stack(
        [
            chosen,
            chosen - y[:, 0],
            y.max(axis=1) - chosen,
            (chosen < y[:, 0]).astype(float),
            (choices != 0).astype(float),
        ],
        axis=1,
    )  # (P, M, n)
    best = policies.index("best-fixed")
    diffs = np.stack([chosen[policies.index(p)] - chosen[best] for p in differences])  # (D, n)
    base = np.concatenate([per_row.reshape(-1, n), diffs]).T  # (n, P*M + D)
    slots = [test.budget == b for b in budgets] + [np.ones(n, bool)]
    stage(3)
    if interval == "t":
        # slot by slot: each column's interval is its own, and memory stays one slot's (n, C)
        per_slot = [
            group_mean_interval(base, test.group_id, np.repeat(s[:, None], base.shape[1], axis=1))
            for s in slots
        ]
        ci = tuple(np.concatenate([c[k] for c in per_slot]) for k in range(3))
    else:
        values = np.concatenate([base] * len(slots), axis=1)
        mask = np.concatenate([np.repeat(s[:, None], base.shape[1], axis=1) for s in slots], axis=1)
        ci = grouped_bootstrap_mean(k_boot, values, test.group_id, mask, n_resamples=n_resamples)
    stage(4)
    shape = (len(slots), base.shape[1])
    point, lower, upper = (np.asarray(v, dtype=np.float64).reshape(shape) for v in ci)
    P, M = len(policies), len(METRICS)

    def pm(a):  # (slots, P*M + D) -> (P, M, slots)
        return a[:, : P * M].T.reshape(P, M, len(slots))

    def dd(a):
        return a[:, P * M :].T

    info = {
        "alpha": float(alpha),
        "interval": interval,
        "n_train": train.n,
        "n_calibration": calib.n,
        "n_test": n,
        "groups": {
            "train": len(np.unique(train.group_id)),
            "calibration": len(np.unique(calib.group_id)),
            "test": len(np.unique(test.group_id)),
        },
        "best_fixed": {f"{b:g}": ACTIONS[a] for b, a in zip(budgets, fixed)},
        "fixed_operator": ACTIONS[operator],
        "knn_k": knn.k,
        "tau_calibrated": _taus(router.calibrated),
        "tau_crc": _taus(router.crc),
        "ridge_penalty": dict(zip(ACTIONS, router.penalty.tolist())),
        "mlp_epochs": mlp.epochs,
        "mlp_width": mlp.width,
        "mlp_weight_decay": mlp.weight_decay,
        "test_index": np.flatnonzero(part == 2),  # rows of ``data`` scored, in order (not in JSON)
        "differences": differences,
        "router_overlap": overlap,  # None: the router was fitted here, on train groups
    }
    if "theory" in policies:
        info["theory_params"] = int(theory_router.n_params)
    ends = (point, lower, upper)
    counts = np.asarray([int(s.sum()) for s in slots])
    return Evaluation._make(
        (policies, budgets, *map(pm, ends), *map(dd, ends), counts, choices, info)
    )


def _taus(cal) -> dict:
    """A calibration's threshold per budget (``None``: not finite)."""
    return {
        f"{b:g}": (None if not np.isfinite(t) else float(t)) for b, t in zip(cal.budgets, cal.tau)
    }


def evaluation_json(ev: Evaluation) -> dict:
    """The ``--json`` object: ``policies.<name>`` with overall metrics, CIs and ``per_budget``."""

    def block(p, s):
        out = {}
        for m, name in enumerate(METRICS):
            out[name] = _num(ev.point[p, m, s])
            out[f"{name}_ci"] = [_num(ev.lower[p, m, s]), _num(ev.upper[p, m, s])]
        out["n"] = int(ev.n_test[s])
        return out

    policies = {}
    for p, name in enumerate(ev.policies):
        entry = block(p, -1)
        entry["per_budget"] = {f"{b:g}": block(p, s) for s, b in enumerate(ev.budgets)}
        policies[name] = entry

    def diff(d, s):
        ci = [_num(ev.diff_lower[d, s]), _num(ev.diff_upper[d, s])]
        return {"accuracy": _num(ev.diff_point[d, s]), "accuracy_ci": ci}

    differences = {}
    for d, name in enumerate(ev.info.get("differences", DIFFERENCES)):
        per_budget = {f"{b:g}": diff(d, s) for s, b in enumerate(ev.budgets)}
        differences[f"{name} - best-fixed"] = {**diff(d, -1), "per_budget": per_budget}
    info = {k: v for k, v in ev.info.items() if k not in ("test_index", "differences")}
    return {
        "policies": policies,
        "differences": differences,
        "budgets": [float(b) for b in ev.budgets],
        "info": info,
    }


def _num(x) -> float | None:
    x = float(x)
    return None if not np.isfinite(x) else round(x, 6)


def _interval_words(ev: Evaluation) -> str:
    if ev.info.get("interval", "t") == "t":
        return "means over test groups, 95% Student-t CIs on G - 1 df"
    return "95% grouped percentile bootstrap CIs"


def evaluation_table(ev: Evaluation) -> str:
    """Markdown tables: overall metrics per policy, accuracy per budget, paired differences."""

    def cell(p, m, s):
        return f"{ev.point[p, m, s]:.3f} [{ev.lower[p, m, s]:.3f}, {ev.upper[p, m, s]:.3f}]"

    lines = [
        f"Test: {ev.info['n_test']} instances in {ev.info['groups']['test']} held-out groups; "
        f"alpha = {ev.info['alpha']:g}; {_interval_words(ev)}.",
        "",
        "| policy | " + " | ".join(METRICS) + " |",
        "|---" * (len(METRICS) + 1) + "|",
    ]
    for p, name in enumerate(ev.policies):
        lines.append(
            f"| {name} | " + " | ".join(cell(p, m, -1) for m in range(len(METRICS))) + " |"
        )

    def per_budget(title, metric, keep):
        lines.extend(
            [
                "",
                f"{title} per budget:",
                "",
                "| policy | " + " | ".join(f"B={b:g}" for b in ev.budgets) + " |",
                "|---" * (len(ev.budgets) + 1) + "|",
            ]
        )
        for p, name in enumerate(ev.policies):
            if keep(name):
                cells = " | ".join(cell(p, metric, s) for s in range(len(ev.budgets)))
                lines.append(f"| {name} | {cells} |")

    per_budget("Accuracy", 0, lambda name: True)
    per_budget("Harm rate", 3, lambda name: name.startswith("oas") or name in ("mlp", "theory"))
    lines += [
        "",
        "Paired accuracy differences (policy minus best-fixed):",
        "",
        "| difference | overall | " + " | ".join(f"B={b:g}" for b in ev.budgets) + " |",
        "|---" * (len(ev.budgets) + 2) + "|",
    ]
    for d, name in enumerate(ev.info.get("differences", DIFFERENCES)):
        cells = [
            f"{ev.diff_point[d, s]:+.3f} [{ev.diff_lower[d, s]:+.3f}, {ev.diff_upper[d, s]:+.3f}]"
            for s in [-1, *range(len(ev.budgets))]
        ]
        lines.append(f"| {name} - best-fixed | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def accuracy_figure(ev: Evaluation):
    """Accuracy per budget per policy (left) and the learned policies minus best-fixed with 95%
    grouped bands (right; ``evaluate``'s interval rule); returns a ``matplotlib.figure.Figure``.

    Every policy has its own colour and marker (``retcon.plots.POLICY_STYLES``), the same in both
    panels. The bands of ten policies overlap into one grey cloud, so the left panel draws points
    only and the uncertainty is shown where it answers the question: is a learned policy better
    than the best fixed action, budget by budget? The right panel draws every learned policy
    (the theory router too, when the data carry it); the best one overall (highest accuracy minus
    best-fixed over all budgets) is drawn thickest with its band, and named in the title.
    """
    from retcon.plots import FIXED_POLICIES, budget_axis, new_figure, policy_style

    fig, (ax, ax_d) = new_figure(2, width=6, height=4.6)
    for p, name in enumerate(ev.policies):
        style = policy_style(name)
        if name in FIXED_POLICIES:
            kw = dict(lw=1.0, alpha=0.6, ms=4)
        elif name in ("oracle", "best-fixed"):
            kw = dict(lw=1.5, ms=5)
        else:
            kw = dict(lw=2.0, ms=4)
        ax.plot(ev.budgets, ev.point[p, 0, :-1], label=name, **style, **kw)
    differences = list(ev.info.get("differences", DIFFERENCES))
    best = int(np.argmax(ev.diff_point[: len(differences), -1]))
    ax_d.axhline(0.0, color="black", ls="--", lw=1.2, label="best-fixed (0)")
    for d, name in enumerate(differences):
        style = policy_style(name)
        is_best = d == best
        ax_d.plot(
            ev.budgets,
            ev.diff_point[d, :-1],
            ms=5 if is_best else 4,
            lw=2.6 if is_best else 1.2,
            alpha=1.0 if is_best else 0.7,
            label=f"{name} (best learned)" if is_best else name,
            zorder=3 if is_best else 2,
            **style,
        )
        if is_best:
            ax_d.fill_between(
                ev.budgets,
                ev.diff_lower[d, :-1],
                ev.diff_upper[d, :-1],
                color=style["color"],
                alpha=0.18,
                lw=0,
            )
    for a in (ax, ax_d):
        budget_axis(a)
    ax.set_ylabel("accuracy of the chosen action")
    ax.set_title("accuracy per policy (held-out groups)", fontsize=10)
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    ax_d.set_ylabel("accuracy minus best-fixed")
    ax_d.set_title(  # two lines: one was cut off at the figure's edge
        f"learned policies vs best-fixed\nbest: {differences[best]} ({_interval_words(ev)})",
        fontsize=9,
    )
    ax_d.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig
