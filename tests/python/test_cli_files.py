"""The command line reads input files as the model was trained and never loses a user's file.

In-process (``rgbm_rs.cli.main``) so that faults can be injected; a few
cases run as real processes.
"""

import importlib.util
import json
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from rgbm_rs import RGBMClassifier, RGBMRegressor, cli, load_model
from rgbm_rs.cli import _data as _cli_data
from rgbm_rs.cli import _predict as _cli_predict
from rgbm_rs.cli import main

CLI_PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def run(argv, capsys):
    """Exit status and stderr of one command line (argparse's usage errors included)."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as e:
        status = e.code
    return status, capsys.readouterr().err


def one_error(err, text):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rgbm: error: ") and text in lines[0], err


def write_libsvm(path, X, y, base, listed=lambda j, v: v != 0):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            pairs = " ".join(f"{j + base}:{float(v)!r}" for j, v in enumerate(row) if listed(j, v))
            f.write(f"{label} {pairs}\n")


def read_predictions(path):
    lines = Path(path).read_text().splitlines()
    return lines[0], lines[1:]


@pytest.fixture
def sparse_data():
    """Feature 0 carries the label, and a 0-based training file uses index 0."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    X[X < 0] = 0.0
    y = (X[:, 0] > 0.5).astype(int)
    return X, y


# --------------------------------------------------------------------------- libsvm index base


def test_prediction_reads_libsvm_with_the_training_base(tmp_path, sparse_data, monkeypatch, capsys):
    X, y = sparse_data
    monkeypatch.chdir(tmp_path)
    write_libsvm("train.svm", X, y, base=0)
    assert main(["train", "--data", "train.svm", "--model", "m.json", "n_estimators=20", "-q"]) == 0
    assert json.loads(Path("m.json").read_text())["libsvm_index_base"] == 0
    ref = RGBMClassifier(n_estimators=20, random_state=0).fit(X, y)

    # Rows where feature 0 is 0: a file listing only nonzero entries has no index 0 at all.
    X_test = X.copy()
    X_test[:, 0] = 0.0
    write_libsvm("sparse.svm", X_test, y, base=0)
    assert not re.search(r" 0:", Path("sparse.svm").read_text())
    write_libsvm("dense.svm", X_test, y, base=0, listed=lambda j, v: True)
    expected = [str(v) for v in ref.predict(X_test)]
    for name in ("sparse.svm", "dense.svm"):
        assert main(["predict", "--model", "m.json", "--data", name, "--out", f"{name}.csv", "-q"]) == 0
        assert read_predictions(f"{name}.csv") == ("prediction", expected), name
    assert "warning" not in capsys.readouterr().err


