"""Check an OpenAI-compatible endpoint before an hours-long run, and estimate the run.

``check_endpoint`` asks the endpoint, never the cache: the models it lists (``GET /models``), a
one-token chat, whether two identical requests at temperature 0 with the same seed answer alike
(determinism, what a rerun and ``--realisations`` rely on) and whether the seed is honoured where
it matters (two identical requests at temperature 1 with one seed should agree; a server that
ignores the seed answers them differently), the median latency of its calls, and the context it
accepts (the model's metadata where ``/models`` gives it, else the largest of doubling prompts up
to ``max_context`` tokens it answers). ``estimate_run`` counts the calls of a planned
``retcon pair`` run and their time at a given concurrency.

An endpoint *fails* the check when it does not answer the one-token chat, or when it lists its
models and ``model`` is not among them; the seed and context probes only inform.

References: docs/llm.md ("Run the paper on your own model").
"""

from __future__ import annotations

import json
import math
import statistics
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from oas.real.llm._config import EndpointConfig, redact_url
from oas.real.llm._http import EndpointPool, LLMEndpointError

#: Keys of a ``/models`` entry that give the context length (vLLM, llama.cpp, OpenRouter, ...).
CONTEXT_KEYS = ("max_model_len", "context_length", "context_window", "n_ctx", "n_ctx_train")
#: The prompt the seed probe sends: it asks for something the model must choose.
SEED_PROMPT = "Write one random English word, then one random number. Nothing else."


class EndpointCheck(NamedTuple):
    """What ``check_endpoint`` found.

    Attributes:
      base_url, model: what was checked (the URL without credentials).
      models: the ids ``GET /models`` lists (``None``: the endpoint gives no list).
      listed: whether ``model`` is among them (``None`` without a list).
      answered: whether the one-token chat got an answer; error: why not.
      deterministic: two identical temperature-0 seeded requests answered alike (``None``: not
        probed).
      seed_honoured: two identical temperature-1 requests with one seed answered alike.
      latency_s: median seconds of the calls that answered (``None``: none did).
      context_tokens: the context the endpoint accepts, in tokens (about: filler words);
        context_source: ``"models"`` (its metadata) or ``"probe"`` (largest prompt answered) or
        ``None``.
      calls: requests sent.
      problems: why it fails (empty: it passes); notes: what it does not do that a run may
        need (the seed ignored, ...).
    """

    base_url: str
    model: str
    models: list[str] | None
    listed: bool | None
    answered: bool
    error: str | None
    deterministic: bool | None
    seed_honoured: bool | None
    latency_s: float | None
    context_tokens: int | None
    context_source: str | None
    calls: int
    problems: list[str]
    notes: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # a redirect is an error, as for chat
        return None


def list_models(config: EndpointConfig) -> tuple[list[str] | None, dict[str, Any]]:
    """``(ids, entries by id)`` of ``GET {base_url}/models``; ``(None, {})`` when the endpoint
    gives no list (an error status, not JSON, no ``data``)."""
    req = urllib.request.Request(f"{config.base_url}/models", method="GET")
    if config.api_key:
        req.add_header("Authorization", f"Bearer {config.api_key}")
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(req, timeout=min(config.timeout, 30.0)) as r:
            body = r.read(config.max_response_bytes)
        data = json.loads(body)
    except (urllib.error.URLError, OSError, ValueError):
        return None, {}
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None, {}
    entries = {str(e["id"]): e for e in items if isinstance(e, dict) and "id" in e}
    return list(entries), entries


def _context_from(entry: dict) -> int | None:
    for node in (entry, entry.get("meta") or {}, entry.get("top_provider") or {}):
        if not isinstance(node, dict):
            continue
        for k in CONTEXT_KEYS:
            v = node.get(k)
            if isinstance(v, (int, float)) and v > 0:
                return int(v)
    return None


