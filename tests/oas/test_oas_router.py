"""Router export (MODEL §8): JSON round trip, numpy-only prediction, informative load errors."""

import json
import subprocess
import sys

import jax
import numpy as np
import pytest

import oas
from oas._fit import fit_router, group_split
from retcon.errors import InputError
from tests._toy import TOY_BUDGETS, toy_paired

BUDGETS = TOY_BUDGETS


@pytest.fixture(scope="module")
def toy():
    return toy_paired()


@pytest.fixture(scope="module")
def router(toy):
    return fit_router(jax.random.key(2), toy, alpha=0.1, n_folds=3)


def test_round_trip_is_exact(router, toy, tmp_path):
    path = oas.save_router(tmp_path / "r.json", router)
    back = oas.load_router(path)
    for name in ("mean", "scale", "coef", "intercept", "penalty"):
        np.testing.assert_array_equal(getattr(back, name), getattr(router, name))
    for th in ("calibrated", "crc"):
        np.testing.assert_array_equal(getattr(back, th).tau, getattr(router, th).tau)
        np.testing.assert_array_equal(getattr(back, th).budgets, getattr(router, th).budgets)
    for variant in ("argmax", "calibrated", "crc"):
        np.testing.assert_array_equal(
            back.choose(toy.features, toy.budget, variant),
            router.choose(toy.features, toy.budget, variant),
        )
    obj = json.loads(path.read_text())
    assert obj["feature_names"] == list(oas.FEATURE_NAMES) and obj["provenance"]["n_train"] > 0
    assert "pickle" not in path.read_text()


def test_utility_matches_ridge_prediction(router, toy):
    """mu = intercept + coef @ standardized features: the router's numpy formula."""
    z = (toy.features - router.mean) / router.scale
    np.testing.assert_allclose(router.utility(toy.features), router.intercept + z @ router.coef.T)
    np.testing.assert_allclose(router.utility(toy.features[0]), router.utility(toy.features)[0])


def test_fit_uses_disjoint_groups(toy):
    part = group_split(jax.random.key(2), toy.group_id, (0.7, 0.3))
    assert not set(toy.group_id[part == 0]) & set(toy.group_id[part == 1])
    assert set(np.unique(part)) == {0, 1}


def test_prediction_path_imports_no_jax(router, toy, tmp_path):
    """A deployed agent loads the router and predicts with numpy only (no JAX import)."""
    path = oas.save_router(tmp_path / "r.json", router)
    data = tmp_path / "d.jsonl"
    oas.write_paired(data, toy.take(np.arange(10)))
    code = (
        f"import sys, oas; r = oas.load_router({str(path)!r}); d = oas.read_paired({str(data)!r}); "
        f"print(r.choose(d.features, d.budget, 'crc').tolist()); assert 'jax' not in sys.modules, 'jax'; "
        f"import retcon.cli as c, retcon.commands.oas as o; p = c.ArgumentParser(); o.register(p.add_subparsers()); "
        f"a = p.parse_args(['predict', '--router', {str(path)!r}, '--data', {str(data)!r}, "
        f"'--decisions', {str(tmp_path / 'p.jsonl')!r}, '--allow-overlap']); a.func(a); assert 'jax' not in sys.modules, 'jax via cli'"
    )
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert (
        json.loads(out.stdout.splitlines()[0])
        == router.choose(toy.features[:10], toy.budget[:10], "crc").tolist()
    )


def test_load_errors_name_the_field(router, tmp_path):
    obj = router.to_json()
    bad = dict(obj, coefficients=[[0.0] * 11] * 3)
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(
        InputError, match=r"field .coefficients. must be a list of numbers of shape \(4, 11\)"
    ):
        oas.load_router(tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text(json.dumps(dict(obj, feature_names=["x"])))
    with pytest.raises(InputError, match="feature_names"):
        oas.load_router(tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(InputError, match="not valid JSON"):
        oas.load_router(tmp_path / "bad.json")
    with pytest.raises(InputError, match="no such router file"):
        oas.load_router(tmp_path / "missing.json")


def test_router_records_its_groups_and_refuses_them(router, toy, caplog):
    """MODEL §8 scores held-out groups only: the router file records its training and calibration
    groups (sha256 digests), evaluation on them is refused unless allowed, and a file written
    before the record existed warns that the overlap cannot be checked."""
    from dataclasses import replace

    from oas._router import check_router_overlap, group_digests, router_from_json

    fg = router.fitted_groups
    assert fg is not None and not set(fg["train"]) & set(fg["calibration"])
    assert set(fg["train"]) | set(fg["calibration"]) == set(group_digests(toy.group_id))
    again = router_from_json(json.loads(json.dumps(router.to_json())))
    assert again.fitted_groups == fg
    with pytest.raises(InputError, match="were used to fit the router"):
        check_router_overlap(router, toy.group_id)
    ov = check_router_overlap(router, toy.group_id, allow_overlap=True)
    assert ov["train"] == len(fg["train"]) and ov["calibration"] == len(fg["calibration"])
    assert "in-sample" in caplog.text
    fresh = check_router_overlap(router, np.array(["a-new-group"]))
    assert fresh == {"checked": True, "groups": 1, "train": 0, "calibration": 0}
    caplog.clear()
    old = json.loads(json.dumps(router.to_json()))
    del old["fitted_groups"]
    legacy = router_from_json(old)
    assert legacy.fitted_groups is None
    assert not check_router_overlap(legacy, toy.group_id)["checked"]
    assert "cannot be checked" in caplog.text
    with pytest.raises(InputError, match="16 hex digits"):
        replace(router, fitted_groups={"train": ("xyz",), "calibration": ()})
    old["fitted_groups"] = {"digest": "sha256-16", "train": ["nothex"], "calibration": []}
    with pytest.raises(InputError, match="fitted_groups.train"):
        router_from_json(old)
