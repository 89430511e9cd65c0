"""The paper's routing baselines (MODEL §8, Table 8): training-selected fixed operator,
evidence-fit rule, k-NN utility router. Plain numpy, no JAX: each is a pure function of the
training split's features and outcomes and the test split's features, returning action indices in
``retcon.vocab.ACTIONS`` order (0 is ``ret``).

The paper names these baselines without formulas; each docstring says where a function follows
the paper's text (as MODEL §8 and §11 record it) and where it is our reading.

References: MODEL §8 (routing baselines), §11 (Table 8).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from oas._features import FEATURE_NAMES
from retcon.errors import InputError

RET = 0
FIT_COLUMN = FEATURE_NAMES.index("budget_fit_fraction")
DEFAULT_KS = (1, 3, 5, 9, 15, 25)


class KnnChoice(NamedTuple):
    """The k-NN router's test choices and the ``k`` the inner grouped CV chose."""

    actions: np.ndarray  # (n_test,) int
    k: int
    cv_accuracy: np.ndarray  # (len(ks),) inner-CV accuracy of each candidate k


def _outcomes(outcomes, name: str) -> np.ndarray:
    y = np.asarray(outcomes, dtype=np.float64)
    if y.ndim != 2 or y.shape[1] != 4 or len(y) == 0:
        raise InputError(f"{name}: outcomes must have shape (n >= 1, 4); got {y.shape}.")
    return y


def training_selected_operator(train_outcomes) -> int:
    """The generative action (1..3) with the highest mean training outcome, pooled over budgets.

    Follows the paper: a fixed operator selected on the training split (Table 8, "training-selected
    fixed operator"), never ``ret``. Our reading: one operator for all budgets (the paper's row
    has harms at every budget, so it is not retention anywhere), pooled over the training rows;
    ties go to the first operator in ``ACTIONS`` order.

    Args:
      train_outcomes: shape ``(n, 4)`` in [0, 1].

    Returns:
      the action index in 1..3.

    References: MODEL §8 (routing baselines), §11 (Table 8).
    """
    y = _outcomes(train_outcomes, "training_selected_operator")
    return 1 + int(np.argmax(y[:, 1:].mean(axis=0)))


def evidence_fit_rule(features, operator: int) -> np.ndarray:
    """Consolidate with ``operator`` where retention does not pack all the evidence, else retain.

    Follows the paper (Table 8, "evidence-fit rule") as MODEL §8 reads it: consolidate when the
    budget-fit fraction ``f_B`` (feature 3) is below 1, the rule Proposition 1 suggests; the
    operator is the training-selected one (``training_selected_operator``). Our reading: ``f_B``
    is taken as computed in the features column, and ``f_B < 1`` is tested with a tolerance of
    1e-9 so that a fraction stored as 0.9999999999 counts as full fit.

    Args:
      features: shape ``(n, 11)`` in ``FEATURE_NAMES`` order.
      operator: action index in 1..3.

    Returns:
      shape ``(n,)`` int action index.

    References: MODEL §4 (Proposition 1), §8 (routing baselines).
    """
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(FEATURE_NAMES):
        raise InputError(
            f"evidence_fit_rule: features must have shape (n, {len(FEATURE_NAMES)}); got {x.shape}."
        )
    if operator not in (1, 2, 3):
        raise InputError(f"evidence_fit_rule: operator must be 1, 2 or 3; got {operator!r}.")
    return np.where(x[:, FIT_COLUMN] < 1.0 - 1e-9, operator, RET)


def standardise(train_x, test_x):
    """``(train_x, test_x)`` centred and scaled by the training rows' mean and standard deviation
    (a constant column is left unscaled): the k-NN baseline's features. Shapes kept."""
    mean = train_x.mean(axis=0)
    scale = train_x.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)  # a constant column carries no distance
    return (train_x - mean) / scale, (test_x - mean) / scale


# A chunk of test rows holds at most this many squared distances (8 MiB of float64, as much again
# for the argpartition's indices), whatever the number of rows.
_CHUNK_CELLS = 1 << 20


