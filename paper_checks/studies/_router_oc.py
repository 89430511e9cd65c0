"""Error rates of the end-to-end router rule: "a router beats best-fixed end to end".

The rule (``router_verdict``) reads the 95% Student-t interval (``G - 1`` df,
``retcon.inference.group_t_interval``) of a policy's leave-one-conversation-out gain over
best-fixed, one mean per held-out conversation (``oas.real.loco_deployable``): YES when it lies
above 0, NO when below, UNDECIDED when it covers 0. The policy is chosen inside the training
folds (``deployable``: feature group and margin; ``anchored``: margin only), so the whole
procedure, selection included, is what the error rates below are measured on.

The worlds (``router_world``) are row-level paired data at LoCoMo's end-to-end shape: ``G``
conversations of ``Q`` questions at the seven budgets of ``paper_checks.operating.LOCOMO_BUDGETS``,
the four actions' accuracies per budget those measured end to end on LoCoMo (BM25 top 4 sessions;
docs/end-to-end.md), conversation effects of LoCoMo's spread, and one post-retrieval feature
(the score margin, column 0 of ``extra``) that shifts ``ret`` up and the operators down by
``signal`` per unit of its value. ``signal = 0`` is the null: no feature tells which action wins
beyond the budget, so no router can beat best-fixed in expectation (the answer YES is false);
``signal > 0`` is a world where a router can. Because the outcome probabilities are known, each
data set also has its own truth: the expected gain of the routers the procedure fitted on the
rows it was scored on (``sum p[row, chosen] - p[row, best-fixed]``, per conversation, then the
mean), which the interval's coverage is measured against.

References: MODEL §8 (policies, best fixed), docs/statistics.md (few groups, step 6),
``paper_checks.operating`` (the claims' operating characteristics).
"""

from __future__ import annotations

import jax
import numpy as np

from oas import PairedData
from oas.real import loco_deployable
from paper_checks.operating import LOCOMO_BUDGETS
from retcon.errors import InputError

YES, NO, UNDECIDED = "YES", "NO", "UNDECIDED"

#: LoCoMo end to end (BM25 top 4 sessions, lexical reader): accuracy of ret, merge, abstract per
#: budget of ``LOCOMO_BUDGETS`` (docs/end-to-end.md); rewrite is merge minus one point (the two
#: are equal under the lexical reader; a point apart keeps best-fixed's choice unique).
E2E_ACCURACY = (
    (0.035, 0.070, 0.094, 0.179, 0.346, 0.489, 0.588),
    (0.077, 0.137, 0.266, 0.357, 0.418, 0.438, 0.438),
    (0.025, 0.088, 0.156, 0.205, 0.240, 0.244, 0.244),
    (0.067, 0.127, 0.256, 0.347, 0.408, 0.428, 0.428),
)

#: The rule's error rates by group count, measured by ``python -m experiments.end_to_end_router
#: --rule-oc`` (docs/end-to-end.md): ``false_yes`` (YES in the null world), ``power`` and
#: ``false_no`` (YES and NO in the world whose true gain is ``power_gain``, about the oracle
#: protocol's OAS gain), ``coverage`` (the lowest over the worlds), ``n_datasets`` per world.
ROUTER_RULE_OC: dict[int, dict] = {
    # the deployable policy, seed 0: null 100 data sets (1 YES), signal .07 50 data sets (true
    # gain +.0168: 50 YES); coverage 91% in the null, 100% at signal .07
    10: {
        "false_yes": 0.01,
        "power": 1.0,
        "power_gain": 0.0168,
        "false_no": 0.0,
        "coverage": 0.91,
        "n_datasets": {"null": 100, "true": 50},
    },
}

#: the policies whose rule is measured by default
RULE_POLICIES = ("deployable", "anchored")


def router_verdict(lower: float, upper: float) -> str:
    """YES when the gain interval lies above 0, NO when below, UNDECIDED otherwise (or missing)."""
    if not (np.isfinite(lower) and np.isfinite(upper)):
        return UNDECIDED
    if lower > 0:
        return YES
    if upper < 0:
        return NO
    return UNDECIDED


