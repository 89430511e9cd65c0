"""What a paper-checks run measures, at which scale: a frozen, self-checking config.

``CheckConfig.fast()`` runs in a few minutes on two cores (small simulations, a LoCoMo subset,
few bootstrap resamples); ``CheckConfig.full()`` is the paper's scale.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from oas.real import DEFAULT_BUDGETS
from retcon.errors import InputError, Spell, check_choice, check_range
from retcon.vocab import OFFLINE_READERS

#: The LoCoMo designs of ``CheckConfig.design`` and what sets each apart, aspect by aspect (issue
#: 46 item 7): the one source of the line claim 1's summary says about the other design and of
#: the ``--design both`` side-by-side summary (``paper_checks.report._designs``).
DESIGN_TRAITS = {
    "ours": {
        "questions": "questions spread over every conversation",
        "budgets": "budgets 32-2048 at 4 per octave",
        "packing": "sessions cut to the budget in order",
        "tokens": "regex tokens",
    },
    "paper": {
        "questions": "the paper's 75-question sample",
        "budgets": "budgets 16-128",
        "packing": "cheapest-first packing of whole turns, records capped at the budget",
        "tokens": "alphanumeric tokens",
    },
}
#: How each design is named on the command line, and how it is run alone.
DESIGN_OPTION = {
    "ours": ("ours", "run without --design"),
    "paper": ("--design paper", "run --design paper"),
}


#: How ``CheckConfig``'s messages name the fields that ``retcon paper-checks`` sets from an
#: option: the one table from field to option, so the CLI re-checks none of these rules.
CONFIG_SPELL = Spell(
    "CheckConfig",
    cli={
        "locomo_limit": "--limit",
        "readers": "--reader-name",
        "paired": "--paired",
        "second_reader": "--second-reader",
    },
)


def design_traits(design: str) -> str:
    """``design``'s traits in one phrase (questions, budgets, packing, tokens)."""
    return ", ".join(DESIGN_TRAITS[design].values())


def other_design(design: str) -> str:
    """The one line on how the LoCoMo design other than ``design`` differs: its traits, and that
    its crossover is in other tokens on another grid, so it never stands in for this one's."""
    other = "paper" if design == "ours" else "ours"
    name, how = DESIGN_OPTION[other]
    return (
        f"the other design ({name}: {design_traits(other)}) measures B* in other tokens on "
        f"another grid, so its crossover is not this one's: {how} for its value, or --design "
        "both for the two side by side (docs/statistics.md has both)"
    )


@dataclass(frozen=True)
class TheoryModel:
    """A single-cluster model of MODEL §6 per operator, the exact baseline of claims 1-3 and 5.

    Attributes:
      dist, params: length distribution name and parameters for ``theory.make_length_dist``.
      acc_raw, acc_guess: ``a`` and ``g``.
      compress_ratio, fidelity: ``{operator: rho_o}``, ``{operator: phi_o}``.
    """

    dist: str = "exponential"
    params: dict = field(default_factory=lambda: {"mean": 600.0})
    acc_raw: float = 0.8
    acc_guess: float = 0.1
    compress_ratio: dict = field(
        default_factory=lambda: {"merge": 0.35, "abstract": 0.15, "rewrite": 0.6}
    )
    fidelity: dict = field(
        default_factory=lambda: {"merge": 0.9, "abstract": 0.75, "rewrite": 0.95}
    )

    def __post_init__(self):
        check_range("TheoryModel.acc_guess", self.acc_guess, 0, 1, low_open=False)
        check_range("TheoryModel.acc_raw", self.acc_raw, self.acc_guess, 1, high_open=False)
        for op, rho in self.compress_ratio.items():
            check_range(f"TheoryModel.compress_ratio[{op}]", rho, 0, 1)
        for op, phi in self.fidelity.items():
            check_range(f"TheoryModel.fidelity[{op}]", phi, 0, None, low_open=False)
        if set(self.compress_ratio) != set(self.fidelity):
            raise InputError(
                f"TheoryModel: compress_ratio and fidelity must name the same operators; got "
                f"{sorted(self.compress_ratio)} and {sorted(self.fidelity)}."
            )


