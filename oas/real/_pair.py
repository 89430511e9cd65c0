"""Real paired data: every query x budget evaluated under all four actions (MODEL §8-9).

For each query ``q`` (oracle-evidence cluster ``C``, ``oas.real._instances``) and budget ``B``:
``y_ret`` is the reader's score on ``C`` packed under ``B``; ``y_o`` (o in merge, abstract,
rewrite) the score on ``g_o(C)`` packed the same way. The 11 features come from
``oas._features.compute_features`` on ``C``'s raw records in retriever order. One row per
``(q, B)``, ``instance_id = "<query_id>@<B>"``, ``group_id`` = the conversation.

References: MODEL §1-2 (instances, packing), §6 (crossover), §8 (paired data, features), §9.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from oas.real._checks import check_budgets
from oas.real._embed import Embedder
from oas.real._instances import (
    GRANULARITIES,
    ORDERS,
    cluster_of,
    order_records,
    pack_texts,
    render,
    session_records,
    turn_records,
)
from oas.real._text import Tokenizer
from oas.real._types import Conversation, Query, Record
from retcon.errors import InputError, Spell, check_choice
from retcon.vocab import ACTIONS, OPERATORS, VOCABULARIES
from theory import PACKINGS, grid_crossover, octave_grid, pack_reference

#: Four budgets per octave from 32 to 2048 tokens (25 budgets). LoCoMo's crossovers lie between
#: about 150 and 1900 tokens; on the old factor-2 grid (32, 64, ..., 2048) the crossover
#: interpolated in log B sat up to +18% above the continuous B* of a single-cluster model, on
#: this one under +1.5% (``theory.grid_bias``; docs/real-data.md, tests/theory/test_grid_bias.py).
DEFAULT_BUDGETS = octave_grid(32, 2048, 4)


@dataclass(frozen=True)
class PairConfig:
    """How instances are built (MODEL §2); validated on construction.

    Attributes:
      budgets: tokens, positive integers (sorted, distinct after validation).
      granularity: ``"session"`` (default) or ``"turn"``.
      order: ``"chronological"`` (default) or ``"bm25"``.
      packing: ``"cut"`` (default: prefix with the last record cut), ``"prefix"`` or ``"skip"``.
      protocol: ``"oracle"`` (default: the cluster is the gold evidence) or ``"end-to-end"`` (the
        cluster is what ``retriever`` ranks best, ``oas.real._retrieval``).
      retriever: ``"bm25"`` (default) or ``"embedding"`` (end-to-end only).
      top_k: units retrieved (end-to-end; ``None``: ``DEFAULT_TOP_K`` of the granularity).
      predicted_types: ``query_id -> type`` used for the type feature instead of the gold type
        (end-to-end with a classifier); ``None`` uses the gold type.
      design: ``"ours"`` (default) or ``"paper"``: records packed cheapest-first, every
        generated record capped at the budget, rows tagged ``meta_design`` (``oas.real._paper_design``;
        the caller sets ``packing="skip"`` and the alphanumeric tokenizer, as ``PairJob`` does).
      features: definitions of features 3 and 6 (``oas._features``): ``"ours"``, ``"paper"``, or
        ``None`` (default: ``"paper"`` under the paper's design, else ``oas._features``'s default).

    ``design="paper"`` with ``protocol="end-to-end"`` is the paper's full-history run
    (``full_history``; ``oas.real._full_history``): BM25 top 20 turns of the whole memory capped
    at 2,048 tokens, packed in rank order; ``retriever``, ``top_k`` and ``granularity`` are then
    the paper's, not read.
    """

    budgets: tuple[int, ...] = DEFAULT_BUDGETS
    granularity: str = "session"
    order: str = "chronological"
    packing: str = "cut"
    protocol: str = "oracle"
    retriever: str = "bm25"
    top_k: int | None = None
    predicted_types: Mapping[str, str] | None = field(default=None, compare=False, repr=False)
    design: str = "ours"
    features: str | None = None

    def __post_init__(self):
        from oas._features import check_definitions
        from oas.real._paper_design import DESIGNS
        from oas.real._retrieval import PROTOCOLS, RETRIEVERS

        check_choice("PairConfig.design", self.design, DESIGNS)
        if self.features is not None:
            check_definitions(self.features)

        object.__setattr__(self, "budgets", check_budgets(self.budgets, Spell("PairConfig")))
        check_choice("PairConfig.granularity", self.granularity, GRANULARITIES)
        check_choice("PairConfig.order", self.order, ORDERS)
        check_choice("PairConfig.packing", self.packing, PACKINGS)
        check_choice("PairConfig.protocol", self.protocol, PROTOCOLS)
        check_choice("PairConfig.retriever", self.retriever, RETRIEVERS)

    @property
    def full_history(self) -> bool:
        """The paper's full-history design: ``design == "paper"`` and end to end (MODEL §11)."""
        return self.design == "paper" and self.protocol == "end-to-end"


