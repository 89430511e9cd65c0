"""The report of memory over time on LoCoMo (MODEL §10): `oas.TimelineReport` (``oas._timeline_report``,
which also builds the simulated one), and the checks the LoCoMo path makes on its inputs before
any work.

* LoCoMo (`locomo_report`): `timeline_report` on the conversations' pass chains, built once
  (`pass_chains`) and shared with the router (`timeline_router_report`) and identify
  (`timeline_identify`); the llm passes' section (`llm_pass_survival`) when the caller ran it.

The tables are plain JSON values (``retcon.output.to_jsonable``: arrays as lists, NaN as
``None``); `TimelineReport.as_json` lays them out in the key order of ``retcon timeline --json``,
the users' data format. The text is `oas.timeline_text`.

References: MODEL §10; docs/timeline.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from oas._timeline_report import ROUTER, TimelineReport, report_from_dict
from oas.real._timeline import PassChains, llm_pass_survival, timeline_report
from oas.real._types import Conversation
from retcon.errors import InputError

#: The LoCoMo budgets of ``retcon timeline locomo`` (tokens).
LOCOMO_BUDGETS = (256.0, 1024.0, 4096.0)


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
    return report_from_dict("locomo", d, llm_passes=llm_passes, router=router, seed=seed)


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
    "LLMPasses",
    "check_locomo_stream",
    "locomo_report",
]
