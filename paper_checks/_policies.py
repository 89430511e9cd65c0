"""Small helpers for the OAS evaluations of ``experiments/`` (claims 7-9 use ``_loco``)."""

from __future__ import annotations

import numpy as np


def n_folds_for(paired) -> int:
    """Folds for the ridge penalty's grouped K-fold, which runs inside the training groups (about
    half of all groups): at most 5, at least 2."""
    n_groups = len(np.unique(np.asarray(paired.group_id).astype(str)))
    return int(max(2, min(5, n_groups // 3)))