def check_endpoint(
    config: EndpointConfig,
    *,
    seed: bool = True,
    context: bool = True,
    max_context: int = 16384,
    clock: Callable[[], float] = time.monotonic,
) -> EndpointCheck:
    """Probe the endpoint of ``config`` (its first base URL), never through the cache.

    Args:
      config: the endpoint (``resolve_endpoint``); one try per probe, no retries.
      seed: run the determinism and seed probes (four requests).
      context: find the usable context when ``/models`` does not say it (doubling prompts from
        1024 tokens up to ``max_context``, ``max_tokens`` 1).
      clock: monotonic seconds, for the latency.

    Returns:
      ``EndpointCheck``.
    """
    cfg = replace(config, base_urls=(config.base_url,), max_retries=0, concurrency=1)
    pool = EndpointPool(cfg)
    times: list[float] = []
    calls = 0

    def chat(content: str, **params) -> str:
        nonlocal calls
        body = {"model": cfg.model, "messages": [{"role": "user", "content": content}], **params}
        calls += 1
        t0 = clock()
        text, _ = pool.send(json.dumps(body).encode("utf-8"))
        times.append(clock() - t0)
        return str(text)

    problems: list[str] = []
    notes: list[str] = []
    models, entries = list_models(cfg)
    listed = None if models is None else cfg.model in models
    where = redact_url(cfg.base_url)
    if listed is False:
        problems.append(
            f"model {cfg.model!r} is not among the models {where} serves: {models[:8] if models else []}"
        )
    answered, error = True, None
    try:
        chat("Reply with the word OK.", max_tokens=1, temperature=0)
    except LLMEndpointError as e:
        answered, error = False, str(e)
        problems.append(f"{where} does not answer a one-token chat: {e}")
    deterministic = honoured = None
    if answered and seed:
        try:
            a = [chat(SEED_PROMPT, temperature=0, seed=0, max_tokens=16) for _ in range(2)]
            b = [chat(SEED_PROMPT, temperature=1.0, seed=1234, max_tokens=16) for _ in range(2)]
            deterministic, honoured = a[0] == a[1], b[0] == b[1]
        except LLMEndpointError as e:
            notes.append(f"the seed probe failed: {e}")
        if deterministic is False:
            notes.append(
                "two identical temperature-0 requests with one seed answered differently: reruns "
                "and --realisations will not reproduce"
            )
        if honoured is False:
            notes.append(
                "the seed is ignored: two identical temperature-1 requests with one seed "
                "answered differently (--realisations R varies only through sampling)"
            )
    ctx, source = None, None
    if models is not None and cfg.model in entries:
        ctx = _context_from(entries[cfg.model])
        source = "models" if ctx is not None else None
    if ctx is None and answered and context:
        n = 1024
        while n <= max_context:
            try:
                chat("word " * n + "\nReply OK.", max_tokens=1, temperature=0)
            except LLMEndpointError:
                break
            ctx, source = n, "probe"
            n *= 2
    pool.close()
    return EndpointCheck(
        where,
        cfg.model,
        models,
        listed,
        answered,
        error,
        deterministic,
        honoured,
        statistics.median(times) if times else None,
        ctx,
        source,
        calls,
        problems,
        notes,
    )


class RunEstimate(NamedTuple):
    """The calls of a planned ``retcon pair`` run (upper bounds: identical calls are made once and
    cached) and their time.

    Attributes:
      questions, budgets, realisations: the plan.
      operator_calls: per question's cluster, merge and abstract one call each and rewrite one per
        record, times the realisations.
      reader_calls: questions x budgets x 4 actions x realisations; judge_calls the same with an
        LLM judge, else 0.
      calls: their sum; seconds: ``calls x latency / concurrency`` (``None`` without a latency).
    """

    questions: int
    budgets: int
    realisations: int
    operator_calls: int
    reader_calls: int
    judge_calls: int
    calls: int
    concurrency: int
    seconds: float | None


def estimate_run(
    cluster_sizes: Sequence[int],
    budgets: int,
    *,
    realisations: int = 1,
    llm_operators: bool = True,
    llm_reader: bool = True,
    llm_judge: bool = False,
    concurrency: int = 8,
    latency_s: float | None = None,
) -> RunEstimate:
    """``RunEstimate`` for questions whose clusters hold ``cluster_sizes`` records each."""
    q = len(cluster_sizes)
    ops = sum(2 + int(k) for k in cluster_sizes) * realisations if llm_operators else 0
    reader = q * budgets * 4 * realisations if llm_reader else 0
    judge = reader if llm_judge else 0
    calls = ops + reader + judge
    seconds = None if latency_s is None else calls * latency_s / max(1, concurrency)
    return RunEstimate(q, budgets, realisations, ops, reader, judge, calls, concurrency, seconds)


