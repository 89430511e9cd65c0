"""OAS (Offline Abstraction-Safety) router: paired data, features, ridge utility model, policies.

Reading paired data, computing features, loading a fitted router and choosing actions use plain
numpy (a deployed agent needs no JAX); fitting (``fit_ridge``, ``fit_mlp``, ``fit_router``) and
evaluation import JAX when first used.

Identification (``identify``, ``support_fractions``, ``Structure``) fits the reader of MODEL §2 to
paired data by maximum likelihood with grouped-bootstrap CIs; ``out_of_fold``,
``compare_crossovers``, ``single_cluster_crossover`` and ``predict_success``
give the fitted model's ``dU(B)`` and crossover budget on held-out groups against the data's
(docs/identify.md). Packing comes from ``theory`` (MODEL §2).

The router over time (``TimelineRouter``, ``simulate_router_timeline``) decides
at each session which units to consolidate, if any, by the utility MODEL §10 predicts
(docs/timeline.md, "A router over time").

References: MODEL §2 (reader, identification), §8, §10.
"""

from retcon.lazy import attach_stub

# Every public name is declared once, in __init__.pyi, and loads on first use.
__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
