"""Names shared by every package: the actions (MODEL §1), the 4-way query types (§1, §9) and
the readers of real data (§9).

A paired-data file or a scenario uses one query-type vocabulary; a type's one-hot slot (§8
features 8-11) is its index in that vocabulary.
"""

# The action set A, in the order every array axis over actions uses.
ACTIONS = ("ret", "merge", "abstract", "rewrite")
OPERATORS = ACTIONS[1:]  # the generative (consolidation) operators

# The readers p(q, X) of real data (MODEL §2, §9), the one list every CLI and API offers. The
# offline ones need no endpoint; ``llm`` needs an OpenAI-compatible server.
READERS = ("lexical", "sentence", "topk", "llm")
OFFLINE_READERS = READERS[:-1]
# How an ``llm`` reader's answer is judged: the lexical rule or the model itself (yes/no).
LLM_JUDGES = ("lexical", "llm")

# How ``oas.evaluate`` (``retcon evaluate --interval``) brackets a metric over held-out groups:
# the Student-t interval of the test-group means (the few-groups protocol, docs/statistics.md)
# or the pooled mean's grouped percentile bootstrap.
EVALUATE_INTERVALS = ("t", "percentile")

LOCOMO_TYPES = ("single-hop", "multi-hop", "temporal", "open-domain")
LONGMEMEVAL_TYPES = ("single-session", "multi-session", "temporal-reasoning", "knowledge-update")
VOCABULARIES = {"locomo": LOCOMO_TYPES, "longmemeval": LONGMEMEVAL_TYPES}

# LoCoMo `category` integers, per the benchmark's own evaluation code (`task_eval` in
# snap-research/locomo): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial
# (no `answer` key; excluded from the 4-way set). The mapping 1 single-hop / 3 multi-hop /
# 4 open-domain that circulates elsewhere is wrong (MODEL §9).
LOCOMO_CATEGORY = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
LOCOMO_ADVERSARIAL = 5

# LongMemEval `question_type` -> 4-way type (MODEL §9).
LONGMEMEVAL_TYPE = {
    "single-session-user": "single-session",
    "single-session-assistant": "single-session",
    "single-session-preference": "single-session",
    "multi-session": "multi-session",
    "temporal-reasoning": "temporal-reasoning",
    "knowledge-update": "knowledge-update",
}


# MODEL §10: the over-time policies (sim.TIMELINE_POLICIES), here so a command checks its options
# without importing the JAX timeline
TIMELINE_POLICIES = ("retain-all", "overflow", "periodic", "budget-aware", "tiered")
