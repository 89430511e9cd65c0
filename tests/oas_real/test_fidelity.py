"""Fact survival (``retcon fidelity``, oas/real/_fidelity.py): the documented regular expressions
on hand-written texts, the identity operator keeps everything, a planted operator that drops
every date makes ``--require dates --min 0.9`` exit 1 naming it (MODEL §1, fidelity)."""

import numpy as np
import pytest
from scipy import stats

from oas.real import FACT_TYPES, Record, cluster_survival, extract_facts, summarise_survival
from tests._cli import run_cli
from tests._data import LOCOMO_PATH as LOCOMO
from tests._data import needs_locomo


@pytest.mark.parametrize(
    "text, kind, expected",
    [
        ("[1:56 pm on 8 May, 2023] hi", "dates", {"13:56", "2023-05-08"}),
        ("on May 8, 2023 and in June 2021", "dates", {"2023-05-08", "2021-06"}),
        ("met on 2023-05-08 at 09:15", "dates", {"2023-05-08", "09:15"}),
        (
            "I went yesterday; back two days ago, again last week",
            "dates",
            {"yesterday", "two days ago", "last week"},
        ),
        ("every Friday since 1999", "dates", {"friday", "1999"}),
        (
            "3 kids, three dogs, 1,500 dollars and 2.5 hours, 20%",
            "numbers",
            {"3", "1500", "2.5", "20%"},
        ),
        ("twenty-one? no: twenty", "numbers", {"21", "20"}),
        ("on 8 May, 2023 at 1:56 pm", "numbers", set()),  # dates are not numbers
        (
            "see ~/notes/todo.md, src/app.py and https://x.org/a?b=1",
            "identifiers",
            {"~/notes/todo.md", "src/app.py", "https://x.org/a?b=1"},
        ),
        (
            "mail ann@example.com or ping @annie, tag #pride, flight A113",
            "identifiers",
            {"ann@example.com", "@annie", "#pride", "a113"},
        ),
        (
            "Caroline: Hey Mel! I saw Caroline in Boston. Wow.",
            "names",
            {"mel", "caroline", "boston"},
        ),
        (
            "Good morning. I said Good things, then good ones.",
            "names",
            set(),
        ),  # "good" is lower too
    ],
)
def test_regexes_find_the_documented_facts(text, kind, expected):
    assert extract_facts(text)[kind] == expected


def test_reworded_date_and_spelled_number_still_match():
    raw = "[8 May, 2023] Caroline has 3 kids."
    rec = "On May 8 2023 Caroline said she has three kids."
    s = cluster_survival(raw, rec, group="g", operator="o")
    assert s.counts["dates"] == (1, 1) and s.counts["numbers"] == (1, 1)
    assert s.counts["names"] == (0, 0)  # "Caroline" only opens a sentence in the raw text


def test_identity_record_keeps_every_fact():
    raw = (
        "[1:56 pm on 8 May, 2023] Caroline: I met Mel in Boston yesterday, 3 of us.\n"
        "Melanie: saw it at ~/pics/a.png, flight B52, two days ago with Caroline."
    )
    s = cluster_survival(raw, raw, group="g", operator="identity")
    assert all(n > 0 and k == n for n, k in s.counts.values()), s.counts


def test_summary_interval_is_the_few_groups_t_interval():
    from oas.real import ClusterSurvival

    rows = []
    shares = {"a": (10, 7), "b": (20, 18), "c": (5, 1)}
    for g, (n, k) in shares.items():
        counts: dict[str, tuple[int, int]] = dict.fromkeys(FACT_TYPES, (0, 0))
        counts["dates"] = (n, k)
        rows.append(ClusterSurvival(g, "op", counts, {}))
    got = summarise_survival(rows)["op"]["dates"]
    per = np.array([k / n for n, k in shares.values()])
    half = stats.t.ppf(0.975, 2) * per.std(ddof=1) / np.sqrt(3)
    assert got.share == pytest.approx(per.mean())
    assert got.lower == pytest.approx(max(0.0, per.mean() - half))
    assert got.upper == pytest.approx(min(1.0, per.mean() + half))
    assert (got.facts, got.kept, got.groups) == (35, 26, 3)
    assert np.isnan(summarise_survival(rows)["op"]["numbers"].share)


class DropDates:
    """A planted operator: one record of the cluster's text with every date, time and relative
    time expression removed, undated (and everything else kept)."""

    name = "planted"

    @staticmethod
    def _strip(text):
        import re

        months = (
            "january|february|march|april|may|june|july|august|september|october|november|december"
        )
        text = re.sub(r"\[[^\]]*\]", " ", text)
        text = re.sub(r"\b\d{1,2}:\d\d\s*(?:[ap]m)?", " ", text, flags=re.I)
        text = re.sub(rf"\b\d{{1,2}}\s+(?:{months}),?\s+\d{{4}}", " ", text, flags=re.I)
        text = re.sub(
            rf"\b(?:{months}|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
            " ",
            text,
            flags=re.I,
        )
        text = re.sub(r"\b(?:19|20)\d\d\b", " ", text)
        text = re.sub(
            r"\b(?:yesterday|tomorrow|tonight|today|(?:last|next|this|past|coming)\s+\w+|"
            r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|several|\d+)\s+\w+\s+(?:ago|later|before|earlier))\b",
            " ",
            text,
            flags=re.I,
        )
        return text

    def _one(self, action, cluster):
        text = self._strip("\n".join(r.text for r in cluster))
        ids = tuple(r.record_id for r in cluster)
        return [Record(f"{action}:{ids[0]}", cluster[0].session_id, "", text, ids, action)]

    def merge(self, cluster, conversation):
        return self._one("merge", cluster)

    def abstract(self, cluster, conversation):
        return self._one("abstract", cluster)

    def rewrite(self, cluster, conversation):
        return self._one("rewrite", cluster)


