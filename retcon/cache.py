"""Where retcon keeps downloads and cached LLM replies on this machine.

One home for the user cache directory, from ``platformdirs``: ``$XDG_CACHE_HOME/retcon`` (default
``~/.cache/retcon``) on Linux, ``~/Library/Caches/retcon`` on macOS, ``%LOCALAPPDATA%\\retcon\\Cache``
on Windows. Callers put their own overrides in front (``RETCON_DATA_DIR``, ``RETCON_CACHE_DIR``).
"""

from __future__ import annotations

from pathlib import Path


def user_cache_dir() -> Path:
    """The platform's user cache directory for retcon (not created here)."""
    from platformdirs import user_cache_path

    return user_cache_path("retcon", appauthor=False)