def router_world(
    key: jax.Array,
    signal: float,
    *,
    n_groups: int = 10,
    n_questions: int = 150,
    group_sd: float = 0.02,
    shared: float = 0.85,
):
    """Row-level end-to-end paired data at LoCoMo's shape with a known router signal.

    Question ``q`` of conversation ``g`` at budget ``b`` (row ``i``): the score margin
    ``s_i ~ N(0, 1)`` is observed (``extra[:, 0]``); the success probability of action ``a`` is
    ``p_a = clip(acc_a(b) + u_g + v_ga(b) + signal * s_i * w_a, .01, .99)`` with ``w = (+1, -1,
    -1, -1)`` (``ret`` first), ``acc`` = ``E2E_ACCURACY``, ``u_g, v_ga(b) ~ N(0, group_sd)``. The
    outcome is ``y_a = [U_a < p_a]`` where ``U_a`` is the question's own uniform (shared by its
    budgets) with probability ``shared`` and a fresh one otherwise. The base features are the
    budget (``B / 512``), its square, five noise columns and a random type's one-hot; the score
    mass, overlap count and recall carry nothing.

    Args:
      key: JAX PRNG key.
      signal: the feature's effect per standard deviation (0: the null world).
      n_groups, n_questions: conversations and questions per conversation.
      group_sd, shared: as in ``paper_checks.operating.locomo_shaped_data``.

    Returns:
      ``(data, extra (n, 3), recall (n,), prob (n, 4))``: ``oas.PairedData``, features 12-14,
      a recall column and the outcome probabilities (the truth).
    """

    if n_groups < 4 or n_questions < 1:
        raise InputError(
            f"router_world: n_groups >= 4 and n_questions >= 1; got {n_groups}, {n_questions}."
        )
    b = np.asarray(LOCOMO_BUDGETS)
    acc = np.asarray(E2E_ACCURACY)
    m, A = b.size, acc.shape[0]
    n = n_groups * n_questions * m
    ks = jax.random.split(key, 9)
    g = np.repeat(np.arange(n_groups), n_questions * m)
    q = np.repeat(np.arange(n_groups * n_questions), m)
    bi = np.tile(np.arange(m), n_groups * n_questions)
    u = group_sd * np.asarray(jax.random.normal(ks[0], (n_groups,)), float)
    v = group_sd * np.asarray(jax.random.normal(ks[1], (n_groups, A, m)), float)
    s = np.asarray(jax.random.normal(ks[2], (n,)), float)
    w = np.array([1.0, -1.0, -1.0, -1.0])
    prob = acc[:, bi].T + u[g][:, None] + v[g, :, bi] + signal * s[:, None] * w[None, :]
    prob = np.clip(prob, 0.01, 0.99)
    uq = np.asarray(jax.random.uniform(ks[3], (n_groups * n_questions,)), float)[q]
    fresh = np.asarray(jax.random.uniform(ks[4], (n, A)), float)
    reuse = np.asarray(jax.random.uniform(ks[5], (n, A)), float) < shared
    draws = np.where(reuse, uq[:, None], fresh)
    y = (draws < prob).astype(np.float64)
    feats = np.zeros((n, 11))
    feats[:, 0] = b[bi] / 512.0
    feats[:, 1] = feats[:, 0] ** 2
    feats[:, 2:7] = np.asarray(jax.random.normal(ks[6], (n, 5)), float)
    qtype = np.asarray(jax.random.randint(ks[7], (n_groups * n_questions,), 0, 4))[q]
    feats[np.arange(n), 7 + qtype] = 1.0
    noise = np.asarray(jax.random.uniform(ks[8], (n, 3)), float)
    extra = np.stack([s, noise[:, 0], np.floor(5 * noise[:, 1])], axis=1)
    types = np.asarray(["single-hop", "multi-hop", "temporal", "open-domain"], dtype=object)
    data = PairedData(
        instance_id=np.asarray([f"i{i}" for i in range(n)], dtype=object),
        query_id=np.asarray([f"q{i}" for i in q], dtype=object),
        group_id=np.asarray([f"g{i}" for i in g], dtype=object),
        query_type=types[qtype],
        budget=b[bi].astype(np.float64),
        outcomes=y,
        features=feats,
        vocabulary="locomo",
    )
    return data, extra, 0.5 + 0.5 * noise[:, 2], prob


def _truth(res: dict, policy: str, prob: np.ndarray, groups: np.ndarray) -> float:
    """Expected gain over best-fixed of the routers fitted, on the scored rows (mean of groups)."""
    rows = np.arange(prob.shape[0])
    gain = prob[rows, res["chosen"][policy]] - prob[rows, res["chosen"]["best-fixed"]]
    return float(np.mean([gain[groups == h].mean() for h in res["groups"]]))


def router_world_key(key: jax.Array, signal: float) -> jax.Array:
    """The world's key: ``key`` folded with the signal in millionths (not its list position)."""
    return jax.random.fold_in(key, round(float(signal) * 1e6))