@dataclass(frozen=True)
class CheckConfig:
    """Scale and thresholds of a paper-checks run.

    Attributes:
      full: paper scale (recorded in the report).
      data: LoCoMo ``locomo10.json`` path; None means the cache (``RETCON_DATA_DIR``).
      scenarios: sim presets, shortest evidence first (claim 5 compares them in this order);
        empty: no simulation shown (the default with ``paired``).
      sim_queries: queries per simulated curve.
      sim_instances: simulated paired instances (query x budget rows) per scenario (claims 6-9).
      sim_paired_budgets: budgets of the simulated paired data, spread over the preset's grid.
      locomo_limit: questions of LoCoMo to use (None: all of categories 1-4), spread evenly over
        the conversations.
      llm_limit: questions for the ``llm`` reader (each costs 4 x budgets endpoint calls).
      budgets: budget grid for real paired data (tokens).
      readers: LoCoMo readers for claim 4; the first is the main one. With ``paired``: the
        readers' names, one per file.
      paired: paired-data files graded instead of LoCoMo (``retcon paper-checks --paired``), one
        reader each, the first the main one (docs/paper-checks.md, "Your own model").
      n_resamples: bootstrap replicates.
      length_strata: evidence-length strata of claim 5 (quantiles of ``len(C)``; at least 4).
      max_accuracy_cost: accuracy cost of calibration still called bounded (claim 9).
      alpha: harm-rate target of the calibrated routers (claim 7's OAS is uncalibrated).
      alphas: harm targets swept in claim 9, down to where calibration binds.
      oc_datasets: synthetic data sets per world for each rule's operating characteristics
        (``paper_checks.operating``; claim 5, a bootstrap per data set, uses half).
      equivalence_share: claim 8's margin for ``acc(mlp) - acc(oas)`` as a share of claim 7's
        measured OAS gain (0.5: an MLP adding half of what OAS adds is a reliable improvement).
      locomo_audit, audit_mode: the LoCoMo audit's ``errors.json`` applied to LoCoMo under these
        modes (``oas.real.apply_audit``; ``paper_checks.studies._robustness``); None: LoCoMo as released.
      theory: the exact single-cluster model.
      design: ``"ours"`` (default) or ``"paper"``: LoCoMo paired under the paper's design
        (``oas.real.paper_sample_queries``, ``oas.real.PAPER_SETTINGS``, budgets 16-128) and the
        ``tables`` block beside the paper's (``paper_checks.tables._design``; MODEL §11).
      features: definitions of features 3 and 6 for LoCoMo paired here (``"ours"``, ``"paper"``;
        ``None``: the design's).
      protocol: ``"oracle"`` (default) or, with ``design="paper"``, ``"end-to-end"``: LoCoMo
        paired here under the paper's full-history design (``oas.real._full_history``; MODEL
        §11), which makes Tables 6 and 12; the type feature is the gold type.
      second_reader: with ``design="paper"``, a paired file of the same design, dataset, question
        ids and budgets made with a second answer model: Table 5 from its rows (MODEL §11;
        ``paper_checks.tables._design.check_second_reader``); ``None`` (default): Table 5 not made.
    """

    full: bool = False
    data: str | None = None
    scenarios: tuple = ("locomo-like", "longmemeval-like")
    sim_queries: int = 4000
    sim_instances: int = 3000
    sim_paired_budgets: int = 8
    locomo_limit: int | None = 500
    llm_limit: int | None = 50
    budgets: tuple = DEFAULT_BUDGETS
    readers: tuple = OFFLINE_READERS
    paired: tuple = ()
    n_resamples: int = 500
    length_strata: int = 4
    max_accuracy_cost: float = 0.03
    alpha: float = 0.1
    alphas: tuple = (0.005, 0.01, 0.02, 0.05, 0.1)
    equivalence_share: float = 0.5
    oc_datasets: int = 200
    theory: TheoryModel = field(default_factory=TheoryModel)
    locomo_audit: str | None = None
    audit_mode: str = "drop,cite"
    audit_sample: str = "same"
    design: str = "ours"
    features: str | None = None
    protocol: str = "oracle"
    second_reader: str | None = None

    def __post_init__(self):

        check_choice("CheckConfig.design", self.design, ("ours", "paper"))
        check_choice("CheckConfig.protocol", self.protocol, ("oracle", "end-to-end"))
        check_choice("CheckConfig.audit_sample", self.audit_sample, ("same", "redrawn"))
        s = CONFIG_SPELL
        if self.protocol != "oracle" and self.design != "paper":
            raise InputError(
                f"{s.lead('protocol')} {self.protocol} is the paper's full-history design, which "
                f"needs {s.given('design', 'paper')}; got {s.given('design', self.design)} (our "
                "end-to-end runs are the 'end to end' section, --end-to-end)."
            )
        if self.second_reader is not None and self.design != "paper":
            raise InputError(
                f"{s.lead('second_reader')} makes the paper's Table 5, which needs "
                f"{s.given('design', 'paper')}; got {s.given('design', self.design)}."
            )
        if self.features is not None:
            check_choice("CheckConfig.features", self.features, ("ours", "paper"))
        _check_int("sim_paired_budgets", self.sim_paired_budgets, 2)
        for name in ("sim_queries", "sim_instances", "n_resamples", "oc_datasets"):
            _check_int(name, getattr(self, name), 10)
        for name in ("locomo_limit", "llm_limit"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise InputError(
                    f"{s.lead(name)} must be a positive integer (None: all); got {v!r}."
                )
        if len(self.scenarios) == 1:
            raise InputError(
                "CheckConfig.scenarios needs two presets (short, long evidence), or none (no "
                f"simulation shown); got {self.scenarios!r}."
            )
        if not self.budgets or any(not b > 0 for b in self.budgets):
            raise InputError(f"CheckConfig.budgets must be positive tokens; got {self.budgets!r}.")
        if not self.readers:
            raise InputError("CheckConfig.readers must name at least one reader; got none.")
        if self.paired and len(self.paired) != len(self.readers):
            raise InputError(
                f"{s.lead('readers')}: {len(self.readers)} names for {len(self.paired)} "
                f"{s('paired')} files; give one per file, in order."
            )
        if len(set(self.readers)) != len(self.readers):
            raise InputError(
                f"{s.lead('readers')}: the readers' names must differ; got {list(self.readers)}."
            )
        _check_int("length_strata", self.length_strata, 4)
        if not self.alphas:
            raise InputError("CheckConfig.alphas must name at least one harm target; got none.")
        for a in self.alphas:
            check_range("CheckConfig.alphas", a, 0, 1)
        check_range("CheckConfig.equivalence_share", self.equivalence_share, 0, 1)
        check_range("CheckConfig.max_accuracy_cost", self.max_accuracy_cost, 0, 1, low_open=False)
        check_range("CheckConfig.alpha", self.alpha, 0, 1)

    @classmethod
    def fast(cls, **overrides) -> CheckConfig:
        """The default: minutes on two cores."""
        return cls(**overrides)

    @classmethod
    def full_scale(cls, **overrides) -> CheckConfig:
        """Paper scale: large simulations, all of LoCoMo, 2000 resamples."""
        base = dict(
            full=True,
            sim_queries=200_000,
            sim_instances=20_000,
            locomo_limit=None,
            llm_limit=200,
            n_resamples=2000,
        )
        return cls(**{**base, **overrides})

    def replace(self, **changes) -> CheckConfig:
        return dataclasses.replace(self, **changes)


def _check_int(name: str, value, low: int) -> None:
    """Refuse ``CheckConfig.<name>`` unless it is an integer (not a bool) of at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InputError(f"CheckConfig.{name} must be an integer >= {low}; got {value!r}.")