def test_libsvm_base_option_and_its_checks(tmp_path, sparse_data, monkeypatch, capsys):
    X, y = sparse_data
    monkeypatch.chdir(tmp_path)
    write_libsvm("one.svm", X[:, 1:], y, base=1)
    write_libsvm("zero.svm", X, y, base=0)

    # A 1-based model (guessed from the file) meets a file using index 0: refused, naming the line.
    assert main(["train", "--data", "one.svm", "--model", "one.json", "n_estimators=5", "-q"]) == 0
    assert json.loads(Path("one.json").read_text())["libsvm_index_base"] == 1
    first_zero = next(i for i, r in enumerate(X) if r[0] != 0) + 1
    status, err = run(["predict", "--model", "one.json", "--data", "zero.svm", "--out", "p.csv"], capsys)
    assert status == 1
    one_error(
        err,
        f"line {first_zero} of 'zero.svm': feature index 0, but the indices are 1-based "
        "(the model was trained on 1-based indices; for 0-based files train with --libsvm-base 0)",
    )
    assert not Path("p.csv").exists()
    status, err = run(
        ["predict", "--model", "one.json", "--data", "one.svm", "--out", "p.csv", "--libsvm-base", "0"], capsys
    )
    assert status == 2
    one_error(err, "--libsvm-base 0 contradicts the model")

    # --libsvm-base 0 for training: index 0 is a feature even if the file never uses it.
    assert main(["train", "--data", "one.svm", "--model", "z.json", "--libsvm-base", "0", "n_estimators=5", "-q"]) == 0
    assert load_model("z.json").n_features_in_ == X.shape[1]
    assert json.loads(Path("z.json").read_text())["libsvm_index_base"] == 0
    status, err = run(["train", "--data", "zero.svm", "--model", "o.json", "--libsvm-base", "1"], capsys)
    assert status == 1
    one_error(err, "feature index 0, but the indices are 1-based (--libsvm-base 1)")

    # A model saved without a base (save_model, older files): --libsvm-base decides, else a warned guess.
    ref = RGBMClassifier(n_estimators=5, random_state=0).fit(X, y)
    ref.save_model("plain.json")
    X_test = X.copy()
    X_test[:, 0] = 0.0
    write_libsvm("test.svm", X_test, y, base=0)
    assert (
        main(["predict", "--model", "plain.json", "--data", "test.svm", "--out", "p.csv", "--libsvm-base", "0", "-q"])
        == 0
    )
    assert read_predictions("p.csv")[1] == [str(v) for v in ref.predict(X_test)]
    assert capsys.readouterr().err == ""
    assert main(["predict", "--model", "plain.json", "--data", "zero.svm", "--out", "p.csv", "-q"]) == 0
    assert "does not record a libsvm index base" in capsys.readouterr().err
    assert read_predictions("p.csv")[1] == [str(v) for v in ref.predict(X)]

    # A stored base other than 0 or 1 is a bad model file.
    doc = json.loads(Path("z.json").read_text())
    doc["libsvm_index_base"] = 2
    Path("bad.json").write_text(json.dumps(doc))
    status, err = run(["predict", "--model", "bad.json", "--data", "one.svm", "--out", "p.csv"], capsys)
    assert status == 1
    one_error(err, "libsvm_index_base must be 0 or 1")


LIBSVM_ERRORS = [
    ("1 1:0.5 1:2\n", "line 1 of 'f.svm': feature index 1 is listed twice"),
    ("1 2:1\n0 1.5:2\n", "line 2 of 'f.svm': expected index:value"),
    ("1 +1:2\n", "expected index:value"),
    ("1 1_0:2\n", "expected index:value"),
    ("1 1:1_0\n", "expected index:value"),
    ("1 -3:2\n", "negative feature index -3"),
    ("nan 1:2\n", "the label 'nan' is not finite"),
    ("1 1:2\ninf 1:3\n", "line 2 of 'f.svm': the label 'inf' is not finite"),
    ("1 1:2\n0 99999999999999:1\n", "sparse X of shape (2, 99999999999999): at most 2147483647 rows and columns"),
    ("# only a comment\n\n", "has no samples"),
]


@pytest.mark.parametrize("text,message", LIBSVM_ERRORS)
def test_malformed_libsvm_files_are_refused(tmp_path, monkeypatch, capsys, text, message):
    monkeypatch.chdir(tmp_path)
    Path("f.svm").write_text(text)
    status, err = run(["train", "--data", "f.svm", "--model", "m.json"], capsys)
    assert status == 1
    one_error(err, message)
    assert not Path("m.json").exists()


