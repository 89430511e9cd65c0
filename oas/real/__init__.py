"""Real paired data: LoCoMo and LongMemEval under the oracle-evidence protocol (MODEL §9).

Loaders turn the datasets into ``Conversation``s; operator backends (``dataset``, ``extractive``,
``llm``) make the merge, abstract and rewrite records of a cluster; readers (``lexical``,
``sentence``, ``llm``) score a packed context; ``retcon pair locomo|longmemeval`` writes one
paired-data row per question x budget. See ``docs/real-data.md``.

References: MODEL §1-2, §8, §9.
"""

from oas.real._bm25 import bm25_order, bm25_scores
from oas.real._classifier import (
    CrossFit,
    TypeClassifier,
    cross_fit_types,
    fit_type_classifier,
    hashed_ngrams,
)
from oas.real._embed import (
    Embedder,
    HashedTfidf,
    SentenceTransformerEmbedder,
    embed_texts,
    make_embedder,
)
from oas.real._endtoend import (
    crossover_ci,
    end_to_end_report,
    loco_policies,
    side_by_side,
)
from oas.real._fetch import DATASETS, Fetched, cached_path, data_dir, fetch, resolve_data, sha256_of
from oas.real._instances import Packed, cluster_of, order_records, pack, render
from oas.real._llm_client import ChatClient, EndpointPool, resolve_endpoint
from oas.real._locomo import Loaded, LoadReport, load_locomo, parse_ids
from oas.real._longmemeval import load_longmemeval
from oas.real._operators import DatasetOperators, ExtractiveOperators, make_operators
from oas.real._pair import (
    DEFAULT_BUDGETS,
    ConversationContext,
    PairConfig,
    query_rows,
    summarize,
)
from oas.real._readers import (
    LexicalReader,
    SentenceReader,
    TopKReader,
    answer_recall,
    lexical_correct,
    make_reader,
)
from oas.real._retrieval import evidence_recall, rank_units, retrieve
from oas.real._run import PairJob, run_pair_job
from oas.real._text import (
    RegexTokenizer,
    TiktokenTokenizer,
    Tokenizer,
    content_tokens,
    make_tokenizer,
    match_terms,
    normalize,
    split_sentences,
    stem,
)
from oas.real._types import Conversation, OperatorBackend, Query, Reader, Record, Session

__all__ = [
    "DATASETS",
    "DEFAULT_BUDGETS",
    "ChatClient",
    "Conversation",
    "ConversationContext",
    "CrossFit",
    "DatasetOperators",
    "Embedder",
    "EndpointPool",
    "ExtractiveOperators",
    "Fetched",
    "HashedTfidf",
    "LexicalReader",
    "LoadReport",
    "Loaded",
    "OperatorBackend",
    "Packed",
    "PairConfig",
    "PairJob",
    "Query",
    "Reader",
    "Record",
    "RegexTokenizer",
    "SentenceReader",
    "SentenceTransformerEmbedder",
    "Session",
    "TiktokenTokenizer",
    "Tokenizer",
    "TopKReader",
    "TypeClassifier",
    "answer_recall",
    "bm25_order",
    "bm25_scores",
    "cached_path",
    "cluster_of",
    "content_tokens",
    "cross_fit_types",
    "crossover_ci",
    "data_dir",
    "embed_texts",
    "end_to_end_report",
    "evidence_recall",
    "fetch",
    "fit_type_classifier",
    "hashed_ngrams",
    "lexical_correct",
    "load_locomo",
    "load_longmemeval",
    "loco_policies",
    "make_embedder",
    "make_operators",
    "make_reader",
    "make_tokenizer",
    "match_terms",
    "normalize",
    "order_records",
    "pack",
    "parse_ids",
    "query_rows",
    "rank_units",
    "render",
    "resolve_data",
    "resolve_endpoint",
    "retrieve",
    "run_pair_job",
    "sha256_of",
    "side_by_side",
    "split_sentences",
    "stem",
    "summarize",
]
