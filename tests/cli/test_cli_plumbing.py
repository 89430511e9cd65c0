"""The command line's shared plumbing (``retcon.cli``): the list type, the LLM options, the emit
helper, and the endpoint resolved from the environment in one place (issue 33, item 3)."""

from __future__ import annotations

import argparse
import json

import pytest

from oas.real import PairJob, resolve_endpoint
from retcon.commands.common import (
    JoinLists,
    add_llm_options,
    emit,
    list_type,
    llm_options,
    parse_list,
    wrote,
)
from retcon.errors import InputError

_ENV = (
    "RETCON_LLM_BASE_URL",
    "OPENAI_BASE_URL",
    "RETCON_LLM_MODEL",
    "RETCON_LLM_API_KEY",
    "OPENAI_API_KEY",
    "RETCON_EMBED_BASE_URL",
    "RETCON_EMBED_API_KEY",
)


@pytest.fixture
def clean_env(monkeypatch):
    for var in _ENV:
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("text", "expected"),
    [("32,64", [32.0, 64.0]), ("32 64", [32.0, 64.0]), (" 32, 64 ,", [32.0, 64.0]), ("1e3", [1e3])],
)
def test_parse_list_accepts_commas_and_spaces(text, expected):
    assert parse_list(text) == expected


@pytest.mark.parametrize(("text", "bad"), [("32,abc", "'abc'"), (",", "','"), ("", "''")])
def test_parse_list_names_what_was_expected_and_what_came(text, bad):
    with pytest.raises(argparse.ArgumentTypeError) as e:
        parse_list(text, int, what="budgets in tokens", example="32,64")
    msg = str(e.value)
    assert msg.startswith("expected budgets in tokens separated by commas (e.g. 32,64); got ")
    assert msg.endswith(bad)


def test_list_type_with_nargs_joins_every_token(capsys):
    p = argparse.ArgumentParser(prog="t")
    p.add_argument("--budgets", nargs="+", type=list_type(int), action=JoinLists)
    assert p.parse_args(["--budgets", "1,2", "3"]).budgets == [1, 2, 3]
    with pytest.raises(SystemExit):
        p.parse_args(["--budgets", "1", "x"])
    assert "argument --budgets: expected numbers separated by commas; got 'x'" in (
        capsys.readouterr().err
    )


def test_add_llm_options_round_trips_and_reads_no_environment(clean_env):
    clean_env.setenv("RETCON_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    clean_env.setenv("RETCON_LLM_MODEL", "m-env")
    p = argparse.ArgumentParser()
    add_llm_options(p)
    opts = llm_options(p.parse_args([]))
    assert opts["base_url"] is None and opts["model"] is None  # the library reads $RETCON_LLM_*
    opts = llm_options(p.parse_args(["--llm-base-url", "http://h:1/v1", "--llm-model", "m"]))
    assert opts["base_url"] == ["http://h:1/v1"] and opts["model"] == "m"


def test_pair_job_protocol_records_the_model_from_the_environment(clean_env, tmp_path):
    """With the model only in $RETCON_LLM_MODEL, the resume protocol still names it."""
    from oas.real._run import _endpoint

    clean_env.setenv("RETCON_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    clean_env.setenv("RETCON_LLM_MODEL", "m-env")
    job = PairJob("locomo", str(tmp_path / "p.jsonl"), operators="llm", llm={"model": None})
    endpoint = _endpoint(job)
    assert endpoint is not None and endpoint.model == "m-env"
    assert _endpoint(PairJob("locomo", str(tmp_path / "p.jsonl"))) is None


def test_embeddings_endpoint_resolves_in_the_same_function(clean_env):
    clean_env.setenv("RETCON_LLM_BASE_URL", "http://a:1/v1, http://b:2/v1")
    clean_env.setenv("RETCON_LLM_API_KEY", "k")
    cfg = resolve_endpoint(model="e", kind="embeddings", concurrency=1)
    assert cfg.base_url == "http://a:1/v1" and cfg.api_key == "k"
    clean_env.setenv("RETCON_EMBED_BASE_URL", "http://c:3/v1/")
    cfg = resolve_endpoint(model="e", kind="embeddings")
    assert cfg.base_url == "http://c:3/v1" and cfg.api_key == ""  # the key stays on its hosts
    with pytest.raises(InputError, match="needs a model name"):
        resolve_endpoint(kind="embeddings")
    with pytest.raises(InputError, match="kind must be one of"):
        resolve_endpoint("http://a:1/v1", "m", kind="images")


def test_emit_prints_json_or_text(capsys, tmp_path):
    emit(argparse.Namespace(json=True), {"a": float("nan")}, lambda: pytest.fail("text made"))
    assert json.loads(capsys.readouterr().out) == {"a": None}
    emit(argparse.Namespace(json=False), {}, "line")
    emit(argparse.Namespace(json=False), {}, "ends\n")
    assert capsys.readouterr().out == "line\nends\n"
    assert wrote(["a.json", "b.png"], tmp_path) == f"wrote a.json, b.png to {tmp_path}"
