"""Sphinx configuration of soac's documentation (``make docs``: build/docs/index.html).

The pages are the Markdown files of docs/ (through MyST) and an API
reference generated from the docstrings (docs/api.md); ``make docs`` builds
with warnings as errors, so a broken reference or docstring fails the build.
"""

project = "soac"
author = "the soac developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the signatures carry them; MLIR's types would not resolve
html_theme = "alabaster"
html_static_path: list[str] = []
# Links to files of the repository outside docs/ (README, examples) are for
# readers of the sources on a forge; in the HTML they stay plain links.
suppress_warnings = ["myst.xref_missing"]
