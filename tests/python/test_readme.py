"""The Python examples of the README and the guide pages in docs/ run as
written, each block on its own in a fresh interpreter (as a reader copying
one would run it)."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DOCS = os.path.join(ROOT, "docs")
PAGES = ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(DOCS) if f.endswith(".md") and f != "experiments.md"
)


def _blocks(page=None):
    """The python blocks of one page, or (page, index, code) of every page."""
    if page is not None:
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            return re.findall(r"```python\n(.*?)```", f.read(), re.S)
    return [(p, i, code) for p in PAGES for i, code in enumerate(_blocks(p))]


def _missing(code):
    """The optional packages a block needs and the environment lacks."""
    needs = []
    if "onnx" in code:
        needs += ["onnx", "onnxruntime"]
    if "skl2onnx" in code:
        needs += ["skl2onnx"]
    if "rgbm_rs.dask" in code:
        needs += ["distributed"]
    if "plotting" in code:
        needs += ["matplotlib"]
    if "import xgboost" in code:
        needs += ["xgboost"]
    if "mlflow" in code:
        needs += ["mlflow"]
    return [m for m in needs if importlib.util.find_spec(m) is None]


def test_the_readme_and_guide_have_examples():
    assert len(_blocks("README.md")) >= 1
    assert len(_blocks()) >= 15


@pytest.mark.parametrize(("page", "index", "code"), _blocks(), ids=[f"{p}:{i}" for p, i, _ in _blocks()])
def test_python_block_runs_on_its_own(page, index, code, tmp_path):
    missing = _missing(code)
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    env = dict(os.environ, MPLBACKEND="Agg")
    # As a script file: Dask's worker processes import it (python -c would hide
    # a missing __main__ guard).
    script = tmp_path / f"block_{index}.py"
    script.write_text(code, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, script.name], cwd=tmp_path, capture_output=True, text=True, timeout=900, env=env
    )
    assert out.returncode == 0, f"{page} python block {index}:\n{code}\n{out.stderr[-3000:]}"
    # What the blocks say they leave behind.
    if "save_model(" in code and '"model.json"' in code:
        assert (tmp_path / "model.json").exists()
    if "to_onnx(" in code and '"model.onnx"' in code:
        assert (tmp_path / "model.onnx").exists()


def test_the_export_extra_installs_what_the_export_page_imports():
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    name = lambda req: re.split(r"[\[<>=!~ ]", req, maxsplit=1)[0].lower()  # noqa: E731
    extras = project["optional-dependencies"]
    installed = {name(r) for r in project["dependencies"] + extras["export"]}
    installed |= {"numpy", "sklearn", "rgbm_rs"} | set(sys.stdlib_module_names)
    for code in _blocks(os.path.join("docs", "export.md")):
        imports = {m.split(".")[0] for m in re.findall(r"^\s*(?:import|from) (\w[\w.]*)", code, re.M)}
        # The MLflow section says it needs the mlflow extra.
        needs = installed | ({name(r) for r in extras["mlflow"]} if "mlflow" in imports else set())
        assert imports <= needs, f"the export extra lacks {sorted(imports - needs)}"


def test_the_command_line_page_runs_as_written(tmp_path):
    for needed in ("pandas", "onnx"):
        if importlib.util.find_spec(needed) is None:
            pytest.skip(f"needs {needed}")
    with open(os.path.join(DOCS, "cli.md"), encoding="utf-8") as f:
        lines = [ln for block in re.findall(r"```bash\n(.*?)```", f.read(), re.S) for ln in block.splitlines()]
    python = f'"{sys.executable}"'
    script = "\n".join(
        re.sub(r"^rgbm ", f"{python} -m rgbm_rs ", re.sub(r"^python ", f"{python} ", ln)) for ln in lines
    )
    out = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    for made in ("model.json", "preds.csv", "model.onnx", "model.xgb.json", "ranker.json", "scores.csv"):
        assert (tmp_path / made).stat().st_size > 0, made
    scores = (tmp_path / "scores.csv").read_text().split()[1:]
    assert len(scores) == 3000 and len(set(scores)) > 100  # the ranker ranks
