"""Post-retrieval features: what a deployed router knows after retrieval, before generation.

An optional extension of MODEL §8's eleven features (docs/oas.md, "Post-retrieval features"),
computed by one implementation for simulated and real data. The retriever scored every candidate
unit of the memory; the cluster ``C`` is the units it kept (the top ``k``). From those scores:

  12. ``score_margin``    (min_{u in C} s_u - max_{u not in C} s_u) / (max s - min s): how clearly
                          the kept units stand above the rest, on the question's own score range
                          (0 when nothing is left out or every score is equal);
  13. ``score_mass``      sum_{u in C} max(s_u, 0) / sum_u max(s_u, 0): share of the positive score
                          mass the cluster holds (its share of units when no score is positive);
  14. ``overlap_count``   number of units of ``C`` that share a content word with the question;
  15. ``recall_estimate`` the retrieval recall of the gold evidence predicted from 12-14 by a
                          linear calibration fitted on training rows only (``fit_recall_calibration``).

The cluster's length against the budget is MODEL §8's feature 2 already. On LoCoMo the scores are
the run's retriever scores (BM25 or embedding cosine) over the conversation's units and the
overlap is computed from the texts (``oas.real.locomo_retrieval_features``); in ``sim`` they are
the retriever's noisy scores of the found evidence records and the distractors, and ``sim``
records have no words, so a unit "shares a content word" when its score is at least
``SIM_OVERLAP_THRESHOLD`` (half-way between the distractors' mean score 0 and the evidence's 1).
Both sides call ``retrieval_features_batch``. Plain numpy.

References: MODEL §2 (retriever order), §8 (features).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from retcon.errors import InputError

RETRIEVAL_FEATURE_NAMES = ("score_margin", "score_mass", "overlap_count", "recall_estimate")
#: meta columns that carry features 12-14 and the calibration target in paired data
RETRIEVAL_META_COLUMNS = (
    "meta_score_margin",
    "meta_score_mass",
    "meta_overlap_count",
)
RECALL_TARGET_COLUMN = "meta_retrieval_recall_cluster"
SIM_OVERLAP_THRESHOLD = 0.5


def retrieval_features_batch(scores, valid, in_cluster, overlap) -> np.ndarray:
    """Features 12-14 (score margin, score mass, overlap count) for a padded batch.

    Args:
      scores: ``(n, N)`` retriever scores of every candidate unit (any order).
      valid: ``(n, N)`` bool, which slots hold a candidate (False on padding and on units the
        retriever could not see).
      in_cluster: ``(n, N)`` bool, the units kept in ``C`` (a subset of ``valid``; an empty
        cluster, a simulated question whose evidence was all missed, gives margin 0, mass 0 and
        count 0).
      overlap: ``(n, N)`` bool, units that share a content word with the question.

    Returns:
      ``(n, 3)`` float64: ``score_margin``, ``score_mass``, ``overlap_count``.

    References: MODEL §8 (extension, docs/oas.md).
    """
    s = np.asarray(scores, dtype=np.float64)
    valid = np.asarray(valid, bool)
    kept = np.asarray(in_cluster, bool)
    ov = np.asarray(overlap, bool)
    if s.ndim != 2 or not (valid.shape == kept.shape == ov.shape == s.shape):
        raise InputError(
            f"retrieval_features_batch: scores, valid, in_cluster and overlap must share one "
            f"(n, N) shape; got {s.shape}, {valid.shape}, {kept.shape}, {ov.shape}."
        )
    if np.any(kept & ~valid):
        raise InputError("retrieval_features_batch: in_cluster must mark only valid units.")
    rest = valid & ~kept
    s = np.where(valid, s, 0.0)
    if not np.all(np.isfinite(s)):
        raise InputError("retrieval_features_batch: valid scores must be finite.")
    has = valid.any(axis=1)
    hi = np.where(has, np.where(valid, s, -np.inf).max(axis=1, initial=-np.inf), 0.0)
    lo = np.where(has, np.where(valid, s, np.inf).min(axis=1, initial=np.inf), 0.0)
    span = hi - lo
    ok = kept.any(axis=1) & rest.any(axis=1) & (span > 0)
    low_kept = np.where(kept, s, np.inf).min(axis=1)
    high_rest = np.where(rest, s, -np.inf).max(axis=1)
    gap = np.where(ok, np.where(ok, low_kept, 0.0) - np.where(ok, high_rest, 0.0), 0.0)
    margin = np.where(ok, gap / np.where(ok, span, 1.0), 0.0)
    pos = np.where(valid, np.maximum(s, 0.0), 0.0)
    total = pos.sum(axis=1)
    share = kept.sum(axis=1) / np.maximum(valid.sum(axis=1), 1)
    mass = np.where(total > 0, (pos * kept).sum(axis=1) / np.where(total > 0, total, 1.0), share)
    count = (ov & kept).sum(axis=1).astype(np.float64)
    return np.stack([margin, mass, count], axis=1)


class RecallCalibration(NamedTuple):
    """Linear map from features 12-14 to retrieval recall (feature 15), fitted on training rows.

    Attributes:
      coef: ``(4,)`` intercept then the weights of margin, mass and overlap count.
    """

    coef: np.ndarray


def fit_recall_calibration(x, recall, *, ridge: float = 1e-6) -> RecallCalibration:
    """Least squares of the observed recall on ``[1, x]`` (a tiny ridge keeps it solvable).

    Args:
      x: ``(n, 3)`` features 12-14 of training rows.
      recall: ``(n,)`` the rows' retrieval recall of the gold evidence (over the cluster).
      ridge: penalty on the weights (not the intercept).

    Returns:
      ``RecallCalibration``.
    """
    x = np.asarray(x, dtype=np.float64)
    r = np.asarray(recall, dtype=np.float64).reshape(-1)
    if x.ndim != 2 or x.shape[0] != r.shape[0] or x.shape[0] < 1:
        raise InputError(
            f"fit_recall_calibration: x must be (n, p) with n = len(recall) >= 1; got "
            f"{x.shape} and {r.shape}."
        )
    a = np.concatenate([np.ones((x.shape[0], 1)), x], axis=1)
    pen = np.full(a.shape[1], float(ridge) * x.shape[0])
    pen[0] = 0.0
    coef = np.linalg.solve(a.T @ a + np.diag(pen), a.T @ r)
    return RecallCalibration(coef=coef)


def predict_recall(cal: RecallCalibration, x) -> np.ndarray:
    """Feature 15: the calibration's recall for rows ``x`` ``(n, 3)``, clipped to [0, 1]."""
    x = np.asarray(x, dtype=np.float64)
    return np.clip(cal.coef[0] + x @ cal.coef[1:], 0.0, 1.0)


def sim_retrieval_features(ev_score, retrieved, dis_score) -> tuple[np.ndarray, np.ndarray]:
    """Features 12-14 and the cluster recall of simulated rows, from the retriever's noisy scores.

    Args:
      ev_score: ``(n, K)`` scores of the evidence slots (non-finite where missed or padding).
      retrieved: ``(n, K)`` bool, the evidence records the retriever found (the cluster ``C``).
      dis_score: ``(n, D)`` the distractors' scores (candidates left out of ``C``).

    Returns:
      ``(features (n, 3), found (n, K))``; a unit overlaps the question when its score is at
      least ``SIM_OVERLAP_THRESHOLD``.
    """
    ev = np.asarray(ev_score, dtype=np.float64)
    found = np.asarray(retrieved, bool)
    dis = np.asarray(dis_score, dtype=np.float64)
    scores = np.concatenate([np.where(found, ev, 0.0), dis], axis=1)
    valid = np.concatenate([found, np.ones(dis.shape, bool)], axis=1)
    kept = np.concatenate([found, np.zeros(dis.shape, bool)], axis=1)
    overlap = valid & (scores >= SIM_OVERLAP_THRESHOLD)
    return retrieval_features_batch(scores, valid, kept, overlap), found
