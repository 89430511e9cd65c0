"""LoCoMo as a stream (MODEL §10): repeated consolidation of real text, survival against passes,
utility per policy against time, crossover times.

* Stream. A conversation's sessions in date order (`stream_steps`): at session ``t`` the memory
  holds sessions ``<= t`` and the questions asked are those whose evidence lies in sessions
  ``<= t`` (a question whose evidence the loader could not place in any session is left out).
* Passes. A unit is one session. Pass 1 applies an operator backend (``extractive``, or
  ``dataset``: LoCoMo's own observations and summaries) to the session's turns; pass ``k >= 2``
  applies the ``extractive`` operator to pass ``k - 1``'s records (summaries of summaries). The
  unit's text is its records rendered with the session date (``"[date] text"``).
* Survival (H10). For a question answerable from its raw evidence sessions by the lexical reader,
  ``s_k`` = 1 when it is still answerable from the same sessions after ``k`` passes. Per
  conversation, the survival ``S_k`` is the share of those questions; intervals are Student-t over
  conversations (``G - 1`` degrees of freedom). H10 says ``S_k = phi^k`` (geometric); the
  alternatives are ``front-loaded`` (``S_k = c phi^(k-1)``: the first pass loses most) and
  ``levels off`` (``S_k = c + (1 - c) phi^k``: details lost early cannot be lost again). All are
  fitted by binomial maximum likelihood and compared by leave-one-conversation-out log
  likelihood, with a t-interval over conversations of each alternative's gain.
* Utility against time. Contexts are packed most recent unit first (prefix packing, the one
  packing rule ``theory.pack_reference``); a question's outcome is the lexical reader on the context;
  policies are sim's (``retain-all``, ``periodic`` with every unit passed once, ``overflow``,
  ``budget-aware``, ``tiered``), their generations computed by sim's functions.

References: MODEL §10, §9 (LoCoMo), §2 (packing, reader); docs/timeline.md.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import NamedTuple

import numpy as np

from oas._survival import SURVIVAL_MODELS
from oas._text import content_tokens, normalize
from oas.real._operators import make_operators
from oas.real._readers import lexical_correct
from oas.real._text import make_tokenizer
from oas.real._types import Conversation, OperatorBackend, Query, Record
from retcon.errors import InputError, check_choice, check_integer
from retcon.vocab import OPERATORS

FIRST_PASS = ("extractive", "dataset")
MAX_PASSES = 8
#: ``generation-k``: every unit passed ``k`` times at every time (`policy_generations`).
GENERATION_POLICY = "generation-"
_DATE = "%I:%M %p on %d %B, %Y"


def session_order(conversation: Conversation) -> list[int]:
    """Indices of the conversation's sessions in date order (ties and unparsable dates keep the
    dataset's order, after the dated sessions)."""

    def key(i):
        s = conversation.sessions[i]
        try:
            return (0, datetime.strptime(s.date.strip(), _DATE), i)
        except ValueError:
            return (1, datetime.min, i)

    return sorted(range(len(conversation.sessions)), key=key)


class StreamStep(NamedTuple):
    """Time ``t`` (1-based) of a conversation's stream: the sessions held, the questions asked."""

    time: int
    session_ids: tuple[str, ...]
    queries: tuple[Query, ...]


def _evidence_sessions(conversation: Conversation) -> dict[str, str]:
    return {r.record_id: s.session_id for s in conversation.sessions for r in s.records}


def stream_steps(conversation: Conversation) -> list[StreamStep]:
    """The conversation as a stream (module docstring): one step per session, in date order.

    A question is asked at every time from the one where its last evidence session arrives.
    """
    order = [conversation.sessions[i].session_id for i in session_order(conversation)]
    when = {sid: t for t, sid in enumerate(order, start=1)}
    where = _evidence_sessions(conversation)
    first = {}
    for q in conversation.queries:
        sids = {where[e] for e in q.evidence_ids if e in where}
        if sids:
            first[q.query_id] = max(when[s] for s in sids)
    return [
        StreamStep(
            t,
            tuple(order[:t]),
            tuple(q for q in conversation.queries if first.get(q.query_id, math.inf) <= t),
        )
        for t in range(1, len(order) + 1)
    ]


