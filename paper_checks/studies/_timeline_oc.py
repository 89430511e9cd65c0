"""Error rates of the simulation statements of ``paper-checks --over-time`` (MODEL §10).

Three statements of `paper_checks.studies._timeline` are answered from simulated streams: utility is an
inverted U in the number of passes; budget-aware beats ``overflow``; it beats ``retain-all``. Each
rule's false-YES rate and power are measured here, at the section's own number of streams, in
synthetic worlds whose truth is set and whose spread is the simulation's own (as
`paper_checks.operating` does for the graded rules with the measured between-group spread):

* the pool is the section's simulated streams (i.i.d.); a data set draws ``Q`` streams from it
  with replacement, so sampling noise at the section's size is reproduced;
* *inverted U*: the true world is the pool as simulated; the null world shifts every stream's
  utility-against-passes so that each cell's mean curve rises to its peak and then stays flat
  there (``U(k) = U(k*)`` for ``k > k*``): no inverted U anywhere, at its boundary (the least
  favourable null);
* *beats*: the true world is the pool; the null world moves the policy's per-stream outcomes by
  the cell's mean difference, so that the paired difference has mean 0 in every cell (the
  boundary of "does not beat") with the simulated spread.

A rule's ``false_yes`` is the share of YES in its null world, ``power`` the share of YES in the true
world, ``false_no`` the share of NO there; ``power_small`` is the share of YES in a world between
the two, with a tenth of the simulated effect (``SMALL``: each stream moved a tenth of the way from
the null world to the true one), to say how much of the power is the effect's size. Targets: `paper_checks.operating.TARGETS` (false YES
<= 5%, power >= 80%, false NO <= 5%); a rule that misses them makes its statement UNDECIDED.

Each rule comes in two strengths: ``marginal`` (every cell at ``z = 1.96``: the section's first
rules) and ``simultaneous`` (Bonferroni over the cells of the statement: ``z`` at
``1 - 0.025 / cells``), since "YES when some cell is clear" multiplies a cell's error by the number
of cells. The section uses the simultaneous rules (docs/timeline.md has both sets of figures).

References: docs/timeline.md ("Error rates of the simulation statements"), docs/statistics.md.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, cast

import jax
import numpy as np

from paper_checks.operating import TARGETS
from paper_checks.studies._timeline_rules import Z, beats, inverted_u
from retcon.vocab import OPERATORS

#: Data sets per world at run time.
N_DATASETS = 200
#: The share of the simulated effect in the ``power_small`` world.
SMALL = 0.1
RULES = ("marginal", "simultaneous")


def cell_z(cells: int, rule: str) -> float:
    """The normal quantile of a rule: 1.96 (``marginal``) or Bonferroni over ``cells`` cells."""
    if rule == "marginal":
        return Z
    from scipy.special import ndtri

    return float(ndtri(1.0 - 0.025 / max(int(cells), 1)))


def by_generation_rows(by_gen: np.ndarray, budgets, z: float) -> list[dict]:
    """`sim.summarize_timeline`'s ``by_generation`` rows from ``(Q, n_ops, K + 1, nB)`` outcomes."""
    q = by_gen.shape[0]
    mean = by_gen.mean(0)
    se = by_gen.std(0, ddof=1) / math.sqrt(q)
    rows = []
    for oi, op in enumerate(OPERATORS):
        for j, b in enumerate(budgets):
            u = mean[oi, :, j]
            rows.append(
                {
                    "operator": op,
                    "budget": float(b),
                    "utility": u,
                    "lower": u - z * se[oi, :, j],
                    "upper": u + z * se[oi, :, j],
                }
            )
    return rows


def plateau_null(by_gen: np.ndarray) -> np.ndarray:
    """Per-stream outcomes shifted so each cell's mean rises to its peak and stays there."""
    mean = by_gen.mean(0)  # (n_ops, K + 1, nB)
    target = np.maximum.accumulate(mean, axis=1)
    return by_gen - mean + target


def centred_policy(r, policy: str, baseline: str):
    """``r`` with ``policy``'s outcomes moved so its paired difference to ``baseline`` has mean 0
    in every operator x budget cell (time-averaged: the quantity `beats` tests)."""
    out = r.outcome.copy()
    for op in OPERATORS:
        i = r.rows.index((policy, op))
        j = r.rows.index((baseline, None if baseline == "retain-all" else op))
        d = (out[:, i] - out[:, j]).mean(-1)  # (Q, nB)
        out[:, i] -= d.mean(0)[:, None]  # a constant shift along time moves the mean by that much
    return r._replace(outcome=out)


def _shares(answers: list[str]) -> dict:
    n = len(answers)
    return {a: sum(x == a for x in answers) / n for a in ("YES", "NO", "UNDECIDED")}


def _summary(ans: dict[str, list[str]], n: int, q: int, null_name: str) -> dict:
    ns, ts = _shares(ans["null"]), _shares(ans["true"])
    fy, pw, fn = ns["YES"], ts["YES"], ts["NO"]
    fp_t, pw_t, fn_t = TARGETS
    return {
        "false_yes": fy,
        "power": pw,
        "false_no": fn,
        "power_small": _shares(ans["small"])["YES"],
        "null_world": null_name,
        "n_datasets": n,
        "queries": q,
        "meets_targets": bool(fy <= fp_t and pw >= pw_t and fn <= fn_t),
    }


def _rule_rates(worlds: dict, answer, sizes: tuple, null_name: str) -> dict:
    """``{rule: _summary + z}`` of one statement: ``answer(world, rows, z)`` (a rule's result
    dict) on each data set ``rows`` of ``idx`` in each world, ``sizes = (idx, n_cells,
    n_datasets, q)``."""
    idx, n_cells, n_datasets, q = sizes
    out = {}
    for rule in RULES:
        z = cell_z(n_cells, rule)
        ans = {w: [answer(g, i, z)["answer"] for i in idx] for w, g in worlds.items()}
        out[rule] = dict(_summary(ans, n_datasets, q, null_name), z=z)
    return out