class _Prepared(NamedTuple):
    texts: list[str]  # rendered, in retriever order
    lengths: list[int]
    records: list[Record]


class ConversationContext:
    """Per-conversation state: the embedder fitted on its raw records and generated-record cache."""

    def __init__(self, conversation: Conversation, granularity: str, embedder: Embedder):
        self.conversation = conversation
        corpus = (
            session_records(conversation)
            if granularity == "session"
            else turn_records(conversation)
        )
        self.embedder = embedder.fit([r.text for r in corpus])
        warm = getattr(self.embedder, "warm", None)
        if warm is not None:  # a neural embedder computes what the run will ask for, in batches
            warm(
                [r.text for r in corpus]
                + [render(r) for r in corpus]
                + [q.text for q in conversation.queries]
            )
        self.generated: dict[tuple[str, tuple[str, ...]], list[Record]] = {}
        # end to end: the memory units and their content words (features 12-14), filled once
        self.units: list[Record] | None = None
        self.unit_words: list[frozenset] = []

    def generate(self, operators, action: str, cluster: Sequence[Record]) -> list[Record]:
        key = (action, tuple(r.record_id for r in cluster))
        if key not in self.generated:
            records = getattr(operators, action)(list(cluster), self.conversation)
            self.generated[key] = [r for r in records if r.text.strip()]
        return self.generated[key]


def _prepare(
    records: Sequence[Record], question: str, order: str, tokenizer: Tokenizer
) -> _Prepared:
    texts = [render(r) for r in records]
    idx = order_records(texts, question, order)
    texts = [texts[i] for i in idx]
    return _Prepared(texts, [tokenizer.count(t) for t in texts], [records[i] for i in idx])


class QueryPlan(NamedTuple):
    """The reader-independent part of one query's paired-data rows (MODEL §2, §8).

    Everything but the outcomes: the cluster and its generated records packed under each budget
    (the contexts a reader is handed), the features and the metadata. ``score_query_rows`` turns
    it into rows under a reader, so several readers (or a decoy answer, the chance rate) share
    one packing, one tokenization and one feature computation per ``(query, budget, action)``.

    Attributes:
      query_id: the query it was built for.
      heads: per budget, the row's leading columns (``instance_id`` .. ``budget``).
      contexts: per budget, ``{action: packed context}`` in ``ACTIONS`` order.
      tails: per budget, the columns after the outcomes (features, structure, metadata).
    """

    query_id: str
    heads: tuple[dict, ...]
    contexts: tuple[dict[str, str], ...]
    tails: tuple[dict, ...]


def query_rows(
    query: Query,
    ctx: ConversationContext,
    *,
    operators,
    reader,
    config: PairConfig,
    tokenizer: Tokenizer,
    skip_ids: Collection[str] = frozenset(),
) -> list[dict]:
    """The paired-data rows of one query, one per budget not in ``skip_ids``.

    ``score_query_rows(prepare_query_rows(...), query, reader)``: the reader-independent work,
    then the reader's scores.

    Args:
      query: a query of ``ctx.conversation`` with a 4-way type.
      ctx: the conversation's ``ConversationContext``.
      operators: an ``OperatorBackend``.
      reader: a ``Reader``.
      config: budgets, granularity, order, packing.
      tokenizer: budget tokenizer.
      skip_ids: ``instance_id``s already written (resume).

    Returns:
      row dicts in the paired-data format (docs/paired-data.md), features by name.

    References: MODEL §2, §8.
    """
    plan = prepare_query_rows(
        query, ctx, operators=operators, config=config, tokenizer=tokenizer, skip_ids=skip_ids
    )
    return score_query_rows(plan, query, reader)


