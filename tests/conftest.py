"""Shared test settings: hypothesis profiles, the LoCoMo cache, strict JAX dtype promotion, x64
only where a test asks for it."""

import os
from pathlib import Path

import jax
from hypothesis import HealthCheck, settings

# Strict promotion: a silent float64 -> float32 or int -> float mix in library code
# fails a test instead of changing a result; the library casts explicitly.
jax.config.update("jax_numpy_dtype_promotion", "strict")

# `dev` for local runs; `ci` is derandomized so a CI failure reproduces.
settings.register_profile(
    "dev", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
_ON_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if _ON_CI else "dev"))

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
LOCOMO_DIR = SHARED / "data" / "locomo"

# Compiled kernels of CLI runs go to a folder of this test session, not the user's cache; child
# processes inherit it.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    _cache = tempfile.mkdtemp(prefix="retcon-test-jax-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)

# Tests read real data from ../shared only: point the data cache there unless the caller chose one.
if LOCOMO_DIR.is_dir():
    os.environ.setdefault("RETCON_DATA_DIR", str(LOCOMO_DIR))
# `retcon pair` probes its LLM endpoint before the first call (oas.real.preflight); the tests'
# scripted endpoints count every request, so the probe is off unless a test turns it on
# (tests/oas_real/test_llm_check.py).
os.environ.setdefault("RETCON_LLM_CHECK", "0")
