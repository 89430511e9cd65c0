"""Real paired data: LoCoMo and LongMemEval under the oracle-evidence protocol (MODEL §9).

Loaders turn the datasets into ``Conversation``s; operator backends (``dataset``, ``extractive``,
``llm``) make the merge, abstract and rewrite records of a cluster; readers (``lexical``,
``sentence``, ``llm``) score a packed context; ``retcon pair locomo|longmemeval`` writes one
paired-data row per question x budget. See ``docs/real-data.md``.

References: MODEL §1-2, §8, §9.
"""

from typing import TYPE_CHECKING

from retcon.lazy import lazy_exports

if TYPE_CHECKING:
    from oas._embed import HashedTfidf as HashedTfidf
    from oas._embed import embed_texts as embed_texts
    from oas._text import content_tokens as content_tokens
    from oas._text import normalize as normalize
    from oas.real._bm25 import bm25_order as bm25_order
    from oas.real._bm25 import bm25_scores as bm25_scores
    from oas.real._classifier import CrossFit as CrossFit
    from oas.real._classifier import TypeClassifier as TypeClassifier
    from oas.real._classifier import cross_fit_types as cross_fit_types
    from oas.real._classifier import fit_type_classifier as fit_type_classifier
    from oas.real._classifier import hashed_ngrams as hashed_ngrams
    from oas.real._classifier import predict_conversation_types as predict_conversation_types
    from oas.real._deployable import FEATURE_GROUPS as FEATURE_GROUPS
    from oas.real._deployable import loco_deployable as loco_deployable
    from oas.real._embed import Embedder as Embedder
    from oas.real._embed import SentenceTransformerEmbedder as SentenceTransformerEmbedder
    from oas.real._embed import make_embedder as make_embedder
    from oas.real._endtoend import crossover_ci as crossover_ci
    from oas.real._endtoend import end_to_end_report as end_to_end_report
    from oas.real._endtoend import gap_split as gap_split
    from oas.real._endtoend import loco_policies as loco_policies
    from oas.real._endtoend import paired_report as paired_report
    from oas.real._endtoend import retrieval_recall_summary as retrieval_recall_summary
    from oas.real._endtoend import side_by_side as side_by_side
    from oas.real._fetch import DATASETS as DATASETS
    from oas.real._fetch import Fetched as Fetched
    from oas.real._fetch import cached_path as cached_path
    from oas.real._fetch import data_dir as data_dir
    from oas.real._fetch import fetch as fetch
    from oas.real._fetch import resolve_data as resolve_data
    from oas.real._fetch import sha256_of as sha256_of
    from oas.real._instances import Packed as Packed
    from oas.real._instances import cluster_of as cluster_of
    from oas.real._instances import order_records as order_records
    from oas.real._instances import pack as pack
    from oas.real._instances import render as render
    from oas.real._llm_client import ChatClient as ChatClient
    from oas.real._llm_client import EndpointPool as EndpointPool
    from oas.real._llm_client import resolve_endpoint as resolve_endpoint
    from oas.real._locomo import Loaded as Loaded
    from oas.real._locomo import LoadReport as LoadReport
    from oas.real._locomo import load_locomo as load_locomo
    from oas.real._locomo import parse_ids as parse_ids
    from oas.real._longmemeval import load_longmemeval as load_longmemeval
    from oas.real._operators import DatasetOperators as DatasetOperators
    from oas.real._operators import ExtractiveOperators as ExtractiveOperators
    from oas.real._operators import make_operators as make_operators
    from oas.real._pair import DEFAULT_BUDGETS as DEFAULT_BUDGETS
    from oas.real._pair import ConversationContext as ConversationContext
    from oas.real._pair import PairConfig as PairConfig
    from oas.real._pair import query_rows as query_rows
    from oas.real._pair import summarize as summarize
    from oas.real._readers import LexicalReader as LexicalReader
    from oas.real._readers import SentenceReader as SentenceReader
    from oas.real._readers import TopKReader as TopKReader
    from oas.real._readers import answer_recall as answer_recall
    from oas.real._readers import lexical_correct as lexical_correct
    from oas.real._readers import make_reader as make_reader
    from oas.real._retrieval import evidence_recall as evidence_recall
    from oas.real._retrieval import rank_units as rank_units
    from oas.real._retrieval import retrieve as retrieve
    from oas.real._retrieval_features import locomo_retrieval_features as locomo_retrieval_features
    from oas.real._retrieval_features import unit_retrieval_features as unit_retrieval_features
    from oas.real._run import PairJob as PairJob
    from oas.real._run import run_pair_job as run_pair_job
    from oas.real._text import RegexTokenizer as RegexTokenizer
    from oas.real._text import TiktokenTokenizer as TiktokenTokenizer
    from oas.real._text import Tokenizer as Tokenizer
    from oas.real._text import make_tokenizer as make_tokenizer
    from oas.real._text import match_terms as match_terms
    from oas.real._text import split_sentences as split_sentences
    from oas.real._text import stem as stem
    from oas.real._timeline import survival as survival
    from oas.real._timeline import survival_report as survival_report
    from oas.real._types import Conversation as Conversation
    from oas.real._types import OperatorBackend as OperatorBackend
    from oas.real._types import Query as Query
    from oas.real._types import Reader as Reader
    from oas.real._types import Record as Record
    from oas.real._types import Session as Session

