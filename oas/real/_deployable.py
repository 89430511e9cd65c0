"""Deployable routers end to end: MODEL §8's features plus the post-retrieval ones, scored by
leave one conversation out with the few-groups protocol (docs/end-to-end.md, issue 24).

For each held-out conversation ``g`` everything is fitted on the other conversations only: the
recall calibration (feature 15, ``oas.fit_recall_calibration`` on features 12-14 against the rows'
retrieval recall), one ridge router per feature group (``oas.fit_ridge``, argmax of the predicted
utilities, ties to ``ret``), the best fixed action per budget, and the choice of feature group
(``selected``: the group with the best mean gain over best-fixed in inner grouped folds of the
training conversations), ``anchored`` (best-fixed's action unless the all-features router's best
action beats it by more than a margin chosen in the inner folds) and ``deployable`` (the best
deployable router: the feature group and the margin chosen together in the inner folds, from
``DEPLOYABLE_MARGINS``, where ``-inf`` is the plain argmax and ``inf`` best-fixed itself). Optional
policies: the theory router identified on the
end-to-end training rows (``oas.fit_theory_router``), and the ridge router (``oas.fit_router``,
argmax and its ``tau_B``-calibrated variant) trained on the oracle-protocol rows of the training
conversations and deployed on the end-to-end rows (the oracle -> end-to-end shift).

Each policy's gain over best-fixed is averaged within each conversation, and the ``G`` per-group
differences get ``retcon.inference.group_t_interval`` (t on ``G - 1`` degrees of freedom).

References: MODEL §8 (policies, grouped inference), docs/statistics.md.
"""

from __future__ import annotations

import numpy as np

from retcon.errors import InputError

#: margins tried for the ``anchored`` policy (``inf`` is best-fixed itself)
ANCHOR_TAUS = (0.0, 0.01, 0.02, 0.05, 0.1, float("inf"))

#: margins tried for the ``deployable`` policy: the plain argmax (``-inf``), then ``ANCHOR_TAUS``
DEPLOYABLE_MARGINS = (float("-inf"), *ANCHOR_TAUS)

#: feature groups over MODEL §8's eleven: indices into (margin, mass, overlap, recall estimate)
FEATURE_GROUPS = {
    "base": (),
    "+scores": (0, 1),
    "+overlap": (2,),
    "+recall": (3,),
    "all": (0, 1, 2, 3),
}


def _features(data, extra, recall, train, cols) -> np.ndarray:
    """Base features plus the chosen post-retrieval columns; recall calibrated on ``train``."""
    from oas import fit_recall_calibration, predict_recall

    base = np.asarray(data.features, dtype=np.float64)
    if not cols:
        return base
    cal = fit_recall_calibration(extra[train], recall[train])
    full = np.concatenate([extra, predict_recall(cal, extra)[:, None]], axis=1)
    return np.concatenate([base, full[:, list(cols)]], axis=1)


def _ridge_choice(key, x, y, groups, train, test) -> np.ndarray:
    """Predicted utilities ``(n_test, 4)`` of a ridge router fitted on ``train``."""
    from oas import fit_ridge, predict_ridge

    n_train_groups = len(set(groups[train].tolist()))
    fit = fit_ridge(
        key,
        x[train],
        y[train],
        groups[train],
        n_folds=min(3, max(2, n_train_groups - 1)),
        backend="numpy",
    )
    return predict_ridge(fit, x[test])


def _anchored(mu, bf, tau: float) -> np.ndarray:
    """Best-fixed's action unless the router's best action beats it by more than ``tau``."""
    rows = np.arange(mu.shape[0])
    best = np.argmax(mu, axis=1)
    return np.where(mu[rows, best] - mu[rows, bf] > tau, best, bf)


def _best_fixed(y, b, train, test) -> np.ndarray:
    from oas import best_fixed_actions

    budgets = np.unique(b)
    bf = best_fixed_actions(y[train], b[train], budgets)
    return bf[np.searchsorted(budgets, b[test])]


