"""The command line's CSV reader: pyarrow.csv when installed, Python's csv
module otherwise, giving the same arrays and the same errors on the same files."""

import sys

import numpy as np
import pytest

from rgbm_rs import load_model
from rgbm_rs.cli import _data as _cli_data
from rgbm_rs.cli import main

pytest.importorskip("pyarrow")


def without_pyarrow(monkeypatch):
    """Make `import pyarrow` fail, as where it is not installed."""
    for name in ("pyarrow", "pyarrow.csv", "pyarrow.compute"):
        monkeypatch.setitem(sys.modules, name, None)


def readings(table):
    """Everything the command line asks of a table, an error as its message."""

    def ask(fn, *args):
        try:
            return fn(*args)
        except _cli_data.DataError as e:
            return f"DataError: {e}"

    out = {"header": table.header, "n_rows": table.n_rows}
    for j in range(len(table.header)):
        cats = ask(table.category_column, j)
        out[j] = {
            "cells": table.cells(j),
            "lines": [table.line_number(i) for i in range(table.n_rows)],
            "numeric": ask(table.numeric_column, j),
            "is_numeric": table.is_numeric(j),
            "categories": cats,
            "coded": ask(table.coded_column, j, ["b", 2.0, "x y"]),
            "target": ask(table.target_column, j),
        }
        target = out[j]["target"]
        if isinstance(target, np.ndarray):
            out[j]["target_kind"] = target.dtype.kind
    return out


def both_readers(path):
    """(Arrow's table, the text reader's table) of one file."""
    arrow = _cli_data._read_csv_arrow(str(path))
    text = _cli_data._read_csv_text(str(path))
    return arrow, text