def evidence_session_ids(conversation: Conversation, query: Query) -> tuple[str, ...]:
    where = _evidence_sessions(conversation)
    return tuple(dict.fromkeys(where[e] for e in query.evidence_ids if e in where))


def evidence_hits(
    conversation: Conversation, chain: dict[str, list[str]], passes: int
) -> Iterator[list[bool]]:
    """For each answerable question (answer tokens and evidence sessions), in order: is the
    lexical reader correct from its evidence sessions' text after ``k = 0..passes`` passes."""
    for q in conversation.queries:
        if not content_tokens(q.answer):
            continue
        sids = evidence_session_ids(conversation, q)
        if not sids:
            continue
        yield [
            lexical_correct(q.answer, "\n".join(chain[s][k] for s in sids))
            for k in range(passes + 1)
        ]


def pass_chain(
    conversation: Conversation,
    operator: str,
    passes: int,
    first: str = "extractive",
    *,
    later: OperatorBackend | None = None,
) -> dict[str, list[str]]:
    """``{session_id: [text after 0, 1, .., passes passes]}`` for one operator (module docstring).

    ``later`` is the backend of passes ``k >= 2`` (default ``extractive``; an ``LLMOperators``
    for summaries of summaries by a language model, see `llm_pass_survival`). A pass that
    returns nothing (all text dropped) leaves an empty unit from then on.
    """
    check_choice("pass_chain: operator", operator, OPERATORS)
    first_backend = make_operators(first)
    if later is None:
        later = make_operators("extractive")
    out: dict[str, list[str]] = {}
    for s in conversation.sessions:
        records: list[Record] = list(s.records)
        texts = [_render(s.date, records)]
        for k in range(1, passes + 1):
            backend = first_backend if k == 1 else later
            records = list(getattr(backend, operator)(records, conversation)) if records else []
            texts.append(_render(s.date, records))
        out[s.session_id] = texts
    return out


class PassChains(NamedTuple):
    """Every conversation's pass chains, built once (`pass_chains`) and read by the report, the
    router and identify (MODEL §10; docs/timeline.md).

    Attributes:
      passes: ``K``, the passes each chain holds (texts after ``0..K`` passes).
      by_first: ``{first-pass backend: [{operator: `pass_chain`} per conversation]}``.
    """

    passes: int
    by_first: dict[str, list[dict[str, dict[str, list[str]]]]]

    def of(self, first: str, operator: str) -> list[dict[str, list[str]]]:
        """One chain per conversation for this first-pass backend and operator."""
        return [chains[operator] for chains in self.by_first[first]]


def check_passes(passes, least: int = 1) -> int:
    """``passes`` when an integer in ``[least, MAX_PASSES]``; else InputError naming ``--passes``
    (``timeline identify`` needs 2: a pass chain to fit and one to predict)."""
    why = " (identify: at least 2)" if least == 2 else ""
    return check_integer("--passes", passes, least, MAX_PASSES, unit=why)


def pass_chains(
    conversations: Sequence[Conversation], passes: int, firsts: Sequence[str] = FIRST_PASS
) -> PassChains:
    """`pass_chain` of every conversation, operator and first-pass backend in ``firsts``, once."""
    check_passes(passes)
    return PassChains(
        passes, {first: _chains_for(None, conversations, passes, first) for first in firsts}
    )


def _chains_for(chains: PassChains | None, conversations, passes: int, first: str = "extractive"):
    """Per conversation ``{operator: chain}``: from ``chains`` when given (checked against
    ``passes`` and the conversations), else built here."""
    if chains is None:
        return [{op: pass_chain(c, op, passes, first) for op in OPERATORS} for c in conversations]
    if chains.passes != passes or len(chains.by_first.get(first, ())) != len(conversations):
        raise InputError(
            f"chains: built for {chains.passes} passes and "
            f"{len(chains.by_first.get(first, ()))} conversations ({first} first); "
            f"the call asks for {passes} passes and {len(conversations)} conversations."
        )
    return chains.by_first[first]


