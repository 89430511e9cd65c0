"""The report of memory over time (MODEL §10): `oas.TimelineReport` and its text, the pass
chains built once (`oas.real.pass_chains`) and read by the report, router and identify, the llm
pass options (`oas.real.LLMPasses`), and the three subcommands of ``retcon timeline``."""

import json

import pytest

from oas.real._timeline import timeline_report
from oas.real._timeline_router import timeline_router_report
from retcon.errors import InputError
from tests._cli import run_cli as _run
from tests._data import LOCOMO_PATH, needs_locomo


def test_timeline_help_lists_the_three_forms(capsys):
    """`retcon timeline --help` names simulate, locomo and identify, and says the bare form runs
    `timeline simulate`."""
    rc, out, _ = _run(["timeline", "--help"], capsys)
    assert rc == 0
    for form in ("simulate", "locomo", "identify"):
        assert f"    {form}  " in out, out
    assert "no subcommand runs `timeline simulate" in " ".join(out.split())


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["timeline", "simulate", "--data", "x.json"], "--data"),
        (["timeline", "--data", "x.json"], "locomo|identify"),
        (["timeline", "locomo", "--scenario", "x", "--data", "x.json"], "--scenario"),
        (["timeline", "locomo", "--queries", "5", "--data", "x.json"], "--queries"),
        (["timeline", "identify", "--data", "x.json", "--llm-base-url", "u"], "--llm-base-url"),
        (["timeline", "identify", "--data", "x.json", "--resamples", "5"], "--resamples"),
        (["timeline", "identify"], "--data"),
        (["timeline", "locomo", "--data", "x.json", "--identify"], "retcon timeline identify"),
    ],
)
def test_each_form_takes_only_its_options(argv, needle, capsys):
    """argparse owns which options go with which form: one line naming the option, exit 2."""
    rc, out, err = _run(argv, capsys)
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], err


def test_bare_timeline_parses_as_timeline_simulate():
    """`retcon timeline [options]` reads the same options into the same values as
    `retcon timeline simulate [options]`, and runs the same function."""
    from retcon.cli import build_parser
    from retcon.commands.timeline import run_simulated

    opts = ["--scenario", "single-cluster-stream", "--policy", "router", "--budgets", "512"]
    opts += ["--queries", "16", "--resamples", "5", "--json", "--seed", "4", "-q"]
    bare = vars(build_parser().parse_args(["timeline", *opts]))
    sub = vars(build_parser().parse_args(["timeline", "simulate", *opts]))
    assert bare.pop("timeline_command") is None and sub.pop("timeline_command") == "simulate"
    assert bare.pop("func") is sub.pop("func") is run_simulated
    assert {k: bare[k] for k in sub} == sub
    assert sub["budgets"] == [512.0] and sub["queries"] == 16 and sub["seed"] == 4


@pytest.mark.slow
def test_bare_timeline_is_timeline_simulate(capsys):
    """`retcon timeline [options]` (scripts written before the subcommands) prints the same bytes
    as `retcon timeline simulate [options]`."""
    opts = ["--queries", "16", "--resamples", "5", "--budgets", "512", "2048", "--json"]
    rc1, bare, err1 = _run(["timeline", *opts, "--seed", "2"], capsys)
    rc2, sub, err2 = _run(["timeline", "simulate", *opts, "--seed", "2"], capsys)
    assert rc1 == rc2 == 0, (err1, err2)
    assert bare == sub
    rep = json.loads(sub)
    assert rep["queries"] == 16 and rep["seed"] == 2 and rep["budgets"] == [512.0, 2048.0]


def test_report_json_order_and_text_writers():
    """`TimelineReport.as_json` lays the tables out in the order of the users' JSON (simulated:
    header, utility, crossover, by_generation, router, seed; LoCoMo: header, survival,
    geometric_verdicts, utility, crossover, crossover_policy, llm_passes, router, seed), and
    `timeline_text` writes each table."""
    from oas import TimelineReport, timeline_text

    util = [{"policy": "retain-all", "operator": None, "budget": 256.0, "utility": [0.5, 0.25]}]
    util[0] |= {"lower": [0.4, 0.2], "upper": [0.6, 0.3]}
    cross = [
        {"operator": "merge", "budget": 256.0, "crossover_time": None, "lower": None}
        | {"upper": None, "status": "none", "found_share": 0.0, "first_win": None}
    ]
    surv = {
        "extractive/merge": {
            "survival": [{"passes": 0, "mean": 1.0, "lower": 1.0, "upper": 1.0}]
            + [{"passes": 1, "mean": 0.5, "lower": 0.25, "upper": 0.75}],
            "fits": {"geometric": {"phi": 0.5, "c": 1.0}},
            "loco_gain_over_geometric": {"levels-off": {"mean": 0.1, "lower": -0.2, "upper": None}},
            "verdict": "undecided",
        }
    }
    head = {"dataset": "locomo", "conversations": 2, "passes": 1, "budgets": [256.0]}
    rep = TimelineReport("locomo", head, util, cross, survival=surv, seed=7)
    d = rep.as_json()
    assert list(d) == [
        *head,
        "survival",
        "geometric_verdicts",
        "utility",
        "crossover",
        "crossover_policy",
        "seed",
    ]
    assert d["geometric_verdicts"] == {"extractive/merge": "undecided"}
    text = timeline_text(rep._replace(router={"gains": []}))
    assert "k=1: 0.500 [0.250, 0.750]" in text  # survival table
    assert "merge" in text and "none (none)" in text  # crossover table
    assert "retain-all" in text and "0.375" in text  # utility table: mean over the sessions
    assert "Router over time" in text and "conversations" in text