@needs_locomo
def test_planted_operator_dropping_dates_fails_loud(monkeypatch, capsys):
    import oas.real._operators as ops

    real = ops.make_operators
    monkeypatch.setattr(
        ops,
        "make_operators",
        lambda name, **kw: DropDates() if name == "dataset" else real(name, **kw),
    )
    rc, out, err = run_cli(
        ["fidelity", "--data", str(LOCOMO), "--limit", "1", "--require", "dates", "--min", "0.9"],
        capsys,
    )
    assert rc == 1
    lines = err.strip().splitlines()
    assert sorted(lines) == sorted(
        f"retcon fidelity: planted:{a} keeps 0.0% of dates, below --min 0.9"
        for a in ("merge", "abstract", "rewrite")
    )
    assert "planted:merge" in out
    # numbers survive the planted operator: requiring them alone passes at a low bar
    rc, _, err = run_cli(
        ["fidelity", "--data", str(LOCOMO), "--limit", "1", "--require", "names", "--min", "0.5"],
        capsys,
    )
    assert rc == 0, err


@needs_locomo
def test_dataset_operators_on_locomo_report_every_type(capsys):
    import json

    rc, out, err = run_cli(["fidelity", "--data", str(LOCOMO), "--limit", "2", "--json"], capsys)
    assert rc == 0, err
    res = json.loads(out)
    assert set(res["survival"]) == {"dataset:merge", "dataset:abstract", "dataset:rewrite"}
    for by_type in res["survival"].values():
        assert set(by_type) == set(FACT_TYPES)
        d = by_type["dates"]
        assert d["facts"] > 100 and 0.0 <= d["lower"] <= d["share"] <= d["upper"] <= 1.0
    # abstract (session summaries) keeps fewer dates than the observations do
    assert (
        res["survival"]["dataset:abstract"]["dates"]["share"]
        < res["survival"]["dataset:merge"]["dates"]["share"]
    )


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--require", "dates"], "--require TYPES and --min X go together"),
        (["--require", "dates", "--min", "1.5"], "--min must be a share in [0, 1]"),
        (["--require", "colours", "--min", "0.5"], "unknown fact type 'colours'"),
        (["--operators", "llm"], "--operators"),
    ],
)
def test_bad_options_are_one_line(argv, needle, capsys):
    rc, out, err = run_cli(["fidelity", "--data", str(LOCOMO), *argv], capsys)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and needle in err


def test_loss_relation_against_a_hand_computation():
    """Two conversations, four temporal questions each: the per-conversation difference of mean
    replacement loss (lost a date minus kept all), computed by hand."""
    import oas
    from oas.real import ClusterSurvival, survival_loss_relation

    rows, paired = [], []
    # (conversation, question, dates (facts, kept), loss per fitting row, y_ret)
    spec = [
        ("c0", "q0", (2, 1), [1.0, 1.0]),
        ("c0", "q1", (2, 2), [0.0, 0.0]),
        ("c0", "q2", (1, 0), [0.0, 1.0]),
        ("c0", "q3", (3, 3), [1.0, 0.0]),
        ("c1", "q4", (2, 0), [1.0, 1.0]),
        ("c1", "q5", (1, 1), [0.0, 0.0]),
        ("c1", "q6", (4, 4), [0.0, 0.0]),
        ("c1", "q7", (0, 0), [1.0, 1.0]),  # no date: left out
    ]
    for g, q, dates, losses in spec:
        counts: dict[str, tuple[int, int]] = dict.fromkeys(FACT_TYPES, (0, 0))
        counts["dates"] = dates
        rows.append(ClusterSurvival(g, "merge", counts, {}, (f"{g}/{q}",)))
        for b, loss in zip((100, 200, 50), [*losses, 1.0]):  # budget 50 < 80 tokens: not fitting
            feats = dict.fromkeys(oas.FEATURE_NAMES, 0.0)
            feats.update({"budget_over_512": b / 512, "query_type_2": 1.0})
            paired.append(
                {
                    "instance_id": f"{g}/{q}@{b}",
                    "query_id": f"{g}/{q}",
                    "group_id": g,
                    "query_type": "temporal",
                    "budget": b,
                    "cluster_tokens": 80.0,
                    "y_ret": 1.0,
                    "y_merge": 1.0 - loss,
                    "y_abstract": 1.0,
                    "y_rewrite": 1.0,
                    **feats,
                }
            )
    rel = survival_loss_relation(rows, oas.paired_from_rows(paired), operator="merge")
    # c0: lost {q0: 1.0, q2: 0.5} mean 0.75; kept {q1: 0, q3: 0.5} mean 0.25 -> 0.5
    # c1: lost {q4: 1.0}; kept {q5: 0, q6: 0} -> 1.0
    per = np.array([0.5, 1.0])
    half = stats.t.ppf(0.975, 1) * per.std(ddof=1) / np.sqrt(2)
    assert rel.questions == 7 and rel.groups == 2
    assert rel.lost_share == pytest.approx(3 / 7)
    assert rel.loss_lost == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    assert rel.loss_kept == pytest.approx((0 + 0 + 0.5 + 0) / 4)
    assert rel.difference == pytest.approx(0.75)
    assert (rel.lower, rel.upper) == pytest.approx((0.75 - half, 0.75 + half))