def _render(date: str, records: Sequence[Record]) -> str:
    body = "\n".join(r.text for r in records)
    if not body:
        return ""
    return f"[{date}] {body}" if date else body


# --------------------------------------------------------------------------- survival


class Survival(NamedTuple):
    """Answer survival against passes, per conversation.

    Attributes:
      survived: ``(G, K + 1)`` questions still answerable after ``k`` passes (``k = 0``: all).
      at_risk: ``(G,)`` questions answerable from the raw evidence.
      lengths: ``(G, K + 1)`` mean evidence-unit length in tokens after ``k`` passes.
    """

    survived: np.ndarray
    at_risk: np.ndarray
    lengths: np.ndarray


def survival(
    conversations: Sequence[Conversation],
    operator: str,
    passes: int,
    first: str = "extractive",
    *,
    later: OperatorBackend | None = None,
    chains: Sequence[dict[str, list[str]]] | None = None,
) -> Survival:
    """Per conversation, how many answerable questions survive ``k`` passes (module docstring;
    ``later``: the backend of passes ``k >= 2``, as in `pass_chain`; ``chains``: the
    conversations' chains of this operator when already built, e.g. ``PassChains.of``)."""
    tok = make_tokenizer("regex")
    surv, risk, lens = [], [], []
    if chains is not None and len(chains) != len(conversations):
        raise InputError(f"survival: {len(chains)} chains for {len(conversations)} conversations.")
    for i, c in enumerate(conversations):
        chain = pass_chain(c, operator, passes, first, later=later) if chains is None else chains[i]
        counts = np.zeros(passes + 1)
        n_risk = 0
        for ok in evidence_hits(c, chain, passes):
            if not ok[0]:
                continue
            n_risk += 1
            counts += np.asarray(ok, float)
        surv.append(counts)
        risk.append(n_risk)
        lens.append(
            [
                np.mean([tok.count(chain[s.session_id][k]) for s in c.sessions])
                for k in range(passes + 1)
            ]
        )
    return Survival(np.asarray(surv), np.asarray(risk, float), np.asarray(lens))


def _logistic(x: float) -> float:
    """``1 / (1 + exp(-x))`` without overflow: the optimiser drives a logit to -inf when no
    question survives a pass (seen on a real model's passes)."""
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


def _curve(model: str, k, theta) -> np.ndarray:
    phi = _logistic(theta[0])
    c = _logistic(theta[1])
    return np.clip(SURVIVAL_MODELS[model](k, phi, c), 1e-12, 1 - 1e-12)


def _loglik(model: str, theta, survived, at_risk) -> float:
    k = np.arange(1, survived.shape[-1])
    p = _curve(model, k, theta)
    y = survived[..., 1:]
    n = np.asarray(at_risk, float)[..., None] * np.ones_like(p)
    return float(np.sum(y * np.log(p) + (n - y) * np.log(1 - p)))


def _fit(model: str, survived, at_risk) -> np.ndarray:
    """Binomial maximum likelihood of a survival model (logit parameters)."""
    import scipy.optimize as so

    best = None
    for x0 in ([1.0, 0.0], [-1.0, 1.0], [2.0, -2.0]):
        r = so.minimize(
            lambda th: -_loglik(model, th, survived, at_risk), np.array(x0), method="Nelder-Mead"
        )
        if best is None or r.fun < best.fun:
            best = r
    assert best is not None
    return best.x


def _params(theta) -> dict:
    return {"phi": _logistic(theta[0]), "c": _logistic(theta[1])}


