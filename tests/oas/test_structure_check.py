"""The ``evidence_structure`` cell check (docs/paired-data.md, MODEL §3): its one-pass common case
against the value-by-value check that names a bad value."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from retcon.vocab import ACTIONS

_CELL_VALUES = [
    1,
    2,
    7.5,
    1e300,
    10**400,
    0,
    -3,
    0.0,
    1.0,
    True,
    False,
    float("nan"),
    float("inf"),
    "3",
    None,
    [1],
    np.float64(2.0),
    np.int64(1),
]


@given(
    lengths=st.lists(st.sampled_from(_CELL_VALUES), min_size=1, max_size=4),
    flags=st.lists(st.sampled_from(_CELL_VALUES), min_size=1, max_size=4),
)
def test_check_structure_fast_path_is_the_value_by_value_check(lengths, flags):
    """docs/paired-data.md (MODEL §3 structure cells): the one-pass check of a cell's lengths and
    flags accepts, converts and refuses (same message) exactly as the value-by-value loop."""
    from oas._structure import _checked_flags, _checked_lengths, check_structure
    from retcon.errors import InputError

    k = min(len(lengths), len(flags))
    ln, ev = lengths[:k], flags[:k]
    at = "p.jsonl:3: field 'evidence_structure'"

    def reference():
        return _checked_lengths(ln, at, "ret"), _checked_flags(ev, at, "ret")

    cell = {
        "packing": "cut",
        "lengths": {a: list(ln) if a == "ret" else [2.0] for a in ACTIONS},
        "evidence": {a: list(ev) if a == "ret" else [0] for a in ACTIONS},
    }
    try:
        want = reference()
    except (InputError, OverflowError) as e:
        with pytest.raises(type(e)) as got:
            check_structure(cell, "p.jsonl", 3)
        assert str(got.value) == str(e)
        return
    out = check_structure(cell, "p.jsonl", 3)
    assert (out["lengths"]["ret"], out["evidence"]["ret"]) == want
    assert [type(x) for x in out["lengths"]["ret"]] == [float] * k
    assert [type(x) for x in out["evidence"]["ret"]] == [int] * k
