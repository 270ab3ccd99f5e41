"""Sphinx configuration of the sb3-fair documentation (``python -m sphinx -W -b html docs docs/_build/html``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's package, also without an install

project = "sb3-fair"
author = "the sb3-fair developers"
copyright = "2026, the sb3-fair developers"  # noqa: A001  (Sphinx's name)

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.doctest"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3  # "[...](#a-heading)" links between and within pages

autodoc_default_options = {"show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_inherit_docstrings = False  # a method without its own docstring shows none, not its parent's (e.g. gymnasium's)

html_theme = "furo"
html_title = "sb3-fair"
