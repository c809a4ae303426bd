"""The README's Python examples run as written, each block on its own in a
fresh interpreter (as a reader copying one would run it)."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def _blocks():
    with open(README, encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def _missing(code):
    """The optional packages a block needs and the environment lacks."""
    needs = []
    if "onnx" in code:
        needs += ["onnx", "onnxruntime"]
    if "rgbm_rs.dask" in code:
        needs += ["distributed"]
    if "plotting" in code:
        needs += ["matplotlib"]
    return [m for m in needs if importlib.util.find_spec(m) is None]


def test_the_readme_has_examples():
    assert len(_blocks()) >= 10


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_readme_python_block_runs_on_its_own(index, tmp_path):
    code = _blocks()[index]
    missing = _missing(code)
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    env = dict(os.environ, MPLBACKEND="Agg")
    # As a script file: Dask's worker processes import it (python -c would hide
    # a missing __main__ guard).
    script = tmp_path / f"readme_block_{index}.py"
    script.write_text(code, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, script.name], cwd=tmp_path, capture_output=True, text=True, timeout=900, env=env
    )
    assert out.returncode == 0, f"README python block {index}:\n{code}\n{out.stderr[-3000:]}"
    # What the blocks say they leave behind.
    if "save_model(" in code and '"model.json"' in code:
        assert (tmp_path / "model.json").exists()
    if "to_onnx(" in code and '"model.onnx"' in code:
        assert (tmp_path / "model.onnx").exists()
