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


def test_gallery_and_readme_images_exist_and_every_figure_is_listed():
    import re

    from shuffledp.apps.figures import FIGURES

    root = DOCS.parents[1]
    for page in (root / "README.md", root / "docs" / "gallery.md"):
        text = page.read_text()
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
            assert (page.parent / target).is_file(), f"{page.name}: missing image {target}"
    gallery = (root / "docs" / "gallery.md").read_text()
    assert not [f for f in FIGURES if f"`{f}`" not in gallery]