def test_csv_target_with_underscores_is_text(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,y\n1,1_0\n2,10\n")
    table = _cli_data.read_csv(path)
    assert list(table.target_column(1)) == ["1_0", "10"]


def test_libsvm_rows_without_features_are_zero_rows_when_the_width_is_known(tmp_path):
    path = tmp_path / "f.svm"
    path.write_text("1\n0 2:5\n")
    X, y, zero_based = _cli_data.read_libsvm(path, n_features=3, zero_based=False)
    np.testing.assert_array_equal(X.toarray(), [[0, 0, 0], [0, 5, 0]])
    np.testing.assert_array_equal(y, [1, 0])


def _random_csr(rng, n_rows, width, per_row, used=None):
    """per_row random entries per row among the first `used` (default all) of `width` columns."""
    rows = np.repeat(np.arange(n_rows), per_row)
    cols = rng.integers(0, width if used is None else used, n_rows * per_row)
    return sp.csr_matrix((rng.normal(size=len(rows)), (rows, cols)), shape=(n_rows, width))


@pytest.mark.parametrize("zero_based", [True, False])
def test_libsvm_files_read_as_scikit_learn_reads_them(tmp_path, zero_based):
    rng = np.random.default_rng(5)
    X = _random_csr(rng, 200, 50, 6)
    X = X.tolil()
    X[0, 0] = 1.0  # index 0 (0-based) or 1 (1-based) is listed
    X = X.tocsr()
    y = rng.integers(0, 3, 200).astype(float)
    path = tmp_path / "f.svm"
    dump_svmlight_file(X, y, str(path), zero_based=zero_based, comment="made by scikit-learn")
    got, labels, base = _cli_data.read_libsvm(path)
    want, want_labels = load_svmlight_file(str(path), zero_based=zero_based, n_features=50)
    assert base is zero_based and sp.issparse(got) and got.format == "csr"
    assert got.shape == want.shape == (200, 50)
    np.testing.assert_array_equal(got.toarray(), want.toarray())
    np.testing.assert_array_equal(labels, want_labels)
    # Unsorted indices (scikit-learn's reader refuses them) are read line by line, to the same matrix.
    lines = path.read_text().splitlines()
    shuffled = [ln.split(" ")[:1] + ln.split(" ")[1:][::-1] if not ln.startswith("#") else [ln] for ln in lines]
    unsorted = tmp_path / "unsorted.svm"
    unsorted.write_text("\n".join(" ".join(t) for t in shuffled) + "\n")
    got, labels, _ = _cli_data.read_libsvm(unsorted, zero_based=zero_based)
    np.testing.assert_array_equal(got.toarray(), want.toarray())
    np.testing.assert_array_equal(labels, want_labels)


def test_a_libsvm_file_with_millions_of_features_trains_sparse(tmp_path, monkeypatch, capsys):
    # 2000 rows, feature index 1,999,972: read densely these were 32 GB of
    # float64. The model is the one fitted through the API on the CSR that
    # scikit-learn's own loader reads from the file.
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(11)
    width = 1_999_972
    X = (_random_csr(rng, 2000, width, 12, used=300) + _random_csr(rng, 2000, width, 3)).tolil()
    X[7, width - 1] = 2.5
    X = X.tocsr()
    y = (np.asarray(X[:, :100].sum(axis=1)).ravel() > 0).astype(int)
    dump_svmlight_file(X, y, "wide.libsvm", zero_based=False)
    params = ["n_estimators=3", "max_depth=3"]
    assert main(["train", "--data", "wide.libsvm", "--model", "wide.json", *params, "-q"]) == 0
    assert main(["predict", "--data", "wide.libsvm", "--model", "wide.json", "--out", "p.csv", "--proba", "-q"]) == 0
    X, y = load_svmlight_file("wide.libsvm", zero_based=False, n_features=width)
    ref = RGBMClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y.astype(int))
    model = load_model("wide.json")
    assert model.n_features_in_ == width
    assert model.get_booster().to_json() == ref.get_booster().to_json()
    header, rows = read_predictions("p.csv")
    assert header == "proba_0,proba_1"
    got = np.array([r.split(",") for r in rows], dtype=float)
    want = np.concatenate([ref.predict_proba(X[i : i + 50]) for i in range(0, 2000, 50)])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("l1.csv", b"a,b,y\n1,2,0\n3,caf\xe9,1\n", "'l1.csv': it is not UTF-8 text (line 3, column 6: byte 0xe9)"),
        ("l1.svm", b"1 1:2\n0 1:3 2:\xe9\n", "'l1.svm': it is not UTF-8 text (line 2, column 9: byte 0xe9)"),
        ("u16.csv", "a,y\n1,0\n".encode("utf-16"), "looks like UTF-16: convert it, e.g. with iconv -f utf-16"),
    ],
)
def test_files_that_are_not_utf8_are_named_with_the_encoding_expected(
    tmp_path, monkeypatch, capsys, name, content, message
):
    monkeypatch.chdir(tmp_path)
    Path(name).write_bytes(content)
    how = ["--target", "y"] if name.endswith(".csv") else ["--libsvm-base", "1"]
    for argv in (
        ["train", "--data", name, *how, "--model", "m.json"],
        ["predict", "--data", name, *how, "--model", "m.json", "--out", "p.csv"],
    ):
        if argv[0] == "predict":
            RGBMClassifier(n_estimators=2).fit([[0.0], [1.0]], [0, 1]).save_model("m.json")
        status, err = run(argv, capsys)
        assert status == 1, argv
        one_error(err, message)
        assert "data files must be UTF-8" in err and "Traceback" not in err