# Public name -> private module, loaded on first use (PEP 562): `retcon --help` and every
# other command import oas.real.cli, which should not load the loaders, readers and LLM client.
_EXPORTS = {
    "survival": "oas.real._timeline",
    "survival_report": "oas.real._timeline",
    "bm25_order": "oas.real._bm25",
    "bm25_scores": "oas.real._bm25",
    "CrossFit": "oas.real._classifier",
    "TypeClassifier": "oas.real._classifier",
    "cross_fit_types": "oas.real._classifier",
    "fit_type_classifier": "oas.real._classifier",
    "hashed_ngrams": "oas.real._classifier",
    "predict_conversation_types": "oas.real._classifier",
    "Embedder": "oas.real._embed",
    "HashedTfidf": "oas._embed",
    "SentenceTransformerEmbedder": "oas.real._embed",
    "embed_texts": "oas._embed",
    "make_embedder": "oas.real._embed",
    "crossover_ci": "oas.real._endtoend",
    "loco_deployable": "oas.real._deployable",
    "FEATURE_GROUPS": "oas.real._deployable",
    "locomo_retrieval_features": "oas.real._retrieval_features",
    "unit_retrieval_features": "oas.real._retrieval_features",
    "end_to_end_report": "oas.real._endtoend",
    "gap_split": "oas.real._endtoend",
    "loco_policies": "oas.real._endtoend",
    "paired_report": "oas.real._endtoend",
    "retrieval_recall_summary": "oas.real._endtoend",
    "side_by_side": "oas.real._endtoend",
    "DATASETS": "oas.real._fetch",
    "Fetched": "oas.real._fetch",
    "cached_path": "oas.real._fetch",
    "data_dir": "oas.real._fetch",
    "fetch": "oas.real._fetch",
    "resolve_data": "oas.real._fetch",
    "sha256_of": "oas.real._fetch",
    "Packed": "oas.real._instances",
    "cluster_of": "oas.real._instances",
    "order_records": "oas.real._instances",
    "pack": "oas.real._instances",
    "render": "oas.real._instances",
    "ChatClient": "oas.real._llm_client",
    "EndpointPool": "oas.real._llm_client",
    "resolve_endpoint": "oas.real._llm_client",
    "Loaded": "oas.real._locomo",
    "LoadReport": "oas.real._locomo",
    "load_locomo": "oas.real._locomo",
    "parse_ids": "oas.real._locomo",
    "load_longmemeval": "oas.real._longmemeval",
    "DatasetOperators": "oas.real._operators",
    "ExtractiveOperators": "oas.real._operators",
    "make_operators": "oas.real._operators",
    "DEFAULT_BUDGETS": "oas.real._pair",
    "ConversationContext": "oas.real._pair",
    "PairConfig": "oas.real._pair",
    "query_rows": "oas.real._pair",
    "summarize": "oas.real._pair",
    "LexicalReader": "oas.real._readers",
    "SentenceReader": "oas.real._readers",
    "TopKReader": "oas.real._readers",
    "answer_recall": "oas.real._readers",
    "lexical_correct": "oas.real._readers",
    "make_reader": "oas.real._readers",
    "evidence_recall": "oas.real._retrieval",
    "rank_units": "oas.real._retrieval",
    "retrieve": "oas.real._retrieval",
    "PairJob": "oas.real._run",
    "run_pair_job": "oas.real._run",
    "RegexTokenizer": "oas.real._text",
    "TiktokenTokenizer": "oas.real._text",
    "Tokenizer": "oas.real._text",
    "content_tokens": "oas._text",
    "make_tokenizer": "oas.real._text",
    "match_terms": "oas.real._text",
    "normalize": "oas._text",
    "split_sentences": "oas.real._text",
    "stem": "oas.real._text",
    "Conversation": "oas.real._types",
    "OperatorBackend": "oas.real._types",
    "Query": "oas.real._types",
    "Reader": "oas.real._types",
    "Record": "oas.real._types",
    "Session": "oas.real._types",
}

__getattr__, __dir__ = lazy_exports("oas.real", _EXPORTS)

__all__ = [
    "DATASETS",
    "DEFAULT_BUDGETS",
    "FEATURE_GROUPS",
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
    "gap_split",
    "hashed_ngrams",
    "lexical_correct",
    "load_locomo",
    "load_longmemeval",
    "loco_deployable",
    "loco_policies",
    "locomo_retrieval_features",
    "make_embedder",
    "make_operators",
    "make_reader",
    "make_tokenizer",
    "match_terms",
    "normalize",
    "order_records",
    "pack",
    "paired_report",
    "parse_ids",
    "predict_conversation_types",
    "query_rows",
    "rank_units",
    "render",
    "resolve_data",
    "resolve_endpoint",
    "retrieval_recall_summary",
    "retrieve",
    "run_pair_job",
    "sha256_of",
    "side_by_side",
    "split_sentences",
    "stem",
    "summarize",
    "survival",
    "survival_report",
    "unit_retrieval_features",
]
