"""``oas.OASRouter``, the scikit-learn-compatible estimator around the functional router (MODEL §8).

The independent reference is the functional API: ``fit_router`` with the same key on the same
rows, then ``Router.choose`` / ``Router.utility``. scikit-learn itself is only needed by the tests
that put the estimator in its machinery (``Pipeline``, ``cross_val_score``, ``estimator_checks``).
"""

import json
import pickle
import subprocess
import sys

import jax
import numpy as np
import pytest

import oas
from retcon.errors import InputError
from retcon.vocab import ACTIONS
from tests._data import needs_locomo
from tests._toy import TOY_BUDGETS, toy_paired

BUDGETS = TOY_BUDGETS


@pytest.fixture(scope="module")
def toy():
    return toy_paired()


@pytest.fixture(scope="module")
def fitted(toy):
    return oas.OASRouter(n_folds=3, random_state=2).fit(toy.features, toy.outcomes, toy.group_id)


def _same_as_functional(est, data, seed, **kw):
    """The estimator's predictions against ``fit_router`` + ``Router.choose`` on ``data``."""
    router = oas.fit_router(jax.random.key(seed), data, **kw)
    np.testing.assert_array_equal(est.coef_, router.coef)
    np.testing.assert_array_equal(est.intercept_, router.intercept)
    np.testing.assert_array_equal(est.penalty_, router.penalty)
    np.testing.assert_array_equal(est.predict_utility(data.features), router.utility(data.features))
    for variant in ("argmax", "calibrated", "crc"):
        chosen = router.choose(data.features, data.budget, variant)
        got = est.set_params(variant=variant).predict(data.features)
        np.testing.assert_array_equal(got, np.asarray(ACTIONS)[chosen])
        want = data.outcomes[np.arange(data.n), chosen].mean()
        assert est.score(data.features, data.outcomes) == pytest.approx(want, abs=1e-15)
    est.set_params(variant="calibrated")


def test_fit_predict_equals_the_functional_api(fitted, toy):
    assert fitted.n_features_in_ == 11 and list(fitted.actions_) == list(ACTIONS)
    _same_as_functional(fitted, toy, 2, n_folds=3)
    # the budget is read from feature 1 (B / 512), so tau_B is the one of each row's budget
    np.testing.assert_array_equal(512.0 * toy.features[:, 0], toy.budget)


def test_router_is_the_functional_router(fitted, toy, tmp_path):
    """``router_`` is a plain ``Router``: saved and loaded, it predicts what the estimator does."""
    back = oas.load_router(oas.save_router(tmp_path / "r.json", fitted.router_))
    np.testing.assert_array_equal(
        np.asarray(ACTIONS)[back.choose(toy.features, toy.budget, "calibrated")],
        fitted.predict(toy.features),
    )
    assert fitted.router_.fitted_groups is not None


def test_hyper_parameters_and_protocol(toy):
    est = oas.OASRouter(alpha=0.05, random_state=7)
    assert est.get_params()["alpha"] == 0.05 and est.get_params(deep=False)["random_state"] == 7
    assert est.set_params(alpha=0.2, n_folds=3) is est and est.alpha == 0.2
    assert repr(est) == "OASRouter(alpha=0.2, n_folds=3, random_state=7)"
    assert not [k for k in vars(est) if k.endswith("_")]  # __init__/set_params fit nothing
    with pytest.raises(ValueError, match="invalid parameter 'lamda'"):
        est.set_params(lamda=1.0)
    assert est.fit(toy.features, toy.outcomes, toy.group_id) is est
    first = est.predict(toy.features)
    np.testing.assert_array_equal(
        est.fit(toy.features, toy.outcomes, toy.group_id).predict(toy.features), first
    )
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(toy.features), first)
    # predictions are per row: order and subsets do not change a row's action
    perm = np.random.default_rng(0).permutation(toy.n)
    np.testing.assert_array_equal(est.predict(toy.features[perm]), first[perm])
    np.testing.assert_array_equal(est.predict(toy.features[:5]), first[:5])


