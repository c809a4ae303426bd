"""Under an address-space limit (RLIMIT_AS, in a subprocess), operations that
need more memory than is left raise MemoryError: the process never aborts.

Each script runs the operation on a small input first (so thread pools and
allocator arenas exist before the limit), then sets the limit a fixed
headroom above the current usage and runs the operation on an input that
needs far more than that headroom.
"""

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")

_PRELUDE = """
import json, resource, sys
import numpy as np
from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model

def limit(headroom_mib):
    with open("/proc/self/status") as f:
        used = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
    cap = used + (headroom_mib << 20)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

rng = np.random.default_rng(0)
"""

# 1000 classes x 150k rows: 1.2 GB of scores.
_THOUSAND_CLASSES = """
X = rng.normal(size=(3000, 3))
model = RGBMClassifier(n_estimators=1, max_depth=1).fit(X, np.arange(3000) % 1000)
Xbig = rng.normal(size=(150_000, 3))
run = lambda X: CALL
run(Xbig[:1000])
limit(300)
run(Xbig)
"""

# A 1000-tree model of ~1000 leaves per tree (~90 MB of JSON), built by
# repeating one tree: writing it needs far more than the headroom.
_BIG_MODEL = """
import pickle
import rgbm_rs
path = sys.argv[1]
X = rng.normal(size=(20_000, 5))
y = X[:, 0] + rng.normal(size=20_000)
small = RGBMRegressor(n_estimators=1, max_depth=10, min_samples_leaf=1).fit(X, y)
small.save_model(path)
with open(path) as f:
    doc = json.load(f)
doc["model"]["trees"] *= 1000
doc["params"]["n_estimators"] = doc["model"]["params"]["n_estimators"] = 1000
with open(path, "w") as f:
    json.dump(doc, f)
del doc
model = load_model(path)
run = lambda model: CALL
run(small)
limit(40)
run(model)
"""

_CASES = {
    "predict_proba": _THOUSAND_CLASSES.replace("CALL", "model.predict_proba(X)"),
    "decision_function": _THOUSAND_CLASSES.replace("CALL", "model.decision_function(X)"),
    "staged_predict_proba": _THOUSAND_CLASSES.replace("CALL", "list(model.staged_predict_proba(X))"),
    # 10 members x 20M rows: 1.6 GB.
    "predict_uncertainty": """
X = rng.normal(size=(500, 1))
model = RGBMRegressor(n_estimators=40, langevin=True).fit(X, X[:, 0])
Xbig = np.zeros((20_000_000, 1), dtype=np.float32)
model.predict_uncertainty(Xbig[:1000], n_members=10)
limit(300)
model.predict_uncertainty(Xbig, n_members=10)
""",
    # 40 trees x 20M rows of leaf indices: 3.2 GB, allocated without being written.
    "apply": """
X = rng.normal(size=(500, 1))
model = RGBMRegressor(n_estimators=40).fit(X, X[:, 0])
Xbig = np.zeros((20_000_000, 1), dtype=np.float32)
model.apply(Xbig[:1000])
limit(300)
model.apply(Xbig)
""",
    # A tree of up to 200k leaves: its histograms and open leaves outgrow the headroom.
    "fit_best_first": """
X = rng.normal(size=(200_000, 20))
y = X[:, 0] + rng.normal(size=200_000)
RGBMRegressor(n_estimators=1, max_depth=None, max_leaves=31).fit(X, y)
limit(150)
RGBMRegressor(n_estimators=1, max_depth=None, max_leaves=2**20, min_samples_leaf=1).fit(X, y)
""",
    "save_model": _BIG_MODEL.replace("CALL", "model.save_model(path + '.new')"),
    "pickle": _BIG_MODEL.replace("CALL", "pickle.dumps(model)"),
    "to_json": _BIG_MODEL.replace("CALL", "model.get_booster().to_json()"),
    "to_shap": _BIG_MODEL.replace("CALL", "rgbm_rs.to_shap(model)"),
    "trees_to_dataframe": _BIG_MODEL.replace("CALL", "model.trees_to_dataframe()"),
    # Binning 200 features of 200k rows into up to 65,535 bins each.
    "fit_max_bins_65535_HEADROOM": """
X = rng.normal(size=(200_000, 200)).astype(np.float32)
RGBMRegressor(n_estimators=1).fit(X[:1000], X[:1000, 0])
limit(HEADROOM)
RGBMRegressor(n_estimators=3, max_bins=65535).fit(X, X[:, 0])
""",
    # 1024 candidate trees per step, on rows whose binned copies alone
    # (2 x 20 MB) exceed the headroom.
    "fit_rgb_1024_candidates_HEADROOM": """
X = rng.normal(size=(1_000_000, 20))
y = X[:, 0] + rng.normal(size=1_000_000)
RGBMRegressor(n_estimators=1, booster="rgb", rgb_candidates=4).fit(X[:2000], y[:2000])
limit(HEADROOM)
RGBMRegressor(n_estimators=3, booster="rgb", rgb_candidates=1024).fit(X, y)
""",
    # The text (20 MB: short numbers) is in memory; the parsed trees (50 MB) are not.
    "Booster.from_json": """
import rgbm_rs
X = rng.normal(size=(20_000, 5))
small = RGBMRegressor(n_estimators=1, max_depth=10, min_samples_leaf=1).fit(X, X[:, 0])
doc = json.loads(small.get_booster().to_json())
tree = doc["trees"][0]
del tree["leaf_count"]
for key in ("threshold", "gain", "count", "leaf_value"):
    tree[key] = [0] * len(tree[key])
doc["trees"] *= 1000
doc["params"]["n_estimators"] = 1000
text = json.dumps(doc, separators=(",", ":"))
del doc, tree
rgbm_rs._core.Booster.from_json(small.get_booster().to_json())
limit(40)
rgbm_rs._core.Booster.from_json(text)
""",
    # A 90 MB model file (20k copies of one tree).
    "load_model": """
path = sys.argv[1]
X = rng.normal(size=(2000, 3))
RGBMRegressor(n_estimators=1, max_depth=6).fit(X, X[:, 0]).save_model(path)
with open(path) as f:
    doc = json.load(f)
doc["model"]["trees"] *= 20_000
with open(path, "w") as f:
    json.dump(doc, f)
del doc
limit(50)
load_model(path)
""",
}


# Cases run at each of these headrooms (MiB), as their names say: a fit
# fails in a different allocation at each.
_HEADROOMS = {"fit_max_bins_65535_HEADROOM": (30, 100), "fit_rgb_1024_candidates_HEADROOM": (10, 30)}
for _name, _mibs in _HEADROOMS.items():
    _script = _CASES.pop(_name)
    for _mib in _mibs:
        _CASES[_name.replace("HEADROOM", str(_mib))] = _script.replace("HEADROOM", str(_mib))


@pytest.mark.parametrize("case", sorted(_CASES))
def test_out_of_memory_raises_memory_error(case, tmp_path):
    script = _PRELUDE + textwrap.dedent(
        """
        try:
        {}
        except MemoryError:
            print("MemoryError", flush=True)
            sys.exit(0)
        print("finished", flush=True)
        """
    ).format(textwrap.indent(_CASES[case], "    "))
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "model.json")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.strip() == "MemoryError", (out.stdout, out.stderr[-2000:])
