"""The optional ``evidence_structure`` column of paired data: every action's context before packing.

One JSON object per row::

    {"packing": "prefix",
     "lengths":  {"ret": [..], "merge": [..], "abstract": [..], "rewrite": [..]},
     "evidence": {"ret": [1, 0, ..], "merge": [..], "abstract": [..], "rewrite": [..]}}

``lengths[a]`` are the token lengths of the records of action ``a``'s context in packing
(retriever) order, distractors included; ``evidence[a]`` flags (0/1) the records that carry the
query's evidence: the raw evidence units for ``ret``, the generated record(s) for an operator. With
the row's budget and the packing mode this fixes which evidence units fit, whole or cut, under
each action: what ``oas.identify`` needs to fit the reader of MODEL §2 and to predict
``dU(B)`` at other budgets. ``retcon pair simulate`` and ``retcon pair locomo`` write it.

References: MODEL §2 (packing, support), docs/paired-data.md.
"""

from __future__ import annotations

import json
import math

import numpy as np

from retcon.errors import InputError
from retcon.vocab import ACTIONS
from theory import PACKINGS

STRUCTURE_COLUMN = "evidence_structure"


def check_structure(value, path, line: int) -> dict:
    """Validate one ``evidence_structure`` cell (a dict, or its JSON text in CSV); return it clean.

    Raises:
      InputError: naming ``path:line``, the field and what was wrong.
    """
    field = STRUCTURE_COLUMN
    at = f"{path}:{line}: field {field!r}"
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise InputError(f"{at} must be a JSON object; got {value[:40]!r}.") from None
    if not isinstance(value, dict):
        raise InputError(f"{at} must be an object; got {type(value).__name__}.")
    extra = sorted(set(value) - {"packing", "lengths", "evidence"})
    if extra:
        raise InputError(f"{at} has unknown key {extra[0]!r}; expected packing, lengths, evidence.")
    packing = value.get("packing")
    if packing not in PACKINGS:
        raise InputError(f"{at}.packing must be one of {list(PACKINGS)}; got {packing!r}.")
    out: dict = {"packing": packing, "lengths": {}, "evidence": {}}
    for part in ("lengths", "evidence"):
        d = value.get(part)
        if not isinstance(d, dict) or sorted(d) != sorted(ACTIONS):
            got = sorted(d) if isinstance(d, dict) else type(d).__name__
            raise InputError(f"{at}.{part} must map each of {list(ACTIONS)} to a list; got {got}.")
    for a in ACTIONS:
        ln, ev = value["lengths"][a], value["evidence"][a]
        if not isinstance(ln, (list, tuple)) or not isinstance(ev, (list, tuple)):
            raise InputError(f"{at}.lengths/evidence[{a!r}] must be lists.")
        if len(ln) != len(ev):
            raise InputError(
                f"{at}: lengths[{a!r}] has {len(ln)} records, evidence[{a!r}] {len(ev)}; "
                f"expected one flag per record."
            )
        # the common case in one pass (ints or floats, finite and > 0); otherwise the loop below
        # names the first bad value
        if all((type(x) is float or type(x) is int) and 0 < x < math.inf for x in ln):
            lens = [float(x) for x in ln]
        else:
            lens = _checked_lengths(ln, at, a)
        if all(type(x) is int and x in (0, 1) for x in ev):
            flags = list(ev)
        else:
            flags = _checked_flags(ev, at, a)
        out["lengths"][a], out["evidence"][a] = lens, flags
    # A retrieval miss: the retriever did not return the query's evidence (all of it, MODEL §2's
    # reader needs every unit), so no context holds it. Written as no flag under any action; the
    # support is then 0 under every action and the row scores the guessing accuracy g.
    if not any(out["evidence"]["ret"]):
        flagged = [a for a in ACTIONS if any(out["evidence"][a])]
        if flagged:
            raise InputError(
                f"{at}.evidence['ret'] flags no record (a retrieval miss) but "
                f"evidence[{flagged[0]!r}] flags one; a row whose raw context holds none of the "
                f"evidence flags none under every action (docs/paired-data.md)."
            )
    return out


def _checked_lengths(ln, at: str, a: str) -> list[float]:
    """``ln`` as floats, or ``InputError`` naming its first value that is not a token length."""
    lens = []
    for x in ln:
        if (
            isinstance(x, bool)
            or not isinstance(x, (int, float))
            or not -math.inf < x < math.inf  # NaN and infinities; a huge int is finite
            or x <= 0
        ):
            raise InputError(f"{at}.lengths[{a!r}] must hold token lengths > 0; got {x!r}.")
        lens.append(float(x))
    return lens