def test_latin1_in_a_libsvm_comment_is_no_error(tmp_path):
    path = tmp_path / "c.svm"
    path.write_bytes(b"# caf\xe9\n1 1:2 # \xe9t\xe9\n0 2:1\n")
    X, y, _ = _cli_data.read_libsvm(path)
    np.testing.assert_array_equal(X.toarray(), [[2, 0], [0, 1]])
    np.testing.assert_array_equal(y, [1, 0])


# --------------------------------------------------------------------------- CSV misreads


@pytest.mark.parametrize(
    "text,message",
    [
        ("0.5,1.5,1\n0.1,0.2,0\n0.3,0.1,1\n", "the first row of 'f.csv' holds only numbers"),
        (",a,label\n0,1,1\n1,2,0\n", "column 0 of 'f.csv' has no name"),
        ("a,b,label\n1,2,1\n1_0,2,0\n", "column 'a' of 'f.csv' is not numeric (line 3: '1_0')"),
    ],
)
def test_csv_header_problems_are_refused(tmp_path, monkeypatch, capsys, text, message):
    monkeypatch.chdir(tmp_path)
    Path("f.csv").write_text(text)
    status, err = run(["train", "--data", "f.csv", "--target", "-1", "--model", "m.json"], capsys)
    assert status == 1
    one_error(err, message)


# --------------------------------------------------------------------------- hyperparameters


def test_trailing_key_value_parameters(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] > 0).astype(int)
    Path("t.csv").write_text("a,b,label\n" + "".join(f"{a},{b},{c}\n" for (a, b), c in zip(X.tolist(), y)))
    base = ["train", "--data", "t.csv", "--target", "label", "--model", "m.json", "-q"]
    for argv in (
        base + ["max_depth=2", "n_estimators=7"],
        ["train", "max_depth=2", "--data", "t.csv", "n_estimators=7", "--target", "label", "--model", "m.json", "-q"],
        base + ["--param", "max_depth=2", "n_estimators=7"],
    ):
        Path("m.json").unlink(missing_ok=True)
        assert main(argv) == 0, argv
        est = load_model("m.json")
        assert est.n_estimators_ == 7 and est.max_depth == 2, argv

    cases = [
        (base + ["n_estimators=7", "--param", "n_estimators=8"], 2, "parameter 'n_estimators' is given twice"),
        (base + ["max_depth=abc"], 1, "'max_depth' parameter"),
        (base + ["n_estimatorz=3"], 1, "unknown parameter 'n_estimatorz'"),
        (base + ["oops"], 2, "key=value"),
        (base + ["--bogus"], 2, "unrecognized arguments: --bogus"),
        (
            ["predict", "--model", "m.json", "--data", "t.csv", "--out", "p.csv", "n_estimators=3"],
            2,
            "unrecognized arguments",
        ),
    ]
    for argv, code, text in cases:
        status, err = run(argv, capsys)
        assert status == code, (argv, err)
        one_error(err, text)
    # With the task given, a bad value is reported before the data are read.
    status, err = run(
        [
            "train",
            "--data",
            "missing.csv",
            "--target",
            "y",
            "--model",
            "m.json",
            "--task",
            "classification",
            "learning_rate=-1",
        ],
        capsys,
    )
    assert status == 1
    one_error(err, "learning_rate")


