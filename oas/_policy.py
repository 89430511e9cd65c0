"""OAS policies: argmax of the utility model, and the harm-calibrated variant with per-budget tau_B.

Let o* be the generative action with the largest predicted utility and
d(z) = mu_{o*}(z) - mu_ret(z) its margin over retention. The calibrated policy consolidates (takes
o*) only when d(z) > tau_B, else retains. Harm of a choice: its outcome is below ``ret``'s,
h(z) = 1{y_{o*}(z) < y_ret(z)}; the harm loss of threshold tau is L(tau) = 1{d(z) > tau} h(z),
non-increasing in tau, and 0 at tau = +inf (always retain).

Thresholds are searched over tau >= 0, so the calibrated policy never consolidates where the plain
argmax would not. Two ways to fit tau_B on a held-out split (groups disjoint from the training
split), separately for each budget B:

(a) ``calibrate_accuracy``: the tau with the highest held-out accuracy among those whose held-out
    harm rate is <= alpha (ties to the larger tau); at ``alpha = 0`` it is the paper's rule read
    exactly (``_rule_paper``): the candidates are every observed calibration margin d(z) plus
    "abstain on all" (+inf), those with zero observed harmful choices are kept, the one with the
    highest calibration accuracy is taken, ties go to the larger (more conservative) tau. The
    paper's candidate set includes negative margins, so at ``alpha = 0`` tau_B may be negative and
    the policy may consolidate where the plain argmax retains (only where no harm was observed);
(b) ``calibrate_crc``: conformal risk control (Angelopoulos, Bates, Fisch, Lei & Schuster,
    "Conformal Risk Control", ICLR 2024, Thm 1): with n held-out instances of budget B and the loss
    bounded by 1, tau_B = inf { tau >= 0 : n/(n+1) * Rhat_n(tau) + 1/(n+1) <= alpha }. For a new
    instance exchangeable with the held-out ones, E[L(tau_B)] <= alpha.

A budget with no valid threshold (e.g. n + 1 < 1/alpha for CRC) gets tau_B = +inf: retain.
A budget the calibration split never saw also retains. Plain numpy: no JAX on this path.

References: MODEL §8 (policy, calibrated variant).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from retcon.errors import check_range

RET = 0


class Thresholds(NamedTuple):
    """Per-budget thresholds: ``budgets`` (m,) and ``tau`` (m,), +inf meaning always retain."""

    budgets: np.ndarray
    tau: np.ndarray
    n: np.ndarray  # (m,) held-out instances per budget


def argmax_policy(mu) -> np.ndarray:
    """argmax_a mu_a(z), ``ret`` on ties: shape ``(n,)`` action index from ``mu`` ``(n, 4)``.

    References: MODEL §8 (policy).
    """
    mu = np.asarray(mu)
    # np.argmax returns the first maximum and ret is action 0, so a tie with ret goes to ret
    return np.argmax(mu, axis=1)


def margin(mu) -> tuple[np.ndarray, np.ndarray]:
    """``(o_star, d)``: the best generative action (1..3) and its margin mu_{o*} - mu_ret, each ``(n,)``."""
    mu = np.asarray(mu, dtype=np.float64)
    o_star = 1 + np.argmax(mu[:, 1:], axis=1)
    return o_star, mu[np.arange(mu.shape[0]), o_star] - mu[:, RET]


def harm(outcomes, action) -> np.ndarray:
    """1 where the chosen action's outcome is below ``ret``'s: shape ``(n,)`` bool."""
    y = np.asarray(outcomes, dtype=np.float64)
    return y[np.arange(y.shape[0]), np.asarray(action)] < y[:, RET]


def _per_budget(mu, outcomes, budget, alpha, rule) -> Thresholds:
    check_range("alpha", alpha, 0, 1, low_open=False)
    mu = np.asarray(mu, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    budget = np.asarray(budget, dtype=np.float64)
    o_star, d = margin(mu)
    budgets = np.unique(budget)
    taus, counts = [], []
    for b in budgets:
        rows = budget == b
        y_b = y[rows]
        taus.append(rule(d[rows], y_b[np.arange(len(y_b)), o_star[rows]], y_b[:, RET], alpha))
        counts.append(rows.sum())
    return Thresholds(budgets, np.asarray(taus, dtype=np.float64), np.asarray(counts))


def _candidates(d):
    """Thresholds where the held-out decisions change: 0 and every positive margin, then +inf."""
    return np.concatenate([[0.0], np.sort(d[d > 0]), [np.inf]])


def _losses(d, y_op, y_ret, tau):
    """Held-out harm rate and accuracy of each candidate tau (vectorized by sorting)."""
    order = np.argsort(d)
    d_sorted = d[order]
    gain = (y_op - y_ret)[order]
    h = (y_op < y_ret)[order].astype(np.float64)
    # rows with d > tau are the suffix starting at searchsorted(d, tau, side="right")
    start = np.searchsorted(d_sorted, tau, side="right")
    suffix_h = np.concatenate([np.cumsum(h[::-1])[::-1], [0.0]])
    suffix_g = np.concatenate([np.cumsum(gain[::-1])[::-1], [0.0]])
    n = len(d)
    return suffix_h[start] / n, (y_ret.sum() + suffix_g[start]) / n


def _rule_accuracy(d, y_op, y_ret, alpha):
    tau = _candidates(d)
    harm_rate, acc = _losses(d, y_op, y_ret, tau)
    ok = harm_rate <= alpha  # tau = inf always qualifies (no consolidation, no harm)
    best = np.max(acc[ok])
    return float(np.max(tau[ok & (acc >= best - 1e-12)]))


def _rule_paper(d, y_op, y_ret):
    """The paper's zero-harm rule (MODEL §8): candidates = observed margins + abstain-all (+inf);
    keep those with zero observed harm; highest accuracy; ties to the larger tau."""
    tau = np.concatenate([np.unique(d), [np.inf]])
    harm_rate, acc = _losses(d, y_op, y_ret, tau)
    ok = harm_rate == 0.0  # tau = inf consolidates nothing, so it always qualifies
    best = np.max(acc[ok])
    return float(np.max(tau[ok & (acc >= best - 1e-12)]))


def _rule_accuracy_or_paper(d, y_op, y_ret, alpha):
    return _rule_paper(d, y_op, y_ret) if alpha == 0 else _rule_accuracy(d, y_op, y_ret, alpha)


def _rule_crc(d, y_op, y_ret, alpha):
    n = len(d)
    tau = _candidates(d)
    risk, _ = _losses(d, y_op, y_ret, tau)
    ok = n / (n + 1.0) * risk + 1.0 / (n + 1.0) <= alpha  # B = 1 bounds the harm loss
    return float(tau[ok][0]) if ok.any() else float("inf")


def calibrate_accuracy(mu, outcomes, budget, alpha: float) -> Thresholds:
    """tau_B maximizing held-out accuracy subject to held-out harm rate <= alpha, per budget.

    Args:
      mu: shape ``(n, 4)``, predicted utilities on the held-out (calibration) split.
      outcomes: shape ``(n, 4)`` in [0, 1], the held-out outcomes.
      budget: shape ``(n,)``, tokens.
      alpha: harm-rate bound in [0, 1); ``0`` selects the paper's zero-harm rule exactly
        (candidates include negative margins, so tau may be negative there).

    Returns:
      ``Thresholds`` over the distinct budgets; tau = +inf: retain.

    References: MODEL §8 (calibrated variant, (a); the paper's rule at alpha = 0).
    """
    return _per_budget(mu, outcomes, budget, alpha, _rule_accuracy_or_paper)


def calibrate_crc(mu, outcomes, budget, alpha: float) -> Thresholds:
    """tau_B by conformal risk control, so that E[harm] <= alpha for a new instance of budget B.

    tau_B = inf { tau >= 0 : n_B/(n_B+1) * Rhat(tau) + 1/(n_B+1) <= alpha }, with Rhat the held-out
    harm rate at tau; +inf (retain) when no tau qualifies (always so at ``alpha = 0``: no finite
    sample bounds the expected harm by zero).

    Args: as ``calibrate_accuracy``.

    Returns:
      ``Thresholds`` over the distinct budgets.

    References: MODEL §8 (calibrated variant, (b)); Angelopoulos et al., ICLR 2024, Thm 1.
    """
    return _per_budget(mu, outcomes, budget, alpha, _rule_crc)


def tau_for(thresholds: Thresholds, budget) -> np.ndarray:
    """tau_B for each row's budget, shape ``(n,)``; +inf for a budget not calibrated."""
    budget = np.asarray(budget, dtype=np.float64)
    idx = np.searchsorted(thresholds.budgets, budget)
    idx_c = np.minimum(idx, max(len(thresholds.budgets) - 1, 0))
    known = (
        (idx < len(thresholds.budgets)) & (thresholds.budgets[idx_c] == budget)
        if len(thresholds.budgets)
        else np.zeros(budget.shape, bool)
    )
    return np.where(known, thresholds.tau[idx_c] if len(thresholds.budgets) else np.inf, np.inf)


def calibrated_policy(mu, budget, thresholds: Thresholds) -> np.ndarray:
    """Take o* where mu_{o*} - mu_ret > tau_B, else ``ret``: shape ``(n,)`` action index.

    References: MODEL §8 (calibrated variant).
    """
    o_star, d = margin(mu)
    return np.where(d > tau_for(thresholds, budget), o_star, RET)