def router_rule_records(
    key: jax.Array,
    signal: float,
    index: int,
    *,
    n_groups: int = 10,
    n_questions: int = 150,
    policies=RULE_POLICIES,
    feature_groups: dict | None = None,
) -> dict:
    """One data set of the world ``signal``: each policy's interval, verdict and truth.

    Args:
      key: the world's JAX key; the data set's is ``fold_in(key, index)``.
      signal, n_groups, n_questions: ``router_world``'s.
      policies, feature_groups: as in ``router_rule_characteristics``.

    Returns:
      ``{"signal", "index", "oracle": headroom point, policy: {"point", "lower", "upper",
      "verdict", "truth"}}`` (JSON-ready).
    """

    kd = jax.random.fold_in(key, int(index))
    data, extra, recall, prob = router_world(
        kd, float(signal), n_groups=n_groups, n_questions=n_questions
    )
    res = loco_deployable(
        jax.random.fold_in(kd, 1),
        data,
        extra,
        recall,
        feature_groups=feature_groups,
        calibrated=False,
        return_choices=True,
    )
    groups = np.asarray(data.group_id).astype(str)
    out: dict = {
        "signal": float(signal),
        "index": int(index),
        "oracle": res["gain"]["oracle"]["point"],
    }
    for p in policies:
        gp = res["gain"][p]
        out[p] = {
            **gp,
            "verdict": router_verdict(gp["lower"], gp["upper"]),
            "truth": _truth(res, p, prob, groups),
        }
    return out


def summarize_rule_records(records: list[dict], policies=RULE_POLICIES) -> list[dict]:
    """Per (world, policy): ``yes``, ``no``, ``undecided`` (shares), ``coverage`` (share of
    intervals holding the data set's truth), ``mean_truth``, ``mean_gain``, ``oracle_headroom``
    and ``n_datasets``, from ``router_rule_records`` outputs."""
    out = []
    for sig in sorted({r["signal"] for r in records}):
        rs = [r for r in records if r["signal"] == sig]
        for p in policies:
            v = np.asarray([r[p]["verdict"] for r in rs])
            out.append(
                {
                    "signal": sig,
                    "policy": p,
                    "yes": float(np.mean(v == YES)),
                    "no": float(np.mean(v == NO)),
                    "undecided": float(np.mean(v == UNDECIDED)),
                    "coverage": float(
                        np.mean([r[p]["lower"] <= r[p]["truth"] <= r[p]["upper"] for r in rs])
                    ),
                    "mean_truth": float(np.mean([r[p]["truth"] for r in rs])),
                    "mean_gain": float(np.mean([r[p]["point"] for r in rs])),
                    "oracle_headroom": float(np.mean([r["oracle"] for r in rs])),
                    "n_datasets": len(rs),
                }
            )
    return out


def router_rule_characteristics(
    key: jax.Array,
    signals=(0.0, 0.03, 0.05),
    *,
    n_datasets: int = 50,
    n_groups: int = 10,
    n_questions: int = 150,
    policies=RULE_POLICIES,
    feature_groups: dict | None = None,
    progress=None,
    done: dict | None = None,
) -> list[dict]:
    """Measure ``router_verdict`` on each policy's LOCO gain in ``router_world`` worlds.

    Args:
      key: JAX PRNG key (data set ``d`` of world ``signal``: ``fold_in(router_world_key(key, signal),
        d)``).
      signals: the worlds (``0``: the null, where YES is false).
      n_datasets: data sets per world; n_groups, n_questions: their size.
      policies: the ``oas.real.loco_deployable`` policies whose rule is measured.
      feature_groups: passed to ``loco_deployable`` (default its ``FEATURE_GROUPS``).
      progress: optional callable taking each data set's record (``router_rule_records``) as it
        is measured.
      done: records measured before, by ``(signal, index)`` (a resumed run's cache): reused as
        they are, not measured again nor passed to ``progress``.

    Returns:
      ``summarize_rule_records`` of every data set: false-YES rate = ``yes`` at ``signal = 0``;
      power = ``yes`` where the truth is positive; ``coverage`` everywhere.
    """
    records = []
    for sig in signals:
        for d in range(n_datasets):
            rec = (done or {}).get((float(sig), d))
            if rec is None:  # not in the resumed run's cache: measured now
                rec = router_rule_records(
                    router_world_key(key, sig),
                    float(sig),
                    d,
                    n_groups=n_groups,
                    n_questions=n_questions,
                    policies=policies,
                    feature_groups=feature_groups,
                )
                if progress is not None:
                    progress(rec)
            records.append(rec)
    return summarize_rule_records(records, policies)


__all__ = [
    "E2E_ACCURACY",
    "NO",
    "ROUTER_RULE_OC",
    "RULE_POLICIES",
    "UNDECIDED",
    "YES",
    "router_rule_characteristics",
    "router_rule_records",
    "router_verdict",
    "router_world",
    "router_world_key",
    "summarize_rule_records",
]
