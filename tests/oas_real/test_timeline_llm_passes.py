"""Repeated consolidation with a later-pass backend (issue 21 item 3, MODEL §10): the stream
prefix used to bound a slow operator's calls, utility against passes against a hand count, and
`llm_pass_survival` routing passes 2 and later (and only those) to the given backend."""

import numpy as np
import pytest

from oas.real import _timeline as TL
from oas.real._operators import make_operators
from oas.real._types import Conversation, Query, Record, Session
from retcon.errors import InputError
from tests._data import LOCOMO_PATH, needs_locomo


@pytest.fixture(scope="module")
def conversations():
    from oas.real import load_locomo

    return load_locomo(LOCOMO_PATH).conversations


@needs_locomo
def test_stream_prefix_is_the_stream_at_that_time(conversations):
    """MODEL §10: the prefix at time t holds the first t sessions in date order and exactly the
    questions `stream_steps` asks at t; past the end it is the whole stream."""
    c = conversations[0]
    steps = TL.stream_steps(c)
    for t in (1, 3):
        p = TL.stream_prefix(c, t)
        assert {s.session_id for s in p.sessions} == set(steps[t - 1].session_ids)
        assert [q.query_id for q in p.queries] == [
            q.query_id for q in c.queries if q in steps[t - 1].queries
        ]
        assert TL.stream_steps(p)[-1].queries == steps[t - 1].queries
    whole = TL.stream_prefix(c, 10_000)
    assert len(whole.sessions) == len(c.sessions)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InputError, match="sessions must be an integer"):
            TL.stream_prefix(c, bad)  # type: ignore[arg-type]


def _rec(sid, i, text, date="1 May 2023"):
    return Record(f"{sid}:{i}", sid, date, text, (f"{sid}:{i}",))


def test_utility_by_passes_against_a_hand_count():
    """MODEL §10 / §2: units packed most recent first under prefix packing, the lexical reader on
    the units packed whole. Hand count on three one-record sessions."""
    sessions = tuple(
        Session(sid, f"1:00 pm on {d} May, 2023", (_rec(sid, 1, text),))
        for sid, d, text in (("S1", 1, "alpha"), ("S2", 2, "beta"), ("S3", 3, "gamma"))
    )
    queries = tuple(
        Query(f"q{i}", "c", "?", ans, "single-hop", (f"{sid}:1",))
        for i, (ans, sid) in enumerate((("alpha", "S1"), ("beta", "S2"), ("gamma", "S3")))
    )
    conv = Conversation("c", sessions, queries)
    # pass 0: 1 token each; pass 1: S3 grows to 3 tokens and S2 loses its answer
    chain = {"S1": ["alpha", "alpha"], "S2": ["beta", "delta"], "S3": ["gamma", "gamma x y"]}
    u = TL.utility_by_passes(conv, chain, [1.0, 2.0, 3.0, 5.0])
    # k = 0, most recent first S3, S2, S1 (1 token each): B = 1 -> gamma; 2 -> + beta; 3, 5 -> all
    # k = 1, S3 = 3 tokens: B < 3 packs nothing (prefix stops); B = 3 -> gamma; B = 5 -> + S2
    # (delta, not beta) + S1 (alpha)
    want = np.array([[1 / 3, 0], [2 / 3, 0], [1, 1 / 3], [1, 2 / 3]])
    np.testing.assert_allclose(u, want)


class _Counting:
    """A later-pass backend that delegates to ``extractive`` and counts the calls it gets."""

    name = "counting"

    def __init__(self):
        self.inner = make_operators("extractive")
        self.calls = 0

    def _run(self, action, records, conversation):
        self.calls += 1
        return getattr(self.inner, action)(records, conversation)

    def rewrite(self, cluster, conversation):
        return self._run("rewrite", cluster, conversation)

    def merge(self, cluster, conversation):
        return self._run("merge", cluster, conversation)

    def abstract(self, cluster, conversation):
        return self._run("abstract", cluster, conversation)


@needs_locomo
@pytest.mark.slow
def test_llm_pass_survival_routes_later_passes_to_the_backend(conversations):
    """Passes 2..K go to the backend and pass 1 does not: a backend doing what ``extractive``
    does gives the extractive figures exactly, after one call per non-empty unit and later pass."""
    convs = conversations[:2]
    backend = _Counting()
    r = TL.llm_pass_survival(
        convs, backend, operators=("merge",), passes=3, sessions=2, budgets=(64.0, 4096.0)
    )
    assert r["conversations"] == 2 and r["sessions"] == 2
    ext, cnt = (
        r["results"]["extractive/merge/extractive"],
        r["results"]["extractive/merge/counting"],
    )
    assert ext["survival"]["survival"] == cnt["survival"]["survival"]
    assert ext["utility"] == cnt["utility"]
    assert len(ext["survival"]["survival"]) == 4
    for cell in ext["utility"][1]["cells"]:
        assert cell["passes"] in range(4)
    # survival + utility each build the chains once: 2 convs x 2 sessions x passes 2..3
    assert backend.calls == 2 * (2 * 2 * 2)
    with pytest.raises(InputError, match="passes must be an integer in"):
        TL.llm_pass_survival(convs, backend, passes=1)
    with pytest.raises(InputError, match="first must be one of"):
        TL.llm_pass_survival(convs, backend, first="llm")


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--llm-sessions", "3"], "--llm-sessions needs an LLM endpoint"),
        (["--llm-conversations", "2"], "--llm-conversations needs an LLM endpoint"),
        (
            [
                "--llm-base-url",
                "http://127.0.0.1:9/v1",
                "--llm-model",
                "m",
                "--llm-operators",
                "merge,bogus",
            ],
            "--llm-operators must list operators of",
        ),
        (
            ["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--llm-sessions", "0"],
            "--llm-sessions must be an integer >= 1",
        ),
        (
            ["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--passes", "1"],
            "the llm passes need --passes >= 2",
        ),
    ],
)
def test_timeline_locomo_llm_options_bad_input(extra, needle, tmp_path, monkeypatch, capsys):
    """Bad llm-pass options exit 2 with one line, before the data are read or a call is made."""
    from retcon.cli import main

    for var in ("RETCON_LLM_BASE_URL", "OPENAI_BASE_URL", "RETCON_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    data = tmp_path / "locomo10.json"
    data.write_text("not read")
    rc = main(["timeline", "locomo", "--data", str(data), *extra])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and needle in err and len(err.splitlines()) == 1, err


def test_survival_report_when_no_question_survives_a_pass():
    """MODEL §10 (H10 fits): when every question is lost at the first pass, the maximum-likelihood
    phi of the geometric law is 0; the fit must get there without overflowing (a real model's
    passes on two one-session conversations drove the optimiser's logit to -745)."""
    s = TL.Survival(
        np.array([[3.0, 0, 0, 0], [2.0, 0, 0, 0]]), np.array([3.0, 2.0]), np.ones((2, 4))
    )
    r = TL.survival_report(s)
    assert r["fits"]["geometric"]["phi"] < 1e-3
    assert r["verdict"] == "undecided"  # two conversations
    assert [c["mean"] for c in r["survival"]] == [1.0, 0.0, 0.0, 0.0]
