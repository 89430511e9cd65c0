"""The report of memory over time (MODEL §10): one typed `TimelineReport`, built by the simulated
and the LoCoMo paths, and the checks both make on their inputs before any work.

* Simulated (`simulated_report`): `sim.simulate_timeline` and `sim.summarize_timeline` on a stream
  scenario; with the router, `oas.simulate_router_timeline` on the scenario's own parameters and
  its paired gains (`oas.simulated_router_gains`).
* LoCoMo (`locomo_report`): `timeline_report` on the conversations' pass chains, built once
  (`pass_chains`) and shared with the router (`timeline_router_report`) and identify
  (`timeline_identify`); the llm passes' section (`llm_pass_survival`) when the caller ran it.

The tables are plain JSON values (``retcon.output.to_jsonable``: arrays as lists, NaN as
``None``); `TimelineReport.as_json` lays them out in the key order of ``retcon timeline --json``,
the users' data format. The text is `oas.real.timeline_text`.

References: MODEL §10; docs/timeline.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from oas.real._timeline import PassChains
from oas.real._types import Conversation
from retcon.errors import InputError
from retcon.output import to_jsonable

#: The policy name of the router over time in ``--policy`` and in the report's rows.
ROUTER = "router"
SOURCES = ("simulated", "locomo")
#: The LoCoMo budgets of ``retcon timeline locomo`` (tokens).
LOCOMO_BUDGETS = (256.0, 1024.0, 4096.0)

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


def _from_dict(source: str, d: dict, **rest) -> TimelineReport:
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
    return _from_dict("simulated", d, router=router, seed=seed)


def locomo_report(
    conversations: Sequence[Conversation],
    chains: PassChains,
    *,
    budgets: Sequence[float] = LOCOMO_BUDGETS,
    policies: Sequence[str] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    llm: tuple[object, LLMPasses] | None = None,
) -> TimelineReport:
    """LoCoMo as a stream on the conversations' pass chains (`pass_chains`, built once);
    ``policies`` as in `simulated_report` (retain-all and periodic always run: the baseline and
    the crossover policy); ``llm``: ``(backend, LLMPasses)`` for the llm passes. MODEL §10."""
    from oas.real._timeline import timeline_report
    from oas.real._timeline_router import timeline_router_report
    from retcon.vocab import TIMELINE_POLICIES

    asked = tuple(policies) if policies else TIMELINE_POLICIES
    chosen = tuple(p for p in TIMELINE_POLICIES if p in asked or p in ("retain-all", "periodic"))
    d = timeline_report(
        conversations,
        passes=chains.passes,
        budgets=budgets,
        policies=chosen,
        resamples=resamples,
        seed=seed,
        chains=chains,
    )
    router = None
    llm_passes = None if llm is None else llm[1].section(conversations, llm[0], budgets)
    if ROUTER in asked:
        router = timeline_router_report(
            conversations, passes=chains.passes, budgets=budgets, chains=chains
        )
    return _from_dict("locomo", d, llm_passes=llm_passes, router=router, seed=seed)


class LLMPasses(NamedTuple):
    """The llm passes of ``retcon timeline locomo`` (docs/timeline.md): passes ``2..passes``
    also made by a language model, on the first ``conversations`` conversations and their first
    ``sessions`` sessions (``None``: all). Build it with `LLMPasses.checked`."""

    operators: tuple[str, ...]
    passes: int
    sessions: int | None = None
    conversations: int | None = None

    @classmethod
    def checked(cls, operators, passes: int, sessions=None, conversations=None) -> LLMPasses:
        """Validated: ``operators`` comma-separated (or a sequence) of the three, ``sessions`` and
        ``conversations`` >= 1 when given, ``passes`` >= 2. Raises InputError naming the option."""
        from retcon.vocab import OPERATORS

        for opt, v in (("--llm-sessions", sessions), ("--llm-conversations", conversations)):
            if v is not None and v < 1:
                raise InputError(f"{opt} must be an integer >= 1; got {v}.")
        text = operators if isinstance(operators, str) else ",".join(operators)
        ops = tuple(o.strip() for o in text.split(",") if o.strip())
        if not ops or any(o not in OPERATORS for o in ops):
            raise InputError(
                f"--llm-operators must list operators of {list(OPERATORS)}; got {operators!r}."
            )
        if passes < 2:
            raise InputError(f"the llm passes need --passes >= 2; got {passes}.")
        return cls(ops, passes, sessions, conversations)

    def section(self, conversations: Sequence[Conversation], backend, budgets) -> dict:
        """The ``llm_passes`` section (`llm_pass_survival`), with ``backend``'s call counts."""
        from oas.real._timeline import llm_pass_survival

        convs = conversations[: self.conversations] if self.conversations else conversations
        report = llm_pass_survival(
            convs,
            backend,
            operators=list(self.operators),
            passes=self.passes,
            sessions=self.sessions,
            budgets=budgets,
        )
        report["llm_calls"] = backend.stats._asdict()
        return report


def check_locomo_stream(
    conversations,
    path,
    *,
    least: int = 1,
    each_asked: bool = False,
    user: str = "the stream",
    why_each: str = "identify observes each held-out conversation's questions",
) -> None:
    """Refuse, before any work, a LoCoMo file the stream cannot be run on (docs/timeline.md):
    fewer than ``least`` conversations, a conversation without sessions, or no question at all
    (``each_asked``: a conversation without questions, which identify cannot observe).

    ``user`` names what needs the file in the messages (``"paper-checks"``), ``why_each`` says
    why each conversation needs a question.

    Raises:
      InputError: naming ``--data``, the conversation and what is needed.
    """
    where = f"--data {str(path)!r}"
    for c in conversations:
        if not c.sessions:
            raise InputError(
                f"{where}: conversation {c.conversation_id!r} has no sessions (session_1, ...); "
                f"{user} needs at least one."
            )
    if len(conversations) < least:
        need = {
            1: "a conversation",
            2: "at least 2 conversations (its intervals resample conversations)",
        }.get(least, f"at least {least} conversations (leave one out)")
        raise InputError(f"{where}: {user} needs {need}; got {len(conversations)}.")
    if each_asked:
        for c in conversations:
            if not c.queries:
                raise InputError(
                    f"{where}: conversation {c.conversation_id!r} has no questions (its 'qa' is "
                    f"empty or excluded); {why_each}, so each needs at least one."
                )
    if not any(c.queries for c in conversations):
        raise InputError(
            f"{where}: no questions to score (every 'qa' list is empty or excluded); "
            f"{user} needs at least one."
        )


__all__ = [
    "LOCOMO_BUDGETS",
    "ROUTER",
    "LLMPasses",
    "TimelineReport",
    "check_locomo_stream",
    "locomo_report",
    "simulated_report",
]