def survival_report(s: Survival, level: float = 0.95) -> dict:
    """Survival against passes with per-conversation intervals, and which loss model fits.

    Each model of ``SURVIVAL_MODELS`` is fitted by binomial maximum likelihood on the pooled
    counts and scored by leave-one-conversation-out log likelihood. Verdict: an alternative to the
    geometric law wins when the t-interval over conversations of its held-out gain lies above 0
    (the larger mean gain when both do); else ``geometric (not rejected)``; ``undecided`` with
    fewer than 3 conversations at risk.
    """
    from retcon.inference import group_t_interval

    g = s.survived.shape[0]
    keep = s.at_risk > 0
    rate = np.where(keep[:, None], s.survived / np.maximum(s.at_risk, 1)[:, None], np.nan)
    per_k = group_t_interval(rate, level=level)  # one column per pass
    fits = {m: _params(_fit(m, s.survived[keep], s.at_risk[keep])) for m in SURVIVAL_MODELS}
    held: dict[str, list[float]] = {m: [] for m in SURVIVAL_MODELS}
    for i in np.flatnonzero(keep):
        rest = keep.copy()
        rest[i] = False
        if rest.sum() == 0:
            continue
        for m in SURVIVAL_MODELS:
            th = _fit(m, s.survived[rest], s.at_risk[rest])
            held[m].append(_loglik(m, th, s.survived[i], s.at_risk[i]))
    gains = {}
    for m in SURVIVAL_MODELS:
        if m == "geometric":
            continue
        d = np.subtract(held[m], held["geometric"])
        ci = group_t_interval(d, level=level)
        gains[m] = {
            "mean": float(ci.estimate[0]),
            "lower": float(ci.lower[0]),
            "upper": float(ci.upper[0]),
        }
    if keep.sum() < 3:
        verdict = "undecided"
    else:
        better = [m for m, v in gains.items() if math.isfinite(v["lower"]) and v["lower"] > 0]
        verdict = (
            max(better, key=lambda m: gains[m]["mean"]) if better else "geometric (not rejected)"
        )
    return {
        "conversations": int(g),
        "questions_at_risk": int(s.at_risk.sum()),
        "survival": [
            {"passes": k, "mean": m, "lower": lo, "upper": hi}
            for k, (m, lo, hi) in enumerate(
                zip(per_k.estimate.tolist(), per_k.lower.tolist(), per_k.upper.tolist())
            )
        ],
        "mean_unit_tokens": s.lengths.mean(0),
        "fits": fits,
        "loco_gain_over_geometric": gains,
        "verdict": verdict,
    }


# --------------------------------------------------------------------------- utility over time


PAD_SESSIONS = 64  # conversations are padded to this many sessions: one compiled overflow


@functools.cache
def _overflow():
    import jax

    import sim

    return jax.jit(sim.overflow_generations, static_argnums=3)


def policy_generations(policy: str, lengths: np.ndarray, rho: float, budget: float, *, cap, passes):
    """``(T, T)`` generations of a policy on one conversation (sim's functions; MODEL §10).

    ``generation-k`` (`GENERATION_POLICY` + k) is no schedule but every unit passed ``k`` times.
    """
    import jax.numpy as jnp

    import sim

    T = lengths.shape[0]
    if policy == "retain-all":
        return np.zeros((T, T), np.int32)
    if policy.startswith(GENERATION_POLICY):  # every unit passed k times (utility against k)
        return np.full((T, T), int(policy[len(GENERATION_POLICY) :]), np.int32)
    if policy == "periodic":
        return sim.periodic_generations(T, 1, 0)
    k_cap = budget if policy == "budget-aware" else cap
    n = max(PAD_SESSIONS, T)
    padded = np.zeros(n, np.float32)  # sessions after the last never arrive: rows past T unused
    padded[:T] = lengths
    gens = _overflow()(jnp.asarray(padded), jnp.float32(rho), jnp.float32(k_cap), passes)
    return np.asarray(gens)[:T, :T]