def _checked_flags(ev, at: str, a: str) -> list[int]:
    """``ev`` as 0/1 ints, or ``InputError`` naming its first value that is not a flag."""
    flags = []
    for x in ev:
        if x not in (0, 1):
            raise InputError(f"{at}.evidence[{a!r}] must hold 0/1 flags; got {x!r}.")
        flags.append(int(bool(x)))
    return flags


def make_structure(packing: str, lengths: dict, evidence: dict) -> dict:
    """An ``evidence_structure`` cell from per-action lengths and 0/1 evidence flags (validated)."""
    cell = {
        "packing": packing,
        "lengths": {a: [float(x) for x in lengths[a]] for a in ACTIONS},
        "evidence": {a: [int(bool(x)) for x in evidence[a]] for a in ACTIONS},
    }
    return check_structure(cell, "make_structure", 0)


def structures_from_arrays(lengths, evidence, packing: str) -> np.ndarray:
    """``(n,)`` object array of cells from padded ``(n, 4, N)`` lengths and flags (0 = padding)."""
    lengths = np.asarray(lengths, np.float64)
    evidence = np.asarray(evidence, bool)
    out = np.empty(lengths.shape[0], dtype=object)
    for i in range(lengths.shape[0]):
        keep = lengths[i] > 0
        out[i] = {
            "packing": packing,
            "lengths": {a: lengths[i, j][keep[j]].tolist() for j, a in enumerate(ACTIONS)},
            "evidence": {
                a: evidence[i, j][keep[j]].astype(int).tolist() for j, a in enumerate(ACTIONS)
            },
        }
    return out


def structure_arrays(cells) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Padded ``(lengths (n, 4, N), evidence (n, 4, N), packing (n,))`` from validated cells.

    Raises:
      InputError: a row without the column (``None``).
    """
    cells = list(cells)
    for i, c in enumerate(cells):
        if c is None:
            raise InputError(
                f"row {i + 1} has no {STRUCTURE_COLUMN!r}; identification needs it in every row "
                f"(docs/paired-data.md)."
            )
    n_max = max((len(c["lengths"][a]) for c in cells for a in ACTIONS), default=1)
    n = len(cells)
    lengths = np.zeros((n, len(ACTIONS), n_max))
    evidence = np.zeros((n, len(ACTIONS), n_max), bool)
    packing = np.empty(n, dtype=object)
    for i, c in enumerate(cells):
        packing[i] = c["packing"]
        for j, a in enumerate(ACTIONS):
            k = len(c["lengths"][a])
            lengths[i, j, :k] = c["lengths"][a]
            evidence[i, j, :k] = np.asarray(c["evidence"][a], bool)
    return lengths, evidence, packing


def check_identifiable(data, source: str = "identify: the paired data") -> int:
    """The number of groups of ``data`` (``PairedData``) when the reader can be identified from
    it (MODEL §2, §8): the ``evidence_structure`` column, at least 2 groups (the out-of-fold check
    holds groups out) and every outcome. Else ``InputError`` opening with ``source`` (the
    command line: ``--data 'F'``)."""
    if STRUCTURE_COLUMN not in data.meta:
        raise InputError(
            f"{source}: no {STRUCTURE_COLUMN!r} column, which identification needs; write the "
            f"file with `retcon pair ...` without --no-structure."
        )
    n_groups = int(np.unique(data.group_id.astype(str)).size)
    if n_groups < 2:
        raise InputError(
            f"{source}: {data.n} row{'s' if data.n != 1 else ''} in {n_groups} group (distinct "
            "group_id); identification's out-of-fold check needs at least 2 groups."
        )
    if np.isnan(data.outcomes).any():
        raise InputError(
            f"{source}: missing outcomes (an empty y_* cell); identification needs every y_ret, "
            "y_merge, y_abstract, y_rewrite."
        )
    return n_groups


def paired_structure(data):
    """``oas.Structure`` of every row of ``PairedData`` (its ``evidence_structure`` column)."""
    from oas._identify import Structure

    cells = data.meta.get(STRUCTURE_COLUMN)
    if cells is None:
        raise InputError(
            f"the paired data has no {STRUCTURE_COLUMN!r} column; write it with "
            f"`retcon pair simulate` or `retcon pair locomo` (docs/paired-data.md)."
        )
    return Structure(*structure_arrays(cells))
