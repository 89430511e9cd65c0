"""The ``llm`` operator backend and reader: merge, abstract, rewrite, answer and judge prompts sent to
any OpenAI-compatible chat endpoint, through a content-addressed on-disk cache.

The prompts are short and plain so that a 135M-parameter instruct model follows them; they are
documented, with the reasons behind them, in ``docs/llm.md``. Requests are deterministic
(``temperature`` 0 and a fixed ``seed`` by default), so a cached answer is the answer a rerun would get.

References: MODEL §1 (the actions and what each keeps), §2 (the reader), §9 (real paired data).
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Sequence
from typing import Any

from oas.real._lexical import lexical_correct
from oas.real._types import Conversation, Query, Record, generated_record
from oas.real.llm._client import (
    CallStats,
    ChatClient,
    EndpointConfig,
    EndpointPool,
    LLMEndpointError,
)
from retcon.errors import InputError, check_choice, check_range
from retcon.vocab import LLM_JUDGES

__all__ = [
    "CAP_SHARE",
    "INSTRUCTIONS",
    "PROMPTS",
    "CallStats",
    "EndpointPool",
    "LLMEndpointError",
    "LLMOperators",
    "LLMReader",
    "parse_yes_no",
]

_SYSTEM_NOTES = "You edit memory notes from a conversation. Reply with the note only."
_SYSTEM_QA = "You answer questions about a conversation using only the memory you are given."
_SYSTEM_JUDGE = "You grade answers. Reply with yes or no only."
_SYSTEM_DECOY = "You write wrong answers for a quiz. Reply with the wrong answer only."

# The operators' instructions, and the user-message templates. The material comes first and the
# instruction last: a 135M model given the instruction first tends to repeat it instead of
# following it (docs/llm.md shows each prompt and says why it reads as it does).
INSTRUCTIONS = {
    "rewrite": "Rewrite the note above in fewer words. Keep every name, number, date and fact.",
    "merge": "Merge the notes above into one note. Keep every name, number, date and fact, and say "
    "each fact only once.",
    "abstract": "Summarize the notes above in one short, general sentence: what happened, and who "
    "was involved.",
}
# Output cap per action, as a share of the input's approximate token count (MODEL §1: rewrite
# compresses each record, merge keeps every detail, abstract compresses most).
CAP_SHARE = {"rewrite": 0.8, "merge": 1.0, "abstract": 0.5}
PROMPTS = {
    "rewrite": "Note ({date}): {text}\n\n" + INSTRUCTIONS["rewrite"] + "\n\nShorter note:",
    "merge": "Notes:\n{notes}\n\n" + INSTRUCTIONS["merge"] + "\n\nMerged note:",
    "abstract": "Notes:\n{notes}\n\n" + INSTRUCTIONS["abstract"] + "\n\nSummary:",
    "answer": (
        "Memory:\n{context}\n\nQuestion: {question}{asked}\n"
        'Answer in a few words. If the memory does not say, answer "unknown".\n\nAnswer:'
    ),
    "judge": (
        "Question: {question}\nCorrect answer: {answer}\nResponse: {response}\n\n"
        "Does the response contain the correct answer? Reply yes or no.\n\nReply:"
    ),
    # The judge probe's topical decoy (docs/llm.md "Checking the judge"): on the question's
    # topic, in the gold answer's form, and wrong.
    "wrong_answer": (
        "Question: {question}\nCorrect answer: {answer}\n\n"
        "Write a different answer of the same kind that is wrong. Do not repeat the correct "
        "answer.\n\nWrong answer:"
    ),
}

# Labels a small model tends to echo before its output; stripped from the reply.
_LABEL = re.compile(
    r"^\s*(?:shorter note|rewritten note|merged note|notes?|summary|answer|reply)"
    r"(?:\s*\([^)\n]*\))?\s*:\s*",
    re.IGNORECASE,
)
# What a generated record holds when the model answered nothing: a record must have length > 0
# (MODEL §1), and an empty generation carries no evidence (fidelity 0).
EMPTY_GENERATION = "(nothing)"


class _LLMClient:
    """What the ``llm`` operators and reader share: the endpoint, its settings and call counts.

    Args: see ``LLMOperators``; ``max_tokens`` defaults to the subclass's ``default_max_tokens``.
    """

    default_max_tokens = 256

    def __init__(
        self,
        endpoint: EndpointConfig,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = 0,
        max_input_chars: int | None = None,
        sleep=None,
        pool: EndpointPool | None = None,
    ):
        max_tokens = self.default_max_tokens if max_tokens is None else max_tokens
        if not (isinstance(max_tokens, int) and max_tokens >= 1):
            raise InputError(f"LLM max_tokens must be an integer >= 1; got {max_tokens!r}.")
        temperature = check_range("LLM temperature", temperature, 0.0, None, low_open=False)
        self.client = ChatClient(endpoint, sleep=sleep, pool=pool)
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.seed = seed
        self.max_input_chars = _max_input_chars(max_input_chars)

    def ask(self, system: str, user: str, max_tokens: int) -> str:
        """The model's reply to one system and user message, at most ``max_tokens`` tokens."""
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": int(max_tokens)}
        if self.seed is not None:
            params["seed"] = int(self.seed)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return self.client.complete(messages, **params)

    @property
    def stats(self) -> CallStats:
        return self.client.stats

    @property
    def config(self):
        return self.client.config