def context_accuracy(
    steps: Sequence[StreamStep],
    order: Sequence[str],
    tokens: dict,
    length: np.ndarray,
    gens: np.ndarray,
    budget: float,
    answers: dict,
    where: dict,
) -> tuple[np.ndarray, dict]:
    """Lexical accuracy at each time of one conversation whose units have generations ``gens``.

    Args:
      steps: `stream_steps`. order: session ids in stream order. tokens: ``{(session, k):
        set of normalized tokens}``. length: ``(T, K + 1)`` unit tokens per generation (stream
        order). gens: ``(T, T)`` generations per time (row) and unit. budget: ``B``.
      answers: ``{query_id: answer content tokens}``. where: ``{query_id: evidence session ids}``.

    Returns:
      ``(acc (T,), records)``: accuracy of the questions asked at each time (NaN: none) and
      ``{(t, query_id): (evidence fits, correct)}``. Contexts: prefix packing, most recent unit
      first (``theory.pack_reference``). MODEL §10, §2.
    """
    import theory

    T = len(order)
    acc = np.full(T, np.nan)
    records = {}
    for step in steps:
        t = step.time
        qs = [q for q in step.queries if answers[q.query_id]]
        if not qs:
            continue
        newest = list(range(t - 1, -1, -1))  # unit indices, most recent first
        g = gens[t - 1]
        lens = np.array([length[i, g[i]] for i in newest])
        kept = theory.pack_reference(lens[None], budget, "prefix")[0]
        present = {order[newest[j]] for j in range(t) if kept[j] >= lens[j] and lens[j] > 0}
        ctx = set().union(*[tokens[(order[i], g[i])] for i in newest if order[i] in present])
        correct = []
        for q in qs:
            ok = answers[q.query_id] <= ctx
            records[(t, q.query_id)] = (set(where[q.query_id]) <= present, ok)
            correct.append(ok)
        acc[t - 1] = float(np.mean(correct))
    return acc, records


def stream_tables(conversation: Conversation) -> tuple[list[StreamStep], list[str], dict, dict]:
    """``(steps, order, answers, where)`` that `context_accuracy` reads of one conversation:
    `stream_steps`, session ids in stream order, answer content tokens and evidence session ids
    per question."""
    steps = stream_steps(conversation)
    answers = {q.query_id: set(content_tokens(q.answer)) for q in conversation.queries}
    where = {q.query_id: evidence_session_ids(conversation, q) for q in conversation.queries}
    return steps, list(steps[-1].session_ids), answers, where


def chain_tables(chain: dict[str, list[str]], order: Sequence[str], passes: int):
    """``(tokens {(session, k): token set}, length (T, passes + 1))`` of one operator's chain."""
    tok = make_tokenizer("regex")
    tokens = {(s, k): set(normalize(chain[s][k]).split()) for s in order for k in range(passes + 1)}
    length = np.array([[tok.count(chain[s][k]) for k in range(passes + 1)] for s in order], float)
    return tokens, length


def timeline_utility(
    conversation: Conversation,
    chains: dict[str, dict[str, list[str]]],
    budgets: Sequence[float],
    *,
    policies: Sequence[str],
    cap: float,
    passes: int,
) -> dict:
    """``{(policy, operator): (nB, T) accuracy}`` of the questions asked at each time (NaN: none).

    ``tiered`` takes the raw context where the raw evidence fits, else the ``overflow`` one.
    """
    return _timeline_utility(
        conversation, chains, budgets, policies=policies, cap=cap, passes=passes
    )[0]


def _timeline_utility(conversation, chains, budgets, *, policies, cap, passes):
    """`timeline_utility`'s curves and ``{budget: retain-all's context_accuracy records}``."""
    steps, order, answers, where = stream_tables(conversation)
    T = len(order)
    out: dict = {}
    ret_fit: dict = {}
    for op in OPERATORS:
        tokens, length = chain_tables(chains[op], order, passes)
        rho = float(np.mean(length[:, 1] / np.maximum(length[:, 0], 1)))
        for policy in ("retain-all", *[p for p in policies if p != "retain-all"]):
            if policy == "retain-all" and ("retain-all", None) in out:
                continue
            acc = np.full((len(budgets), T), np.nan)
            for bi, b in enumerate(budgets):
                base = "overflow" if policy == "tiered" else policy
                gens = policy_generations(base, length[:, 0], rho, b, cap=cap, passes=passes)
                acc[bi], records = context_accuracy(
                    steps, order, tokens, length, gens, b, answers, where
                )
                if policy == "retain-all":
                    ret_fit[b] = records
                if policy == "tiered":  # the raw context where the raw evidence fits
                    for step in steps:
                        t = step.time
                        qs = [q for q in step.queries if answers[q.query_id]]
                        if not qs:
                            continue
                        ok = []
                        for q in qs:
                            fits, ok_raw = ret_fit[b][(t, q.query_id)]
                            ok.append(ok_raw if fits else records[(t, q.query_id)][1])
                        acc[bi, t - 1] = float(np.mean(ok))
            out[(policy, None if policy == "retain-all" else op)] = acc
    return out, ret_fit


