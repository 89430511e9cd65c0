"""The ``--top-k`` sweep of end-to-end LoCoMo runs, and the choice of ``k`` inside the folds.

Each run is an end-to-end paired file of the same questions at one retrieval ``top_k`` (label
``s4``, ``t20``: granularity letter and ``k``). Per run: the cluster's and the packed units'
recall, the crossovers (``crossover_ci``) and the deployable routers' leave-one-conversation-out
gains over best-fixed (``loco_deployable``). Then ``select_k`` per granularity: for each held-out
conversation the ``k`` whose best-fixed policy, fitted on the other conversations, scores best on
them, so the choice never sees the held-out conversation, compared with every fixed ``k``
(per-conversation differences of accuracy, 95% t interval, ``retcon.inference.group_t_interval``).

References: MODEL §8 (best fixed policy, leave one group out); docs/end-to-end.md.
"""

from __future__ import annotations

import numpy as np

SELECT_POLICIES = ("best-fixed", "deployable")


def group_accuracy(y, chosen, groups, uniq) -> np.ndarray:
    """Per group of ``uniq``: the mean of ``y[i, chosen[i]]`` over the group's rows."""
    rows = np.arange(len(chosen))
    hit = y[rows, chosen]
    return np.asarray([hit[groups == g].mean() for g in uniq])


def select_k(acc: dict, insample: dict, labels: list, n_groups: int) -> dict:
    """The ``k`` chosen in the training folds, against every fixed ``k``.

    Args:
      acc: label -> policy -> ``(G,)`` held-out accuracy per conversation.
      insample: label -> ``(G, G)`` best-fixed accuracy on conversation ``h`` of the policy fitted
        without conversation ``g`` (row ``g``).
      labels: the runs of one granularity, in the order given (a tie goes to the earlier one).
      n_groups: ``G``.

    Returns:
      ``{"picked": [label per held-out conversation], "accuracy": {policy: mean},
      "versus": {"<policy> vs <label>": {"point", "lower", "upper"}}}``.
    """
    from retcon.inference import group_t_interval

    pick = []
    for gi in range(n_groups):
        train = [h for h in range(n_groups) if h != gi]
        score = {lab: insample[lab][gi, train].mean() for lab in labels}
        pick.append(max(labels, key=lambda lab: (score[lab], -labels.index(lab))))
    sel = {p: np.asarray([acc[pick[gi]][p][gi] for gi in range(n_groups)]) for p in SELECT_POLICIES}
    versus = {}
    for lab in labels:
        for p in SELECT_POLICIES:
            ci = group_t_interval(sel[p] - acc[lab][p])
            versus[f"{p} vs {lab}"] = {
                "point": float(ci.estimate[0]),
                "lower": float(ci.lower[0]),
                "upper": float(ci.upper[0]),
            }
    return {
        "picked": pick,
        "accuracy": {p: float(v.mean()) for p, v in sel.items()},
        "versus": versus,
    }


def topk_sweep(key, runs: dict, data_path, *, n_resamples: int = 1000, progress=None) -> dict:
    """The ``--top-k`` sweep (module docstring).

    Args:
      key: JAX key (run ``i`` scores with ``fold_in(key, i)``, its crossovers ``fold_in(key,
        100 + i)``).
      runs: label (``s<k>`` or ``t<k>``) -> end-to-end paired file, all of the same questions.
      data_path: locomo10.json (the features 12-14 rerun the retriever on its texts).
      n_resamples: bootstrap replicates of the crossovers.
      progress: optional callable taking a line of progress.

    Returns:
      ``{"runs": {label: {...}}, "selected": {"s"|"t": select_k(...)}}`` (JSON-ready).
    """
    import jax

    from oas import best_fixed_actions, read_paired
    from oas.real._deployable import loco_deployable
    from oas.real._endtoend import crossover_ci
    from oas.real._locomo import load_locomo
    from oas.real._retrieval_features import locomo_retrieval_features

    conversations = load_locomo(data_path).conversations
    out: dict = {"runs": {}, "selected": {}}
    acc: dict = {}
    insample: dict = {}
    uniq: list = []
    for i, (label, path) in enumerate(runs.items()):
        gran = "turn" if label.startswith("t") else "session"
        k = int(label[1:])
        data = read_paired(path)
        order = np.argsort(np.asarray(data.instance_id).astype(str), kind="stable")
        data = data.take(order)  # the same row order in every run of the same questions
        extra = locomo_retrieval_features(data, conversations, granularity=gran, top_k=k)
        m = data.meta
        recall = np.asarray(m["meta_retrieval_recall_cluster"], dtype=np.float64)
        packed = np.asarray(m["meta_retrieval_recall"], dtype=np.float64)
        b = np.asarray(data.budget, dtype=np.float64)
        budgets = np.unique(b)
        res = loco_deployable(
            jax.random.fold_in(key, i), data, extra, recall, calibrated=False, return_choices=True
        )
        groups = np.asarray(data.group_id).astype(str)
        uniq = res["groups"]
        y = np.asarray(data.outcomes, dtype=np.float64)
        acc[label] = {
            p: group_accuracy(y, res["chosen"][p], groups, uniq)
            for p in ("best-fixed", "deployable", "oracle")
        }
        # in-sample best-fixed accuracy of each training set (for choosing k in the folds)
        ins = np.zeros((len(uniq), len(uniq)))  # [held-out g, conversation h]
        for gi, g in enumerate(uniq):
            train = groups != g
            bf = best_fixed_actions(y[train], b[train], budgets)[np.searchsorted(budgets, b)]
            ins[gi] = group_accuracy(y, bf, groups, uniq)
        insample[label] = ins
        _, q_first = np.unique(np.asarray(data.query_id).astype(str), return_index=True)
        out["runs"][label] = {
            "granularity": gran,
            "top_k": k,
            "recall_cluster": float(recall[q_first].mean()),
            "recall_packed": {f"{x:g}": float(packed[b == x].mean()) for x in budgets},
            "crossover": crossover_ci(
                jax.random.fold_in(key, 100 + i), data, n_resamples=n_resamples
            ),
            "gain": {p: res["gain"][p] for p in res["gain"]},
            "accuracy": res["accuracy"],
            "deployable_choices": res["deployable_choices"],
        }
        if progress is not None:
            progress(f"top-k run {label} done")
    for gran in ("s", "t"):
        labels = [lab for lab in runs if lab.startswith(gran)]
        if len(labels) < 2:
            continue
        out["selected"][gran] = select_k(acc, insample, labels, len(uniq))
        for lab in labels:
            out["runs"][lab]["accuracy_by_group"] = {p: v.tolist() for p, v in acc[lab].items()}
    return out