def loco_deployable(
    key,
    data,
    extra,
    recall,
    *,
    feature_groups: dict | None = None,
    oracle_data=None,
    theory: bool = False,
    inner_folds: int = 3,
    level: float = 0.95,
    calibrated: bool = True,
    return_choices: bool = False,
    progress=None,
) -> dict:
    """Leave-one-conversation-out gains over best-fixed of deployable routers, with t intervals.

    Args:
      key: JAX key (folded per held-out conversation).
      data: end-to-end ``oas.PairedData`` (at least 4 conversations).
      extra: ``(n, 3)`` post-retrieval features 12-14 of the rows.
      recall: ``(n,)`` retrieval recall of the gold evidence per row (calibration target; read
        only on training rows).
      feature_groups: name -> indices into (margin, mass, overlap, recall estimate); default
        ``FEATURE_GROUPS``.
      oracle_data: oracle-protocol rows of the same questions (optional): adds ``oracle-trained``
        and ``oracle-trained-calibrated`` (trained there, deployed on ``data``).
      theory: add the theory router identified on the end-to-end training rows.
      inner_folds: the training conversations are dealt into this many folds (in order) to
        select the feature group (``selected``) by its mean held-out gain over best-fixed.
      level: interval coverage.
      calibrated: add ``e2e-calibrated`` (the ``tau_B``-calibrated ridge router; one JAX router
        fit per held-out conversation).
      return_choices: add ``chosen[policy]``, the ``(n,)`` action index each policy played on
        each row when its conversation was held out (numpy arrays: not JSON-ready).
      progress: optional callable taking a one-line message after each held-out conversation.

    Returns:
      JSON-ready dict: ``groups`` (conversation ids), ``per_group[policy]`` (G gains),
      ``gain[policy] = {"point", "lower", "upper"}``, ``accuracy[policy]``, ``selected_groups``
      (the feature group chosen in each outer fold), ``deployable_choices`` (the group and margin
      of ``deployable`` in each outer fold; ``None`` for an infinite margin) and
      ``headroom_share[policy]`` (gain over the oracle selector's gain).

    References: MODEL §8; docs/statistics.md (few groups).
    """
    import jax

    from oas import argmax_policy
    from retcon.inference import group_t_interval

    groups_spec = dict(FEATURE_GROUPS if feature_groups is None else feature_groups)
    extra = np.asarray(extra, dtype=np.float64)
    recall = np.asarray(recall, dtype=np.float64).reshape(-1)
    groups = np.asarray(data.group_id).astype(str)
    uniq = list(dict.fromkeys(groups.tolist()))
    if len(uniq) < 4:
        raise InputError(f"loco_deployable: need at least 4 conversations; got {len(uniq)}.")
    if extra.shape != (data.n, 3) or recall.shape != (data.n,):
        raise InputError(
            f"loco_deployable: extra must be ({data.n}, 3) and recall ({data.n},); got "
            f"{extra.shape} and {recall.shape}."
        )
    y = np.asarray(data.outcomes, dtype=np.float64)
    b = np.asarray(data.budget, dtype=np.float64)
    rows = np.arange(data.n)
    anchor_group = "all" if "all" in groups_spec else list(groups_spec)[-1]
    names = ["best-fixed", *groups_spec, "selected", "anchored", "deployable"]
    names += ["e2e-calibrated", "oracle"] if calibrated else ["oracle"]
    if oracle_data is not None:
        names += ["oracle-trained", "oracle-trained-calibrated"]
        o_groups = np.asarray(oracle_data.group_id).astype(str)
    if theory:
        names.append("theory")
    chosen = {p: np.zeros(data.n, dtype=np.int64) for p in names}
    selected = []
    anchor_taus: list[float] = []
    deployable_choices: list[dict] = []
    for i, g in enumerate(uniq):
        kg = jax.random.fold_in(key, i)
        test = groups == g
        train = ~test
        chosen["best-fixed"][test] = _best_fixed(y, b, train, test)
        chosen["oracle"][test] = np.argmax(y[test], axis=1)
        inner_score = {}
        anchor_inner = np.zeros(len(ANCHOR_TAUS))
        # inner gain of every (feature group, margin) pair: the deployable router's choice
        margin_inner = np.zeros((len(groups_spec), len(DEPLOYABLE_MARGINS)))
        outer_mu = {}
        bf_test = chosen["best-fixed"][test]
        for j, (name, cols) in enumerate(groups_spec.items()):
            x = _features(data, extra, recall, train, cols)
            mu = _ridge_choice(jax.random.fold_in(kg, j), x, y, groups, train, test)
            outer_mu[name] = mu
            chosen[name][test] = argmax_policy(mu)
            # inner leave-one-conversation-out over the training conversations: the selection
            inner = []
            others = [u for u in uniq if u != g]
            for f in range(inner_folds):
                itest = np.isin(groups, others[f::inner_folds])
                itrain = train & ~itest
                xi = _features(data, extra, recall, itrain, cols)
                mui = _ridge_choice(jax.random.fold_in(kg, 100 + j), xi, y, groups, itrain, itest)
                a = argmax_policy(mui)
                bf = _best_fixed(y, b, itrain, itest)
                yi = y[itest]
                r = np.arange(len(a))
                inner.append(float(np.mean(yi[r, a] - yi[r, bf])))
                for t, tau in enumerate(DEPLOYABLE_MARGINS):
                    pick = a if tau == float("-inf") else _anchored(mui, bf, tau)
                    margin_inner[j, t] += np.mean(yi[r, pick] - yi[r, bf]) / inner_folds
                if name == anchor_group:
                    for t, tau in enumerate(ANCHOR_TAUS):
                        anchor_inner[t] += np.mean(yi[r, _anchored(mui, bf, tau)] - yi[r, bf])
            inner_score[name] = float(np.mean(inner))
            if name == anchor_group:
                # ties go to the larger margin (closer to best-fixed)
                last = len(ANCHOR_TAUS) - 1 - int(np.argmax(anchor_inner[::-1]))
                tau_best = ANCHOR_TAUS[last]
                chosen["anchored"][test] = _anchored(mu, bf_test, tau_best)
                anchor_taus.append(tau_best)
        # ties go to the larger margin (closer to best-fixed), then to the earlier group
        jj, tt = max(
            np.ndindex(*margin_inner.shape),
            key=lambda jt: (round(float(margin_inner[jt]), 12), jt[1], -jt[0]),
        )
        d_name, d_tau = list(groups_spec)[jj], DEPLOYABLE_MARGINS[tt]
        d_mu = outer_mu[d_name]
        chosen["deployable"][test] = (
            argmax_policy(d_mu) if d_tau == float("-inf") else _anchored(d_mu, bf_test, d_tau)
        )
        deployable_choices.append(
            {
                "group": g,
                "features": d_name,
                "margin": d_tau if np.isfinite(d_tau) else None,
                "plays": "argmax"
                if d_tau == float("-inf")
                else ("best-fixed" if d_tau == float("inf") else "anchored"),
                "inner_gain": float(margin_inner[jj, tt]),
            }
        )
        best = max(groups_spec, key=lambda nm: (inner_score[nm], -list(groups_spec).index(nm)))
        selected.append({"group": g, "selected": best, "inner_gain": inner_score})
        chosen["selected"][test] = chosen[best][test]
        if progress is not None:
            progress(f"held out {g} ({i + 1}/{len(uniq)}): selected {best}")
        from oas.real._endtoend import _fit

        if calibrated:
            router = _fit(jax.random.fold_in(kg, 999), data.take(train), 0.1, len(uniq) - 1)
            feats = np.asarray(data.features, dtype=np.float64)[test]
            chosen["e2e-calibrated"][test] = router.choose(feats, b[test], "calibrated")
        if oracle_data is not None:
            otrain = oracle_data.take(o_groups != g)
            router = _fit(jax.random.fold_in(kg, 1000), otrain, 0.1, len(uniq) - 1)
            feats = np.asarray(data.features, dtype=np.float64)[test]
            chosen["oracle-trained"][test] = router.choose(feats, b[test], "argmax")
            chosen["oracle-trained-calibrated"][test] = router.choose(feats, b[test], "calibrated")
        if theory:
            from oas import fit_theory_router, paired_structure

            tr = fit_theory_router(jax.random.fold_in(kg, 2000), data.take(train))
            held = data.take(test)
            chosen["theory"][test] = tr.choose(
                paired_structure(held), held.budget, held.query_type_slot
            )
    score = {p: y[rows, chosen[p]] for p in names}
    per_group = {
        p: [float(np.mean(score[p][groups == g] - score["best-fixed"][groups == g])) for g in uniq]
        for p in names
    }
    head = float(np.mean(per_group["oracle"]))
    out: dict = {
        "groups": uniq,
        "per_group": per_group,
        "gain": {},
        "accuracy": {p: float(score[p].mean()) for p in names},
        "selected_groups": selected,
        "anchor_group": anchor_group,
        "anchor_taus": [None if t == float("inf") else t for t in anchor_taus],
        "deployable_choices": deployable_choices,
        "headroom_share": {},
    }
    if return_choices:
        out["chosen"] = chosen
    for p in names:
        ci = group_t_interval(np.asarray(per_group[p]), level=level)
        out["gain"][p] = {
            "point": float(ci.estimate[0]),
            "lower": float(ci.lower[0]),
            "upper": float(ci.upper[0]),
        }
        out["headroom_share"][p] = float(np.mean(per_group[p])) / head if head > 0 else None
    return out
