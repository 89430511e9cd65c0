"""The public names of ``retcon``, each declared once (read by type checkers and by
``retcon.lazy.attach_stub`` at run time; the package docstring is in ``__init__.py``)."""

from ._version import __version__ as __version__
from .errors import InputError as InputError
