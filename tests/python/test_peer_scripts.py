"""LightGBM's and XGBoost's example scripts (tests/peer_scripts, written from
their documentation) run with only their imports changed to rgbm_rs, and
give metrics within noise of the peer's on the same data and split."""

import json
import math
import os
import subprocess
import sys

import pytest

SCRIPTS = os.path.join(os.path.dirname(__file__), "..", "peer_scripts")

# Each script's peer, and the imports that replace its peer's.
OURS = {
    "lightgbm_regression.py": ("lightgbm", "import rgbm_rs as lgb\nfrom rgbm_rs import RGBMRegressor as LGBMRegressor"),
    "lightgbm_categorical.py": (
        "lightgbm",
        "import rgbm_rs as lgb\nfrom rgbm_rs import RGBMClassifier as LGBMClassifier",
    ),
    "xgboost_classification.py": ("xgboost", "from rgbm_rs import RGBMClassifier as XGBClassifier"),
}


def _run(code, tmp_path, name):
    script = tmp_path / name
    script.write_text(code, encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _tolerance(metric, value, n):
    """Three standard errors of the peer's value on n test rows."""
    if metric in ("accuracy", "auc"):
        # Binomial error; for the AUC, of a quarter of the rows (a lower
        # bound on the positives and negatives of a balanced split).
        m = n if metric == "accuracy" else n / 4
        return 3 * math.sqrt(max(value * (1 - value), 1 / n) / m)
    # Losses and errors: a relative error of 1/sqrt(2n) (a chi-square's
    # spread), doubled for the heavy-tailed log loss.
    return 3 * value * (2.0 if metric == "logloss" else 1.0) / math.sqrt(2 * n)


def test_every_script_has_a_replacement():
    assert sorted(f for f in os.listdir(SCRIPTS) if f.endswith(".py")) == sorted(OURS)


@pytest.mark.parametrize("name", sorted(OURS))
def test_a_peer_script_runs_with_our_imports(name, tmp_path):
    peer, imports = OURS[name]
    pytest.importorskip(peer)
    with open(os.path.join(SCRIPTS, name), encoding="utf-8") as f:
        code = f.read()
    head, rest = code.split("# peer imports\n", 1)
    _, tail = rest.split("# end peer imports\n", 1)
    theirs = _run(code, tmp_path, "peer_" + name)
    ours = _run(head + imports + "\n" + tail, tmp_path, "ours_" + name)
    assert ours.keys() == theirs.keys()
    n = theirs.pop("n_test")
    for metric, value in theirs.items():
        assert abs(ours[metric] - value) <= _tolerance(metric, value, n), (metric, ours[metric], value)