def nearest_neighbours(train_x, test_x, k: int) -> np.ndarray:
    """Indices of the ``min(k, n)`` nearest training rows of each test row, ordered by (squared
    Euclidean distance, training index): the first ``k`` of a stable sort of each row's distances.

    Brute force through BLAS, one chunk of test rows at a time (memory bounded by
    ``_CHUNK_CELLS``), ``np.argpartition`` for the k smallest, then the ties at the k-th distance
    settled to the lower index. Shapes: ``(n, p)``, ``(m, p)`` -> ``(m, min(k, n))`` int.
    """
    n, m = train_x.shape[0], test_x.shape[0]
    k = min(k, n)
    train_sq = (train_x**2).sum(axis=1)[None, :]
    test_sq = (test_x**2).sum(axis=1)[:, None]
    train_t = train_x.T
    out = np.empty((m, k), dtype=np.intp)
    step = max(1, _CHUNK_CELLS // max(n, 1))
    for start in range(0, m, step):
        stop = min(start + step, m)
        # (|a|^2 + |b|^2) - (2 a) @ b', as the dense expression groups it, in two buffers
        cross = (2.0 * test_x[start:stop]) @ train_t
        d2 = np.add(test_sq[start:stop], train_sq)
        np.subtract(d2, cross, out=d2)
        out[start:stop] = _k_smallest(d2, k)
    return out


def _k_smallest(d2: np.ndarray, k: int) -> np.ndarray:
    """Per row of ``d2`` ``(r, n)``, the indices of its k smallest values by (value, index)."""
    r, n = d2.shape
    if k == n:
        return np.argsort(d2, axis=1, kind="stable")
    rows = np.arange(r)[:, None]
    part = np.argpartition(d2, k - 1, axis=1)[:, :k]
    near = d2[rows, part]
    kth = near.max(axis=1, keepdims=True)
    # exactly k values <= the k-th unless a tie straddles the k-th place
    count = np.count_nonzero(d2 <= kth, axis=1)
    # the k found, ordered by (distance, index): what a stable sort of the row puts first
    out = np.take_along_axis(part, np.lexsort((part, near), axis=-1), axis=1)
    for i in np.flatnonzero(count != k):  # a tie at the k-th distance: the lower indices
        cand = np.flatnonzero(d2[i] <= kth[i, 0])
        out[i] = cand[np.argsort(d2[i, cand], kind="stable")[:k]]
    return out


def _knn_mean_outcomes(train_x, train_y, test_x, ks) -> list[np.ndarray]:
    """Mean outcome of each action over the k nearest training rows (Euclidean; ties to the lower
    training index), for each k of ``ks``: one neighbour search for the largest k, whose first k
    are the k nearest. Shapes: ``(n, p)``, ``(n, 4)``, ``(m, p)`` -> one ``(m, 4)`` per k."""
    nearest = nearest_neighbours(train_x, test_x, max(ks))
    return [train_y[nearest[:, :k]].mean(axis=1) for k in ks]


def knn_router(
    train_features, train_outcomes, train_groups, test_features, *, ks=DEFAULT_KS, n_folds: int = 5
) -> KnnChoice:
    """k-NN utility router: per test row, the action with the best mean outcome over its k nearest
    training rows in standardised feature space; ``ret`` on ties; ``k`` by inner grouped CV.

    Follows the paper (Table 8, "k-NN utility router") as MODEL §8 reads it: the mean outcome of
    each action over the ``k`` nearest training instances in standardised feature space, ``k`` by
    inner CV. Our reading: Euclidean distance on features standardised with the training split's
    mean and standard deviation; the inner CV deals the sorted distinct groups round-robin into
    ``min(n_folds, groups)`` folds (deterministic, no key), scores each candidate ``k`` by the
    mean outcome of its chosen action on the held-out folds, and takes the best, ties to the
    smaller ``k``; with a single training group ``k`` is the first candidate.

    Args:
      train_features: shape ``(n, p)``.
      train_outcomes: shape ``(n, 4)`` in [0, 1].
      train_groups: shape ``(n,)`` group labels (conversations); never split across folds.
      test_features: shape ``(m, p)``.
      ks: candidate neighbour counts, each >= 1.
      n_folds: inner folds, >= 2.

    Returns:
      ``KnnChoice``.

    References: MODEL §8 (routing baselines), §11 (Table 8).
    """
    y = _outcomes(train_outcomes, "knn_router")
    x = np.asarray(train_features, dtype=np.float64)
    xt = np.asarray(test_features, dtype=np.float64)
    g = np.asarray(train_groups)
    if x.ndim != 2 or len(x) != len(y) or len(g) != len(y):
        raise InputError(
            f"knn_router: train_features {x.shape}, train_outcomes {y.shape} and train_groups "
            f"{g.shape} must share their first axis."
        )
    if xt.ndim != 2 or xt.shape[1] != x.shape[1]:
        raise InputError(
            f"knn_router: test_features must have shape (m, {x.shape[1]}); got {xt.shape}."
        )
    ks = tuple(sorted({int(k) for k in ks}))
    if not ks or min(ks) < 1:
        raise InputError(f"knn_router: ks must be a non-empty list of integers >= 1; got {ks}.")
    if n_folds < 2:
        raise InputError(f"knn_router: n_folds must be >= 2; got {n_folds}.")
    labels = np.unique(g.astype(str))
    n_inner = min(n_folds, len(labels))
    scores = np.zeros(len(ks))
    if n_inner >= 2:
        fold_of = {lab: i % n_inner for i, lab in enumerate(labels)}
        fold = np.array([fold_of[lab] for lab in g.astype(str)])
        for f in range(n_inner):
            fit, held = fold != f, fold == f
            xs, xh = standardise(x[fit], x[held])
            for j, means in enumerate(_knn_mean_outcomes(xs, y[fit], xh, ks)):
                pick = np.argmax(means, axis=1)
                scores[j] += y[held][np.arange(held.sum()), pick].sum()
        scores /= len(y)
    best = int(np.argmax(scores))  # first maximum: the smaller k on ties (ks as given)
    xs, xts = standardise(x, xt)
    (means,) = _knn_mean_outcomes(xs, y, xts, ks[best : best + 1])
    actions = np.argmax(means, axis=1)  # first max: ret
    return KnnChoice(actions.astype(np.int64), ks[best], scores)