def prepare_query_rows(
    query: Query,
    ctx: ConversationContext,
    *,
    operators,
    config: PairConfig,
    tokenizer: Tokenizer,
    skip_ids: Collection[str] = frozenset(),
) -> QueryPlan:
    """The reader-independent part of ``query_rows``: clusters, packing, features, metadata.

    Args: as ``query_rows``, without the reader.

    Returns:
      ``QueryPlan``, one entry per budget not in ``skip_ids``.

    Raises:
      InputError: the query's type (or predicted type) has no 4-way slot.

    References: MODEL §2 (packing), §8 (features).
    """
    from oas._features import FEATURE_NAMES, compute_features
    from oas._structure import STRUCTURE_COLUMN, make_structure

    todo = [b for b in config.budgets if f"{query.query_id}@{b}" not in skip_ids]
    if not todo:
        return QueryPlan(query.query_id, (), (), ())
    vocab_name = next((n for n, v in VOCABULARIES.items() if query.query_type in v), None)
    if vocab_name is None:
        raise InputError(
            f"query {query.query_id}: type {query.query_type!r} has no 4-way slot "
            f"(MODEL §9); paired data holds only {dict(VOCABULARIES)}."
        )
    typed = query.query_type
    if config.predicted_types is not None:
        typed = config.predicted_types.get(query.query_id, query.query_type)
        if typed not in VOCABULARIES[vocab_name]:
            raise InputError(
                f"query {query.query_id}: predicted type {typed!r} is not one of "
                f"{list(VOCABULARIES[vocab_name])}."
            )
    slot = VOCABULARIES[vocab_name].index(typed)
    full_history = config.full_history
    if full_history:  # the paper's full-history candidates (MODEL §11)
        from oas.real._full_history import full_history_candidates

        cluster = full_history_candidates(query, ctx.conversation, tokenizer=tokenizer)
        if not cluster:
            raise InputError(
                f"query {query.query_id}: conversation {ctx.conversation.conversation_id} has no "
                "turn that fits the full-history candidate cap (MODEL §11); expected at least one."
            )
        post_retrieval = _post_retrieval_meta(query, ctx, config)
    elif config.protocol == "end-to-end":
        from oas.real._retrieval import retrieve

        cluster = retrieve(
            query,
            ctx.conversation,
            config.granularity,
            top_k=config.top_k,
            retriever=config.retriever,
            embedder=ctx.embedder,
        )
        post_retrieval = _post_retrieval_meta(query, ctx, config)
    else:
        cluster = cluster_of(query, ctx.conversation, config.granularity)
    prepared = {"ret": _prepare(cluster, query.text, config.order, tokenizer)}
    for action in OPERATORS:
        prepared[action] = _prepare(
            ctx.generate(operators, action, cluster), query.text, config.order, tokenizer
        )
    paper = config.design == "paper"
    definitions = config.features or ("paper" if paper else None)
    if paper and not full_history:  # cheapest-first: increasing length, ties in retriever order
        from oas.real._paper_design import cheapest_first

        prepared = {
            a: _Prepared(*cheapest_first(p.texts, p.lengths, p.records))
            for a, p in prepared.items()
        }
    raw = prepared["ret"]
    emb = ctx.embedder.embed([r.text for r in raw.records])
    # every budget's features in one call: only features 1-3 depend on the budget
    feats = compute_features(
        todo,
        raw.lengths,
        [r.session_id for r in raw.records],
        emb,
        slot,
        packing=config.packing,
        definitions=definitions,
    )
    # the evidence structure does not depend on the budget: built and checked once
    structure = make_structure(
        config.packing,
        {a: prepared[a].lengths for a in ACTIONS},
        {a: [1] * len(prepared[a].lengths) for a in ACTIONS},
    )
    seen: dict[str, str] = {}  # loose budgets repeat the same context: one string kept for all
    heads, contexts, tails = [], [], []
    for j, budget in enumerate(todo):
        heads.append(
            {
                "instance_id": f"{query.query_id}@{budget}",
                "query_id": query.query_id,
                "group_id": query.conversation_id,
                "query_type": typed,  # the type the features see: predicted under a classifier
                "budget": budget,
            }
        )
        packed = {}
        for action in ACTIONS:
            p = prepared[action]
            if paper and action != "ret":  # generated records capped at the budget (MODEL §11)
                from oas.real._paper_design import cap_records, cheapest_first

                texts, lengths = cap_records(p.texts, budget, tokenizer)
                # full history: the operator's own order; controlled: cheapest-first (MODEL §2)
                p = (
                    _Prepared(texts, lengths, p.records)
                    if full_history
                    else _Prepared(*cheapest_first(texts, lengths, p.records))
                )
            context = pack_texts(p.texts, p.lengths, budget, config.packing, tokenizer).context
            packed[action] = seen.setdefault(context, context)
        contexts.append(packed)
        tail: dict = dict(zip(FEATURE_NAMES, (float(v) for v in feats[j])))
        tail[STRUCTURE_COLUMN] = {  # each row its own copy of the checked cell
            "packing": structure["packing"],
            "lengths": {a: list(v) for a, v in structure["lengths"].items()},
            "evidence": {a: list(v) for a, v in structure["evidence"].items()},
        }
        tail["meta_source_type"] = query.source_type
        if paper:
            tail["meta_design"] = "paper"
        if full_history:  # the rows say which design made them (paper-checks reads it)
            tail["meta_candidates"] = "full-history"
        tail["cluster_tokens"] = int(sum(raw.lengths))
        for action in OPERATORS:
            tail[f"meta_tokens_{action}"] = int(sum(prepared[action].lengths))
        if config.protocol == "end-to-end":
            tail.update(_end_to_end_meta(query, raw, budget, config.packing))
            tail.update(post_retrieval)
        tails.append(tail)
    return QueryPlan(query.query_id, tuple(heads), tuple(contexts), tuple(tails))


