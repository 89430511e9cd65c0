"""The verdict rules' operating characteristics for a claim that carries none: the report's hook.

A verdict is worth what its rule's error rates are at the data's group count G: its false-PASS
rate (how often it says PASS in synthetic worlds where the claim is false) and its power (how
often it says PASS where the claim holds at the paper's or LoCoMo's effect size).

Every graded claim measures its rule's operating characteristics at its own data's G, by
simulation in worlds with that data's spread (``paper_checks.rules``, each rule beside its
``*_oc``, built on ``paper_checks.operating``), and carries them in
``details["operating_characteristics"]``; ``paper_checks._run.with_operating_characteristics``
keeps those. A result that carries none (nothing graded) gets ``rule_operating_characteristics``:
``false_pass_rate`` and ``power`` ``None`` ("not measured"), with G stated. No rate is tabled or
interpolated between group counts.
"""

from __future__ import annotations

#: The group counts the "not measured" line names.
TABLED_GROUPS: tuple[int, ...] = (10,)


def rule_operating_characteristics(n_groups: int | None) -> dict:
    """The operating characteristics of a result that carries none, at ``n_groups``.

    Args:
      n_groups: G of the graded data; None when no real data were graded.

    Returns:
      ``{"false_pass_rate", "power", "n_groups", "tabled_groups", "method"}``: both rates
      ``None``, and ``method`` saying that they were not measured.
    """
    return {
        "false_pass_rate": None,
        "power": None,
        "n_groups": n_groups,
        "tabled_groups": list(TABLED_GROUPS),
        "method": "not measured: this rule's false-PASS rate and power are not tabled yet "
        f"(to be tabled at G={', '.join(map(str, TABLED_GROUPS))} only)",
    }