def operating_timeline(r, *, key: jax.Array, n_datasets: int = N_DATASETS) -> dict:
    """False-YES rate, power and false-NO rate of each simulation statement, for both rules.

    Args:
      r: `sim.TimelineResult` of the section (the pool of streams).
      key: JAX key (the same key, the same figures). n_datasets: data sets per world.

    Returns:
      ``{statement: {rule: {"false_yes", "power", "false_no", "null_world", "n_datasets",
      "queries", "meets_targets", "z"}}}``.
    """
    q = r.outcome.shape[0]
    # time-averaged outcomes are all `beats` reads: average once, resample the small array
    small = r._replace(outcome=r.outcome.mean(-1, keepdims=True))
    # the key seeds numpy's generator (jax.random.randint would compile for seconds per shape)
    rng = np.random.default_rng(np.asarray(jax.random.key_data(key)).ravel())
    idx = rng.integers(0, q, (n_datasets, q))
    n_cells = len(OPERATORS) * len(r.budgets)
    out: dict = {}
    null_u = plateau_null(r.by_generation)
    worlds_u = {
        "true": r.by_generation,
        "null": null_u,
        "small": null_u + SMALL * (r.by_generation - null_u),
    }
    out["inverted_u"] = _rule_rates(
        worlds_u,
        lambda g, i, z: inverted_u({"by_generation": by_generation_rows(g[i], r.budgets, z)}),
        (idx, n_cells, n_datasets, q),
        "plateau after the peak",
    )
    for key_name, baseline in (
        ("budget_aware_beats_overflow", "overflow"),
        ("budget_aware_beats_retain_all", "retain-all"),
    ):
        null = centred_policy(small, "budget-aware", baseline)
        worlds = {
            "true": small,
            "null": null,
            "small": null._replace(outcome=null.outcome + SMALL * (small.outcome - null.outcome)),
        }
        out[key_name] = _rule_rates(
            worlds,
            lambda rr, i, z, baseline=baseline: beats(
                rr._replace(outcome=rr.outcome[i]), "budget-aware", baseline, r.budgets, z=z
            ),
            (idx, n_cells, n_datasets, q),
            "difference 0 in every cell",
        )
    return out


def fmt_operating(oc: dict) -> str:
    """One line: ``false YES a%, power b%, false NO c% (n data sets of Q streams)``."""
    return (
        f"false YES {oc['false_yes']:.1%}, power {oc['power']:.1%} ({oc['power_small']:.1%} at "
        f"a tenth of the effect), false NO {oc['false_no']:.1%} ({oc['n_datasets']} data sets "
        f"of {oc['queries']} streams per world)"
    )


# ---- statement 2 ("the loss per pass is geometric"): nested survival worlds -----------------------


class NestedSurvival(NamedTuple):
    """Survival counts in the layout of ``oas.real.survival``'s result (which ``survival_report``
    reads): ``survived (G, K + 1)``, ``at_risk (G,)``, ``lengths (G, K + 1)``."""

    survived: np.ndarray
    at_risk: np.ndarray
    lengths: np.ndarray


def nested_survival(
    rng: np.random.Generator,
    *,
    floor: float,
    phi: float,
    n_groups: int = 10,
    at_risk: tuple[int, int] = (40, 80),
    passes: int = 4,
    tilt: float = 0.1,
):
    """One data set of answer survival against passes where a question lost stays lost.

    Per conversation, ``n ~ U(at_risk)`` answerable questions; each is *robust* (never lost) with
    probability ``floor`` and otherwise survives each pass with probability ``phi`` (times a
    per-conversation tilt ``U(1 - tilt, 1 + tilt)``, capped below 1) until it is lost: survival
    ``S_k = floor + (1 - floor) phi^k`` levels off at ``floor``; ``floor = 0`` is the geometric law
    (H10). Counts are nested (``survived[:, k] <= survived[:, k - 1]``), as a pass chain's are.

    Returns:
      ``NestedSurvival`` (the fields of ``oas.real.survival``'s result; lengths zero).
    """
    surv = np.zeros((n_groups, passes + 1))
    risk = rng.integers(at_risk[0], at_risk[1] + 1, size=n_groups).astype(float)
    for g, n in enumerate(risk.astype(int)):
        p = min(phi * rng.uniform(1 - tilt, 1 + tilt), 0.999)
        robust = rng.random(n) < floor
        lost_at = 1 + rng.geometric(1 - p, size=n) - 1  # passes survived before the loss
        alive = robust[:, None] | (np.arange(passes + 1)[None, :] <= lost_at[:, None] - 1)
        alive[:, 0] = True
        surv[g] = alive.sum(0)
    return NestedSurvival(surv, risk, np.zeros_like(surv))


def geometric_rule_rates(
    seed: int, *, floor: float, phi: float, n_datasets: int = 60, **world
) -> dict[str, float]:
    """Shares of ``oas.real.survival_report``'s verdicts (the per-chain rule of statement 2) over
    ``n_datasets`` ``nested_survival`` data sets: ``{verdict: share}``."""
    from oas.real import survival_report

    rng = np.random.default_rng(seed)
    verdicts = [
        survival_report(cast(Any, nested_survival(rng, floor=floor, phi=phi, **world)))["verdict"]
        for _ in range(n_datasets)
    ]
    return {v: verdicts.count(v) / n_datasets for v in sorted(set(verdicts))}
