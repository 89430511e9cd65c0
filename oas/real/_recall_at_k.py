"""Retrieval recall at ``k`` on LoCoMo, per question, and its summary over conversations.

For every question of the conversations and one granularity (sessions, turns), a retriever ranks
the conversation's units as the end-to-end protocol does (``rank_units`` on ``"[<date>] <text>"``;
an embedder is fitted on the conversation's units, as ``retcon pair`` fits it), and recall at
``k`` is the share of the question's gold evidence turns in the top ``k`` units
(``evidence_recall``). ``EMBEDDER@max-turn`` (sessions only, a diagnostic) scores a session by the
best cosine of its turns. The summary: the mean over questions, the 95% t interval over the
conversations' means (``retcon.inference.group_t_interval``), each retriever's difference from
BM25 paired by conversation, and the mean per gold query type. No randomness.

References: docs/end-to-end.md (retrievers, recall).
"""

from __future__ import annotations

import numpy as np

# A diagnostic retriever for sessions: an embedder's name with this suffix scores a session by
# its best-matching turn (the max of the turns' cosines) instead of by its own embedding, which
# a 256-word-piece model computes from the session's first 256 word pieces only.
MAX_OVER_TURNS = "@max-turn"


def recall_at_k(conversations, retriever_name: str, granularity: str, ks) -> dict:
    """Per-question recall at each ``k``: ``{"k": [...], "recall": (n_q, n_k), "group": [...],
    "type": [...]}`` (lists, in question order). ``retriever_name``: ``bm25``, an embedder's name
    (``make_embedder``), or one with the ``@max-turn`` suffix (sessions by their best turn)."""
    from oas.real._embed import make_embedder
    from oas.real._instances import render
    from oas.real._retrieval import evidence_recall, memory_units, rank_units

    by_turns = retriever_name.endswith(MAX_OVER_TURNS)
    name = retriever_name.removesuffix(MAX_OVER_TURNS)
    retriever = "bm25" if name == "bm25" else "embedding"
    base = None if retriever == "bm25" else make_embedder(name)
    rows, groups, types = [], [], []
    for conv in conversations:
        units = memory_units(conv, granularity)
        if by_turns and granularity == "session":
            assert base is not None
            turns = memory_units(conv, "turn")
            emb = base.fit([u.text for u in turns])
            e = emb.embed([render(u) for u in turns])
            q_e = emb.embed([q.text for q in conv.queries])
            sid = np.asarray([u.session_id for u in turns])
            for q, qv in zip(conv.queries, q_e):
                sims = e @ qv
                best = [float(sims[sid == u.session_id].max()) for u in units]
                order = sorted(range(len(units)), key=lambda i: (-best[i], i))
                rows.append([evidence_recall(q, [units[i] for i in order[:k]]) for k in ks])
                groups.append(conv.conversation_id)
                types.append(q.query_type)
            continue
        emb = None
        if base is not None:
            emb = base.fit([u.text for u in units])
            warm = getattr(emb, "warm", None)
            if warm is not None:
                warm([render(u) for u in units] + [q.text for q in conv.queries])
        for q in conv.queries:
            order = rank_units(q.text, units, retriever, emb)
            rows.append([evidence_recall(q, [units[i] for i in order[:k]]) for k in ks])
            groups.append(conv.conversation_id)
            types.append(q.query_type)
    return {"k": list(ks), "recall": np.asarray(rows).tolist(), "group": groups, "type": types}


def recall_at_k_summary(cells: dict) -> dict:
    """Means, per-conversation t intervals, differences from BM25 and per-type means.

    Args:
      cells: granularity -> retriever name -> ``recall_at_k`` output.

    Returns:
      granularity -> name -> ``{"k", "mean", "lower", "upper", "n_questions", "by_type"}`` and,
      for a retriever beside ``bm25``, ``"minus_bm25": {"mean", "lower", "upper"}``.
    """
    from retcon.inference import group_t_interval

    out: dict = {}
    for gran, by_ret in cells.items():
        out[gran] = {}
        ref = by_ret.get("bm25")
        for name, c in by_ret.items():
            r = np.asarray(c["recall"])
            g = np.asarray(c["group"])
            ids = list(dict.fromkeys(c["group"]))
            per = np.stack([r[g == i].mean(axis=0) for i in ids])
            ci = group_t_interval(per)
            s = {
                "k": c["k"],
                "mean": r.mean(axis=0).tolist(),
                "lower": ci.lower.tolist(),
                "upper": ci.upper.tolist(),
                "n_questions": len(r),
                "by_type": {
                    t: r[np.asarray(c["type"]) == t].mean(axis=0).tolist()
                    for t in dict.fromkeys(c["type"])
                },
            }
            if ref is not None and name != "bm25":
                rb = np.asarray(ref["recall"])
                d = group_t_interval(per - np.stack([rb[g == i].mean(axis=0) for i in ids]))
                s["minus_bm25"] = {
                    "mean": (r - rb).mean(axis=0).tolist(),
                    "lower": d.lower.tolist(),
                    "upper": d.upper.tolist(),
                }
            out[gran][name] = s
    return out
