"""Shared test settings: hypothesis profiles, the LoCoMo cache, x64 only where a test asks for it."""

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

# `dev` for local runs; `ci` is derandomized so a CI failure reproduces (STYLE: Hypothesis).
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
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
LOCOMO_DIR = SHARED / "data" / "locomo"

# Tests read real data from ../shared only: point the data cache there unless the caller chose one.
if LOCOMO_DIR.is_dir():
    os.environ.setdefault("RETCON_DATA_DIR", str(LOCOMO_DIR))