def _pad(curves: list[np.ndarray], T: int) -> np.ndarray:
    return np.stack(
        [np.pad(c, ((0, 0), (0, T - c.shape[1])), constant_values=np.nan) for c in curves]
    )


def timeline_report(
    conversations: Sequence[Conversation],
    *,
    passes: int = 4,
    budgets: Sequence[float] = (256.0, 1024.0, 4096.0),
    policies: Sequence[str] = ("retain-all", "overflow", "periodic", "budget-aware", "tiered"),
    cap: float = 4096.0,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    chains: PassChains | None = None,
) -> dict:
    """The LoCoMo timeline (module docstring): survival against passes per operator and first-pass
    backend, the geometric-or-not answer, utility per policy against time at each budget with
    per-conversation t-intervals, and each operator's crossover time with a Webb wild cluster
    bootstrap interval over conversations (`theory.crossover_interval`'s rule). ``chains``: the
    conversations' `pass_chains` when already built (else built here). MODEL §10."""
    import jax

    import theory
    from retcon.inference import group_t_interval, wild_cluster_replicates

    check_passes(passes)
    surv = {}
    by_first = {first: _chains_for(chains, conversations, passes, first) for first in FIRST_PASS}
    for first in FIRST_PASS:
        for op in OPERATORS:
            mine = [ch[op] for ch in by_first[first]]
            surv[f"{first}/{op}"] = survival_report(
                survival(conversations, op, passes, first, chains=mine)
            )
    curves: dict = {}
    for c, chs in zip(conversations, by_first["extractive"]):
        for key, acc in timeline_utility(
            c, chs, budgets, policies=policies, cap=cap, passes=passes
        ).items():
            curves.setdefault(key, []).append(acc)
    T = max(len(c.sessions) for c in conversations)
    times = np.arange(1, T + 1, dtype=float)
    utility = []
    stacked = {k: _pad(v, T) for k, v in curves.items()}  # (G, nB, T)
    for (policy, op), arr in stacked.items():
        for bi, b in enumerate(budgets):
            cells = group_t_interval(arr[:, bi, :], level=level)  # one column per time
            utility.append(
                {
                    "policy": policy,
                    "operator": op,
                    "budget": float(b),
                    "utility": cells.estimate.tolist(),
                    "lower": cells.lower.tolist(),
                    "upper": cells.upper.tolist(),
                }
            )
    g = len(conversations)
    key = jax.random.key(seed)
    crossover = []
    for op in OPERATORS:
        d = stacked[("periodic", op)] - stacked[("retain-all", None)]  # (G, nB, T)
        # few groups (G = 10): Webb wild cluster replicates of the mean curve over conversations,
        # calibrated to the Student-t interval on G - 1 df (retcon.inference); a time no
        # conversation reaches is NaN and passed over
        point, reps = wild_cluster_replicates(key, d, n_resamples=max(resamples, 1), level=level)
        reps = reps[:resamples]
        ci = theory.crossover_interval(times, -point, -reps, level=level)
        first = theory.first_positive_time(np.nan_to_num(point))
        for bi, b in enumerate(budgets):
            entry = {"operator": op, "budget": float(b), **ci.entry(bi)}
            crossover.append({**entry, "first_win": float(first[bi])})
    verdicts = {k: v["verdict"] for k, v in surv.items()}
    return {
        "dataset": "locomo",
        "conversations": g,
        "passes": passes,
        "budgets": [float(b) for b in budgets],
        "times": times,
        "cap": cap,
        "level": level,
        "reader": "lexical",
        "survival": surv,
        "geometric_verdicts": verdicts,
        "utility": utility,
        "crossover": crossover,
        "crossover_policy": "periodic",
    }


# --------------------------------------------------------------------------- llm passes


