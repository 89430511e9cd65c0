"""Scenario configs: frozen, self-validating dataclasses, loadable from TOML or a preset name.

A scenario says what the Monte Carlo draws (MODEL §1-§2, §7): the query mix over the four query
types, each type's evidence structure (records per cluster, record length distribution, mean
cross-record redundancy), the operators' compression ratios and per-type fidelities, the reader, the
retriever, the packing mode and a budget grid. Every error names the TOML key, what was expected
and what came, e.g. ``operators.merge.compress_ratio must be in (0, 1]; got 1.3.``

References: MODEL §1 (objects, ``rho``, ``phi`` may exceed 1), §2 (packing, reader), §6 (the
single-cluster model the ``single-cluster`` preset reduces to), §7 (local vs cross-note operators).
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from retcon.errors import InputError, decode_utf8
from retcon.vocab import OPERATORS, VOCABULARIES
from sim import _checks as ck
from theory import DIST_PARAMS, DIST_SCALE_PARAM, PACKINGS, check_dist_params, make_length_dist

RETRIEVER_ORDERS = ("oracle", "noisy")
MAX_RECORDS = 16
MAX_DISTRACTORS = 256
PRESETS = ("locomo-like", "single-cluster", "longmemeval-like")
DEFAULT_PRESET = "locomo-like"
N_QUERY_TYPES = 4  # every vocabulary is 4-way (MODEL §9)


@dataclass(frozen=True)
class LengthConfig:
    """A record-length distribution (tokens): family ``dist`` and its parameters.

    The families, their parameters (in sampler order), their validation and the unit parameter
    that ``scaled`` multiplies are theory's one table (``theory.DIST_PARAMS``,
    ``theory.check_dist_params``, ``theory.DIST_SCALE_PARAM``); the names match
    ``theory.make_length_dist``.
    """

    dist: str
    params: tuple[tuple[str, float], ...]
    where: str = field(default="length", compare=False)

    def __post_init__(self):
        ck.choice(f"{self.where}.dist", self.dist, DIST_PARAMS)
        given = dict(self.params)
        for k, v in given.items():  # TOML types: a string or bool is not a number
            ck.number(f"{self.where}.{k}", v)
        _, checked = check_dist_params(self.dist, given, spell=lambda k: f"{self.where}.{k}")
        object.__setattr__(self, "params", tuple(checked.items()))

    def get(self, name: str) -> float:
        return dict(self.params)[name]

    @property
    def pair(self) -> tuple[float, float]:
        """``(p1, p2)`` as ``theory.sample_lengths`` reads them (second is 0 for one-parameter families)."""
        vals = [v for _, v in self.params]
        return (vals[0], vals[1] if len(vals) > 1 else 0.0)

    @property
    def mean(self) -> float:
        """Mean record length in tokens (``theory.LengthDist.mean``)."""

        return make_length_dist(self.dist, **dict(self.params)).mean

    def scaled(self, s: float) -> LengthConfig:
        """The distribution of ``s * L`` (MODEL §6.5)."""
        unit = DIST_SCALE_PARAM[self.dist]
        return LengthConfig(
            self.dist, tuple((k, v * s if k == unit else v) for k, v in self.params), self.where
        )

    def to_dict(self) -> dict:
        return {"dist": self.dist, **dict(self.params)}


@dataclass(frozen=True)
class QueryTypeConfig:
    """One query type: its share of queries, evidence structure, reader accuracy and fidelities.

    Attributes:
      name: a type of the scenario's vocabulary (``retcon.vocab``).
      weight: relative frequency in the query mix (>= 0; normalized over the scenario).
      records: records per evidence cluster ``|C|`` (1..16).
      redundancy: mean cross-record redundancy ``r`` in [0, 1): the share of the cluster's tokens
        repeated across its records; cross-note operators drop it, rewrite cannot (MODEL §7). Each
        cluster draws its own ``r_c ~ Beta`` with this mean; 0 when ``records == 1``.
      length: record length distribution (tokens).
      acc_raw: reader accuracy ``a_t`` with full raw evidence, in (0, 1] (TOML ``reader.acc_raw``).
      fidelity: ``phi_o(t) >= 0`` per operator in ``OPERATORS`` order (TOML
        ``operators.<op>.fidelity``); values above 1 are allowed (MODEL §1).
    """

    name: str
    weight: float
    records: int
    redundancy: float
    length: LengthConfig
    acc_raw: float
    fidelity: tuple[float, ...]

    def __post_init__(self):
        w = f"types.{self.name}"
        checked = {
            "weight": ck.number(f"{w}.weight", self.weight, 0.0, None),
            "records": ck.integer(f"{w}.records", self.records, 1, MAX_RECORDS),
            "redundancy": ck.number(f"{w}.redundancy", self.redundancy, 0.0, 1.0, high_open=True),
        }
        if checked["records"] == 1 and checked["redundancy"] != 0:
            raise InputError(
                f"{w}.redundancy must be 0 when {w}.records is 1 (nothing to repeat across "
                f"records); got {checked['redundancy']!r}."
            )
        if not isinstance(self.length, LengthConfig):
            raise InputError(
                f'{w}.length must be a table like {{dist = "gamma", shape = 2, scale = 300}}; '
                f"got {self.length!r}."
            )
        checked["acc_raw"] = ck.number(
            f"reader.acc_raw.{self.name}", self.acc_raw, 0.0, 1.0, low_open=True
        )
        if len(self.fidelity) != len(OPERATORS):
            raise InputError(
                f"QueryTypeConfig.fidelity needs {len(OPERATORS)} values {OPERATORS}; got {self.fidelity!r}."
            )
        checked["fidelity"] = tuple(
            ck.number(f"operators.{op}.fidelity.{self.name}", phi, 0.0, None)
            for op, phi in zip(OPERATORS, self.fidelity)
        )
        for name, value in checked.items():  # the checked numbers, as floats
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class OperatorConfig:
    """A consolidation operator: its compression ratio ``rho_o`` in (0, 1] (MODEL §1, §7).

    ``rewrite`` is local (each record compressed on its own, ``rho * len(m)``: cross-record
    redundancy stays); ``merge`` and ``abstract`` are cross-note (one record of length
    ``rho * (1 - r_c) * len(C)``). ``rho = 1`` is allowed as the identity check.
    """

    name: str
    compress_ratio: float

    def __post_init__(self):
        ck.choice("operators.<name>", self.name, OPERATORS)
        ck.number(
            f"operators.{self.name}.compress_ratio", self.compress_ratio, 0.0, 1.0, low_open=True
        )


@dataclass(frozen=True)
class RetrieverConfig:
    """The retriever: ``oracle`` order (evidence first), or ``noisy`` ranking among distractors.

    Scores are ``relevance + noise * N(0, 1)`` with relevance 1 for evidence and 0 for distractor
    records; ``oracle`` sets ``noise = 0`` (ties keep evidence first). Distractor lengths follow the
    query type's record length distribution.

    ``recall`` in (0, 1]: each record of the query's evidence cluster is found by the retriever
    independently with this probability. A missed record is not a candidate: no action packs or
    consolidates it, the router's features do not see it, and the reader's support of MODEL §2
    (a product over evidence units, 0 for an absent unit) is 0 under every action, so the query
    scores the guessing accuracy ``g`` whatever the action (docs/simulation.md, "Retriever recall").
    """

    order: str = "oracle"
    distractors: int = 0
    noise: float = 0.0
    recall: float = 1.0

    def __post_init__(self):
        ck.choice("retriever.order", self.order, RETRIEVER_ORDERS)
        ck.integer("retriever.distractors", self.distractors, 0, MAX_DISTRACTORS)
        object.__setattr__(self, "noise", ck.number("retriever.noise", self.noise, 0.0, None))
        object.__setattr__(
            self, "recall", ck.number("retriever.recall", self.recall, 0.0, 1.0, low_open=True)
        )
        if self.order == "noisy" and self.noise <= 0:
            raise InputError(
                f"retriever.noise must be > 0 when retriever.order is 'noisy'; got {self.noise!r}."
            )
        if self.order == "oracle" and self.noise != 0:
            raise InputError(
                f"retriever.noise must be 0 when retriever.order is 'oracle'; got {self.noise!r}."
            )


@dataclass(frozen=True)
class ClassifierConfig:
    """The query-type classifier whose prediction the router reads (MODEL §8 features 8-11).

    The reader's success does not depend on it (it answers the question, whatever its predicted
    type); only the router's type one-hot does. Either a scalar ``accuracy`` with uniform confusion
    (a question of type ``t`` is predicted ``t`` with probability ``accuracy``, each of the other
    three types of the vocabulary with ``(1 - accuracy) / 3``), or a full ``confusion`` matrix:
    ``confusion[i][j]`` is the probability that a question of the vocabulary's type ``i`` is
    predicted as type ``j`` (4 x 4, rows in vocabulary order, each row summing to 1). The default
    is the perfect classifier (the gold type).

    References: MODEL §8 (features), §9 (the 4-way types).
    """

    accuracy: float = 1.0
    confusion: tuple[tuple[float, ...], ...] | None = None

    def __post_init__(self):
        object.__setattr__(
            self, "accuracy", ck.number("classifier.accuracy", self.accuracy, 0.0, 1.0)
        )
        if self.confusion is None:
            return
        if self.accuracy != 1.0:
            raise InputError(
                "classifier.accuracy and classifier.confusion are exclusive; give one "
                f"(got accuracy {self.accuracy:g} and a confusion matrix)."
            )
        n = N_QUERY_TYPES
        rows = self.confusion
        if isinstance(rows, (str, bytes)) or not hasattr(rows, "__len__") or len(rows) != n:
            raise InputError(
                f"classifier.confusion must be a {n} x {n} array (rows: gold type, columns: "
                f"predicted type, vocabulary order); got {rows!r}."
            )
        out = []
        for i, row in enumerate(rows):
            if isinstance(row, (str, bytes)) or not hasattr(row, "__len__") or len(row) != n:
                raise InputError(
                    f"classifier.confusion[{i}] must be an array of {n} probabilities; got {row!r}."
                )
            vals = tuple(
                ck.number(f"classifier.confusion[{i}][{j}]", v, 0.0, 1.0) for j, v in enumerate(row)
            )
            if abs(math.fsum(vals) - 1.0) > 1e-6:
                raise InputError(
                    f"classifier.confusion[{i}] must sum to 1 (a row of probabilities); "
                    f"got sum {math.fsum(vals):.6g} ({list(vals)})."
                )
            out.append(vals)
        object.__setattr__(self, "confusion", tuple(out))

    @property
    def perfect(self) -> bool:
        """True when every question is predicted as its gold type."""
        return bool(np.array_equal(self.matrix(), np.eye(N_QUERY_TYPES)))

    def matrix(self) -> np.ndarray:
        """The ``(4, 4)`` row-stochastic confusion matrix (gold type x predicted type)."""
        if self.confusion is not None:
            return np.asarray(self.confusion, dtype=np.float64)
        a = self.accuracy
        off = (1.0 - a) / (N_QUERY_TYPES - 1)
        return np.where(np.eye(N_QUERY_TYPES, dtype=bool), a, off)

    def to_dict(self) -> dict:
        if self.confusion is not None:
            return {"confusion": [list(r) for r in self.confusion]}
        return {"accuracy": self.accuracy}


@dataclass(frozen=True)
class Scenario:
    """A full simulation scenario (MODEL §1-§2, §7). Swept budgets live in ``budgets``.

    Attributes:
      name: label for tables and figures.
      vocabulary: ``locomo`` or ``longmemeval`` (which 4-way type names ``types`` use).
      types: the query types present (1..4), in vocabulary order; absent types have weight 0.
      operators: ``merge``, ``abstract``, ``rewrite`` in ``OPERATORS`` order.
      acc_guess: reader accuracy ``g`` with no evidence, below every type's ``acc_raw``.
      retriever: ``RetrieverConfig`` (order, distractors, noise, recall).
      packing: ``prefix``, ``skip`` or ``cut`` (MODEL §2).
      budgets: the budget grid in tokens, strictly increasing, > 0.
      queries: default number of simulated queries.
      description: free text.
      classifier: ``ClassifierConfig``, the query-type classifier the router reads (default
        perfect).
    """

    name: str
    vocabulary: str
    types: tuple[QueryTypeConfig, ...]
    operators: tuple[OperatorConfig, OperatorConfig, OperatorConfig]
    acc_guess: float
    retriever: RetrieverConfig
    packing: str
    budgets: tuple[float, ...]
    queries: int = 65536
    description: str = ""
    classifier: ClassifierConfig = field(default_factory=ClassifierConfig)

    def __post_init__(self):
        ck.choice("vocabulary", self.vocabulary, VOCABULARIES)
        vocab = VOCABULARIES[self.vocabulary]
        if not 1 <= len(self.types) <= len(vocab):
            raise InputError(
                f"types must list 1 to {len(vocab)} query types; got {len(self.types)}."
            )
        names = [t.name for t in self.types]
        for n in names:
            ck.choice("types.<name>", n, vocab)
        if len(set(names)) != len(names):
            raise InputError(f"types lists a query type twice; got {names}.")
        object.__setattr__(
            self, "types", tuple(sorted(self.types, key=lambda t: vocab.index(t.name)))
        )
        if sum(t.weight for t in self.types) <= 0:
            raise InputError(
                f"types.<name>.weight must sum to > 0; got {[t.weight for t in self.types]}."
            )
        if tuple(o.name for o in self.operators) != OPERATORS:
            raise InputError(
                f"operators must be {list(OPERATORS)} in that order; got {[o.name for o in self.operators]}."
            )
        object.__setattr__(
            self,
            "acc_guess",
            ck.number("reader.acc_guess", self.acc_guess, 0.0, 1.0, high_open=True),
        )
        for t in self.types:
            if not self.acc_guess < t.acc_raw:
                raise InputError(
                    f"reader.acc_raw.{t.name} must be above reader.acc_guess={self.acc_guess:g}; "
                    f"got {t.acc_raw:g}."
                )
        ck.choice("packing", self.packing, PACKINGS)
        b = tuple(
            float(ck.number(f"budgets[{i}]", x, 0.0, None, low_open=True))
            for i, x in enumerate(self.budgets)
        )
        if not b:
            raise InputError("budgets must hold at least one budget; got [].")
        if any(b2 <= b1 for b1, b2 in zip(b, b[1:])):
            raise InputError(f"budgets must be strictly increasing; got {list(b)}.")
        object.__setattr__(self, "budgets", b)
        ck.integer("queries", self.queries, 1, 2**31 - 1)
        if not isinstance(self.retriever, RetrieverConfig):
            raise InputError(
                f"retriever must be a RetrieverConfig; got {type(self.retriever).__name__}."
            )
        if not isinstance(self.classifier, ClassifierConfig):
            raise InputError(
                f"classifier must be a ClassifierConfig; got {type(self.classifier).__name__}."
            )

    @property
    def query_types(self) -> tuple[str, ...]:
        """The scenario's vocabulary: slot ``i`` of ``Instances.query_type`` names ``query_types[i]``."""
        return VOCABULARIES[self.vocabulary]

    @property
    def k_max(self) -> int:
        """Most records in any cluster (the padded record axis)."""
        return max(t.records for t in self.types)

    def operator(self, name: str) -> OperatorConfig:
        return self.operators[OPERATORS.index(name)]

    def scaled(self, s: float) -> Scenario:
        """Every length and budget times ``s`` (MODEL §6.5: nothing else should change)."""
        types = tuple(dataclasses.replace(t, length=t.length.scaled(s)) for t in self.types)
        return dataclasses.replace(self, types=types, budgets=tuple(b * s for b in self.budgets))

    def to_dict(self) -> dict:
        """A plain dict in the TOML layout (round-trips through ``scenario_from_dict``)."""
        return {
            "name": self.name,
            "description": self.description,
            "vocabulary": self.vocabulary,
            "packing": self.packing,
            "queries": self.queries,
            "budgets": list(self.budgets),
            "types": {
                t.name: {
                    "weight": t.weight,
                    "records": t.records,
                    "redundancy": t.redundancy,
                    "length": t.length.to_dict(),
                }
                for t in self.types
            },
            "operators": {
                o.name: {
                    "compress_ratio": o.compress_ratio,
                    "fidelity": {t.name: t.fidelity[i] for t in self.types},
                }
                for i, o in enumerate(self.operators)
            },
            "reader": {
                "acc_guess": self.acc_guess,
                "acc_raw": {t.name: t.acc_raw for t in self.types},
            },
            "retriever": {
                "order": self.retriever.order,
                "distractors": self.retriever.distractors,
                "noise": self.retriever.noise,
                "recall": self.retriever.recall,
            },
            "classifier": self.classifier.to_dict(),
        }


