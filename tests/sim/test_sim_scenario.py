"""Scenario configs: presets, TOML loading, one-line errors naming the key."""

import dataclasses
import subprocess
import sys

import pytest

import sim
from retcon.errors import InputError
from retcon.vocab import LOCOMO_TYPES, LONGMEMEVAL_TYPES


def test_public_names_import():
    for name in sim.__all__:
        assert getattr(sim, name) is not None


@pytest.mark.parametrize("name", sim.PRESETS)
def test_presets_load_and_roundtrip(name):
    s = sim.load_scenario(name)
    assert s.name == name
    assert s.query_types == (LONGMEMEVAL_TYPES if name == "longmemeval-like" else LOCOMO_TYPES)
    assert sim.scenario_from_dict(s.to_dict()) == s


def test_default_is_locomo_like():
    assert sim.DEFAULT_PRESET == "locomo-like"
    assert sim.load_scenario(None) == sim.load_scenario("locomo-like")


def test_single_cluster_is_the_section_6_model():
    """MODEL §6: one record, no redundancy, oracle order, no distractors, prefix packing, g = 0."""
    s = sim.load_scenario("single-cluster")
    (t,) = [t for t in s.types if t.weight > 0]
    assert (t.records, t.redundancy, s.retriever.order, s.retriever.distractors, s.packing) == (
        1,
        0.0,
        "oracle",
        0,
        "prefix",
    )
    assert s.acc_guess == 0.0


def _write(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


def _base_toml():
    return sim.load_scenario("single-cluster").to_dict()


def _toml(d):
    """A tiny TOML writer for the scenario layout (nested tables and inline tables)."""
    lines, tables = [], []
    for k, v in d.items():
        if isinstance(v, dict):
            tables.append((k, v))
        else:
            lines.append(f"{k} = {_val(v)}")
    for k, v in tables:
        for k2, v2 in v.items():
            if isinstance(v2, dict):
                lines.append(f"[{k}.{k2}]")
                lines += [f"{k3} = {_val(v3)}" for k3, v3 in v2.items()]
        flat = {k2: v2 for k2, v2 in v.items() if not isinstance(v2, dict)}
        if flat:
            lines.append(f"[{k}]")
            lines += [f"{k2} = {_val(v2)}" for k2, v2 in flat.items()]
    return "\n".join(lines) + "\n"


def _val(v):
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_val(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_val(x) for x in v) + "]"
    return repr(v)


def test_toml_file_roundtrip(tmp_path):
    s = sim.load_scenario(_write(tmp_path, _toml(_base_toml())))
    assert s == sim.load_scenario("single-cluster")


@pytest.mark.parametrize(
    "edit, key, expected",
    [
        (
            lambda d: d["operators"]["merge"].update(colour=1),
            "operators.merge.colour",
            "expected one of",
        ),
        (lambda d: d.update(packing_mode="skip"), "packing_mode", "expected one of"),
        (
            lambda d: d["operators"]["merge"].update(compress_ratio="half"),
            "operators.merge.compress_ratio",
            "a string",
        ),
        (
            lambda d: d["operators"]["merge"].update(compress_ratio=1.3),
            "operators.merge.compress_ratio",
            "(0, 1]",
        ),
        (lambda d: d["reader"].update(acc_guess=-0.1), "reader.acc_guess", "[0, 1)"),
        (
            lambda d: d["types"]["single-hop"].update(records=2.5),
            "types.single-hop.records",
            "an integer",
        ),
        (
            lambda d: d["types"]["single-hop"]["length"].update(shape=-1.0),
            "types.single-hop.length.shape",
            "(0, inf)",
        ),
        (
            lambda d: d["retriever"].update(order="psychic"),
            "retriever.order",
            "['oracle', 'noisy']",
        ),
        (
            lambda d: d["operators"]["abstract"].update(fidelity=-0.5),
            "operators.abstract.fidelity.single-hop",
            "[0, inf)",
        ),
        (lambda d: d.update(packing="stack"), "packing", "['prefix', 'skip', 'cut']"),
    ],
)
def test_bad_toml_names_key_expected_and_given(tmp_path, edit, key, expected):
    d = _base_toml()
    edit(d)
    p = _write(tmp_path, _toml(d))
    with pytest.raises(InputError) as e:
        sim.load_scenario(p)
    msg = str(e.value)
    assert "\n" not in msg and "s.toml" in msg and key in msg and expected in msg


def test_bad_toml_exits_2_with_one_line(tmp_path):
    d = _base_toml()
    d["operators"]["merge"]["compress_ratio"] = 1.3
    p = _write(tmp_path, _toml(d))
    r = subprocess.run(
        [sys.executable, "-m", "retcon", "simulate", "--config", str(p), "--queries", "16"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "operators.merge.compress_ratio" in err[0] and "1.3" in err[0]
    assert r.stdout == ""


def test_dataclass_validates_itself():
    s = sim.load_scenario("single-cluster")
    with pytest.raises(
        InputError, match=r"operators.merge.compress_ratio must be in \(0, 1\]; got 0"
    ):
        dataclasses.replace(s.operators[0], compress_ratio=0.0)
    with pytest.raises(InputError, match="budgets must be strictly increasing"):
        dataclasses.replace(s, budgets=(10.0, 5.0))
    with pytest.raises(InputError, match="redundancy must be 0 when"):
        dataclasses.replace(s.types[0], redundancy=0.3)
    with pytest.raises(
        InputError, match="reader.acc_raw.single-hop must be above reader.acc_guess"
    ):
        dataclasses.replace(s, acc_guess=0.9)


def test_unknown_preset():
    with pytest.raises(InputError, match="unknown scenario 'nope'"):
        sim.load_scenario("nope")
