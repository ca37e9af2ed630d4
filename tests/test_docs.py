"""Every registered bound has a section in docs/bounds.md (docs cannot fall behind)."""

import pathlib

from shuffledp.bounds import all_bounds

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "bounds.md"


def test_every_bound_is_documented():
    text = DOCS.read_text()
    missing = [b.id for b in all_bounds() if f"## {b.id} " not in text]
    assert not missing, f"add a section to docs/bounds.md for: {missing}"


def test_every_bound_has_reference_and_title():
    for b in all_bounds():
        assert b.title and b.reference, b.id
