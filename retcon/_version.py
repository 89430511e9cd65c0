"""``retcon.__version__``, read from the installed distribution's metadata on first use.

``importlib.metadata`` costs tens of milliseconds to import, which every command would pay at
start-up; ``retcon`` serves the name lazily (PEP 562) and ``retcon --version`` asks for it only
when given.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("retcon")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"