# ------------------------------------------------------------------------------------------------
# TOML / dict loading

_TOP = (
    "name",
    "description",
    "vocabulary",
    "packing",
    "queries",
    "budgets",
    "types",
    "operators",
    "reader",
    "retriever",
    "classifier",
)
_TYPE_KEYS = ("weight", "records", "redundancy", "length")
_OP_KEYS = ("compress_ratio", "fidelity")
_READER_KEYS = ("acc_guess", "acc_raw")
_RETRIEVER_KEYS = ("order", "distractors", "noise", "recall")
_CLASSIFIER_KEYS = ("accuracy", "confusion")
_BUDGET_KEYS = ("min", "max", "count", "spacing")


def length_from_table(where: str, value: Any) -> LengthConfig:
    """A ``LengthConfig`` from its TOML table ``{dist = ..., <parameters>}`` at the key ``where``
    (``types.<name>.length``, ``stream.session_length``), which every error names."""
    params = tuple(sorted({p for v in DIST_PARAMS.values() for p in v}))
    length = ck.table(where, value, ("dist", *params), ("dist",))
    return LengthConfig(
        length["dist"], tuple((k, v) for k, v in length.items() if k != "dist"), where=where
    )


def _per_type(key: str, value: Any, names: list[str]) -> dict[str, Any]:
    """A scalar for every type, or a table with one value per listed type."""
    if isinstance(value, dict):
        ck.table(key, value, names, names)
        return dict(value)
    return dict.fromkeys(names, value)


