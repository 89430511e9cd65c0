"""OAS (Offline Abstraction-Safety) router: paired data, features, ridge utility model, policies.

Reading paired data, computing features, loading a fitted router and choosing actions use plain
numpy (a deployed agent needs no JAX); fitting (``fit_ridge``, ``fit_mlp``, ``fit_router``) and
evaluation import JAX when first used.

Identification (``identify``, ``support_fractions``, ``Structure``) fits the reader of MODEL §2 to
paired data by maximum likelihood with grouped-bootstrap CIs; ``out_of_fold``,
``compare_crossovers``, ``single_cluster_crossover`` and ``predict_success``
give the fitted model's ``dU(B)`` and crossover budget on held-out groups against the data's
(docs/identify.md). Packing comes from ``theory`` (MODEL §2).

References: MODEL §2 (reader, identification), §8.
"""

from typing import TYPE_CHECKING

from retcon.lazy import lazy_exports

if TYPE_CHECKING:
    from oas._evaluate import POLICIES as POLICIES
    from oas._evaluate import Evaluation as Evaluation
    from oas._evaluate import best_fixed_actions as best_fixed_actions
    from oas._evaluate import evaluate as evaluate
    from oas._features import FEATURE_NAMES as FEATURE_NAMES
    from oas._features import budget_fit_fraction as budget_fit_fraction
    from oas._features import compute_features as compute_features
    from oas._features import compute_features_batch as compute_features_batch
    from oas._fit import fit_router as fit_router
    from oas._fit import group_split as group_split
    from oas._identify import Identified as Identified
    from oas._identify import ReaderParams as ReaderParams
    from oas._identify import Structure as Structure
    from oas._identify import identify as identify
    from oas._identify import support_fractions as support_fractions
    from oas._magnitude import identify_report as identify_report
    from oas._mlp import MLPFit as MLPFit
    from oas._mlp import fit_mlp as fit_mlp
    from oas._mlp import predict_mlp as predict_mlp
    from oas._out_of_fold import CurveComparison as CurveComparison
    from oas._out_of_fold import OutOfFold as OutOfFold
    from oas._out_of_fold import compare_crossovers as compare_crossovers
    from oas._out_of_fold import out_of_fold as out_of_fold
    from oas._out_of_fold import predict_success as predict_success
    from oas._out_of_fold import single_cluster_crossover as single_cluster_crossover
    from oas._paired import PairedData as PairedData
    from oas._paired import paired_from_rows as paired_from_rows
    from oas._paired import read_paired as read_paired
    from oas._paired import write_paired as write_paired
    from oas._paired_writer import PairedWriter as PairedWriter
    from oas._paired_writer import existing_ids as existing_ids
    from oas._policy import argmax_policy as argmax_policy
    from oas._policy import calibrate_accuracy as calibrate_accuracy
    from oas._policy import calibrate_crc as calibrate_crc
    from oas._policy import calibrated_policy as calibrated_policy
    from oas._policy import harm as harm
    from oas._policy import margin as margin
    from oas._retrieval_features import RETRIEVAL_FEATURE_NAMES as RETRIEVAL_FEATURE_NAMES
    from oas._retrieval_features import RETRIEVAL_META_COLUMNS as RETRIEVAL_META_COLUMNS
    from oas._retrieval_features import RecallCalibration as RecallCalibration
    from oas._retrieval_features import fit_recall_calibration as fit_recall_calibration
    from oas._retrieval_features import predict_recall as predict_recall
    from oas._retrieval_features import retrieval_features_batch as retrieval_features_batch
    from oas._retrieval_features import sim_retrieval_features as sim_retrieval_features
    from oas._ridge import RidgeFit as RidgeFit
    from oas._ridge import fit_ridge as fit_ridge
    from oas._ridge import grouped_folds as grouped_folds
    from oas._ridge import predict_ridge as predict_ridge
    from oas._router import Router as Router
    from oas._router import load_router as load_router
    from oas._router import save_router as save_router
    from oas._simulate import simulate_paired as simulate_paired
    from oas._strata import LengthStrata as LengthStrata
    from oas._strata import length_strata as length_strata
    from oas._structure import STRUCTURE_COLUMN as STRUCTURE_COLUMN
    from oas._structure import paired_structure as paired_structure
    from oas._theory_router import TheoryRouter as TheoryRouter
    from oas._theory_router import fit_theory_router as fit_theory_router

_EXPORTS = {
    "FEATURE_NAMES": "oas._features",
    "RETRIEVAL_FEATURE_NAMES": "oas._retrieval_features",
    "RETRIEVAL_META_COLUMNS": "oas._retrieval_features",
    "RecallCalibration": "oas._retrieval_features",
    "fit_recall_calibration": "oas._retrieval_features",
    "predict_recall": "oas._retrieval_features",
    "retrieval_features_batch": "oas._retrieval_features",
    "sim_retrieval_features": "oas._retrieval_features",
    "budget_fit_fraction": "oas._features",
    "compute_features": "oas._features",
    "compute_features_batch": "oas._features",
    "PairedData": "oas._paired",
    "PairedWriter": "oas._paired_writer",
    "existing_ids": "oas._paired_writer",
    "paired_from_rows": "oas._paired",
    "read_paired": "oas._paired",
    "write_paired": "oas._paired",
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
    "LengthStrata": "oas._strata",
    "length_strata": "oas._strata",
    "STRUCTURE_COLUMN": "oas._structure",
    "paired_structure": "oas._structure",
    "TheoryRouter": "oas._theory_router",
    "fit_theory_router": "oas._theory_router",
    "identify_report": "oas._magnitude",
    "Identified": "oas._identify",
    "ReaderParams": "oas._identify",
    "Structure": "oas._identify",
    "identify": "oas._identify",
    "support_fractions": "oas._identify",
    "CurveComparison": "oas._out_of_fold",
    "OutOfFold": "oas._out_of_fold",
    "compare_crossovers": "oas._out_of_fold",
    "out_of_fold": "oas._out_of_fold",
    "predict_success": "oas._out_of_fold",
    "single_cluster_crossover": "oas._out_of_fold",
}

__getattr__, _ = lazy_exports("oas", _EXPORTS)


__all__ = [
    "FEATURE_NAMES",
    "POLICIES",
    "RETRIEVAL_FEATURE_NAMES",
    "RETRIEVAL_META_COLUMNS",
    "STRUCTURE_COLUMN",
    "CurveComparison",
    "Evaluation",
    "Identified",
    "LengthStrata",
    "MLPFit",
    "OutOfFold",
    "PairedData",
    "PairedWriter",
    "ReaderParams",
    "RecallCalibration",
    "RidgeFit",
    "Router",
    "Structure",
    "TheoryRouter",
    "argmax_policy",
    "best_fixed_actions",
    "budget_fit_fraction",
    "calibrate_accuracy",
    "calibrate_crc",
    "calibrated_policy",
    "compare_crossovers",
    "compute_features",
    "compute_features_batch",
    "evaluate",
    "existing_ids",
    "fit_mlp",
    "fit_recall_calibration",
    "fit_ridge",
    "fit_router",
    "fit_theory_router",
    "group_split",
    "grouped_folds",
    "harm",
    "identify",
    "identify_report",
    "length_strata",
    "load_router",
    "margin",
    "out_of_fold",
    "paired_from_rows",
    "paired_structure",
    "predict_mlp",
    "predict_recall",
    "predict_ridge",
    "predict_success",
    "read_paired",
    "retrieval_features_batch",
    "save_router",
    "sim_retrieval_features",
    "simulate_paired",
    "single_cluster_crossover",
    "support_fractions",
    "write_paired",
]
