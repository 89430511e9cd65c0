"""Real paired data: LoCoMo and LongMemEval under the oracle-evidence protocol (MODEL §9).

Loaders turn the datasets into ``Conversation``s; operator backends (``dataset``, ``extractive``,
``llm``) make the merge, abstract and rewrite records of a cluster; readers (``lexical``,
``sentence``, ``llm``) score a packed context; ``retcon pair locomo|longmemeval`` writes one
paired-data row per question x budget. See ``docs/real-data.md``. LoCoMo as a stream (MODEL §10):
``timeline_report``, ``timeline_identify``, ``timeline_router_report`` (docs/timeline.md).

References: MODEL §1-2, §8, §9.
"""

from retcon.lazy import attach_stub

# Every public name is declared once, in __init__.pyi, and loads on first use.
__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