def test_the_cli_pages_command_line_examples_run(tmp_path, monkeypatch, capsys):
    text = CLI_PAGE.read_text(encoding="utf-8")
    commands = [
        line.split("#")[0].split()
        for block in re.findall(r"```bash\n(.*?)```", text, re.S)
        for line in block.splitlines()
        if line.startswith("rgbm ")
    ]
    assert [c[1] for c in commands] == ["demo", "train", "predict", "export", "export", "train", "predict"]
    has_onnx = importlib.util.find_spec("onnx") is not None
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    for name, n in (("train.csv", 200), ("test.csv", 50)):
        X = rng.normal(size=(n, 3))
        label = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
        Path(name).write_text(
            "a,b,c,label\n" + "".join(f"{a},{b},{c},{d}\n" for (a, b, c), d in zip(X.tolist(), label))
        )
    X = rng.normal(size=(300, 4))
    grades = np.clip(np.floor(X[:, 0] + X[:, 1] + 2), 0, 4)
    dump_svmlight_file(X, grades, "rank.svm", query_id=np.repeat(np.arange(30), 10), zero_based=False)
    for argv in commands:
        if argv[1] == "demo":  # run in full by test_cli.py::test_demo_runs_all_methods
            assert cli.build_parser().parse_args(argv[1:]).func is cli.cmd_demo
            continue
        if argv[1:4] == ["export", "--format", "onnx"] and not has_onnx:  # an optional dependency
            assert cli.build_parser().parse_args(argv[1:]).func is cli.cmd_export
            continue
        assert main(argv[1:]) == 0, (argv, capsys.readouterr().err)
    est = load_model("model.json")
    assert est.n_estimators_ == 300 and est.max_depth == 4
    header, rows = read_predictions("preds.csv")
    assert header == "proba_no,proba_yes" and len(rows) == 50
    assert not has_onnx or Path("model.onnx").stat().st_size > 0
    assert json.loads(Path("model.xgb.json").read_text())["learner"]["objective"]["name"] == "binary:logistic"
    ranker = load_model("ranker.json")
    assert type(ranker).__name__ == "RGBMRanker" and ranker.eval_at == 10
    header, rows = read_predictions("scores.csv")
    assert header == "prediction" and len(rows) == 300


# --------------------------------------------------------------------------- never lose a file


@pytest.fixture
def files(tmp_path, sparse_data, monkeypatch):
    X, y = sparse_data
    monkeypatch.chdir(tmp_path)
    write_libsvm("data.svm", X, y, base=1)
    assert main(["train", "--data", "data.svm", "--model", "m.json", "n_estimators=5", "-q"]) == 0
    return {name: Path(name).read_bytes() for name in ("data.svm", "m.json")}


def test_outputs_never_overwrite_inputs(files, tmp_path, capsys):
    os.mkdir("sub")
    os.symlink("data.svm", "link.svm")
    os.link("m.json", "hard.json")
    cases = [
        (["train", "--data", "data.svm", "--model", "data.svm"], "over --data 'data.svm'"),
        (["train", "--data", "data.svm", "--model", "sub/../data.svm"], "over --data"),
        (["train", "--data", "link.svm", "--model", "data.svm"], "over --data 'link.svm'"),
        (["train", "--data", str(tmp_path / "data.svm"), "--model", "link.svm"], "over --data"),
        (["predict", "--model", "m.json", "--data", "data.svm", "--out", "m.json"], "over --model 'm.json'"),
        (["predict", "--model", "m.json", "--data", "data.svm", "--out", "hard.json"], "over --model"),
        (["predict", "--model", "m.json", "--data", "data.svm", "--out", "./data.svm"], "over --data 'data.svm'"),
        (["predict", "--model", "m.json", "--data", "data.svm", "--out", "link.svm"], "over --data"),
    ]
    for argv, text in cases:
        status, err = run(argv + ["n_estimators=5"] if argv[0] == "train" else argv, capsys)
        assert status == 2, (argv, err)
        one_error(err, f"refusing to write the {'model' if argv[0] == 'train' else 'output'} file {text}")
        for name, content in files.items():
            assert Path(name).read_bytes() == content, argv
    assert os.path.islink("link.svm")


