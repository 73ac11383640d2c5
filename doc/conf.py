"""Sphinx configuration for the dpestim documentation.

Build with ``sphinx-build -W --keep-going -b html doc doc/_build/html``.
"""

import dpestim

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
]

# No network access when building: no inventories are fetched.
intersphinx_mapping = {}

# API pages use explicit autoclass/autofunction directives; autosummary only
# renders summary tables (no :toctree:), so no stub files are generated.
autosummary_generate = False

autodoc_member_order = "bysource"
autodoc_typehints = "none"

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

exclude_patterns = ["_build", "generated", "Thumbs.db", ".DS_Store"]
root_doc = "index"

html_theme = "alabaster"
html_title = f"dpestim {release}"