def _budget_grid(value: Any) -> tuple[float, ...]:
    if isinstance(value, list):
        return tuple(value)
    t = ck.table("budgets", value, _BUDGET_KEYS, ("min", "max", "count"))
    lo = ck.number("budgets.min", t["min"], 0.0, None, low_open=True)
    hi = ck.number("budgets.max", t["max"], lo, None, low_open=True)
    n = ck.integer("budgets.count", t["count"], 2, 4096)
    spacing = ck.choice("budgets.spacing", t.get("spacing", "log"), ("log", "linear"))
    grid = np.geomspace(lo, hi, n) if spacing == "log" else np.linspace(lo, hi, n)
    return tuple(float(x) for x in grid)


def scenario_from_dict(d: dict) -> Scenario:
    """Build a ``Scenario`` from the TOML layout (see docs/simulation.md); unknown keys are rejected.

    Raises:
      InputError: one line naming the key, the expected and the given value.
    """
    ck.table("", d, _TOP, ("vocabulary", "types", "operators", "reader", "budgets"))
    vocab = ck.choice("vocabulary", d["vocabulary"], VOCABULARIES)
    types_t = ck.table("types", d["types"], VOCABULARIES[vocab])
    names = list(types_t)
    if not names:
        raise InputError("types must list at least one query type; got an empty table.")
    ops_t = ck.table("operators", d["operators"], OPERATORS, OPERATORS)
    fid = {}
    operators = []
    for op in OPERATORS:
        o = ck.table(f"operators.{op}", ops_t[op], _OP_KEYS, _OP_KEYS)
        operators.append(OperatorConfig(op, o["compress_ratio"]))
        fid[op] = _per_type(f"operators.{op}.fidelity", o["fidelity"], names)
    reader = ck.table("reader", d["reader"], _READER_KEYS, _READER_KEYS)
    acc = _per_type("reader.acc_raw", reader["acc_raw"], names)
    types = []
    for n in names:
        t = ck.table(f"types.{n}", types_t[n], _TYPE_KEYS, ("weight", "length"))
        types.append(  # the configs check every value and name its key (their __post_init__)
            QueryTypeConfig(
                name=n,
                weight=t["weight"],
                records=t.get("records", 1),
                redundancy=t.get("redundancy", 0.0),
                length=length_from_table(f"types.{n}.length", t["length"]),
                acc_raw=acc[n],
                fidelity=tuple(fid[op][n] for op in OPERATORS),
            )
        )
    retriever = RetrieverConfig(**ck.table("retriever", d.get("retriever", {}), _RETRIEVER_KEYS))
    cls = ck.table("classifier", d.get("classifier", {}), _CLASSIFIER_KEYS)
    if "confusion" in cls and not isinstance(cls["confusion"], list):
        raise InputError(
            f"classifier.confusion must be an array of {N_QUERY_TYPES} rows; got "
            f"{ck.type_name(cls['confusion'])} ({cls['confusion']!r})."
        )
    classifier = ClassifierConfig(
        accuracy=cls.get("accuracy", 1.0),
        confusion=None
        if "confusion" not in cls
        else tuple(tuple(r) if isinstance(r, list) else r for r in cls["confusion"]),
    )
    for key in ("name", "description"):
        if key in d and not isinstance(d[key], str):
            raise InputError(f"{key} must be a string; got {ck.type_name(d[key])} ({d[key]!r}).")
    return Scenario(
        name=d.get("name", "custom"),
        description=d.get("description", ""),
        vocabulary=vocab,
        types=tuple(types),
        operators=tuple(operators),
        acc_guess=reader["acc_guess"],
        retriever=retriever,
        packing=d.get("packing", "prefix"),
        budgets=_budget_grid(d["budgets"]),
        queries=d.get("queries", 65536),
        classifier=classifier,
    )


