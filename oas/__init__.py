"""OAS (Offline Abstraction-Safety) router: paired data, features, ridge utility model, policies.

Reading paired data, computing features, loading a fitted router and choosing actions use plain
numpy (a deployed agent needs no JAX); fitting (``fit_ridge``, ``fit_mlp``, ``fit_router``) and
evaluation import JAX when first used.

References: MODEL §8.
"""

from oas._features import (
    FEATURE_NAMES,
    budget_fit_fraction,
    compute_features,
    compute_features_batch,
)
from oas._paired import (
    PairedData,
    PairedWriter,
    existing_ids,
    paired_from_rows,
    read_paired,
    write_paired,
)
from retcon.lazy import lazy_exports

_LAZY = {
    "Router": "oas._router",
    "load_router": "oas._router",
    "save_router": "oas._router",
    "RidgeFit": "oas._ridge",
    "fit_ridge": "oas._ridge",
    "predict_ridge": "oas._ridge",
    "grouped_folds": "oas._ridge",
    "MLPFit": "oas._mlp",
    "fit_mlp": "oas._mlp",
    "predict_mlp": "oas._mlp",
    "argmax_policy": "oas._policy",
    "margin": "oas._policy",
    "calibrate_accuracy": "oas._policy",
    "calibrate_crc": "oas._policy",
    "calibrated_policy": "oas._policy",
    "harm": "oas._policy",
    "fit_router": "oas._fit",
    "group_split": "oas._fit",
    "Evaluation": "oas._evaluate",
    "evaluate": "oas._evaluate",
    "best_fixed_actions": "oas._evaluate",
    "POLICIES": "oas._evaluate",
    "simulate_paired": "oas._simulate",
}

__getattr__, _ = lazy_exports("oas", _LAZY)


__all__ = [
    "FEATURE_NAMES",
    "budget_fit_fraction",
    "compute_features",
    "compute_features_batch",
    "PairedData",
    "PairedWriter",
    "existing_ids",
    "paired_from_rows",
    "read_paired",
    "write_paired",
    *_LAZY,
]