def test_outputs_never_replace_other_kinds_of_file(files, capsys):
    Path("test.csv").write_text("a,b\n1,2\n")
    Path("empty.json").write_text("")
    Path("other.json").write_text('{"format": "xgboost"}')
    # A model may replace a model or an empty file, not data (a typo such as --model test.csv).
    for name in ("test.csv", "other.json"):
        before = Path(name).read_bytes()
        status, err = run(["train", "--data", "data.svm", "--model", name, "n_estimators=5"], capsys)
        assert status == 1
        one_error(err, f"refusing to write the model over '{name}': it exists and is not an rgbm_rs model file")
        assert Path(name).read_bytes() == before
    assert main(["train", "--data", "data.svm", "--model", "empty.json", "n_estimators=5", "-q"]) == 0
    assert main(["train", "--data", "data.svm", "--model", "m.json", "n_estimators=6", "-q"]) == 0
    assert load_model("m.json").n_estimators_ == 6
    # Predictions never replace a model; they may replace other files.
    status, err = run(["predict", "--model", "m.json", "--data", "data.svm", "--out", "empty.json"], capsys)
    assert status == 1
    one_error(err, "refusing to write predictions over 'empty.json': it is an rgbm_rs model file")
    load_model("empty.json")
    assert main(["predict", "--model", "m.json", "--data", "data.svm", "--out", "test.csv", "-q"]) == 0
    assert Path("test.csv").read_text().startswith("prediction\n")


def test_interrupted_writes_keep_the_previous_file(files, monkeypatch, capsys):
    Path("p.csv").write_text("previous predictions\n")
    real_writer = _cli_predict.csv.writer

    class Interrupted:
        """A csv writer hit by Ctrl-C after the first row."""

        def __init__(self, f, **kwargs):
            self.w = real_writer(f, **kwargs)

        def writerow(self, row):
            self.w.writerow(row)

        def writerows(self, rows):
            self.w.writerow(next(iter(rows)))
            raise KeyboardInterrupt

    monkeypatch.setattr(_cli_predict.csv, "writer", Interrupted)
    assert main(["predict", "--model", "m.json", "--data", "data.svm", "--out", "p.csv", "-q"]) == 130
    assert Path("p.csv").read_text() == "previous predictions\n"
    monkeypatch.setattr(_cli_predict.csv, "writer", real_writer)

    import rgbm_rs._files as files_module

    def crash(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(files_module.os, "fsync", crash)
    assert main(["train", "--data", "data.svm", "--model", "m.json", "n_estimators=9", "-q"]) == 130
    assert Path("m.json").read_bytes() == files["m.json"]
    est = load_model("m.json")
    with pytest.raises(KeyboardInterrupt):
        est.save_model("m.json")
    assert Path("m.json").read_bytes() == files["m.json"]
    assert sorted(os.listdir(".")) == ["data.svm", "m.json", "p.csv"], "temporary files left behind"
    assert "interrupted" in capsys.readouterr().err


def test_save_model_keeps_modes_links_and_special_files(tmp_path, sparse_data):
    X, y = sparse_data
    est = RGBMClassifier(n_estimators=3, random_state=0).fit(X, y)
    umask = os.umask(0o022)
    try:
        est.save_model(tmp_path / "new.json")
        assert stat.S_IMODE(os.stat(tmp_path / "new.json").st_mode) == 0o644
        (tmp_path / "old.json").write_text("{}")
        os.chmod(tmp_path / "old.json", 0o640)
        est.save_model(tmp_path / "old.json")
        assert stat.S_IMODE(os.stat(tmp_path / "old.json").st_mode) == 0o640
    finally:
        os.umask(umask)
    # A link is followed: its target gets the model, the link stays a link.
    os.symlink("old.json", tmp_path / "link.json")
    (tmp_path / "old.json").write_text("{}")
    est.save_model(tmp_path / "link.json")
    assert os.path.islink(tmp_path / "link.json")
    load_model(tmp_path / "old.json")
    # A FIFO (like /dev/stdout) is written, not replaced by a regular file.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    try:
        est.save_model(fifo)
    finally:
        reader.join(timeout=60)
        if reader.is_alive():  # unblock the reader
            with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "w"):
                pass
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert json.loads(received[0])["format"] == "rgbm_rs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link.json", "new.json", "old.json"]


