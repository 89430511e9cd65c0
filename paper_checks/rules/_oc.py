"""The verdict rules' operating characteristics at a group count: the report's hook.

A verdict is worth what its rule's error rates are at the data's group count G: its false-PASS
rate (how often it says PASS in synthetic worlds where the claim is false) and its power (how
often it says PASS where the claim holds at the paper's or LoCoMo's effect size). Issue 20
measures them (synthetic worlds at LoCoMo's size and shape) and tables them; the report reads
them through ``rule_operating_characteristics`` only, so the measurements can replace the table
without touching the report.

Status: every graded claim now measures its rule's operating characteristics at its own data's
G, by simulation in worlds with that data's spread (``paper_checks.rules``, each rule beside its ``*_oc``, built on
``paper_checks.operating``), and carries them in ``details["operating_characteristics"]``;
``paper_checks._run.with_operating_characteristics`` keeps those. This table is the fallback for a
result that carries none (nothing graded): ``OC_TABLE`` stays empty, so such a claim reports
``false_pass_rate`` and ``power`` as ``None`` ("not measured"), with G stated. At a G between two
tabled ones the values are interpolated linearly in G; outside the tabled range, or with one
tabled G, the nearest tabled values are given and labelled as measured at that G, not recomputed
for this one.
"""

from __future__ import annotations

# claim id -> {G: (false_pass_rate, power)}, measured in synthetic worlds of G groups
OC_TABLE: dict[str, dict[int, tuple[float, float]]] = {}
TABLED_GROUPS: tuple[int, ...] = (10,)


def rule_operating_characteristics(claim_id: str, n_groups: int | None) -> dict:
    """The measured false-PASS rate and power of claim ``claim_id``'s verdict rule at ``n_groups``.

    Args:
      claim_id: ``"1"`` .. ``"9"``.
      n_groups: G of the graded data; None when no real data were graded.

    Returns:
      ``{"false_pass_rate", "power", "n_groups", "tabled_groups", "method"}``: the two rates
      (``None`` when not measured) and how they were obtained: ``"tabled"`` (measured at this G),
      ``"interpolated"`` (linear in G between two tabled G), ``"nearest tabled (G=...)"`` (measured
      at another G, not recomputed) or ``"not measured"``.
    """
    table = OC_TABLE.get(str(claim_id), {})
    out = {
        "false_pass_rate": None,
        "power": None,
        "n_groups": n_groups,
        "tabled_groups": sorted(table) or list(TABLED_GROUPS),
        "method": "not measured",
    }
    if not table or n_groups is None:
        if not table:
            out["method"] = (
                "not measured: this rule's false-PASS rate and power are not tabled yet "
                f"(to be tabled at G={', '.join(map(str, TABLED_GROUPS))} only)"
            )
        return out
    gs = sorted(table)
    if n_groups in table:
        fp, pw = table[n_groups]
        return {**out, "false_pass_rate": fp, "power": pw, "method": "tabled"}
    lo = max((g for g in gs if g < n_groups), default=None)
    hi = min((g for g in gs if g > n_groups), default=None)
    if lo is not None and hi is not None:
        w = (n_groups - lo) / (hi - lo)
        fp = (1 - w) * table[lo][0] + w * table[hi][0]
        pw = (1 - w) * table[lo][1] + w * table[hi][1]
        return {
            **out,
            "false_pass_rate": fp,
            "power": pw,
            "method": f"interpolated (linear in G between G={lo} and G={hi})",
        }
    near = hi if lo is None else lo
    assert near is not None  # the table is not empty and G is not in it
    fp, pw = table[near]
    return {
        **out,
        "false_pass_rate": fp,
        "power": pw,
        "method": f"nearest tabled (G={near}), not recomputed for G={n_groups}",
    }
