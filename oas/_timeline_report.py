"""The report of memory over time (MODEL §10): one typed `TimelineReport`, built by the simulated
path here and by the LoCoMo path of ``oas.real`` (``oas.real.locomo_report``).

* Simulated (`simulated_report`): `sim.simulate_timeline` and `sim.summarize_timeline` on a stream
  scenario; with the router, `oas.simulate_router_timeline` on the scenario's own parameters and
  its paired gains (`oas.simulated_router_gains`). It needs nothing from real data, so it lives
  in ``oas`` beside the router over time (``oas._timeline_router``).

The tables are plain JSON values (``retcon.output.to_jsonable``: arrays as lists, NaN as
``None``); `TimelineReport.as_json` lays them out in the key order of ``retcon timeline --json``,
the users' data format. The text is `oas.timeline_text`, the figures `oas.plot_utility`,
`oas.plot_by_generation` and `oas.plot_survival`.

References: MODEL §10; docs/timeline.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from retcon.output import to_jsonable

#: The policy name of the router over time in ``--policy`` and in the report's rows.
ROUTER = "router"
SOURCES = ("simulated", "locomo")
_SIM_ROUTER = {
    "parameters": "the scenario's own (H10 lengths, v(k) from the reader and fidelities)",
    "rule": "myopic: at each session, the state along overflow's pass order with the best "
    "predicted utility of the session's queries (oas.TimelineRouter)",
    "interval": "paired per stream, mean +- 1.96 SE of the time-averaged difference",
}


class TimelineReport(NamedTuple):
    """Memory over time, simulated or on LoCoMo, as tables (MODEL §10; docs/timeline.md).

    Attributes:
      source: ``"simulated"`` or ``"locomo"``.
      header: the run's description in JSON order (scenario, sessions, ... or dataset,
        conversations, ...).
      utility: one row per policy, operator and budget: utility against time with its interval.
      crossover: one row per operator and budget: the crossover time with its interval.
      by_generation: simulated: utility against the number of passes ``k``; LoCoMo: ``None``.
      survival: LoCoMo: answer survival against passes per chain, with the H10 fits; else ``None``.
      llm_passes: LoCoMo with an LLM endpoint: passes 2..K by the llm operator; else ``None``.
      router: with ``--policy router``: the router's gains over each policy; else ``None``.
      seed: the run's seed.
    """

    source: str
    header: dict
    utility: list
    crossover: list
    by_generation: list | None = None
    survival: dict | None = None
    llm_passes: dict | None = None
    router: dict | None = None
    seed: int = 0

    def as_json(self) -> dict:
        """The JSON object of ``retcon timeline simulate|locomo --json`` (keys in its order)."""
        if self.source == "simulated":
            out = {**self.header, "utility": self.utility, "crossover": self.crossover}
            out["by_generation"] = self.by_generation
        else:
            surv = self.survival or {}
            out = {
                **self.header,
                "survival": surv,
                "geometric_verdicts": {k: v["verdict"] for k, v in surv.items()},
                "utility": self.utility,
                "crossover": self.crossover,
                "crossover_policy": "periodic",
            }
            if self.llm_passes is not None:
                out["llm_passes"] = self.llm_passes
        if self.router is not None:
            out["router"] = self.router
        out["seed"] = self.seed
        return out


_TABLES = ("utility", "crossover", "by_generation", "survival", "geometric_verdicts")


def report_from_dict(source: str, d: dict, **rest) -> TimelineReport:
    """A ``TimelineReport`` from the tables of ``sim.summarize_timeline`` or
    ``oas.real.timeline_report`` (``retcon.output.to_jsonable`` values)."""
    d = to_jsonable(d)
    # the simulated header carries crossover_policy (before theory); LoCoMo's JSON has it last
    moved = () if source == "simulated" else ("crossover_policy",)
    header = {k: v for k, v in d.items() if k not in (*_TABLES, *moved)}
    return TimelineReport(
        source,
        header,
        d["utility"],
        d["crossover"],
        by_generation=d.get("by_generation"),
        survival=d.get("survival"),
        **{k: to_jsonable(v) if k != "seed" else v for k, v in rest.items()},
    )


def simulated_report(
    ss,
    *,
    policies: Sequence[str] | None = None,
    budgets=None,
    queries: int | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> TimelineReport:
    """Simulate the stream scenario ``ss`` (`sim.load_stream`) and report it. ``policies``:
    names of `sim.TIMELINE_POLICIES` and ``"router"`` (default: every policy, no router); budgets
    and queries default to the scenario's. MODEL §10."""
    import numpy as np

    from oas import scenario_router, simulate_router_timeline, simulated_router_gains
    from retcon.vocab import OPERATORS, TIMELINE_POLICIES
    from sim import simulate_timeline, summarize_timeline

    asked = tuple(policies) if policies else TIMELINE_POLICIES
    chosen = tuple(p for p in asked if p != ROUTER) or TIMELINE_POLICIES
    result = simulate_timeline(ss, policies=chosen, budgets=budgets, queries=queries, seed=seed)
    router = None
    if ROUTER in asked:
        routers = [scenario_router(ss, i) for i in range(len(OPERATORS))]
        mine = simulate_router_timeline(
            ss, routers, budgets=result.budgets, queries=result.outcome.shape[0], seed=seed
        )
        router = {**_SIM_ROUTER, "gains": simulated_router_gains(mine, result)}
        result = result._replace(
            rows=result.rows + tuple((ROUTER, op) for op in OPERATORS),
            outcome=np.concatenate([result.outcome, mine], axis=1),
        )
        chosen = (*chosen, ROUTER)
    d = summarize_timeline(ss, result, policies=chosen, resamples=resamples, seed=seed)
    return report_from_dict("simulated", d, router=router, seed=seed)
