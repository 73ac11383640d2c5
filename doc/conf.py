"""Sphinx configuration for the dpestim documentation.

Build with ``sphinx-build -W --keep-going -b html doc doc/_build/html``.
"""

import os
import sys

# Document the checkout being built, not an installed copy.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import dpestim  # noqa: E402

project = "dpestim"
author = "dpestim developers"
copyright = "dpestim developers"
release = dpestim.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

# The benchmark pages (doc/benchmarks/*.md) are Markdown, written next to the
# scripts that regenerate them; their links name repository files, not pages.
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_heading_anchors = 3
suppress_warnings = ["myst.xref_missing", "myst.header"]

# Every example runs when the docs are built (they take a few seconds each),
# and its printed output and figures appear on its page.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_signature": False,
}

# No network access when building: no inventories are fetched.
intersphinx_mapping = {}

# API pages use explicit autoclass/autofunction directives; autosummary only
# renders summary tables (no :toctree:), so no stub files are generated.
autosummary_generate = False

autodoc_member_order = "bysource"
autodoc_typehints = "none"

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

exclude_patterns = [
    "_build",
    "generated",
    "solver_guide/*.rst",
    "Thumbs.db",
    ".DS_Store",
]
root_doc = "index"

html_theme = "alabaster"
html_title = f"dpestim {release}"
