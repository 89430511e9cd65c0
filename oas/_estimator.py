"""``OASRouter``: the ridge OAS router as a scikit-learn-compatible estimator.

A thin object around the functional core (``oas.fit_router``, ``Router.choose``), for users who
reach for ``Pipeline``, ``cross_val_score`` and ``GroupKFold``. It follows scikit-learn's
conventions without importing scikit-learn (which is in the ``test`` and ``bench`` extras, not a
core dependency): ``__init__`` stores the hyper-parameters and nothing else, ``fit`` returns
``self`` and sets the fitted attributes (trailing underscore), ``get_params``/``set_params`` are
written here, and ``__sklearn_tags__`` imports scikit-learn only when scikit-learn asks for it. JAX is imported by
``fit`` only: a fitted estimator predicts in numpy, as ``Router`` does.

The data convention (MODEL §8):

    X  shape (n, 11): the features in ``FEATURE_NAMES`` order, as ``oas.compute_features`` and
       ``PairedData.features`` give them, unstandardized (the router standardizes on its own
       training split). Column 0 is ``budget_over_512``, so the budget of each row,
       ``B = 512 * X[:, 0]``, is read from X (exactly: 512 is a power of two); tau_B is looked up
       by it, and a budget the router was not calibrated at retains.
    Y  shape (n, 4): the outcome of each action in ``ACTIONS`` order (``y_ret`` .. ``y_rewrite``).
    groups  shape (n,): the unit of independence (conversation, user). ``fit`` splits training
       and calibration rows by group and chooses the ridge penalty by grouped K-fold inside the
       training part, exactly as ``fit_router``. ``groups=None`` treats every row as its own group
       (rows independent); scikit-learn hands ``groups`` to ``fit`` only when asked
       (``cross_val_score(..., groups=g, params={"groups": g})``).

``predict`` gives the action chosen per row (names from ``ACTIONS``), ``score`` the mean outcome of
the chosen action, which is the policy's accuracy (higher is better, as scikit-learn expects).

References: MODEL §8 (utility model, calibrated policy, groups).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from oas._features import FEATURE_NAMES
from oas._paired_features import PairedData
from oas._router import VARIANTS, Router
from retcon.errors import InputError, check_choice
from retcon.vocab import ACTIONS, VOCABULARIES
from theory import PACKINGS

#: The hyper-parameters, in ``__init__`` order (``get_params`` returns them).
_PARAMS = (
    "alpha",
    "n_folds",
    "calibration_fraction",
    "penalties",
    "variant",
    "vocabulary",
    "packing",
    "random_state",
)
_N_QUERY_TYPES = 4  # features 8-11: the one-hot of the query type's slot


class OASRouter:
    """The ridge OAS router as an estimator: ``fit(X, Y, groups)``, ``predict(X)``, ``score``.

    Args (hyper-parameters, stored as given; checked by ``fit``):
      alpha: harm bound in [0, 1) of the tau_B calibrations (0: the paper's zero-harm rule).
      n_folds: grouped K-fold for the ridge penalty, >= 2.
      calibration_fraction: share of groups held out to fit tau_B, in (0, 1).
      penalties: the ridge grid (each > 0, on standardized features); None: ``fit_router``'s
        default, ``10 ** arange(-3, 5.01, 0.5)``.
      variant: the policy ``predict`` applies: ``"calibrated"`` (default), ``"crc"`` or
        ``"argmax"`` (``Router.choose``).
      vocabulary: the query-type vocabulary of features 8-11 (``"locomo"``/``"longmemeval"``).
      packing: how feature 3 was made (recorded in the router).
      random_state: the seed, an integer in [0, 2**32): ``fit`` uses ``jax.random.key(seed)``, as
        ``retcon fit --seed``.

    Fitted attributes:
      router_: the functional ``Router`` (``save_router`` writes it as ``retcon fit`` does).
      coef_: shape ``(4, 11)``; intercept_, penalty_: shape ``(4,)`` (``Router`` fields).
      actions_: shape ``(4,)``, the action names, in the columns' order of Y.
      n_features_in_: 11; feature_names_in_: the column names when X had them.

    References: MODEL §8.
    """

    def __init__(
        self,
        *,
        alpha: float = 0.1,
        n_folds: int = 5,
        calibration_fraction: float = 0.3,
        penalties: Sequence[float] | None = None,
        variant: str = "calibrated",
        vocabulary: str = "locomo",
        packing: str = "prefix",
        random_state: int = 0,
    ):
        self.alpha = alpha
        self.n_folds = n_folds
        self.calibration_fraction = calibration_fraction
        self.penalties = penalties
        self.variant = variant
        self.vocabulary = vocabulary
        self.packing = packing
        self.random_state = random_state

    # -- scikit-learn's estimator protocol ---------------------------------------------------

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The hyper-parameters by name (``deep`` is accepted; no parameter is an estimator)."""
        del deep
        return {name: getattr(self, name) for name in _PARAMS}

    def set_params(self, **params) -> OASRouter:
        """Set hyper-parameters by name; returns ``self``. An unknown name is a ``ValueError``."""
        for name, value in params.items():
            if name not in _PARAMS:
                raise InputError(
                    f"OASRouter.set_params: invalid parameter {name!r}; valid parameters are "
                    f"{list(_PARAMS)}."
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        default = OASRouter()
        changed = [
            f"{k}={v!r}" for k, v in self.get_params().items() if not _same(v, getattr(default, k))
        ]
        return f"OASRouter({', '.join(changed)})"

    def __sklearn_tags__(self):
        """scikit-learn's tags (imported here: only scikit-learn calls this)."""
        from sklearn.utils import InputTags, Tags, TargetTags

        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=True, multi_output=True, single_output=False),
            transformer_tags=None,
            classifier_tags=None,
            regressor_tags=None,
            input_tags=InputTags(two_d_array=True, allow_nan=False),
            requires_fit=True,
        )

    # -- fit, predict, score ----------------------------------------------------------------

    def fit(self, X, Y, groups=None) -> OASRouter:
        """Fit the router on rows ``X`` with outcomes ``Y``, split by ``groups`` (``fit_router``).

        Args:
          X: shape ``(n, 11)`` features (module docstring), budget ``512 * X[:, 0]`` > 0.
          Y: shape ``(n, 4)`` outcomes in [0, 1], ``ACTIONS`` order.
          groups: shape ``(n,)`` group labels; None: every row its own group.

        Returns:
          ``self``, with ``router_`` and the other fitted attributes set.

        Raises:
          InputError (a ``ValueError``): a hyper-parameter or an input of the wrong shape or value.

        References: MODEL §8.
        """
        import jax

        from oas._fit import fit_router

        if Y is None:  # scikit-learn's wording, which its checks look for
            raise InputError(
                "OASRouter.fit requires y to be passed, but the target y is None: pass Y, shape "
                f"(n, {len(ACTIONS)}), the outcome of each action."
            )
        names = _column_names(X)
        x = self._check_x("fit", X)
        y = _check_y(Y, x.shape[0])
        g = (
            np.arange(x.shape[0]).astype(str)
            if groups is None
            else np.asarray(groups).astype(str).reshape(-1)
        )
        if g.shape[0] != x.shape[0]:
            raise InputError(
                f"OASRouter.fit: groups must have one label per row of X ({x.shape[0]}); got "
                f"{g.shape[0]}."
            )
        seed = self.random_state
        if (
            isinstance(seed, bool)
            or not isinstance(seed, (int, np.integer))
            or not (0 <= seed < 2**32)
        ):
            raise InputError(
                f"OASRouter.random_state must be an integer in [0, 2**32); got {seed!r}."
            )
        check_choice("OASRouter.variant", self.variant, VARIANTS)
        check_choice("OASRouter.packing", self.packing, PACKINGS)
        router = fit_router(
            jax.random.key(int(seed)),
            self._paired(x, y, g),
            alpha=self.alpha,
            n_folds=self.n_folds,
            calibration_fraction=self.calibration_fraction,
            **(
                {}
                if self.penalties is None
                else {"penalties": tuple(float(p) for p in np.asarray(self.penalties).reshape(-1))}
            ),
            packing=self.packing,
            provenance={"estimator": repr(self)},
        )
        self.router_ = router
        self.coef_ = router.coef
        self.intercept_ = router.intercept
        self.penalty_ = router.penalty
        self.actions_ = np.asarray(ACTIONS)
        self.n_features_in_ = len(FEATURE_NAMES)
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        return self

    def predict(self, X) -> np.ndarray:
        """The action ``variant`` chooses for each row: shape ``(n,)`` names from ``ACTIONS``.

        Equal to ``ACTIONS[router_.choose(X, 512 * X[:, 0], variant)]``.

        References: MODEL §8 (policy, calibrated variant).
        """
        chosen = self._choose(X)
        return self.actions_[chosen]

    def predict_utility(self, X) -> np.ndarray:
        """mu_a(z) of the ridge model: shape ``(n, 4)`` (``Router.utility``)."""
        router = self._fitted()
        return router.utility(self._check_x("predict_utility", X))

    def score(self, X, Y, sample_weight=None) -> float:
        """Mean outcome of the chosen action over the rows (the policy's accuracy; higher is better).

        Args:
          X: shape ``(n, 11)``; Y: shape ``(n, 4)`` outcomes; sample_weight: shape ``(n,)`` or None.
        """
        chosen = self._choose(X)
        y = _check_y(Y, chosen.shape[0])
        got = y[np.arange(chosen.shape[0]), chosen]
        return float(np.average(got, weights=sample_weight))

    # -- helpers -----------------------------------------------------------------------------

    def _fitted(self) -> Router:
        router = getattr(self, "router_", None)
        if router is None:
            message = (
                "This OASRouter instance is not fitted yet; call 'fit' with X, Y (and groups) "
                "before using this estimator."
            )
            try:  # scikit-learn's own error where it is installed (a ValueError and AttributeError)
                from sklearn.exceptions import NotFittedError
            except ImportError:
                raise InputError(message) from None
            raise NotFittedError(message)
        return router

    def _choose(self, X) -> np.ndarray:
        router = self._fitted()
        x = self._check_x("predict", X)
        check_choice("OASRouter.variant", self.variant, VARIANTS)
        return router.choose(x, 512.0 * x[:, 0], self.variant)

    def _check_x(self, where: str, X) -> np.ndarray:
        names = _column_names(X)
        if names is not None and tuple(names) != FEATURE_NAMES:
            raise InputError(
                f"OASRouter.{where}: the columns of X must be FEATURE_NAMES in order "
                f"{list(FEATURE_NAMES)}; got {list(names)}."
            )
        try:
            x = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"OASRouter.{where}: X must be numbers; {exc}.") from None
        p = len(FEATURE_NAMES)
        if x.ndim != 2 or x.shape[1] != p:
            raise InputError(
                f"OASRouter.{where}: X must have shape (n, {p}) (the features in FEATURE_NAMES "
                f"order); got {x.shape}."
            )
        if x.shape[0] == 0:
            raise InputError(f"OASRouter.{where}: X has 0 rows; expected at least one.")
        if not np.all(np.isfinite(x)):
            raise InputError(f"OASRouter.{where}: X must be finite (no NaN or inf).")
        bad = np.flatnonzero(~(x[:, 0] > 0))
        if bad.size:
            raise InputError(
                f"OASRouter.{where}: X[:, 0] is budget_over_512 and must be > 0; got "
                f"{x[bad[0], 0]!r} in row {int(bad[0])}."
            )
        return x

    def _paired(self, x: np.ndarray, y: np.ndarray, g: np.ndarray) -> PairedData:
        """The rows as ``PairedData`` (what ``fit_router`` takes); ids are the row numbers."""
        check_choice("OASRouter.vocabulary", self.vocabulary, tuple(VOCABULARIES))
        onehot = x[:, -_N_QUERY_TYPES:]
        if not np.all((onehot == 0) | (onehot == 1)) or not np.all(onehot.sum(1) == 1):
            raise InputError(
                "OASRouter.fit: X[:, 7:11] are the query-type one-hot features and must hold "
                "one 1 and three 0 per row."
            )
        types = np.asarray(VOCABULARIES[self.vocabulary], dtype=object)
        ids = np.arange(x.shape[0]).astype(str)
        return PairedData(
            instance_id=ids,
            query_id=ids,
            group_id=g,
            query_type=types[onehot.argmax(1)].astype(str),
            budget=512.0 * x[:, 0],
            outcomes=y,
            features=x,
            vocabulary=self.vocabulary,
        )


def _check_y(Y, n: int) -> np.ndarray:
    try:
        y = np.asarray(Y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"OASRouter: Y must be numbers; {exc}.") from None
    if y.shape != (n, len(ACTIONS)):
        raise InputError(
            f"OASRouter: Y must have shape ({n}, {len(ACTIONS)}) (one outcome per action, in the "
            f"order {list(ACTIONS)}); got {y.shape}."
        )
    if not np.all((y >= 0) & (y <= 1)):
        raise InputError("OASRouter: Y must hold outcomes in [0, 1] (no NaN).")
    return y


def _column_names(X) -> tuple[str, ...] | None:
    """The column names of a data frame (``X.columns``), None for an array."""
    columns = getattr(X, "columns", None)
    return None if columns is None else tuple(str(c) for c in columns)


def _same(a, b) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return a is b
