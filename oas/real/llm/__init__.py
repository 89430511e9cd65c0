"""The language-model side of ``oas.real``: HTTP transport, clients, cache, configuration and judge.

Everything that talks to an OpenAI-compatible endpoint, apart from the data it serves: the one
transport and connection pool with its retry policy (``_http``), where and how to call an endpoint
(``_config``: addresses, keys, limits, checked up front), the content-addressed on-disk cache of
its answers (``_cache``), the chat client (``_client``), the ``llm`` operator backend and reader
(``_backend``), the embeddings client (``_embed``) and the check of an LLM judge (``_judge``). It sits
inside the ``oas.real`` layer and imports only ``oas``, ``oas.real``'s own data modules and the
layers below; ``oas.real``'s public names are re-exported from here unchanged.
"""
