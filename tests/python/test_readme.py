"""The README's quick-start code runs as written."""
import os
import re

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def test_quick_start_runs(tmp_path, monkeypatch):
    with open(README, encoding="utf-8") as f:
        text = f.read()
    section = text.split("## Quick start", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README quick start", "exec"), {})
    assert (tmp_path / "model.json").exists()
