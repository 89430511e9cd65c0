"""``retcon pair simulate --groups G``: questions dealt over G groups (issue 30 item 7)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from retcon.cli import main
from retcon.commands.oas import _spread_over_groups
from retcon.errors import InputError


class _Rows(NamedTuple):
    query_id: np.ndarray
    group_id: np.ndarray


def test_questions_are_dealt_round_robin_and_never_split():
    q = np.array(["q5", "q5", "q1", "q1", "q9", "q2", "q2", "q9", "q7"])
    out = _spread_over_groups(_Rows(q, np.array(["c"] * q.size)), 3)
    # order of first appearance: q5 q1 q9 q2 q7 -> g0 g1 g2 g0 g1
    want = {"q5": "g0", "q1": "g1", "q9": "g2", "q2": "g0", "q7": "g1"}
    assert [want[x] for x in q] == out.group_id.tolist()
    for x in set(q.tolist()):
        assert len(set(out.group_id[q == x].tolist())) == 1
    with pytest.raises(InputError, match="--groups 6: the data has only 5 questions"):
        _spread_over_groups(_Rows(q, q), 6)


def test_groups_out_of_range_is_a_clear_error(tmp_path, capsys):
    rc = main(
        ["pair", "simulate", "--instances", "5", "--groups", "0", "--output", f"{tmp_path}/p.jsonl"]
    )
    assert rc == 2 and "--groups must be an integer in [1, --instances = 5]; got 0" in (
        capsys.readouterr().err
    )


def test_select_queries_limit_spreads_first_takes_the_head():
    """``pair --limit`` / ``--first`` (issue 36 item 4): the selection of ``oas.real._run``."""
    from types import SimpleNamespace

    from oas.real._run import select_queries

    convs = [SimpleNamespace(conversation_id=c) for c in "abc"]
    pairs = [(conv, f"{conv.conversation_id}{i}") for conv in convs for i in range(4)]
    ids = lambda sel: [q for _, q in sel]  # noqa: E731
    assert ids(select_queries(pairs)) == ids(pairs)
    assert ids(select_queries(pairs, first=5)) == ["a0", "a1", "a2", "a3", "b0"]
    assert ids(select_queries(pairs, limit=5)) == ["a0", "a1", "b0", "b1", "c0", "c1"]
    assert ids(select_queries(pairs, limit=3)) == ["a0", "b0", "c0"]
    assert ids(select_queries(pairs, limit=2)) == ["a0", "b0"]  # fewer than the conversations
    assert ids(select_queries(pairs, limit=100)) == ids(pairs)