def format_check(c: EndpointCheck) -> str:
    """The check in words, its verdict first."""
    head = f"endpoint {c.base_url} model {c.model}: " + (
        "passes" if c.ok else "FAILS: " + "; ".join(c.problems)
    )
    lines = [head]
    lines.append(
        "  models listed: "
        + ("(no list)" if c.models is None else ", ".join(c.models[:8]) or "(none)")
    )
    lines.append("  one-token chat: " + ("answered" if c.answered else f"no answer ({c.error})"))

    def yn(v):
        return "not probed" if v is None else ("yes" if v else "NO")

    lines.append(f"  same answer for the same seed at temperature 0: {yn(c.deterministic)}")
    lines.append(f"  seed honoured (temperature 1, same seed, same answer): {yn(c.seed_honoured)}")
    lines.append(
        "  latency: "
        + ("n/a" if c.latency_s is None else f"{c.latency_s:.3f} s per call (median of {c.calls})")
    )
    lines.append(
        "  usable context: "
        + (
            "unknown"
            if c.context_tokens is None
            else f"{c.context_tokens} tokens ({'from /models' if c.context_source == 'models' else 'largest prompt answered'})"
        )
    )
    lines.extend(f"  note: {n}" for n in c.notes)
    return "\n".join(lines)


def format_estimate(e: RunEstimate) -> str:
    t = "unknown (no latency)" if e.seconds is None else _duration(e.seconds)
    return (
        f"planned run: {e.questions} questions x {e.budgets} budgets x {e.realisations} "
        f"realisation(s): at most {e.calls} calls ({e.operator_calls} operator, {e.reader_calls} "
        f"reader, {e.judge_calls} judge); at concurrency {e.concurrency}, about {t}"
    )


def _duration(s: float) -> str:
    if not math.isfinite(s):
        return "unknown"
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def locomo_plan(
    data: str | None, *, design: str = "ours", limit: int | None = None
) -> tuple[list[int], int]:
    """``(records per question's cluster, budgets)`` of a planned ``retcon pair locomo`` run:
    ``ours`` (session clusters, the default 25 budgets, the first ``limit`` questions) or
    ``paper`` (the 75-question sample, turn clusters, 4 budgets)."""
    from oas.real._fetch import resolve_data
    from oas.real._instances import cluster_of
    from oas.real._locomo import load_locomo
    from oas.real._pair import DEFAULT_BUDGETS
    from oas.real._paper_design import PAPER_BUDGETS, paper_sample_queries

    convs = list(load_locomo(resolve_data("locomo", data)).conversations)
    if design == "paper":
        pairs = paper_sample_queries(convs, n=limit)
        return [len(cluster_of(q, c, "turn")) for c, q in pairs], len(PAPER_BUDGETS["locomo"])
    pairs = [(c, q) for c in convs for q in c.queries if q.evidence_ids]
    if limit is not None:
        pairs = pairs[:limit]
    return [len(cluster_of(q, c, "session")) for c, q in pairs], len(DEFAULT_BUDGETS)


def cache_has_entries(cache_dir) -> bool:
    """Whether the LLM cache folder holds any answer (an entry file in a two-hex-digit shard)."""
    from pathlib import Path

    root = Path(cache_dir)
    if not root.is_dir():
        return False
    for shard in root.iterdir():
        if (
            shard.is_dir()
            and len(shard.name) == 2
            and all(c in "0123456789abcdef" for c in shard.name)
        ) and any(p.is_file() for p in shard.iterdir()):
            return True
    return False


def preflight(config: EndpointConfig, *, seed: bool = False) -> tuple[EndpointCheck, list[str]]:
    """The check ``retcon pair`` runs before its first call: ``check_endpoint`` without the
    context probe (and the seed probe only with ``seed``).

    Returns:
      ``(check, warnings)``: the lines to print (the seed ignored; an endpoint that fails while
      the cache holds answers, so a cached rerun goes on).

    Raises:
      InputError: the endpoint fails the check and the cache holds no answer (one line).
    """
    from retcon.errors import InputError

    chk = check_endpoint(config, seed=seed, context=False)
    warnings = list(chk.notes)
    if not chk.ok:
        if cache_has_entries(config.cache_dir):
            warnings.append(
                f"the endpoint fails the endpoint check ({chk.problems[0]}); going on with the "
                f"answers cached in {config.cache_dir}"
            )
        else:
            raise InputError(
                f"--llm-base-url {chk.base_url}: the endpoint fails the endpoint check "
                f"({chk.problems[0]}); nothing was run. `retcon llm check` says more."
            )
    return chk, warnings
