"""Small helpers for the OAS evaluations of ``experiments/`` (claims 7-9 use ``_loco``)."""

from __future__ import annotations

import numpy as np

from oas import fit_ridge


def fit_ridge_on(key, train, backend: str = "jax"):
    """The ridge router fitted on ``train`` (``oas.PairedData``), its penalty chosen by grouped
    K-fold inside the training groups: as many folds as groups, at least 2, at most 5.

    Args:
      key: JAX key of the fit.
      train: the training rows.
      backend: ``oas.fit_ridge``'s (``"numpy"``: float64, nothing to compile, for small data).
    """
    n_groups = len(np.unique(np.asarray(train.group_id).astype(str)))
    return fit_ridge(
        key,
        train.features,
        train.outcomes,
        train.group_id,
        n_folds=int(max(2, min(5, n_groups))),
        backend=backend,
    )


def n_folds_for(paired) -> int:
    """Folds for the ridge penalty's grouped K-fold, which runs inside the training groups (about
    half of all groups): at most 5, at least 2."""
    n_groups = len(np.unique(np.asarray(paired.group_id).astype(str)))
    return int(max(2, min(5, n_groups // 3)))
