"""rgbm_rs.plotting without matplotlib: importing it works, plotting says what to install."""

import ast
import sys
from pathlib import Path

import pytest

from rgbm_rs import plotting
from rgbm_rs.plotting import plot_metric


def test_matplotlib_is_imported_lazily_with_a_clear_error(monkeypatch):
    # no module-level import of matplotlib, so `import rgbm_rs.plotting` works without it
    tree = ast.parse(Path(plotting.__file__).read_text(encoding="utf-8"))
    top_level = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = [a.name for n in top_level if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in top_level if isinstance(n, ast.ImportFrom)]
    assert not [n for n in names if n.startswith("matplotlib")]
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot_metric({"train": {"l2": [1.0, 0.5]}})