def stream_prefix(conversation: Conversation, sessions: int) -> Conversation:
    """The conversation as its stream holds it at time ``sessions`` (`stream_steps`): its first
    ``sessions`` sessions in date order and the questions asked by then (every evidence session
    among them). ``sessions`` past the end gives every session. A subset for slow operators."""
    if isinstance(sessions, bool) or not isinstance(sessions, int) or sessions < 1:
        raise InputError(f"stream_prefix: sessions must be an integer >= 1; got {sessions!r}.")
    steps = stream_steps(conversation)
    step = steps[min(sessions, len(steps)) - 1]
    held = set(step.session_ids)
    asked = {q.query_id for q in step.queries}
    return Conversation(
        conversation.conversation_id,
        tuple(s for s in conversation.sessions if s.session_id in held),
        tuple(q for q in conversation.queries if q.query_id in asked),
    )


def utility_by_passes(
    conversation: Conversation, chain: dict[str, list[str]], budgets: Sequence[float]
) -> np.ndarray:
    """``(nB, K + 1)`` accuracy, at the stream's last time, of the questions asked then when every
    unit has gone through ``k`` passes: `context_accuracy` (units packed most recent first, prefix
    packing, the lexical reader on the units packed whole; MODEL §10, §2) with every generation
    ``k``. NaN where no question with a content answer is asked. ``chain``: `pass_chain`'s output."""
    steps, order, answers, where = stream_tables(conversation)
    T = len(order)
    passes = len(chain[order[0]]) - 1
    tokens, length = chain_tables(chain, order, passes)
    out = np.full((len(budgets), passes + 1), np.nan)
    for k in range(passes + 1):
        gens = np.full((T, T), k, np.int32)
        for bi, b in enumerate(budgets):
            acc, _ = context_accuracy(steps[-1:], order, tokens, length, gens, b, answers, where)
            out[bi, k] = acc[T - 1]
    return out


def llm_pass_survival(
    conversations: Sequence[Conversation],
    backend: OperatorBackend,
    *,
    operators: Sequence[str] = ("merge", "abstract"),
    passes: int = 4,
    first: str = "extractive",
    sessions: int | None = None,
    budgets: Sequence[float] = (256.0, 1024.0, 4096.0),
    level: float = 0.95,
) -> dict:
    """Repeated consolidation with a language model (issue 21 item 3): pass 1 with ``first``,
    passes ``2..passes`` with ``backend`` (an ``LLMOperators``; its cache makes a rerun free),
    beside the ``extractive`` operator's passes on the same questions.

    Per operator and later backend: `survival_report` (answer survival against passes with
    Student-t intervals over conversations, the loss-model fits and verdict) and the utility
    against passes (`utility_by_passes`) at each budget, with the same intervals.
    ``sessions``: each conversation cut to its first sessions (`stream_prefix`) to bound the
    number of calls. MODEL §10."""
    from retcon.inference import group_t_interval

    check_integer("llm_pass_survival: passes", passes, 2, MAX_PASSES)
    check_choice("llm_pass_survival: first", first, FIRST_PASS)
    convs = [stream_prefix(c, sessions) for c in conversations] if sessions else list(conversations)
    out: dict = {
        "conversations": len(convs),
        "sessions": sessions,
        "passes": passes,
        "first": first,
        "budgets": [float(b) for b in budgets],
        "questions": int(sum(len(c.queries) for c in convs)),
        "results": {},
    }
    for op in operators:
        for name, later in (("extractive", None), (getattr(backend, "name", "llm"), backend)):
            surv = survival(convs, op, passes, first, later=later)
            util = np.stack(
                [
                    utility_by_passes(c, pass_chain(c, op, passes, first, later=later), budgets)
                    for c in convs
                ]
            )  # (G, nB, K + 1)
            ci = group_t_interval(util.reshape(len(convs), -1), level=level)
            # per budget: (means, lowers, uppers) over the passes
            rows = zip(*(f.reshape(len(budgets), -1).tolist() for f in ci[:3]), strict=True)
            out["results"][f"{first}/{op}/{name}"] = {
                "survival": survival_report(surv, level),
                "utility": [
                    {
                        "budget": float(b),
                        "cells": [
                            {"mean": m, "lower": lo, "upper": hi, "passes": k}
                            for k, (m, lo, hi) in enumerate(zip(*row, strict=True))
                        ],
                    }
                    for b, row in zip(budgets, rows, strict=True)
                ],
            }
    return out
