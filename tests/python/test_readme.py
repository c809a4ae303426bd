"""The README's Python examples run as written (in order, one namespace)."""

import importlib.util
import os
import re

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def needs_missing_onnx(code):
    """The ONNX example needs onnx and onnxruntime, optional dependencies (both in the test extra)."""
    return "onnx" in code and any(importlib.util.find_spec(m) is None for m in ("onnx", "onnxruntime"))


def needs_missing_dask(code):
    """The Dask example needs the dask extra."""
    return "rgbm_rs.dask" in code and importlib.util.find_spec("distributed") is None


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    with open(README, encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for i, code in enumerate(blocks):
        if needs_missing_onnx(code) or needs_missing_dask(code):
            continue
        exec(compile(code, f"README python block {i}", "exec"), namespace)
    assert (tmp_path / "model.json").exists()
    assert needs_missing_onnx("onnx") or (tmp_path / "model.onnx").exists()
    assert len(namespace["history"]["valid_0"]["multi_logloss"]) <= 50
    assert sum(namespace["rgb"].rgb_family_counts_.values()) == 50