class LLMOperators(_LLMClient):
    """Operator backend ``llm``: rewrite, merge and abstract made by a language model (MODEL §1).

    Each cluster's records go to the model with their session dates, so a generated record can keep
    (or resolve) the dates temporal questions need. A generated record takes the session id and the
    date of its first source and lists the raw ids it was made from. The output is capped at the
    input's approximate token count ``ceil(1.3 * words)`` times ``CAP_SHARE`` (rewrite 0.8, merge 1.0,
    abstract 0.5), at least 8, at most ``max_tokens``, so a model that echoes its input cannot make
    a record longer than what it replaces (rho <= 1).

    Args:
      endpoint: where and how to call (``resolve_endpoint``: the URLs, model, key, cache folder,
        timeout, retries, concurrency and transport caps), built once and checked there.
      temperature: sampling temperature; 0 makes the cache exact.
      max_tokens: the most tokens one generation may have.
      seed: sent with each request (``None`` sends none); part of the cache key.
      max_input_chars: truncate each prompt's note text to this many characters (``None``: no cut);
        for small context windows. Default from ``RETCON_LLM_MAX_INPUT_CHARS``.
      sleep: called with the seconds to wait between retries (default ``time.sleep``; tests).
      pool: an ``EndpointPool`` shared with other callers (the reader of the same run), so one
        bound holds for all; its endpoints serve the requests (default: a pool of its own).

    Methods are thread-safe: several queries may be worked on at once.

    Raises:
      InputError: no endpoint configured, or a bad setting.

    References: MODEL §1 (rewrite local, merge and abstract cross-note), §9.
    """

    name = "llm"
    default_max_tokens = 256

    def rewrite(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        """``k`` records in, ``k`` out: each record compressed on its own (local)."""
        out = []
        for rec in _check_cluster(cluster, "rewrite"):
            prompt = PROMPTS["rewrite"].format(
                date=rec.date or "date unknown", text=_cut(rec.text, self.max_input_chars)
            )
            text = self._generate("rewrite", prompt, rec.text)
            out.append(generated_record("rewrite", [rec], text))
        return out

    def merge(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        """One record keeping the details of every constituent, cross-record redundancy dropped."""
        return self._one_record("merge", cluster)

    def abstract(self, cluster: Sequence[Record], conversation: Conversation) -> list[Record]:
        """One more general record: most compression, least detail."""
        return self._one_record("abstract", cluster)

    def _one_record(self, action: str, cluster: Sequence[Record]) -> list[Record]:
        """``action``'s one generated record from the whole cluster (merge, abstract)."""
        recs = _check_cluster(cluster, action)
        prompt = PROMPTS[action].format(notes=_notes(recs, self.max_input_chars))
        text = self._generate(action, prompt, " ".join(r.text for r in recs))
        return [generated_record(action, recs, text)]

    def _generate(self, action: str, prompt: str, source_text: str) -> str:
        approx = 1.3 * len(source_text.split())  # ~tokens of the input
        cap = min(self.max_tokens, max(8, math.ceil(CAP_SHARE[action] * approx)))
        reply = clean_reply(self.ask(_SYSTEM_NOTES, prompt, cap))
        # A small model sometimes repeats the instruction (or its start, when the cap cuts it)
        # instead of following it: drop the echoed part.
        instruction = INSTRUCTIONS[action]
        echoed = len(os.path.commonprefix([reply, instruction]))  # noqa: RUF071 (strings)
        if echoed >= min(len(instruction), 24):
            reply = clean_reply(reply[echoed:])
        return reply or EMPTY_GENERATION


class LLMReader(_LLMClient):
    """Reader ``llm``: the model answers the question from the context; a judge scores the answer.

    ``judge="lexical"`` applies the lexical rule to the model's answer (correct when every content
    token of the normalized gold answer is in it); ``judge="llm"`` asks the same endpoint a
    LongMemEval-style yes/no question (question, gold answer, response). An unparseable verdict
    counts as "no" and is counted in ``unparsed_verdicts``.

    Args: as ``LLMOperators`` (``max_tokens`` bounds the answer, default 48), plus
      judge: ``"lexical"`` or ``"llm"``.

    References: MODEL §2 (reader), §9 (an LLM reader talks to any OpenAI-compatible endpoint).
    """

    name = "llm"
    default_max_tokens = 48

    def __init__(self, endpoint: EndpointConfig, judge: str = "lexical", **kwargs):
        check_choice("LLMReader judge", judge, LLM_JUDGES)
        super().__init__(endpoint, **kwargs)
        self.judge = judge
        self.unparsed_verdicts = 0
        self._lock = threading.Lock()

    def answer(self, query: Query, context: str) -> str:
        """The model's answer to ``query`` from ``context`` (cleaned to its first line)."""
        asked = f" (asked on {query.date})" if query.date else ""
        prompt = PROMPTS["answer"].format(
            context=_cut(context.strip(), self.max_input_chars) or "(empty)",
            question=query.text.strip(),
            asked=asked,
        )
        reply = clean_reply(self.ask(_SYSTEM_QA, prompt, self.max_tokens))
        return reply.split("\n", 1)[0].strip()

    def score(self, query: Query, context: str) -> float:
        """1.0 when the judged answer is correct, else 0.0."""
        return self.score_with_lexical(query, context)[0]

    def score_with_lexical(self, query: Query, context: str) -> tuple[float, float]:
        """``(judged score, lexical score)`` of the model's one answer to ``query`` from ``context``.

        The second is the lexical rule on the same answer (equal to the first under
        ``judge="lexical"``): the agreement table of ``--llm-judge llm`` compares the two.
        """
        response = self.answer(query, context)
        lexical = 1.0 if _lexical_correct(query.answer, response) else 0.0
        if self.judge == "lexical":
            return lexical, lexical
        return (1.0 if self.verdict(query, response) else 0.0), lexical

    def verdict(self, query: Query, response: str) -> bool | None:
        """The LLM judge's verdict on ``response`` against ``query``'s gold answer: ``True`` (yes),
        ``False`` (no) or ``None`` (neither; counted in ``unparsed_verdicts``)."""
        prompt = PROMPTS["judge"].format(
            question=query.text.strip(),
            answer=str(query.answer).strip(),
            response=response or "(no answer)",
        )
        verdict = parse_yes_no(self.ask(_SYSTEM_JUDGE, prompt, 8))
        if verdict is None:
            with self._lock:
                self.unparsed_verdicts += 1
        return verdict

    def wrong_answer(self, query: Query) -> str:
        """A topical but wrong answer to ``query``, written by the model from the question and its
        gold answer (the ``topical`` decoy of the judge probe, ``oas.real.llm._judge``)."""
        prompt = PROMPTS["wrong_answer"].format(
            question=query.text.strip(), answer=str(query.answer).strip()
        )
        reply = clean_reply(self.ask(_SYSTEM_DECOY, prompt, self.max_tokens))
        return reply.split("\n", 1)[0].strip()


def parse_yes_no(reply: str) -> bool | None:
    """``True`` for a yes, ``False`` for a no, ``None`` when the reply says neither.

    The first "yes" or "no" word decides (``"Yes."``, ``"**No**, because..."``, ``"Answer: yes"``);
    a reply with neither word is unparseable.
    """
    m = re.search(r"\b(yes|no)\b", reply.lower())
    if m is None:
        return None
    return m.group(1) == "yes"


def clean_reply(reply: str) -> str:
    """Strip whitespace, an echoed label (``Summary:``) and quotes wrapping the whole reply."""
    text = reply.strip()
    for _ in range(2):
        text = _LABEL.sub("", text, count=1).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def _lexical_correct(gold: str, response: str) -> bool:
    # The lexical rule of the `lexical` reader: one rule for both (MODEL §9).
    return bool(lexical_correct(str(gold), response))


def _check_cluster(cluster: Sequence[Record], action: str) -> list[Record]:
    recs = list(cluster)
    if not recs:
        raise InputError(
            f"LLMOperators.{action}: the cluster is empty; expected at least one record."
        )
    return recs


def _notes(recs: Sequence[Record], max_chars: int | None) -> str:
    lines = [
        f"{i}. ({r.date or 'date unknown'}) {' '.join(r.text.split())}"
        for i, r in enumerate(recs, 1)
    ]
    return _cut("\n".join(lines), max_chars)


def _cut(text: str, max_chars: int | None) -> str:
    return (
        text if max_chars is None or len(text) <= max_chars else text[:max_chars].rstrip() + " ..."
    )


def _max_input_chars(value: int | None) -> int | None:
    if value is None:
        env = os.environ.get("RETCON_LLM_MAX_INPUT_CHARS")
        if not env:
            return None
        try:
            value = int(env)
        except ValueError:
            raise InputError(
                f"RETCON_LLM_MAX_INPUT_CHARS must be an integer >= 100; got {env!r}."
            ) from None
    if not (isinstance(value, int) and value >= 100):
        raise InputError(f"LLM max_input_chars must be an integer >= 100; got {value!r}.")
    return value