def score_query_rows(plan: QueryPlan, query: Query, reader) -> list[dict]:
    """The rows of ``plan`` with ``reader``'s outcomes ``y_<action>`` (MODEL §8).

    Args:
      plan: ``prepare_query_rows`` of ``query`` (or of a query that differs only in its answer:
        the plan does not read the answer, so a decoy answer reuses it).
      query: the question and the gold answer the reader is judged against.
      reader: a ``Reader``; each distinct context is scored once, in budget then action order.

    Returns:
      row dicts, as ``query_rows`` gives them (fresh dicts: the plan is not changed).

    Raises:
      InputError: ``plan`` was built for another query, or the reader scored outside [0, 1].
    """
    if plan.query_id != query.query_id:
        raise InputError(
            f"score_query_rows: the plan is of query {plan.query_id!r}; got query "
            f"{query.query_id!r}."
        )
    scores: dict[str, float] = {}
    # An LLM judge is checked against the lexical rule on the same answers (oas.real.llm._judge):
    # its rows carry the lexical verdicts as meta_lexical_<action>.
    lexical: dict[str, float] | None = {} if getattr(reader, "judge", None) == "llm" else None
    rows = []
    for head, packed, tail in zip(plan.heads, plan.contexts, plan.tails):
        row = dict(head)
        for action in ACTIONS:
            context = packed[action]
            if context not in scores:  # loose budgets repeat the same context
                if lexical is not None:
                    y, lex = reader.score_with_lexical(query, context) if context else (0.0, 0.0)
                    lexical[context] = float(lex)
                else:
                    y = reader.score(query, context) if context else 0.0
                y = float(y)
                if not 0.0 <= y <= 1.0 or math.isnan(y):
                    raise InputError(
                        f"reader {getattr(reader, 'name', reader)!r} scored query {query.query_id} "
                        f"{y!r}; expected a number in [0, 1]."
                    )
                scores[context] = y
            row[f"y_{action}"] = scores[context]
        if lexical is not None:
            for action in ACTIONS:
                row[f"meta_lexical_{action}"] = lexical[packed[action]]
        row.update(tail)
        rows.append(row)
    return rows


def _post_retrieval_meta(query: Query, ctx: ConversationContext, config: PairConfig) -> dict:
    """Features 12-14 of the query's retrieval (``oas.RETRIEVAL_META_COLUMNS``: score margin,
    score mass, overlap count; docs/oas.md "Post-retrieval features"), the same for every budget."""
    from oas import RETRIEVAL_META_COLUMNS
    from oas.real._retrieval import DEFAULT_TOP_K, memory_units
    from oas.real._retrieval_features import unit_content_words, unit_retrieval_features

    k = DEFAULT_TOP_K.get(config.granularity, 4) if config.top_k is None else int(config.top_k)
    if config.full_history:  # the paper's 20 turns (MODEL §11)
        from oas.real._full_history import FULL_HISTORY_TOP_K

        k = FULL_HISTORY_TOP_K
    if ctx.units is None:  # the conversation's units and their content words, once
        ctx.units = memory_units(ctx.conversation, config.granularity)
        ctx.unit_words = unit_content_words(ctx.units)
    values = unit_retrieval_features(
        query.text, ctx.units, k, config.retriever, ctx.embedder, unit_words=ctx.unit_words
    )
    return {c: float(v) for c, v in zip(RETRIEVAL_META_COLUMNS, values)}


def _end_to_end_meta(query: Query, raw: _Prepared, budget: int, packing: str) -> dict:
    """Retrieval recall of the gold evidence in the units packed under ``budget`` and in ``C``."""
    from oas.real._retrieval import evidence_recall

    kept = pack_reference(np.asarray(raw.lengths, dtype=np.float64).reshape(-1), budget, packing)
    packed = [r for r, k in zip(raw.records, kept) if k > 0]
    return {
        "meta_retrieval_recall": evidence_recall(query, packed),
        "meta_retrieval_recall_cluster": evidence_recall(query, raw.records),
        "meta_gold_type": query.query_type,
        "meta_retrieved_ids": ",".join(r.record_id for r in raw.records),
    }


