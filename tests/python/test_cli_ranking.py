"""``rgbm train --task ranking``: the qid:N fields of a libsvm file are the ranker's query groups."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from rgbm_rs import RGBMRanker, load_model
from rgbm_rs.cli import _data as _cli_data
from rgbm_rs.cli import main

HAND_WRITTEN = """\
# three queries, SVMlight's ranking layout
2 qid:1 1:0.5 3:1.2
0 qid:1 2:1
1 qid:1 1:0.1 # a comment
0 qid:7 3:3

1 qid:7 1:2
3 qid:3 1:2 2:1
0 qid:3 3:1
"""


def run(argv, capsys):
    try:
        status = main([str(a) for a in argv])
    except SystemExit as e:
        status = e.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def one_error(err, text):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rgbm: error: ") and text in lines[0], err


def test_a_hand_written_file(tmp_path):
    path = tmp_path / "rank.svm"
    path.write_text(HAND_WRITTEN)
    X, y, zero_based, qid = _cli_data.read_libsvm(path, query_ids=True)
    assert not zero_based
    np.testing.assert_array_equal(
        X.toarray(), [[0.5, 0, 1.2], [0, 1, 0], [0.1, 0, 0], [0, 0, 3], [2, 0, 0], [2, 1, 0], [0, 0, 1]]
    )
    np.testing.assert_array_equal(y, [2, 0, 1, 0, 1, 3, 0])
    np.testing.assert_array_equal(qid, [1, 1, 1, 7, 7, 3, 3])
    assert _cli_data.query_group_sizes(qid) == [3, 2, 2]
    # As scikit-learn reads the same file.
    want_X, want_y, want_qid = load_svmlight_file(str(path), query_id=True, zero_based=False)
    np.testing.assert_array_equal(X.toarray(), want_X.toarray())
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(qid, want_qid)
    # Without query_ids the fields are ignored, as before.
    X2, y2, _ = _cli_data.read_libsvm(path)
    np.testing.assert_array_equal(X2.toarray(), X.toarray())


def test_the_line_reader_reads_the_same_query_ids(tmp_path):
    # Unsorted indices: scikit-learn's reader refuses them, the file is read line by line.
    path = tmp_path / "rank.svm"
    path.write_text(HAND_WRITTEN.replace("1:0.5 3:1.2", "3:1.2 1:0.5"))
    X, y, _, qid = _cli_data.read_libsvm(path, query_ids=True)
    assert X[0, 0] == 0.5 and X[0, 2] == 1.2
    np.testing.assert_array_equal(qid, [1, 1, 1, 7, 7, 3, 3])
    assert _cli_data._load_svmlight(path.read_bytes(), True)[0] is None


@pytest.fixture
def ranking_file(tmp_path):
    """200 queries written by scikit-learn's dump_svmlight_file with query_id."""
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 15, 200)
    qid = np.repeat(rng.permutation(1000)[:200], sizes)  # ids in no particular order, runs consecutive
    X = rng.normal(size=(sizes.sum(), 6))
    X[rng.random(X.shape) < 0.3] = 0
    grades = np.clip(np.floor(X[:, 0] + X[:, 1] * X[:, 2] + 2), 0, 4)
    path = tmp_path / "rank.libsvm"
    dump_svmlight_file(sp.csr_matrix(X), grades, str(path), query_id=qid, zero_based=False)
    return path


def test_the_cli_trains_the_ranker_on_the_files_queries(ranking_file, tmp_path, capsys):
    model = tmp_path / "ranker.json"
    status, out, err = run(
        ["train", "--data", ranking_file, "--task", "ranking", "--model", model, "n_estimators=20"], capsys
    )
    assert status == 0, err
    assert "200 queries" in out and "-> RGBMRanker" in out
    X, y, qid = load_svmlight_file(str(ranking_file), query_id=True, zero_based=False)
    _, sizes = np.unique(qid, return_counts=True)  # not the sizes: ids are not sorted
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    group = np.diff(np.r_[starts, len(qid)])
    assert sorted(group) == sorted(sizes)
    ref = RGBMRanker(n_estimators=20, random_state=0).fit(X, y, group=group)
    est = load_model(model)
    assert isinstance(est, RGBMRanker)
    assert est.get_booster().to_json() == ref.get_booster().to_json()
    # The same model from the qid the API takes.
    assert RGBMRanker(n_estimators=20, random_state=0).fit(X, y, qid=qid).get_booster().to_json() == (
        ref.get_booster().to_json()
    )

    preds = tmp_path / "scores.csv"
    status, out, err = run(["predict", "--model", model, "--data", ranking_file, "--out", preds], capsys)
    assert status == 0, err
    lines = preds.read_text().splitlines()
    assert lines[0] == "prediction"
    np.testing.assert_array_equal(np.array(lines[1:], dtype=float), ref.predict(X))
    assert "rank each query's rows" in out and "RMSE" not in out


