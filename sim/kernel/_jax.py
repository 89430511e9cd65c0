"""JAX for the kernel's files, imported on first use.

Each file of ``sim.kernel`` holds a rule's JAX function beside its numpy twin. The numpy path
(``sim.numpy_kernel``, the CPU default) must not pay for ``import jax`` (about a third of a default
run's wall time, issue 34), so the files bind ``jax`` and ``jnp`` to the proxies below: the module
is imported when a JAX function first reads an attribute of it, that is, when the JAX path runs.
Type checkers see the real modules (``if TYPE_CHECKING: import jax``). ``jit`` is ``jax.jit`` as a
decorator that compiles on the first call.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any


class LazyModule:
    """A module imported on the first read of one of its attributes."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


jax = LazyModule("jax")
jnp = LazyModule("jax.numpy")


class LazyJit:
    """``jax.jit(fun, **options)``, built on the first call (which imports JAX).

    ``jitted`` is the ``jax.jit`` object itself (its ``_cache_size()`` counts the compiled shapes,
    tests/sim/test_sim_kernel.py's trace-count test).
    """

    def __init__(self, fun, options: dict):
        self._fun = fun
        self._options = options
        self._jitted = None
        functools.update_wrapper(self, fun)

    @property
    def jitted(self):
        if self._jitted is None:
            self._jitted = importlib.import_module("jax").jit(self._fun, **self._options)
        return self._jitted

    def __call__(self, *args, **kwargs):
        return self.jitted(*args, **kwargs)


def jit(**options):
    """``functools.partial(jax.jit, **options)`` as a decorator, without importing JAX."""

    def wrap(fun) -> Any:
        return LazyJit(fun, options)

    return wrap