FILES = {
    # Empty fields, missing-value tokens in any case and with blanks, a label column.
    "missing.csv": "a,b,c,label\n1,,NA,yes\n nan ,2.5,null,no\nN/A,None,NaN,yes\n-3e2, 4 ,,no\n",
    # Quoted fields: delimiters, doubled quotes and a line break inside, quoted numbers.
    "quoted.csv": 'name,x,label\n"Smith, J.","1.5",a\n"say ""hi""",2,b\n"two\nlines",3,"a"\n"",4,b\n',
    # Blank lines, CRLF line ends, a byte-order mark, blanks around the header names.
    "layout.csv": "\ufeff a , b ,y\r\n\r\n1,2,0\r\n\r\n3,4,1\r\n5,6,0",
    # Text that is not a number to either reader; numbers only one of them reads.
    "text.csv": "f,g,h,y\n1_0,x,١,1\n2,x y,+1,2\n3,b, 2 ,3\n",
    # Infinite values, spelled several ways.
    "inf.csv": "f,g,y\n1,inf,1\n2,-Infinity,inf\n3,1e400,2\n",
    # A tab-separated file.
    "tabs.tsv": "a\tb\tlabel\n1\t\t3\n2.5\tNA\t4\n",
    # Numeric labels with a missing one; categories that look like numbers.
    "targets.csv": "cat,y,z\n2,1,0.5\n2.0,2,NA\nb,,1.5\nx y,3,2\n",
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_both_readers_give_the_same_answers(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(FILES[name].encode("utf-8"))
    arrow, text = both_readers(path)
    assert isinstance(arrow, _cli_data.ArrowCsvTable), "the Arrow path must be the one tested"
    assert isinstance(text, _cli_data.TextCsvTable)
    np.testing.assert_equal(readings(arrow), readings(text))


def test_what_the_readers_read(tmp_path):
    """The arrays themselves, not only their agreement."""
    for name in ("missing.csv", "quoted.csv", "text.csv"):
        (tmp_path / name).write_text(FILES[name], encoding="utf-8")
    for table in both_readers(tmp_path / "missing.csv"):
        np.testing.assert_array_equal(
            table.feature_matrix([0, 1, 2]),
            [[1, np.nan, np.nan], [np.nan, 2.5, np.nan], [np.nan, np.nan, np.nan], [-300, 4, np.nan]],
        )
        assert list(table.target_column(3)) == ["yes", "no", "yes", "no"]
    for table in both_readers(tmp_path / "quoted.csv"):
        assert table.cells(0) == ["Smith, J.", 'say "hi"', "two\nlines", ""]
        np.testing.assert_array_equal(table.numeric_column(1), [1.5, 2, 3, 4])
        assert table.category_column(0)[1] == ["Smith, J.", 'say "hi"', "two\nlines"]
        assert [table.line_number(i) for i in range(4)] == [2, 3, 5, 6]
    for table in both_readers(tmp_path / "text.csv"):
        np.testing.assert_array_equal(table.numeric_column(2), [1, 1, 2])  # Python reads the Arabic-Indic digit
        with pytest.raises(_cli_data.DataError, match=r"column 'f' of .* is not numeric \(line 2: '1_0'\)"):
            table.numeric_column(0)


def test_random_cells_read_alike(tmp_path):
    """Cells drawn from numbers in many spellings, missing tokens and text."""
    pool = [
        "0", "-1", "+2", "1.5", ".5", "5.", "1e3", "-2.5E-3", "007", " 3 ", "\t4", "1e400", "-0",
        "", " ", "nan", "NaN", "NA", "na", " n/a ", "NULL", "None", "-nan", "inf", "-Infinity",
        "1_0", "x", "1,5", "a b", '"q"', "١", "\u00a01", "1e", "0x10", "true",
    ]  # fmt: skip
    rng = np.random.default_rng(7)
    for trial in range(20):
        n_rows, n_cols = int(rng.integers(1, 12)), int(rng.integers(2, 5))
        rows = [[pool[int(rng.integers(len(pool)))] for _ in range(n_cols)] for _ in range(n_rows)]
        quoted = [",".join('"' + c.replace('"', '""') + '"' for c in row) for row in rows]
        path = tmp_path / f"r{trial}.csv"
        path.write_text(",".join(f"c{j}" for j in range(n_cols)) + "\n" + "\n".join(quoted) + "\n", encoding="utf-8")
        arrow, text = both_readers(path)
        assert arrow is not None
        np.testing.assert_equal(readings(arrow), readings(text))


@pytest.mark.parametrize(
    "text",
    [
        "",  # empty
        "a,b,y\n",  # no data rows
        "a,a,y\n1,2,3\n",  # duplicate names
        ",b,y\n1,2,3\n",  # unnamed column
        "1,2,3\n4,5,6\n",  # no header
        "a,b,y\n1,2,3\n4,5\n",  # ragged
        "a,b,y\n1,2,3\n  \n4,5,6\n",  # a line of blanks: skipped by csv, a row to Arrow
        'a,b,y\n1,2,3\n"4,5,6\n',  # an unterminated quote
        "y\n1\n \n2\n",  # one column
    ],
)
def test_files_arrow_leaves_to_the_text_reader(tmp_path, text):
    path = tmp_path / "f.csv"
    path.write_text(text)
    assert _cli_data._read_csv_arrow(str(path)) is None
    try:
        want = _cli_data._read_csv_text(str(path))
    except _cli_data.DataError as e:
        with pytest.raises(_cli_data.DataError) as got:
            _cli_data.read_csv(path)
        assert str(got.value) == str(e)
    else:
        np.testing.assert_equal(readings(_cli_data.read_csv(path)), readings(want))


def test_not_utf8_is_left_to_the_text_reader(tmp_path):
    path = tmp_path / "f.csv"
    path.write_bytes(b"a,b,y\n1,2,0\n3,caf\xe9,1\n")
    assert _cli_data._read_csv_arrow(str(path)) is None
    with pytest.raises(_cli_data.DataError, match=r"line 3, column 6: byte 0xe9"):
        _cli_data.read_csv(path)


def test_read_csv_uses_pyarrow_when_it_can_be_imported(tmp_path, monkeypatch):
    path = tmp_path / "f.csv"
    path.write_text(FILES["missing.csv"])
    assert isinstance(_cli_data.read_csv(path), _cli_data.ArrowCsvTable)
    without_pyarrow(monkeypatch)
    assert _cli_data._read_csv_arrow(str(path)) is None
    assert isinstance(_cli_data.read_csv(path), _cli_data.TextCsvTable)


def _train_predict(tmp_path, capsys, tag):
    """Train and predict on the CSV files in tmp_path; the model file's text, predictions and messages."""
    model = tmp_path / f"m_{tag}.json"
    preds = tmp_path / f"p_{tag}.csv"
    args = ["train", "--data", tmp_path / "train.csv", "--target", "label", "--model", model, "-q"]
    assert main([str(a) for a in [*args, "n_estimators=5", "categorical_features=auto"]]) == 0
    argv = ["predict", "--model", model, "--data", tmp_path / "test.csv", "--out", preds, "--proba", "-q"]
    assert main([str(a) for a in argv]) == 0
    err = capsys.readouterr().err
    status = main(["train", "--data", str(tmp_path / "bad.csv"), "--target", "label", "--model", str(model)])
    return load_model(model).get_booster().to_json(), preds.read_text(), err, status, capsys.readouterr().err


def test_the_cli_trains_and_predicts_alike_with_either_reader(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(2)
    n = 120
    x = rng.normal(size=n)
    city = rng.choice(["Paris", "Lyon", "Saint-Étienne, Loire", ""], size=n)
    label = np.where(x + (city == "Lyon") > 0.3, "yes", "no")
    lines = ["x,city,note,label"] + [
        f'{"" if i % 7 == 0 else "NA" if i % 11 == 0 else repr(float(v))},"{c}",{i % 3},{lab}'
        for i, (v, c, lab) in enumerate(zip(x, city, label))
    ]
    (tmp_path / "train.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "test.csv").write_text(
        'label,note,city,x\nyes,1,"Lyon",0.5\nno,2,"Nice",-1\nyes,0,,nan\n', encoding="utf-8"
    )
    (tmp_path / "bad.csv").write_text("x,word,label\n1,2,yes\n2,two,no\n")
    with_arrow = _train_predict(tmp_path, capsys, "arrow")
    without_pyarrow(monkeypatch)
    with_text = _train_predict(tmp_path, capsys, "text")
    assert with_arrow == with_text
    assert "value(s) not seen in training" in with_arrow[2] and "'Nice'" in with_arrow[2]
    assert with_arrow[3] == 1
    assert "column 'word' of" in with_arrow[4] and "is not numeric (line 3: 'two')" in with_arrow[4]
