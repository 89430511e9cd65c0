"""The Hypothesis examples of docs/testing.md run as written (MODEL §4 and §6.3)."""

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def _examples() -> dict:
    """Execute the doc's python blocks in one namespace; return its ``test_*`` functions."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    namespace: dict = {}
    exec(compile("\n".join(blocks), str(DOC), "exec"), namespace)
    return {k: v for k, v in namespace.items() if k.startswith("test_")}


EXAMPLES = _examples()


def test_the_doc_has_both_examples():
    assert set(EXAMPLES) == {"test_delta_is_coverage_plus_replacement", "test_sign_reversal"}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_doc_example(name):
    EXAMPLES[name]()