def iter_queries(
    conversations: Sequence[Conversation], limit: int | None = None
) -> Iterator[tuple[Conversation, Query]]:
    """``(conversation, query)`` pairs in file order, the first ``limit`` queries only if given."""
    n = 0
    for conv in conversations:
        for q in conv.queries:
            if limit is not None and n >= limit:
                return
            yield conv, q
            n += 1


def summarize(data, *, key=None) -> dict:
    """Accuracy per action per budget, ``dU`` with few-groups CIs, crossover per operator.

    Args:
      data: ``oas.PairedData`` of a run (e.g. ``oas.read_paired`` of its output file).
      key: ``None`` skips the CIs; otherwise ``dU``'s 95% interval per budget is the Student-t
        interval over per-group means (groups = ``group_id``; docs/statistics.md), which needs no
        randomness (the key only switches it on).

    Returns:
      a JSON-ready dict: ``budgets``, ``accuracy[action]`` (list per budget), ``delta[operator]``,
      ``delta_ci[operator]`` ([lower, upper] per budget), ``crossover[operator]``
      (``crossover_budget`` and ``status`` from ``theory.grid_crossover``, ``n_sign_changes``;
      ``sign_reversal``: ``dU > 0`` at some budget and ``< 0`` at the loosest;
      ``ahead_at_tightest``: ``dU > 0`` at the smallest budget), ``n_queries``, ``n_rows``.

    References: MODEL §6 (crossover; docs/model.md §6.4 for a sampled curve); docs/statistics.md.
    """
    if data.n == 0:
        raise InputError("summarize: no rows.")
    b = np.asarray(data.budget, dtype=np.float64)
    budgets = sorted(set(b.tolist()))
    y = np.asarray(data.outcomes, dtype=np.float64)
    groups = np.asarray(data.group_id).astype(str)
    out: dict = {
        "budgets": budgets,
        "n_rows": data.n,
        "n_queries": len(set(np.asarray(data.query_id).tolist())),
        "n_groups": len(set(groups.tolist())),
        "accuracy": {},
        "delta": {},
        "delta_ci": {},
        "crossover": {},
    }
    acc = np.array([[y[b == B, j].mean() for B in budgets] for j in range(len(ACTIONS))])
    for j, a in enumerate(ACTIONS):
        out["accuracy"][a] = [float(v) for v in acc[j]]

    gx = grid_crossover(budgets, acc[1:] - acc[0])  # (n_operators,) curves
    for j, o in enumerate(ACTIONS[1:], start=1):
        d = acc[j] - acc[0]
        b_star = float(gx.crossover_budget[j - 1])
        out["delta"][o] = [float(v) for v in d]
        out["crossover"][o] = {
            "crossover_budget": None if math.isnan(b_star) else b_star,
            "status": str(gx.status[j - 1]),
            "n_sign_changes": int(gx.n_sign_changes[j - 1]),
            "sign_reversal": bool((d > 0).any() and d[-1] < 0),
            "ahead_at_tightest": bool(d[0] > 0),
        }
        if key is not None:
            from retcon.inference import group_mean_interval

            diff = y[:, j] - y[:, 0]
            values = np.repeat(diff[:, None], len(budgets), axis=1)
            mask = b[:, None] == np.asarray(budgets)[None, :]
            ci = group_mean_interval(values, groups, mask)
            out["delta_ci"][o] = [
                [float(lo), float(hi)] for lo, hi in zip(np.asarray(ci.lower), np.asarray(ci.upper))
            ]
    return out


def format_table(summary: dict) -> str:
    """The summary as a plain-text table: accuracy per action per budget, dU, crossover."""
    budgets = summary["budgets"]
    head = "budget    " + "".join(f"{int(B):>8d}" for B in budgets)
    lines = [head]
    for a, accs in summary["accuracy"].items():
        lines.append(f"acc {a:<6}" + "".join(f"{v:8.3f}" for v in accs))
    for o, d in summary["delta"].items():
        lines.append(f"dU {o:<7}" + "".join(f"{v:+8.3f}" for v in d))
    for o, c in summary["crossover"].items():
        cb = c["crossover_budget"]
        lines.append(
            f"crossover {o:<9}: "
            + (f"B* ~ {cb:.0f} tokens" if cb is not None else "no + -> - sign change")
            + f" ({c['status']})"
        )
    return "\n".join(lines)