def test_held_out_rows_are_whole_queries(ranking_file, tmp_path, capsys):
    status, out, err = run(
        ["train", "--data", ranking_file, "--task", "ranking", "--model", tmp_path / "m.json"]
        + ["--test-size", "0.25", "n_estimators=10"],
        capsys,
    )
    assert status == 0, err
    assert "test NDCG 0." in out and "(50 queries)" in out


def test_qid_is_ignored_unless_ranking_with_a_warning(ranking_file, tmp_path, capsys):
    status, out, err = run(["train", "--data", ranking_file, "--model", tmp_path / "m.json", "n_estimators=2"], capsys)
    assert status == 0
    assert "qid fields of" in err and "--task ranking" in err
    assert "RGBMClassifier" in out


@pytest.mark.parametrize(
    "text,message",
    [
        (
            "1 qid:1 1:1\n0 qid:2 1:2\n1 qid:1 1:3\n",
            "line 3 of 'f.svm': query 1 appears again after other queries (its lines start on line 1); "
            "the lines of a query must be consecutive",
        ),
        ("1 qid:1 1:1\n\n0 1:2\n", "line 3 of 'f.svm' has no query id: ranking needs qid:N right after every label"),
        ("1 qid:1 1:1\n0 1:2 qid:1\n", "line 2 of 'f.svm': 'qid:1' is not right after the label"),
        ("1 qid:1 1:1\n0 qid:1 qid:1 1:2\n", "line 2 of 'f.svm': 'qid:1' is not right after the label"),
        ("1 qid:a 1:1\n", "line 1 of 'f.svm': query id 'a' is not an integer ('qid:a')"),
        ("1 qid:1.5 1:1\n", "query id '1.5' is not an integer"),
        ("1 qid:1_0 1:1\n", "query id '1_0' is not an integer"),
    ],
)
def test_bad_query_ids_are_refused_naming_the_line(tmp_path, monkeypatch, capsys, text, message):
    monkeypatch.chdir(tmp_path)
    Path("f.svm").write_text(text)
    with pytest.raises(ValueError, match=message.split(" (")[0].replace("(", r"\(")):
        _cli_data.read_libsvm("f.svm", query_ids=True)
    status, _, err = run(["train", "--data", "f.svm", "--task", "ranking", "--model", "m.json"], capsys)
    assert status == 1
    one_error(err, message)
    assert not Path("m.json").exists()


def test_ranking_needs_a_libsvm_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("f.csv").write_text("a,y\n1,0\n2,1\n")
    status, _, err = run(
        ["train", "--data", "f.csv", "--target", "y", "--task", "ranking", "--model", "m.json"], capsys
    )
    assert status == 2
    one_error(err, "--task ranking needs query groups, read from the qid:N fields of a libsvm file")


def test_parameters_are_checked_against_the_ranker(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("f.svm").write_text(HAND_WRITTEN)
    status, _, err = run(
        ["train", "--data", "f.svm", "--task", "ranking", "--model", "m.json", "class_weight=balanced"], capsys
    )
    assert status == 1
    one_error(err, "unknown parameter 'class_weight' for RGBMRanker (it is a parameter of RGBMClassifier")
    status, _, err = run(["train", "--data", "f.svm", "--model", "m.json", "eval_at=3"], capsys)
    warning, error = err.strip().splitlines()
    assert warning.startswith("rgbm: warning: the qid fields of 'f.svm' are ignored")
    one_error(error, "for RGBMClassifier (it is a parameter of RGBMRanker: check --task)")
