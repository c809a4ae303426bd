"""Sphinx configuration: the README as the front page, the API reference
from the installed package's docstrings, and the changelog.

Build (from the repository root, with the package and the ``docs`` extra
installed): ``python -m sphinx -W --keep-going -b html docs docs/_build``.
"""

import rgbm_rs

project = "rgbm_rs"
author = "the rgbm_rs authors"
release = rgbm_rs.__version__
version = release

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# experiments.md is a log of measured dead ends linked from DESIGN.md, not a page.
exclude_patterns = ["_build", "experiments.md"]

# The docstrings are numpydoc-style.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
# Attributes sections as fields: a property documented there and by autodoc
# would otherwise be described twice.
napoleon_use_ivar = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True}
myst_heading_anchors = 3

html_theme = "alabaster"
html_title = f"rgbm_rs {release}"


def _skip_scikit_learn_members(app, what, name, obj, skip, options):
    """Leave out what the estimators inherit from scikit-learn (score,
    get_params, metadata routing): scikit-learn documents those."""
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("sklearn"):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)