def test_groups_none_is_one_group_per_row(toy):
    """Without groups every row is its own group, as scikit-learn's ungrouped estimators assume."""
    est = oas.OASRouter(n_folds=3, random_state=4).fit(toy.features, toy.outcomes)
    rows = toy._replace(group_id=np.arange(toy.n).astype(str))
    _same_as_functional(est, rows, 4, n_folds=3)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda x, y, g: (x[:, :10], y, g), r"X must have shape \(n, 11\).*got \(960, 10\)"),
        (lambda x, y, g: (x, y[:, :3], g), r"Y must have shape \(960, 4\).*got \(960, 3\)"),
        (lambda x, y, g: (x, y * 2, g), r"Y must hold outcomes in \[0, 1\]"),
        (lambda x, y, g: (np.where(x == x[0, 1], np.nan, x), y, g), "X must be finite"),
        (lambda x, y, g: (x * -1, y, g), r"X\[:, 0\] is budget_over_512 and must be > 0"),
        (lambda x, y, g: (x, y, g[:-1]), r"one label per row of X \(960\); got 959"),
        (lambda x, y, g: (x, None, g), "requires y to be passed"),
    ],
)
def test_bad_input_is_one_clear_line(toy, change, message):
    x, y, g = change(toy.features.copy(), toy.outcomes, toy.group_id)
    with pytest.raises(InputError, match=message) as err:
        oas.OASRouter().fit(x, y, g)
    assert "\n" not in str(err.value) and str(err.value).startswith("OASRouter")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"random_state": -1}, r"random_state must be an integer in \[0, 2\*\*32\); got -1"),
        ({"variant": "best"}, "OASRouter.variant must be one of"),
        ({"alpha": 1.5}, r"alpha must be in \[0, 1\); got 1.5"),
        ({"vocabulary": "msc"}, "OASRouter.vocabulary must be one of"),
    ],
)
def test_bad_hyper_parameter_is_named_at_fit(toy, params, message):
    est = oas.OASRouter(**params)  # stored as given, as scikit-learn requires
    with pytest.raises(InputError, match=message):
        est.fit(toy.features, toy.outcomes, toy.group_id)


def test_unfitted_predict_says_so():
    with pytest.raises(ValueError, match="not fitted yet"):
        oas.OASRouter().predict(np.ones((2, 11)))


def test_pipeline_and_grouped_cross_validation(toy, fitted):
    """A ``Pipeline`` step and ``cross_val_score`` with ``GroupKFold(5)``: each fold's score is the
    accuracy of a router fitted on the other folds' groups (the reference: the same fit by hand)."""
    pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.model_selection import GroupKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    x, y, g = toy.features, toy.outcomes, toy.group_id
    pipe = make_pipeline(FunctionTransformer(), oas.OASRouter(n_folds=3, random_state=2))
    np.testing.assert_array_equal(pipe.fit(x, y).predict(x)[:20], pipe[-1].predict(x)[:20])
    params = oas.OASRouter(n_folds=3, random_state=2).get_params()
    copy = clone(fitted)
    assert isinstance(copy, oas.OASRouter) and copy.get_params() == params
    assert not hasattr(copy, "router_")

    cv = GroupKFold(5)
    scores = cross_val_score(
        oas.OASRouter(n_folds=3, random_state=2), x, y, groups=g, cv=cv, params={"groups": g}
    )
    want = []
    for train, test in cv.split(x, y, g):
        router = oas.fit_router(jax.random.key(2), toy.take(train), n_folds=3)
        chosen = router.choose(x[test], toy.budget[test], "calibrated")
        want.append(y[test][np.arange(test.size), chosen].mean())
        assert not set(g[train]) & set(g[test])
    np.testing.assert_allclose(scores, want, atol=1e-15)
    assert len(scores) == 5


def test_scikit_learn_estimator_checks():
    """The checks of ``sklearn.utils.estimator_checks`` that apply to an estimator with a fixed
    data convention. The others generate random X of 1-10 columns and a 1-D y, which this
    estimator refuses by design (X is the 11 features, Y the 4 actions' outcomes); their
    equivalents on paired data are the tests above (fit returns self, idempotent fit, pickle,
    order and subset invariance, clone, no attribute set in ``__init__``)."""
    pytest.importorskip("sklearn", minversion="1.6")
    from sklearn.utils import estimator_checks as ec

    applicable = [
        "check_estimator_cloneable",
        "check_estimator_tags_renamed",
        "check_valid_tag_types",
        "check_estimator_repr",
        "check_no_attributes_set_in_init",
        "check_estimators_unfitted",
        "check_do_not_raise_errors_in_init_or_set_params",
        "check_mixin_order",
        "check_parameters_default_constructible",
        "check_get_params_invariance",
        "check_set_params",
        "check_fit1d",
        "check_requires_y_none",
    ]
    for name in applicable:
        getattr(ec, name)("OASRouter", oas.OASRouter())


def test_estimator_module_imports_neither_sklearn_nor_jax():
    code = (
        "import sys, oas; oas.OASRouter(); "
        "print(sorted(m for m in ('sklearn', 'jax') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.replace("'", '"')) == []


@pytest.mark.slow
@needs_locomo
def test_equals_the_functional_api_on_real_locomo_rows(tmp_path, capsys):
    """Real LoCoMo paired rows (lexical reader, two budgets, all ten conversations): the
    estimator's fit and predict are those of ``fit_router`` + ``Router.choose``."""
    from retcon.cli import main

    out = tmp_path / "paired.jsonl"
    argv = ["pair", "locomo", "--output", str(out), "--budgets", "64,512", "--no-progress", "-q"]
    assert main(argv) == 0
    capsys.readouterr()
    data = oas.read_paired(out)
    assert len(np.unique(data.group_id)) == 10
    est = oas.OASRouter(random_state=0).fit(data.features, data.outcomes, groups=data.group_id)
    _same_as_functional(est, data, 0)