def load_scenario(path_or_name: str | Path | None = None) -> Scenario:
    """Load a scenario from a preset name (``sim.PRESETS``) or a TOML file; ``None`` is the default.

    Args:
      path_or_name: ``"locomo-like"`` (the default), ``"single-cluster"``, ``"longmemeval-like"``,
        or a path to a ``.toml`` file in the layout of docs/simulation.md.

    Raises:
      InputError: an unknown preset, a missing or unparsable file, or a bad key (one line that
        names the file, the key, the expected and the given value).
    """
    s = DEFAULT_PRESET if path_or_name is None else str(path_or_name)
    data, source = read_scenario_toml(
        s, PRESETS, f"unknown scenario {s!r}; expected one of {list(PRESETS)} or a .toml file."
    )
    try:
        return scenario_from_dict(data)
    except InputError as e:
        raise InputError(f"{source}: {e}") from None


def read_scenario_toml(s: str, presets, unknown: str) -> tuple[dict, str]:
    """The parsed TOML of a preset name in ``presets`` (``sim/presets/NAME.toml``) or of a file,
    and the source that error lines name (``preset 'NAME'`` or the file name); the one reader of
    scenario files (``load_scenario``, ``load_stream``).

    Raises:
      InputError: ``unknown`` for a name that is neither a preset nor a ``.toml`` path; an
        unreadable file, or invalid UTF-8 or TOML, naming the file.
    """
    if s in presets:
        text = resources.files("sim").joinpath("presets", f"{s}.toml").read_text(encoding="utf-8")
        source = f"preset {s!r}"
    else:
        p = Path(s)
        if p.suffix != ".toml" and not p.exists():
            raise InputError(unknown)

        try:
            text = decode_utf8(p.read_bytes(), str(p))
        except OSError as e:
            raise InputError(f"cannot read scenario file {s}: {e.strerror or e}.") from None
        source = p.name
    try:
        return tomllib.loads(text), source
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{source}: not valid TOML ({e}).") from None
    except RecursionError:  # as parse_json: a one-line refusal, not a 3,000-line traceback
        raise InputError(f"{source}: TOML nested too deeply; a scenario is a flat table.") from None


def as_scenario(scenario, name: str = "scenario") -> Scenario:
    """``scenario`` itself when it is a ``Scenario``; a preset name or TOML path is loaded.

    Raises:
      InputError: naming ``name`` when ``scenario`` is neither (or the file is bad).
    """
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, (str, Path)):
        return load_scenario(scenario)
    raise InputError(
        f"{name} must be a sim.Scenario, a preset name {list(PRESETS)} or a .toml path; "
        f"got {type(scenario).__name__} ({scenario!r})."
    )
