"""The command line (``python -m rgbm_rs``) runs end to end.

Every CLI start re-imports scikit-learn (seconds on a loaded machine), so the
happy paths and a few errors go through real subprocesses, and the full
matrix of user errors calls ``rgbm_rs.cli.main`` in-process, which runs
the same code after argument parsing.
"""

import csv
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model
from rgbm_rs.cli import _data as _cli_data
from rgbm_rs.cli import main

METHODS = ("GBM", "RGBM", "SGLB", "RGB")


def run_cli(*args, cwd=None, timeout=180):
    return subprocess.run(
        [sys.executable, "-m", "rgbm_rs", *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=cwd
    )


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def write_csv(path, header, columns):
    """Columns of floats (NaN written as an empty cell or 'NaN') or strings; floats round-trip exactly."""
    n = len(columns[0])
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for i in range(n):
            row = []
            for j, col in enumerate(columns):
                v = col[i]
                if isinstance(v, (float, np.floating)):
                    row.append(("" if j % 2 else "NaN") if np.isnan(v) else repr(float(v)))
                else:
                    row.append(str(v))
            w.writerow(row)


@pytest.fixture
def cls_csv(tmp_path):
    """String labels in a middle column; missing values in feature 'b'."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 4))
    X[rng.random(240) < 0.1, 1] = np.nan
    y = np.where(np.nan_to_num(X[:, 0]) + X[:, 2] + 0.3 * rng.normal(size=240) > 0, "spam", "ham")
    path = tmp_path / "cls.csv"
    write_csv(path, ["a", "b", "label", "c", "d"], [X[:, 0], X[:, 1], y, X[:, 2], X[:, 3]])
    return path, X, y


@pytest.fixture
def reg_csv(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    X[rng.random(200) < 0.1, 2] = np.nan
    y = 2 * X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=200)
    path = tmp_path / "reg.csv"
    write_csv(path, ["x0", "x1", "x2", "y"], [X[:, 0], X[:, 1], X[:, 2], y])
    return path, X, y


# --------------------------------------------------------------------------- demo


def test_demo_runs_all_methods(tmp_path):
    out = run_cli("demo", "--seed", 0, "--out-dir", tmp_path / "plots", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    rows = {}
    for line in out.stdout.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 5 and cells[1] in METHODS + ("LightGBM",):
            rows[(cells[0], cells[1])] = (float(cells[2]), float(cells[3]), float(cells[4]))
    for method in METHODS:
        acc, logloss, fit_s = rows[("breast cancer", method)]
        assert acc > 0.85, (method, out.stdout)
        assert 0 < logloss < 0.7 and fit_s >= 0
        assert rows[("digits 3 vs 8", method)][0] > 0.85, (method, out.stdout)
    plots = re.findall(r"^plot: (.+\.png)$", out.stdout, re.M)
    if plots:
        assert len(plots) == 2
        for p in plots:
            assert Path(p).parent.resolve() == (tmp_path / "plots").resolve()
            assert open(p, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    else:
        assert re.search(r"^plots? .*skipped", out.stdout, re.M), out.stdout


# --------------------------------------------------------------------------- train / predict


def test_classification_round_trip_with_string_labels(tmp_path, cls_csv):
    path, X, y = cls_csv
    model = tmp_path / "m.json"
    out = run_cli(
        "train",
        "--data",
        path,
        "--target",
        "label",
        "--model",
        model,
        "--param",
        "n_estimators=30",
        "learning_rate=0.2",
        "--param",
        "max_depth=3",
        "selection=groups",
        "selection_size=2",
    )
    assert out.returncode == 0, out.stderr
    assert "classification" in out.stdout and "30 rounds" in out.stdout

    ref = RGBMClassifier(
        n_estimators=30, learning_rate=0.2, max_depth=3, selection="groups", selection_size=2, random_state=0
    ).fit(X, y)
    est = load_model(model)
    assert list(est.feature_names_in_) == ["a", "b", "c", "d"]
    assert list(est.classes_) == ["ham", "spam"]

    # The training file still holds the target column: it is ignored by name.
    preds = tmp_path / "p.csv"
    out = run_cli("predict", "--model", model, "--data", path, "--out", preds)
    assert out.returncode == 0, out.stderr
    header, rows = read_csv(preds)
    assert header == ["prediction"]
    assert [r[0] for r in rows] == list(ref.predict(X))

    # --proba, with the features in another order and the target named.
    shuffled = tmp_path / "shuffled.csv"
    write_csv(shuffled, ["label", "d", "c", "b", "a"], [y, X[:, 3], X[:, 2], X[:, 1], X[:, 0]])
    probas = tmp_path / "proba.csv"
    out = run_cli("predict", "--model", model, "--data", shuffled, "--target", "label", "--out", probas, "--proba")
    assert out.returncode == 0, out.stderr
    assert "accuracy" in out.stdout
    header, rows = read_csv(probas)
    assert header == ["proba_ham", "proba_spam"]
    P = np.array(rows, dtype=float)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(P, ref.predict_proba(X))


def test_regression_round_trip_and_hold_out(tmp_path, reg_csv):
    path, X, y = reg_csv
    model = tmp_path / "r.json"
    out = run_cli(
        "train",
        "--data",
        path,
        "--target",
        "-1",
        "--model",
        model,
        "--seed",
        7,
        "--param",
        "n_estimators=40",
        "subsample=0.8",
        "max_depth=4",
    )
    assert out.returncode == 0, out.stderr
    assert "regression" in out.stdout
    ref = RGBMRegressor(n_estimators=40, subsample=0.8, max_depth=4, random_state=7).fit(X, y)
    preds = tmp_path / "p.csv"
    out = run_cli("predict", "--model", model, "--data", path, "--target", "y", "--out", preds, "--quiet")
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""
    header, rows = read_csv(preds)
    assert header == ["prediction"]
    np.testing.assert_array_equal(np.array(rows, dtype=float)[:, 0], ref.predict(X))

    out = run_cli("train", "--data", path, "--target", "y", "--model", model, "--test-size", 0.25)
    assert out.returncode == 0, out.stderr
    rmse = float(re.search(r"test RMSE ([0-9.e+-]+) on 50 held-out rows", out.stdout).group(1))
    assert 0 < rmse < np.std(y)


def test_constraints_by_column_name(tmp_path, reg_csv, monkeypatch):
    path, X, y = reg_csv
    monkeypatch.chdir(tmp_path)
    args = ["train", "--data", str(path), "--target", "y", "--model", "m.json", "--quiet", "n_estimators=20"]
    named = ['monotone_constraints={"x0": 1, "x1": -1}', 'interaction_constraints=[["x0", "x1"], ["x2"]]']
    assert main([*args, *named]) == 0
    ref = RGBMRegressor(
        n_estimators=20, monotone_constraints=[1, -1, 0], interaction_constraints=[[0, 1], [2]], random_state=0
    ).fit(X, y)
    np.testing.assert_array_equal(load_model("m.json").predict(X), ref.predict(X))
    assert main([*args, 'monotone_constraints={"nope": 1}']) == 1


@pytest.fixture
def city_csv(tmp_path):
    """A text column 'city' (some cells empty), an integer column 'b', labels 0/1."""
    rng = np.random.default_rng(4)
    n = 400
    a = rng.normal(size=n)
    b = rng.integers(0, 4, n)
    city = np.array(["paris", "rome", "oslo", "lima", "kyiv"], dtype=object)[rng.integers(0, 5, n)]
    city[::17] = None
    y = ((np.isin(city, ["rome", "lima"])) ^ (a > 1.0)).astype(int)
    path = tmp_path / "city.csv"
    write_csv(path, ["a", "b", "city", "label"], [a, b, ["" if c is None else c for c in city], y])
    return path, a, b, city, y


def test_categorical_text_columns_and_class_weight_keys(tmp_path, city_csv, monkeypatch, capsys):
    # The model is the one fitted through the API on a pandas frame with a
    # string column named in categorical_features, and class weights keyed
    # by the integer labels; `rgbm predict` reads categories by value.
    pd = pytest.importorskip("pandas")
    path, a, b, city, y = city_csv
    monkeypatch.chdir(tmp_path)
    frame = pd.DataFrame({"a": a, "b": b.astype(float), "city": pd.Series(city, dtype=object)})
    params = dict(n_estimators=15, max_depth=3, random_state=0)
    base = ["train", "--data", str(path), "--target", "label", "--quiet", "n_estimators=15", "max_depth=3"]
    ref = RGBMClassifier(categorical_features=["city", "b"], class_weight={1: 5.0}, **params).fit(frame, y)
    assert main([*base, "--model", "m.json", 'categorical_features=["city", "b"]', 'class_weight={"1": 5}']) == 0
    model = load_model("m.json")
    assert model.get_booster().to_json() == ref.get_booster().to_json()
    assert model.class_weight == {1: 5}
    test = frame.iloc[:40].copy()
    test.loc[test.index[:3], "city"] = "berlin"  # not seen in training: missing
    write_csv("test.csv", ["city", "a", "b"], [test["city"].fillna("").tolist(), test["a"].values, test["b"].values])
    assert main(["predict", "--model", "m.json", "--data", "test.csv", "--out", "p.csv", "--proba", "--quiet"]) == 0
    assert "1 value(s) not seen in training, read as missing: 'berlin'" in capsys.readouterr().err
    np.testing.assert_array_equal(np.array(read_csv("p.csv")[1], dtype=float), ref.predict_proba(test))
    # The saved model predicts on frames through the API as the reference does.
    np.testing.assert_array_equal(model.predict_proba(test), ref.predict_proba(test))

    # categorical_features=auto: every text column.
    ref = RGBMClassifier(categorical_features="auto", **params).fit(frame, y)
    assert main([*base, "--model", "auto.json", "categorical_features=auto"]) == 0
    assert load_model("auto.json").get_booster().to_json() == ref.get_booster().to_json()

    # Without categorical_features the text column is refused, saying how to use it.
    assert main([*base, "--model", "none.json"]) == 1
    err = capsys.readouterr().err
    assert "column 'city'" in err and "'categorical_features=[\"city\"]'" in err and "categorical_features=auto" in err
    # A label given twice, and a key that is no label (the estimator's message).
    base.append("categorical_features=auto")
    assert main([*base, "--model", "w.json", 'class_weight={"1": 5, "1.0": 2}']) == 2
    assert "class_weight gives label 1 twice (keys '1' and '1.0')" in capsys.readouterr().err
    assert main([*base, "--model", "w.json", 'class_weight={"7": 5}']) == 1
    assert "class_weight names labels not in y: ['7']" in capsys.readouterr().err
    assert not Path("w.json").exists()
    # A key equal to a label as a number stands for it.
    ref = RGBMClassifier(categorical_features="auto", class_weight={0: 0.25}, **params).fit(frame, y)
    assert main([*base, "--model", "w.json", 'class_weight={"0.0": 0.25}']) == 0
    assert load_model("w.json").get_booster().to_json() == ref.get_booster().to_json()


def test_class_weight_of_text_labels(tmp_path, cls_csv, monkeypatch):
    path, X, y = cls_csv
    monkeypatch.chdir(tmp_path)
    args = ["train", "--data", str(path), "--target", "label", "--quiet", "n_estimators=5"]
    assert main([*args, "--model", "s.json", 'class_weight={"spam": 3}']) == 0
    ref = RGBMClassifier(n_estimators=5, class_weight={"spam": 3}, random_state=0).fit(X, y)
    np.testing.assert_array_equal(load_model("s.json").predict_proba(X), ref.predict_proba(X))


def test_libsvm_round_trip(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 6))
    X[X < 0.2] = 0.0
    y = np.where(X[:, 1] + X[:, 4] > 0.7, 1, -1)
    path = tmp_path / "train.svm"
    with open(path, "w") as f:
        for row, label in zip(X, y):
            pairs = " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0)
            f.write(f"{label:+d} {pairs}  # comment\n")
    model = tmp_path / "l.json"
    out = run_cli("train", "--data", path, "--model", model, "--param", "n_estimators=25")
    assert out.returncode == 0, out.stderr
    assert "1-based" in out.stdout
    ref = RGBMClassifier(n_estimators=25, random_state=0).fit(X, y)
    preds = tmp_path / "p.csv"
    out = run_cli("predict", "--model", model, "--data", path, "--out", preds, "--proba")
    assert out.returncode == 0, out.stderr
    header, rows = read_csv(preds)
    assert header == ["proba_-1", "proba_1"]
    np.testing.assert_array_equal(np.array(rows, dtype=float), ref.predict_proba(X))


# --------------------------------------------------------------------------- file reading (in-process)


def test_libsvm_index_base_is_detected(tmp_path):
    zero = tmp_path / "zero.libsvm"
    zero.write_text("1 0:1.5 2:2\n0 1:-1\n")
    X, y, zero_based = _cli_data.read_libsvm(zero)
    assert zero_based and sp.issparse(X)
    np.testing.assert_array_equal(X.toarray(), [[1.5, 0, 2], [0, -1, 0]])
    np.testing.assert_array_equal(y, [1, 0])
    one = tmp_path / "one.txt"
    one.write_text("# header comment\n1 qid:3 1:1.5 3:2\n\n0 2:-1\n")
    X, y, zero_based = _cli_data.read_libsvm(one, n_features=4)
    assert not zero_based
    np.testing.assert_array_equal(X.toarray(), [[1.5, 0, 2, 0], [0, -1, 0, 0]])


def test_csv_missing_tokens_and_task_rule(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("f,g,t\n1,,a\n NA ,2.5,b\nnan,null,a\n")
    table = _cli_data.read_csv(path)
    X = table.feature_matrix([0, 1])
    np.testing.assert_array_equal(np.isnan(X), [[False, True], [True, False], [True, True]])
    assert table.column_index("t") == table.column_index("-1") == 2
    assert _cli_data.infer_task(table.target_column(2)) == "classification"
    assert _cli_data.infer_task(np.arange(20.0)) == "classification"
    assert _cli_data.infer_task(np.arange(21.0)) == "regression"
    assert _cli_data.infer_task(np.array([0.5, 1.0, 0.5])) == "regression"
    assert _cli_data.class_labels(np.array([1.0, -1.0])).dtype == np.int64


# --------------------------------------------------------------------------- errors


@pytest.fixture
def error_files(tmp_path, cls_csv):
    path, X, y = cls_csv
    (tmp_path / "text.csv").write_text("a,colour,y\n1,red,0\n2,blue,1\n")
    (tmp_path / "ragged.csv").write_text("a,b,y\n1,2\n")
    (tmp_path / "binary.csv").write_bytes(b"\xff\xfe\x00\x81garbage\n")
    (tmp_path / "bad.libsvm").write_text("1 1:0.5 2:x\n")
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "nolabel.csv").write_text("a,b,y\n1,2,\n")
    (tmp_path / "multi.csv").write_text("x,y\n" + "".join(f"{i * 0.1},{i % 3}\n" for i in range(60)))
    (tmp_path / "fewer.csv").write_text("a,c,d\n1,2,3\n")
    (tmp_path / "notjson.json").write_text("this is not json")
    (tmp_path / "other.json").write_text('{"format": "xgboost"}')
    RGBMClassifier(n_estimators=5, random_state=0).fit(X, y).save_model(tmp_path / "plain.json")
    RGBMRegressor(n_estimators=5).fit(X, X[:, 0]).save_model(tmp_path / "reg.json")
    return tmp_path


TRAIN = ["train", "--model", "out.json"]
ERRORS = [
    # (arguments, exit code, text expected in the message)
    (TRAIN + ["--data", "missing.csv", "--target", "y"], 1, "no such file"),
    (TRAIN + ["--data", ".", "--target", "y"], 1, "directory"),
    (TRAIN + ["--data", "binary.csv", "--target", "y"], 1, "not UTF-8"),
    (TRAIN + ["--data", "empty.csv", "--target", "y"], 1, "empty"),
    (TRAIN + ["--data", "ragged.csv", "--target", "y"], 1, "line 2"),
    (TRAIN + ["--data", "cls.csv", "--target", "nope"], 1, "no column 'nope'"),
    (TRAIN + ["--data", "cls.csv"], 2, "--target is required"),
    (TRAIN + ["--data", "text.csv", "--target", "y"], 1, "column 'colour'"),
    (TRAIN + ["--data", "nolabel.csv", "--target", "y"], 1, "missing value"),
    (TRAIN + ["--data", "bad.libsvm"], 1, "index:value"),
    (TRAIN + ["--data", "cls.csv", "--target", "label", "--param", "n_estimatorz=5"], 1, "did you mean 'n_estimators'"),
    (TRAIN + ["--data", "cls.csv", "--target", "label", "--param", "huber_delta=2"], 1, "RGBMRegressor"),
    (TRAIN + ["--data", "cls.csv", "--target", "label", "--param", "learning_rate=-1"], 1, "learning_rate"),
    (TRAIN + ["--data", "cls.csv", "--target", "label", "--param", "loss=huber"], 1, "loss"),
    (TRAIN + ["--data", "cls.csv", "--target", "label", "--param", "max_depth=null"], 1, "max_leaves"),
    (TRAIN + ["--data", "cls.csv", "--target", "label", "--param", "oops"], 2, "key=value"),
    (TRAIN + ["--data", "cls.csv", "--target", "label", "--test-size", "1.5"], 2, "--test-size"),
    (TRAIN + ["--data", "cls.csv", "--target", "label", "--task", "guess"], 2, "invalid choice"),
    (TRAIN + ["--data", "multi.csv", "--target", "x", "--task", "classification"], 1, "continuous"),
    (TRAIN + ["--data", "cls.csv", "--target", "label", "--task", "regression"], 1, "not numeric"),
    (["train", "--data", "cls.csv", "--target", "label", "--model", "no/dir/m.json"], 1, "does not exist"),
    (["predict", "--model", "missing.json", "--data", "cls.csv", "--out", "p.csv"], 1, "no such file"),
    (["predict", "--model", "notjson.json", "--data", "cls.csv", "--out", "p.csv"], 1, "not a valid rgbm_rs model"),
    (["predict", "--model", "other.json", "--data", "cls.csv", "--out", "p.csv"], 1, "not an rgbm_rs model"),
    (["predict", "--model", "plain.json", "--data", "fewer.csv", "--out", "p.csv"], 1, "feature column"),
    (
        ["predict", "--model", "plain.json", "--data", "cls.csv", "--target", "zz", "--out", "p.csv"],
        1,
        "no column 'zz'",
    ),
    (["predict", "--model", "reg.json", "--data", "cls.csv", "--out", "p.csv", "--proba"], 1, "--proba"),
    (["predict", "--model", "plain.json", "--data", "cls.csv", "--out", "no/dir/p.csv"], 1, "does not exist"),
    (["predict", "--model", "plain.json", "--data", "cls.csv"], 2, "--out"),
]


@pytest.mark.parametrize("argv,code,text", ERRORS, ids=[" ".join(a[:1] + a[3:]) for a, _, _ in ERRORS])
def test_user_errors_are_one_line(error_files, monkeypatch, capsys, argv, code, text):
    monkeypatch.chdir(error_files)
    try:
        status = main(argv)
    except SystemExit as e:  # argparse's usage errors
        status = e.code
    err = capsys.readouterr().err
    assert status == code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rgbm: error: ") and text in lines[0], err
    assert "Traceback" not in err


def test_user_errors_in_a_real_process(error_files):
    """No traceback reaches the terminal: a few of the cases above as real subprocesses, run together."""
    cases = [ERRORS[0], ERRORS[7], ERRORS[10], ERRORS[15], ERRORS[23], ERRORS[25]]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "rgbm_rs", *argv],
            cwd=error_files,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv, _, _ in cases
    ]
    for (argv, code, text), proc in zip(cases, procs):
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == code, (argv, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("rgbm: error: ") and text in lines[0], (argv, err)


def test_unknown_command_is_a_usage_error():
    out = subprocess.run([sys.executable, "-m", "rgbm_rs", "fly"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "invalid choice" in out.stderr


def test_multiclass_csv_trains_and_predicts_probabilities(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] > 0.5, "hi", np.where(X[:, 0] < -0.5, "lo", "mid"))
    lines = "".join(f"{a},{b},{c}\n" for (a, b), c in zip(X, y))
    (tmp_path / "three.csv").write_text("a,b,label\n" + lines)
    assert main(["train", "--data", "three.csv", "--target", "label", "--model", "m.json"]) == 0
    assert main(["predict", "--model", "m.json", "--data", "three.csv", "--out", "p.csv", "--proba"]) == 0
    rows = (tmp_path / "p.csv").read_text().splitlines()
    assert rows[0] == "proba_hi,proba_lo,proba_mid"
    proba = np.array([[float(v) for v in r.split(",")] for r in rows[1:]])
    assert proba.shape == (300, 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert (np.array(["hi", "lo", "mid"])[proba.argmax(axis=1)] == y).mean() > 0.95
