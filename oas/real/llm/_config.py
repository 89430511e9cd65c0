"""Where and how to call an OpenAI-compatible endpoint: addresses, keys, limits (checked up front).

The config part of the LLM client (``oas.real.llm._client`` is the cache-fronted client,
``oas.real.llm._http`` the transport and pool). Chat (``--operators/--reader llm``) and embeddings
(``--embedder openai:MODEL``) build their ``EndpointConfig`` here, so both get the same scheme
check, the same key binding and the same redaction of credentials in messages.

Keys go only where they were configured to go (docs/llm.md, "API keys"):

* ``--llm-api-key`` / an ``api_key`` argument: to the endpoints of the same call or command;
* ``$RETCON_LLM_API_KEY`` (``$RETCON_EMBED_API_KEY`` for embeddings): only to the hosts named by
  ``$RETCON_LLM_BASE_URL`` (``$RETCON_EMBED_BASE_URL``);
* ``$OPENAI_API_KEY``: only to ``https://api.openai.com`` and to the host of ``$OPENAI_BASE_URL``.

An environment key that would go to another host (a ``--llm-base-url`` typed on the command line,
say) is not sent, and a warning line says so.

References: docs/llm.md.
"""

from __future__ import annotations

import logging
import os
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from retcon.cache import user_cache_dir
from retcon.errors import InputError, Spell, check_choice, check_integer, check_range

DEFAULT_CONCURRENCY = 8
MAX_CONCURRENCY = 4096  # requests in flight at once; more is a typo, not a server farm
DEFAULT_TIMEOUT = 300.0  # seconds per HTTP request (CPU servers are slow)
MAX_TIMEOUT = 86400.0  # one day: a longer per-request timeout (inf, 1e12) is refused up front
DEFAULT_MAX_RESPONSE_BYTES = 1 << 20  # 1 MiB per response body
MAX_RESPONSE_BYTES_LIMIT = 1 << 30  # the cap itself is capped: 1 GiB
OPENAI_ORIGIN = ("https", "api.openai.com", 443)
_log = logging.getLogger(__name__)


def redact_url(url: str) -> str:
    """``url`` without credentials: user and password (``http://user:pw@host``) and the query
    string's values (``?api_key=...``) become ``***``; for messages, logs and sidecars."""
    try:
        parts = urllib.parse.urlsplit(str(url))
    except ValueError:
        return "<unreadable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query:
        query = "&".join(
            f"{k}=***" if v else k for k, v in urllib.parse.parse_qsl(query, keep_blank_values=True)
        )
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def check_base_url(option: str, url: str) -> str:
    """``url`` when it is an ``http://`` or ``https://`` address with a host; else ``InputError``
    naming ``option`` (the credentials in it redacted)."""
    try:
        parts = urllib.parse.urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - a malformed port raises here
    except ValueError:
        ok = False
    if not ok:
        raise InputError(
            f"{option} must be an http:// or https:// address with a host, e.g. "
            f"http://127.0.0.1:8080/v1; got {redact_url(url)!r}."
        )
    return url


def origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, the scheme's default port filled in (also for a
    malformed port; None for a scheme other than http and https): what a key is bound to, and
    what a followed redirect must keep to carry ``Authorization``."""
    parts = urllib.parse.urlsplit(url)  # the scheme comes lower-cased
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def bound_api_key(
    urls: Sequence[str],
    api_key: str | None,
    env_pairs: Sequence[tuple[str, str]],
) -> str:
    """The key to send to ``urls``: ``api_key`` when given, else the first environment key of
    ``env_pairs`` (``(KEY_VARIABLE, URL_VARIABLE)``) bound to every one of them, else ``""``.

    An environment key is bound to the hosts of its URL variable (``$OPENAI_API_KEY`` also to
    ``https://api.openai.com``); one that is set but not bound to these endpoints is not sent, and
    one warning line names the variable and the endpoint (redacted).
    """
    if api_key is not None:
        return api_key
    env = os.environ
    wanted = {origin(u) for u in urls}
    for key_var, url_var in env_pairs:
        key = env.get(key_var)
        if not key:
            continue
        allowed = {origin(u) for u in split_urls(env.get(url_var))}
        if key_var == "OPENAI_API_KEY":
            allowed.add(OPENAI_ORIGIN)
        if wanted <= allowed:
            return key
        stray = next(u for u in urls if origin(u) not in allowed)
        _log.warning(
            "%s is set but not sent to %s: an environment key goes only to the hosts of $%s%s. "
            "Pass the key as an argument (--llm-api-key) to send it there.",
            key_var,
            redact_url(stray),
            url_var,
            " and to https://api.openai.com" if key_var == "OPENAI_API_KEY" else "",
        )
    return ""


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to call an OpenAI-compatible endpoint (chat or embeddings); checks itself.

    Attributes:
      base_url: the OpenAI-compatible root, e.g. ``http://127.0.0.1:8080/v1``; chat requests go to
        ``{base_url}/chat/completions``, embeddings to ``{base_url}/embeddings``.
      model: the model name sent with every request; part of the cache key.
      api_key: sent as ``Authorization: Bearer ...`` when not empty; never part of the cache key.
        ``resolve_endpoint`` binds an environment key to its own hosts (module docstring).
      cache_dir: the directory of the content-addressed cache.
      timeout: seconds to wait for one HTTP response (``--llm-timeout``).
      max_retries: retries after the first try (``max_retries + 1`` tries in all).
      backoff: seconds before the first retry; doubles each retry, capped at ``max_backoff``.
      base_urls: every endpoint serving ``model`` (default ``(base_url,)``); ``base_url`` is the
        first.
      concurrency: the most requests in flight at once, over all endpoints.
      follow_redirects: follow an HTTP redirect (``--llm-follow-redirects``); off by default, a
        redirect is then an error naming both addresses. ``Authorization`` is never carried to
        another scheme, host or port.
      max_response_bytes: the longest response body accepted (default 1 MiB); a longer one fails
        at once, naming the endpoint, and nothing from it is cached.
    """

    base_url: str
    model: str
    api_key: str = ""
    cache_dir: Path = field(default_factory=lambda: default_cache_dir())  # noqa: PLW0108 (defined below)
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = 4
    backoff: float = 0.5
    max_backoff: float = 8.0
    base_urls: tuple[str, ...] = ()
    concurrency: int = DEFAULT_CONCURRENCY
    follow_redirects: bool = False
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    def __post_init__(self):
        urls = tuple(self.base_urls) or (self.base_url,)
        object.__setattr__(self, "base_urls", urls)
        # the command line names its options (--llm-timeout), Python the field (issue 48)
        for url in urls:
            check_base_url(_SPELL.lead("base_url"), url)
        if len(set(urls)) != len(urls):
            raise InputError(
                f"{_SPELL.lead('base_url')}: the addresses must be distinct; got "
                f"{[redact_url(u) for u in urls]}."
            )
        if not self.model:
            raise InputError(f"{_SPELL.lead('model')} must not be empty.")
        check_limits(_SPELL, self.concurrency, self.timeout, self.max_response_bytes)
        if not (isinstance(self.max_retries, int) and self.max_retries >= 0):
            raise InputError(f"LLM max_retries must be an integer >= 0; got {self.max_retries!r}.")
        if not (self.backoff >= 0 and self.max_backoff >= 0):
            raise InputError(f"LLM backoff must be >= 0 seconds; got {self.backoff!r}.")

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    @property
    def urls(self) -> tuple[str, ...]:
        return tuple(f"{u}/chat/completions" for u in self.base_urls)


_SPELL = Spell(
    "EndpointConfig",
    cli={
        "base_url": "--llm-base-url",
        "concurrency": "--concurrency",
        "model": "--llm-model",
        "timeout": "--llm-timeout",
        "max_response_bytes": "--llm-max-response-bytes",
    },
)


def check_limits(spell: Spell, concurrency=None, timeout=None, max_response_bytes=None) -> None:
    """The endpoint's limits, each when given: ``concurrency`` in ``[1, MAX_CONCURRENCY]``,
    ``timeout`` in ``(0, MAX_TIMEOUT]`` seconds, ``max_response_bytes`` in
    ``[1, MAX_RESPONSE_BYTES_LIMIT]``; the errors name them as ``spell`` does (``EndpointConfig``,
    and ``PairJob``, which checks them before the data is read)."""
    if concurrency is not None:
        unit = " (requests in flight at once)"
        check_integer(spell.lead("concurrency"), concurrency, 1, MAX_CONCURRENCY, unit=unit)
    if timeout is not None:
        check_range(spell.lead("timeout"), timeout, 0.0, MAX_TIMEOUT, high_open=False)
    if max_response_bytes is not None:
        check_integer(
            spell.lead("max_response_bytes"), max_response_bytes, 1, MAX_RESPONSE_BYTES_LIMIT
        )


def default_cache_dir() -> Path:
    """``$RETCON_CACHE_DIR/llm``, else ``llm`` in the user cache directory (``~/.cache/retcon/llm``
    on Linux)."""
    root = os.environ.get("RETCON_CACHE_DIR")
    return (Path(root).expanduser() if root else user_cache_dir()) / "llm"


def split_urls(value: str | Sequence[str] | None) -> list[str]:
    """Base URLs from a string (comma- or space-separated) or a sequence of such strings, each
    stripped of trailing slashes and of a ``/chat/completions`` tail."""
    if value is None:
        return []
    pieces = [value] if isinstance(value, str) else list(value)
    out = []
    for piece in pieces:
        for url in re.split(r"[,\s]+", str(piece)):
            url = url.strip().rstrip("/")
            if url.endswith("/chat/completions"):
                url = url[: -len("/chat/completions")]
            if url and url not in out:
                out.append(url)
    return out


# Environment keys of the chat endpoint, each with the URL variable it is bound to.
CHAT_KEYS = (("RETCON_LLM_API_KEY", "RETCON_LLM_BASE_URL"), ("OPENAI_API_KEY", "OPENAI_BASE_URL"))


# Environment keys of the embeddings endpoint, each with the URL variable it is bound to.
EMBED_KEYS = (
    ("RETCON_EMBED_API_KEY", "RETCON_EMBED_BASE_URL"),
    ("RETCON_LLM_API_KEY", "RETCON_LLM_BASE_URL"),
    ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
)
ENDPOINT_KINDS = ("chat", "embeddings")


def chat_urls(base_url: str | Sequence[str] | None = None) -> list[str]:
    """The chat endpoint's URLs ``resolve_endpoint`` would use: ``base_url`` when given, else
    ``$RETCON_LLM_BASE_URL`` (a comma-separated list), else ``$OPENAI_BASE_URL``; empty when no
    endpoint is configured (a command that runs LLM work only when one is, asks this)."""
    env = os.environ
    return split_urls(base_url) or split_urls(
        env.get("RETCON_LLM_BASE_URL") or env.get("OPENAI_BASE_URL")
    )


def resolve_endpoint(
    base_url: str | Sequence[str] | None = None,
    model: str | None = None,
    api_key: str | None = None,
    cache_dir: str | os.PathLike | None = None,
    *,
    kind: str = "chat",
    **kwargs: Any,
) -> EndpointConfig:
    """Build an ``EndpointConfig`` from arguments, else the environment: the one reader of the
    endpoint's environment (URL, model, key, timeout and caps), for chat and for embeddings.

    ``base_url`` may name several chat endpoints serving the same model: a sequence, or one string
    with the URLs separated by commas or spaces.

    Environment, ``kind="chat"``: ``RETCON_LLM_BASE_URL`` (else ``OPENAI_BASE_URL``; a
    comma-separated list for several endpoints), ``RETCON_LLM_MODEL``, ``RETCON_LLM_API_KEY`` (else
    ``OPENAI_API_KEY``; each sent only to the hosts it is bound to, module docstring),
    ``RETCON_LLM_CONCURRENCY`` (when ``concurrency`` is not given), ``RETCON_LLM_TIMEOUT`` (when
    ``timeout`` is not given), ``RETCON_LLM_MAX_RESPONSE_BYTES``; the cache from
    ``default_cache_dir``.

    ``kind="embeddings"`` (``--embedder openai:MODEL``): one endpoint, ``base_url`` else
    ``RETCON_EMBED_BASE_URL``, else the first URL of ``RETCON_LLM_BASE_URL``, else
    ``OPENAI_BASE_URL``; ``model`` is required; the keys of ``EMBED_KEYS``; the other settings come
    from ``kwargs`` only.

    Raises:
      InputError: no base URL or no model configured, or a bad setting.
    """
    env = os.environ
    if kind == "embeddings":
        name = f"openai:{model}"
        url = (
            base_url
            or env.get("RETCON_EMBED_BASE_URL")
            or next(iter(split_urls(env.get("RETCON_LLM_BASE_URL"))), None)
            or env.get("OPENAI_BASE_URL")
        )
        if not model:
            raise InputError("--embedder openai:MODEL needs a model name; got none.")
        if not url:
            raise InputError(
                "--embedder openai:MODEL needs an endpoint: set RETCON_EMBED_BASE_URL (or "
                "RETCON_LLM_BASE_URL / OPENAI_BASE_URL) to the API root, e.g. http://host:8000/v1."
            )
        url = str(url).strip().rstrip("/")
        check_base_url(f"--embedder {name}: the endpoint ($RETCON_EMBED_BASE_URL)", url)
        return EndpointConfig(
            base_url=url,
            model=model,
            api_key=bound_api_key([url], api_key, EMBED_KEYS),
            cache_dir=Path(cache_dir).expanduser() if cache_dir else default_cache_dir(),
            **kwargs,
        )
    check_choice("resolve_endpoint: kind", kind, ENDPOINT_KINDS)
    urls = chat_urls(base_url)
    model = model or env.get("RETCON_LLM_MODEL")
    if not urls:
        raise InputError(
            "no LLM endpoint configured: pass --llm-base-url (e.g. http://127.0.0.1:8080/v1) "
            "or set RETCON_LLM_BASE_URL (or OPENAI_BASE_URL)."
        )
    for url in urls:
        check_base_url(_SPELL.lead("base_url"), url)
    if not model:
        raise InputError("no LLM model configured: pass --llm-model or set RETCON_LLM_MODEL.")
    for name, var, conv in (
        ("concurrency", "RETCON_LLM_CONCURRENCY", int),
        ("timeout", "RETCON_LLM_TIMEOUT", float),
        ("max_response_bytes", "RETCON_LLM_MAX_RESPONSE_BYTES", int),
    ):
        if kwargs.get(name) is None:
            kwargs.pop(name, None)
            text = env.get(var)
            if text:
                try:
                    kwargs[name] = conv(text)
                    if not kwargs[name] > 0 or (name == "timeout" and kwargs[name] > MAX_TIMEOUT):
                        raise ValueError(text)
                except ValueError:
                    raise InputError(
                        f"{var} must be "
                        f"{'an integer >= 1' if conv is int else f'seconds in (0, {MAX_TIMEOUT:g}]'}; "
                        f"got {text!r}."
                    ) from None
    if kwargs.get("follow_redirects") is None:
        kwargs.pop("follow_redirects", None)
    return EndpointConfig(
        base_url=urls[0],
        base_urls=tuple(urls),
        model=model,
        api_key=bound_api_key(urls, api_key, CHAT_KEYS),
        cache_dir=Path(cache_dir).expanduser() if cache_dir else default_cache_dir(),
        **kwargs,
    )


__all__ = [
    "DEFAULT_CONCURRENCY",
    "EMBED_KEYS",
    "EndpointConfig",
    "bound_api_key",
    "check_base_url",
    "default_cache_dir",
    "redact_url",
    "resolve_endpoint",
    "split_urls",
]
