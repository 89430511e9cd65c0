"""Real data for the tests: where LoCoMo is, and the skip marker for tests that need it.

Tests read LoCoMo from ``../shared/data/locomo/`` beside the checkout (``conftest.py`` points
``RETCON_DATA_DIR`` there when it exists), from ``$RETCON_DATA_DIR``, or from the user cache that
``retcon data fetch locomo`` fills. Without it those tests are skipped, never failed.
"""

import pytest

from oas.real import cached_path

LOCOMO_PATH = cached_path("locomo")
needs_locomo = pytest.mark.skipif(
    not LOCOMO_PATH.is_file(),
    reason=(
        f"LoCoMo not found ({LOCOMO_PATH}): put locomo10.json in ../shared/data/locomo/, "
        "set RETCON_DATA_DIR, or run `retcon data fetch locomo`"
    ),
)