def test_predict_to_a_device_writes_through_it(files):
    assert main(["predict", "--model", "m.json", "--data", "data.svm", "--out", os.devnull, "-q"]) == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write any file")
def test_read_only_output_is_refused(files, capsys):
    Path("p.csv").write_text("keep\n")
    os.chmod("p.csv", 0o444)
    status, err = run(["predict", "--model", "m.json", "--data", "data.svm", "--out", "p.csv"], capsys)
    assert status == 1
    one_error(err, "permission denied")
    assert Path("p.csv").read_text() == "keep\n"


def test_refusal_in_a_real_process(files):
    out = subprocess.run(
        [sys.executable, "-m", "rgbm_rs", "train", "--data", "data.svm", "--model", "data.svm"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 2
    one_error(out.stderr, "refusing to write the model file over --data")
    assert Path("data.svm").read_bytes() == files["data.svm"]


def test_predict_to_dev_stdout_through_a_pipe(files):
    """/dev/stdout resolves to a pipe, which cannot be replaced by a rename: it is written in place."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "rgbm_rs",
            "predict",
            "--model",
            "m.json",
            "--data",
            "data.svm",
            "--out",
            "/dev/stdout",
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "prediction" and len(lines) == 301


# --------------------------------------------------------------------------- export

NEEDS_ONNX = pytest.mark.skipif(importlib.util.find_spec("onnx") is None, reason="onnx is not installed")


@pytest.fixture
def export_files(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    RGBMRegressor(n_estimators=2).fit(X, X[:, 0]).save_model(tmp_path / "m.json")
    (tmp_path / "other.json").write_text("{}")
    doc = json.loads((tmp_path / "m.json").read_text())
    doc["model"]["base_score"] = [1e39]  # loads (within ±1e200), beyond float32
    (tmp_path / "big.json").write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "argv,code,text",
    [
        (["export", "m.json", "o.onnx"], 2, "--format"),
        (["export", "--format", "pmml", "m.json", "o.onnx"], 2, "invalid choice"),
        (["export", "--format", "onnx", "missing.json", "o.onnx"], 1, "no such file"),
        (["export", "--format", "onnx", "other.json", "o.onnx"], 1, "not an rgbm_rs model"),
        (["export", "--format", "onnx", "m.json", "m.json"], 2, "same file"),
        (["export", "--format", "onnx", "m.json", "big.json"], 1, "refusing to write an ONNX model over"),
        (["export", "--format", "onnx", "m.json", "no/dir/o.onnx"], 1, "does not exist"),
        pytest.param(["export", "--format", "onnx", "big.json", "o.onnx"], 1, "float32", marks=NEEDS_ONNX),
        (["export", "--format", "xgboost", "big.json", "o.xgb.json"], 1, "float32"),
        (["export", "--format", "xgboost", "m.json", "big.json"], 1, "refusing to write an XGBoost model over"),
        (["export", "--format", "xgboost", "m.json", "m.json"], 2, "same file"),
    ],
)
def test_export_errors_are_one_line_and_write_nothing(export_files, capsys, argv, code, text):
    before = {p.name: p.read_bytes() for p in export_files.iterdir()}
    status, err = run(argv, capsys)
    assert status == code, err
    one_error(err, text)
    assert {p.name: p.read_bytes() for p in export_files.iterdir()} == before


def test_export_in_xgboost_format(export_files, capsys):
    status, err = run(["export", "--format", "xgboost", "m.json", "m.xgb.json"], capsys)
    assert status == 0, err
    doc = json.loads((export_files / "m.xgb.json").read_text())
    assert doc["learner"]["objective"]["name"] == "reg:squarederror"
    xgb = pytest.importorskip("xgboost")
    X = np.random.default_rng(1).normal(size=(50, 3)).astype(np.float32)
    booster = xgb.Booster(model_file=str(export_files / "m.xgb.json"))
    expected = load_model(export_files / "m.json").predict(X)
    np.testing.assert_allclose(booster.inplace_predict(X), expected, rtol=1e-6, atol=1e-6)
