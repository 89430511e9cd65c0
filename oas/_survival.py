"""The survival models of memory over time: what share of a cluster's questions a pass keeps.

MODEL §10 states geometric survival (the same loss every pass, H10) as a hypothesis to test on real
text; `oas.real`'s LoCoMo report fits each model here to the observed passes, and the timeline's
survival figure draws the one it chose.
References: docs/model.md §10; docs/timeline.md.
"""

from __future__ import annotations

#: Survival models: name -> curve ``S_k`` (``k >= 1``) from two numbers in (0, 1).
SURVIVAL_MODELS = {
    "geometric": lambda k, phi, _c: phi**k,  # H10: the same loss every pass
    "front-loaded": lambda k, phi, c: c * phi ** (k - 1),  # the first pass keeps c, later phi
    "levels off": lambda k, phi, c: c + (1 - c) * phi**k,  # a floor c that passes cannot lose
}