def test_llm_passes_checks_each_option():
    """`LLMPasses.checked`: the value checks of the llm pass options, one named error each."""
    from oas.real import LLMPasses

    ok = LLMPasses.checked("merge, abstract", 3, sessions=2)
    assert ok == LLMPasses(("merge", "abstract"), 3, 2, None)
    for kw, words in [
        ({"operators": "merge,bogus"}, "--llm-operators"),
        ({"operators": ""}, "--llm-operators"),
        ({"sessions": 0}, "--llm-sessions"),
        ({"conversations": 0}, "--llm-conversations"),
        ({"passes": 1}, "--passes >= 2"),
    ]:
        args = {"operators": "merge", "passes": 3} | kw
        with pytest.raises(InputError, match=words):
            LLMPasses.checked(**args)


@pytest.fixture(scope="module")
def three():
    from oas.real import load_locomo
    from oas.real._timeline import stream_prefix

    convs = load_locomo(LOCOMO_PATH).conversations[:3]
    return [stream_prefix(c, 4) for c in convs]


@needs_locomo
@pytest.mark.slow
def test_chains_built_once_give_the_same_reports(three):
    """The report, router and identify read the chains they are given (`pass_chains`), with
    the same result as when they build them; chains of other passes are refused."""
    from oas import real

    chains = real.pass_chains(three, 2)
    kw = {"passes": 2, "budgets": (256.0, 1024.0)}
    assert real.pass_chains(three, 2).by_first == chains.by_first  # deterministic
    a = timeline_report(three, resamples=4, **kw)
    b = timeline_report(three, resamples=4, chains=chains, **kw)
    assert json.dumps(a, default=str) == json.dumps(b, default=str)
    a = timeline_router_report(three, **kw)
    b = timeline_router_report(three, chains=chains, **kw)
    assert json.dumps(a, default=str) == json.dumps(b, default=str)
    a = real.timeline_identify(three, **kw)
    b = real.timeline_identify(three, chains=chains, **kw)
    assert json.dumps(a, default=str) == json.dumps(b, default=str)
    with pytest.raises(InputError, match="built for 2 passes"):
        timeline_report(three, passes=3, chains=chains)
    merge = chains.of("extractive", "merge")
    assert len(merge) == 3 and all(len(t) == 3 for ch in merge for t in ch.values())


def _doc_commands(text: str) -> list[str]:
    """Every ``retcon timeline`` command of a page: code-block lines (with ``\\`` continuations,
    comments dropped) and inline code spans, whitespace joined."""
    import re

    text = text.replace("\\\n", " ")
    found = []
    for block in re.findall(r"```\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            if line.startswith("retcon timeline"):
                found.append(line.split("#")[0])
    text = re.sub(r"```\n.*?```", "", text, flags=re.S)
    found += [s for s in re.findall(r"`([^`]+)`", text) if s.startswith("retcon timeline")]
    # a form's bare name in prose (`retcon timeline locomo`) names it; a command has options
    return [" ".join(c.split()) for c in found if len(c.split()) > 3]


def test_every_timeline_command_of_the_docs_parses():
    """docs/timeline.md and README.md: every `retcon timeline` line is spelled as the subcommands
    take it (parsed, not run: the runs take minutes; `DIR`, `URL`, `S` filled in)."""
    import shlex
    from pathlib import Path

    from retcon.cli import build_parser

    root = Path(__file__).resolve().parents[2]
    cmds = []
    for page in ("docs/timeline.md", "README.md", "docs/identify.md"):
        cmds += _doc_commands((root / page).read_text(encoding="utf-8"))
    assert len(cmds) >= 20, cmds
    assert any(c.startswith("retcon timeline identify") for c in cmds)
    bad = []
    for cmd in cmds:
        argv = shlex.split(
            cmd.replace(" DIR", " out").replace(" URL", " http://x/v1").replace("seed S", "seed 1")
        )[1:]
        try:
            assert build_parser().parse_args(argv).command == "timeline"
        except SystemExit:
            bad.append(cmd)
    assert not bad, bad
