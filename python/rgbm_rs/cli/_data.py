"""Reading data files for the command line (``python -m rgbm_rs``).

Two formats are understood, chosen by the file extension:

* CSV (``.csv``, ``.tsv``): a header row naming the columns, one row per
  sample. Features are numeric, or categorical: a text column named in
  ``categorical_features`` (or any text column with
  ``categorical_features=auto``) has its distinct values, sorted, as its
  categories, as a pandas string column has; an empty cell or
  ``NaN``/``NA``/``null`` is a missing value. The target may hold numbers
  or labels of any kind.
* libsvm / svmlight (``.libsvm``, ``.svm``, ``.svmlight``, ``.txt``): one
  sample per line, ``label index:value index:value ...``. Indices may be
  1-based (the libsvm convention) or 0-based: a training file using index 0
  anywhere is read as 0-based unless the base is given, and the base is
  stored with the model so that prediction files are read the same way
  whichever indices they happen to use. Entries that are not listed are 0,
  as in libsvm. The file is read by scikit-learn's ``load_svmlight_file``
  into a scipy.sparse CSR matrix (never densified, so feature indices in
  the millions are fine); a file it refuses, or whose contents need a
  closer look (non-finite numbers, underscores, signed indices, unsorted
  indices), is read line by line for a message naming the line.

Files with another extension are recognised by their first line.

Files are UTF-8 text (ASCII is UTF-8; a byte-order mark is skipped).
Every problem with the file is raised as :class:`DataError` with a one-line
message that names the file, and where it helps the line and column.
Only numpy, scipy and scikit-learn are needed here (no pandas); CSV files
are parsed by pyarrow when it is installed, else by Python's csv module.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = [
    "DataError",
    "CsvTable",
    "TextCsvTable",
    "ArrowCsvTable",
    "detect_format",
    "read_csv",
    "read_libsvm",
    "parse_target",
    "infer_task",
    "class_labels",
]

#: Cell texts (compared case-insensitively, after stripping blanks) read as missing.
MISSING_TOKENS = frozenset({"", "nan", "na", "n/a", "null", "none"})

_CSV_EXTENSIONS = {".csv": ",", ".tsv": "\t"}
_LIBSVM_EXTENSIONS = {".libsvm", ".svm", ".svmlight", ".txt"}

#: A target with at most this many distinct integer values is a classification target.
MAX_CLASSES_AUTO = 20


class DataError(ValueError):
    """A data file cannot be used; the message is one line meant for the user."""


def _quote(name: str) -> str:
    return repr(str(name))


def _names_preview(names, limit: int = 8) -> str:
    shown = ", ".join(_quote(n) for n in names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def _read_error(path: str, err: BaseException) -> DataError:
    """Turn an OSError / decoding error into a one-line DataError."""
    if isinstance(err, FileNotFoundError):
        return DataError(f"cannot read {_quote(path)}: no such file")
    if isinstance(err, IsADirectoryError):
        return DataError(f"cannot read {_quote(path)}: it is a directory")
    if isinstance(err, PermissionError):
        return DataError(f"cannot read {_quote(path)}: permission denied")
    if isinstance(err, UnicodeDecodeError):
        return DataError(f"cannot read {_quote(path)}: {_not_utf8(path)}")
    reason = getattr(err, "strerror", None) or str(err)
    return DataError(f"cannot read {_quote(path)}: {reason}")


def _not_utf8(path: str) -> str:
    """Why ``path`` cannot be read as text, as the end of an error message
    (a decoder's own offset counts from the chunk it was decoding, so the
    file is decoded again here)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return _not_utf8_at(raw, e.start)
    except OSError:
        pass
    return _not_utf8_at(b"", None)


def _not_utf8_at(raw: bytes, start: int | None, line_start: int = 0, line_no: int | None = None) -> str:
    """The end of an error message for bytes ``raw`` that are not UTF-8 at
    offset ``start`` (counting lines from ``line_no`` at ``line_start``)."""
    where = ""
    if start is not None:
        if line_no is None:
            line_no = raw.count(b"\n", 0, start) + 1
            line_start = raw.rfind(b"\n", 0, start) + 1
        where = f" (line {line_no}, column {start - line_start + 1}: byte 0x{raw[start]:02x})"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        how = "it looks like UTF-16: convert it, e.g. with iconv -f utf-16 -t utf-8"
    else:
        how = "convert it, e.g. with iconv -f latin1 -t utf-8 for Latin-1 text"
    return f"it is not UTF-8 text{where}; data files must be UTF-8 (or ASCII): {how}"


def detect_format(path) -> str:
    """Tell whether ``path`` is a CSV or a libsvm file.

    Parameters
    ----------
    path : str or path-like
        The data file.

    Returns
    -------
    str
        ``"csv"`` or ``"libsvm"``.

    Raises
    ------
    DataError
        If the file cannot be read, or its extension is unknown and its
        first line looks like neither format.
    """
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext in _CSV_EXTENSIONS:
        return "csv"
    if ext in _LIBSVM_EXTENSIONS:
        return "libsvm"
    try:
        with open(path, encoding="utf-8-sig") as f:
            first = ""
            for line in f:
                if line.strip() and not line.lstrip().startswith("#"):
                    first = line.strip()
                    break
    except (OSError, UnicodeDecodeError) as e:
        raise _read_error(path, e) from None
    tokens = first.split()
    if len(tokens) > 1 and all(":" in t for t in tokens[1:]):
        return "libsvm"
    if "," in first or "\t" in first:
        return "csv"
    raise DataError(
        f"cannot tell the format of {_quote(path)}: name it *.csv (with a header row) "
        "or *.libsvm / *.svm / *.txt (label index:value ...)"
    )


def _to_float(text: str) -> float | None:
    """A cell as float, NaN if it is a missing-value token, None if it is not a number."""
    stripped = text.strip()
    if stripped.lower() in MISSING_TOKENS:
        return float("nan")
    return _strict_float(stripped)


class CsvTable:
    """The cells of a CSV file, column by column, and their readings as
    numbers, categories or a target.

    :func:`read_csv` returns one of its two kinds, which give the same
    arrays and the same errors for the same file: :class:`TextCsvTable`
    (Python's csv module) and :class:`ArrowCsvTable` (pyarrow, when it is
    installed).

    Attributes
    ----------
    path : str
        The file read.
    header : list of str
        Column names, blanks stripped.
    """

    path: str
    header: list[str]

    @property
    def n_rows(self) -> int:
        """Number of data rows (the header excluded)."""
        raise NotImplementedError

    def cells(self, j: int) -> list[str]:
        """The cells of column ``j`` as written (quotes removed, blanks kept)."""
        raise NotImplementedError

    def line_number(self, i: int) -> int:
        """The file line on which data row ``i`` ends (for error messages)."""
        raise NotImplementedError

    def column_index(self, spec) -> int:
        """Find a column by name, or else by its 0-based index (negative counts from the end).

        Parameters
        ----------
        spec : str or int
            A column name from the header, or an index such as ``"0"`` or ``"-1"``.
            A name wins over an index when a column is literally called ``"3"``.

        Returns
        -------
        int
            The column's index.

        Raises
        ------
        DataError
            If there is no such column.
        """
        spec = str(spec).strip()
        if spec in self.header:
            return self.header.index(spec)
        try:
            index = int(spec)
        except ValueError:
            index = None
        if index is not None and -len(self.header) <= index < len(self.header):
            return index % len(self.header)
        raise DataError(f"{_quote(self.path)} has no column {_quote(spec)} (columns: {_names_preview(self.header)})")

    def numeric_column(self, j: int) -> np.ndarray:
        """Column ``j`` as float64, missing cells as NaN.

        Parameters
        ----------
        j : int
            Column index.

        Returns
        -------
        numpy.ndarray of shape (n_rows,)

        Raises
        ------
        DataError
            If a cell is not a number (naming the column, line and cell) or is infinite.
        """
        cells = self.cells(j)
        try:
            if any("_" in c for c in cells):
                raise ValueError  # numpy, like float(), reads "1_000" as 1000
            values = np.array(cells, dtype=np.float64)
        except ValueError:
            values = np.empty(len(cells))
            for i, cell in enumerate(cells):
                v = _to_float(cell)
                if v is None:
                    raise DataError(
                        f"column {_quote(self.header[j])} of {_quote(self.path)} is not numeric "
                        f"(line {self.line_number(i)}: {cell.strip()!r}); features must be numbers, "
                        "or categories: name the column in categorical_features (e.g. "
                        f"'categorical_features=[\"{self.header[j]}\"]', or categorical_features=auto for "
                        "every text column), or drop it"
                    ) from None
                values[i] = v
        self._check_finite(j, values)
        return values

    def _check_finite(self, j: int, values: np.ndarray) -> None:
        bad = np.flatnonzero(np.isinf(values))
        if bad.size:
            i = int(bad[0])
            raise DataError(
                f"column {_quote(self.header[j])} of {_quote(self.path)} has an infinite value "
                f"(line {self.line_number(i)}: {self.cells(j)[i].strip()!r})"
            )

    def feature_matrix(self, indices) -> np.ndarray:
        """Stack the given columns into a float64 matrix of shape (n_rows, len(indices)).

        Parameters
        ----------
        indices : sequence of int
            Column indices, in the order wanted.

        Returns
        -------
        numpy.ndarray
            C-contiguous, NaN where a cell is missing.
        """
        X = np.empty((self.n_rows, len(indices)), dtype=np.float64)
        for k, j in enumerate(indices):
            X[:, k] = self.numeric_column(j)
        return X

    def is_numeric(self, j: int) -> bool:
        """Whether every cell of column ``j`` is a number or missing."""
        return all(_to_float(c) is not None for c in self.cells(j))

    def category_column(self, j: int):
        """Column ``j`` read as categories: its distinct non-missing cells
        (blanks stripped), sorted, and each row's position among them (NaN
        for a missing cell).

        Returns
        -------
        codes : numpy.ndarray of shape (n_rows,), float64
        categories : list of str
        """
        cells = [c.strip() for c in self.cells(j)]
        present = [c for c in cells if c.lower() not in MISSING_TOKENS]
        categories = sorted(set(present))
        position = {c: float(i) for i, c in enumerate(categories)}
        return np.array([position.get(c, np.nan) for c in cells], dtype=np.float64), categories

    def coded_column(self, j: int, categories) -> tuple[np.ndarray, list[str]]:
        """Column ``j`` as the positions of its cells among ``categories``
        (recorded at fit: strings, or numbers matched by value), NaN for a
        missing cell or a value not among them; also the distinct values
        not among them."""
        by_text = {c: float(i) for i, c in enumerate(categories) if isinstance(c, str)}
        by_number: dict[float, float] = {}
        for i, c in enumerate(categories):
            if not isinstance(c, str) and isinstance(c, (int, float, np.number)) and not isinstance(c, bool):
                by_number.setdefault(float(c), float(i))
        codes = np.empty(self.n_rows)
        unseen: set[str] = set()
        for i, cell in enumerate(self.cells(j)):
            c = cell.strip()
            code = by_text.get(c)
            if code is None and by_number:
                v = _strict_float(c)
                code = None if v is None else by_number.get(v)
            if code is None:
                if c.lower() not in MISSING_TOKENS:
                    unseen.add(c)
                code = np.nan
            codes[i] = code
        return codes, sorted(unseen)

    def target_column(self, j: int) -> np.ndarray:
        """Column ``j`` read as a target: see :func:`parse_target`."""
        return parse_target(self.cells(j), name=self.header[j], path=self.path, line_numbers=_LineNumbers(self))


class _LineNumbers:
    """A table's line numbers as a sequence, looked up only when an error names one."""

    def __init__(self, table: CsvTable):
        self.table = table

    def __getitem__(self, i: int) -> int:
        return self.table.line_number(i)


@dataclass
class TextCsvTable(CsvTable):
    """A CSV file read by Python's csv module: the cells as text.

    Attributes
    ----------
    path : str
        The file read.
    header : list of str
        Column names, blanks stripped.
    columns : list of list of str
        ``columns[j][i]`` is the cell of row ``i`` in column ``j``.
    line_numbers : list of int
        The file line on which each row ends (for error messages).
    """

    path: str
    header: list[str]
    columns: list[list[str]]
    line_numbers: list[int] = field(repr=False)

    @property
    def n_rows(self) -> int:
        return len(self.line_numbers)

    def cells(self, j: int) -> list[str]:
        return self.columns[j]

    def line_number(self, i: int) -> int:
        return self.line_numbers[i]


#: Blanks stripped around a cell before it is read as a number: ASCII ones
#: only, a subset of what str.strip() removes, so a cell Arrow reads is one
#: Python reads the same (others are left to Python).
_ARROW_BLANKS = " \t\n\r\v\f"


class ArrowCsvTable(CsvTable):
    """A CSV file read by pyarrow.csv: the same cells as :class:`TextCsvTable`
    gives, numeric columns converted by Arrow.

    A cell Arrow does not read as a number (text, ``1_000``, exotic blanks)
    sends its column through :class:`CsvTable`'s Python conversion, so the
    arrays are those of the text reader; line numbers, which Arrow does
    not keep, are found by reading the file as text when an error names one.
    """

    def __init__(self, path: str, header: list[str], arrays: list, n_rows: int):
        self.path = path
        self.header = header
        self._arrays = arrays  # one pyarrow string array per column
        self._n_rows = n_rows
        self._numbers: dict[int, np.ndarray | None] = {}
        self._cells: dict[int, list[str]] = {}
        self._text: TextCsvTable | None = None

    def __repr__(self) -> str:
        return f"ArrowCsvTable(path={self.path!r}, header={self.header!r}, n_rows={self._n_rows})"

    @property
    def n_rows(self) -> int:
        return self._n_rows

    def cells(self, j: int) -> list[str]:
        if j not in self._cells:
            self._cells[j] = self._arrays[j].to_pylist()
        return self._cells[j]

    def line_number(self, i: int) -> int:
        if self._text is None:
            self._text = _read_csv_text(self.path)
        return self._text.line_numbers[i]

    def _arrow_numbers(self, j: int) -> np.ndarray | None:
        """Column ``j`` as float64 converted by Arrow (missing tokens as NaN),
        or None if some cell is not a number Arrow reads."""
        if j not in self._numbers:
            import pyarrow as pa
            import pyarrow.compute as pc

            trimmed = pc.utf8_trim(self._arrays[j], characters=_ARROW_BLANKS)
            missing = pc.is_in(pc.ascii_lower(trimmed), value_set=pa.array(sorted(MISSING_TOKENS)))
            try:
                numbers = pc.cast(pc.if_else(missing, pa.scalar(None, pa.string()), trimmed), pa.float64())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                self._numbers[j] = None
            else:
                self._numbers[j] = pc.fill_null(numbers, np.nan).to_numpy(zero_copy_only=False)
        return self._numbers[j]

    def numeric_column(self, j: int) -> np.ndarray:
        values = self._arrow_numbers(j)
        if values is None:
            return super().numeric_column(j)
        self._check_finite(j, values)
        return values.copy()

    def is_numeric(self, j: int) -> bool:
        return self._arrow_numbers(j) is not None or super().is_numeric(j)

    def target_column(self, j: int) -> np.ndarray:
        values = self._arrow_numbers(j)
        # No NaN: no cell was a missing token, so parse_target would read every one as this number.
        if values is not None and not np.isnan(values).any():
            return values.copy()
        return super().target_column(j)


def _check_header(path: str, header: list[str]) -> None:
    """A first row of numbers is data, not a header: reading it as names would drop a sample."""
    if all(_is_number(name) for name in header):
        raise DataError(
            f"the first row of {_quote(path)} holds only numbers ({_names_preview(header, 4)}): "
            "CSV files need a header row naming the columns"
        )
    for j, name in enumerate(header):
        if not name:
            raise DataError(
                f"column {j} of {_quote(path)} has no name in the header row (an index column "
                "written by pandas' to_csv? write with index=False); every column needs a name"
            )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _skipped_row(row: list[str]) -> bool:
    """A blank line (no field, or one blank field): skipped."""
    return not row or (len(row) == 1 and not row[0].strip())


def read_csv(path) -> CsvTable:
    """Read a CSV file with a header row.

    The delimiter is a comma, or a tab for ``.tsv`` files; fields may be
    quoted (``"a, b"``, ``""`` for a quote). Blank lines are skipped; a row
    with a different number of fields from the header is an error. With
    pyarrow installed the file is parsed by ``pyarrow.csv`` and numeric
    columns are converted by Arrow; otherwise (or for a file Arrow parses
    otherwise, e.g. one with blank-looking lines holding spaces) by Python's
    csv module. Both give the same arrays and the same errors.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    CsvTable
        Convert with :meth:`CsvTable.feature_matrix` and
        :meth:`CsvTable.target_column`.

    Raises
    ------
    DataError
        If the file is missing, unreadable, empty, ragged, has duplicate or
        empty column names, or its first row holds only numbers (no header).
    """
    path = os.fspath(path)
    table = _read_csv_arrow(path)
    return table if table is not None else _read_csv_text(path)


def _delimiter(path: str) -> str:
    return _CSV_EXTENSIONS.get(os.path.splitext(path)[1].lower(), ",")


def _read_csv_arrow(path: str) -> ArrowCsvTable | None:
    """The file read by pyarrow.csv, or None when pyarrow is not installed
    or the file is one to read as text: one that Arrow would read otherwise
    than Python's csv module, or that has a problem, for the text reader
    to name with its line."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pa_csv
    except ImportError:
        return None
    delimiter = _delimiter(path)
    # The header as the text reader reads it: its checks, and the names Arrow must find.
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            raw = next((row for row in csv.reader(f, delimiter=delimiter) if not _skipped_row(row)), None)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    # One column: a line of blanks is a skipped row to csv, a cell to Arrow.
    if raw is None or len(raw) < 2:
        return None
    header = [name.strip() for name in raw]
    if len(set(header)) != len(header) or not all(header) or all(_is_number(name) for name in header):
        return None
    try:
        table = pa_csv.read_csv(
            path,
            parse_options=pa_csv.ParseOptions(
                delimiter=delimiter, quote_char='"', double_quote=True, escape_char=False, newlines_in_values=True
            ),
            # Every column as text: numbers are converted column by column with
            # the text reader's rules, not by Arrow's type inference (which
            # would also make dates and booleans of them).
            convert_options=pa_csv.ConvertOptions(
                column_types={name: pa.string() for name in raw},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowException, OSError):
        return None
    if table.column_names != raw or table.num_rows == 0 or any(t != pa.string() for t in table.schema.types):
        return None
    return ArrowCsvTable(path, header, [col.combine_chunks() for col in table.columns], table.num_rows)


def _read_csv_text(path: str) -> TextCsvTable:
    """The file read by Python's csv module (see :func:`read_csv`)."""
    delimiter = _delimiter(path)
    rows: list[list[str]] = []
    line_numbers: list[int] = []
    header: list[str] | None = None
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f, delimiter=delimiter)
            for row in reader:
                if _skipped_row(row):
                    continue
                if header is None:
                    header = [name.strip() for name in row]
                    _check_header(path, header)
                    continue
                if len(row) != len(header):
                    raise DataError(
                        f"line {reader.line_num} of {_quote(path)} has {len(row)} fields, "
                        f"but the header has {len(header)}"
                    )
                rows.append(row)
                line_numbers.append(reader.line_num)
    except (OSError, UnicodeDecodeError) as e:
        raise _read_error(path, e) from None
    except csv.Error as e:
        raise DataError(f"cannot parse {_quote(path)} as CSV: {e}") from None
    if header is None:
        raise DataError(f"{_quote(path)} is empty")
    if not rows:
        raise DataError(f"{_quote(path)} has a header but no data rows")
    seen: dict[str, int] = {}
    for j, name in enumerate(header):
        if name in seen:
            raise DataError(
                f"{_quote(path)} has two columns named {_quote(name)} (columns {seen[name]} and {j}); "
                "column names must be unique"
            )
        seen[name] = j
    columns = [list(col) for col in zip(*rows)]
    return TextCsvTable(path=path, header=header, columns=columns, line_numbers=line_numbers)


def read_libsvm(
    path,
    n_features: int | None = None,
    zero_based: bool | None = None,
    base_source: str = "",
    query_ids: bool = False,
):
    """Read a libsvm / svmlight file into a scipy.sparse CSR matrix.

    Parameters
    ----------
    path : str or path-like
        The file: ``label index:value ...`` per line, or for ranking
        ``label qid:N index:value ...``; ``#`` starts a comment.
    n_features : int, optional
        Width wanted (e.g. the model's). A file whose largest index is
        smaller gets empty columns; a larger index is an error.
    zero_based : bool, optional
        The index base. None guesses it from this file alone (0-based if
        some index is 0, else 1-based), which only suits a training file:
        a file to predict must be read with the base of the training file,
        since its rows may happen to lack index 0.
    base_source : str
        Where a given ``zero_based`` comes from, for the error on index 0
        in a 1-based file.
    query_ids : bool
        Read the ``qid:N`` fields (SVMlight's query ids, right after the
        label) and return them: every line must have one, and the lines of
        a query must be consecutive. Otherwise they are ignored.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features), float64
        The listed entries (explicit zeros included); unlisted ones are 0.
    y : numpy.ndarray of shape (n_samples,)
        The labels, as float64.
    zero_based : bool
        Whether the indices were read as 0-based.
    qid : numpy.ndarray of shape (n_samples,), int64
        Only with ``query_ids=True``: each row's query id (see
        :func:`query_group_sizes`).

    Raises
    ------
    DataError
        If the file is missing, unreadable, not UTF-8 text, malformed
        (including an index listed twice on a line, a non-finite label or
        value, index 0 in a 1-based file) or has no samples; with
        ``query_ids``, if a line has no ``qid:N`` right after its label or
        a query's lines are not consecutive (naming the line).
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise _read_error(path, e) from None
    X, y, qid = _load_svmlight(raw, query_ids)
    if X is None or (zero_based is False and X.nnz and X.indices.min() == 0):
        # Read line by line: the reason, with its line, or the data
        # (unsorted indices are no error here).
        X, y, qid = _parse_libsvm_lines(path, raw, zero_based, base_source, query_ids)
    if not len(y):
        raise DataError(f"{_quote(path)} has no samples")
    if not X.nnz and n_features is None:
        raise DataError(f"{_quote(path)} lists no feature values")
    if zero_based is None:
        zero_based = bool(X.nnz) and int(X.indices.min()) == 0
    offset = 0 if zero_based else 1
    max_idx = int(X.indices.max()) if X.nnz else offset - 1
    width = max_idx + 1 - offset
    base = "0" if zero_based else "1"
    if n_features is not None:
        if width > n_features:
            raise DataError(
                f"{_quote(path)} has feature index {max_idx}, but the model has "
                f"{n_features} features ({base}-based indices {offset}..{n_features - 1 + offset})"
            )
        width = n_features
    X = sp.csr_matrix((X.data, X.indices - offset, X.indptr), shape=(len(y), width))
    if query_ids:
        return X, y, zero_based, qid
    return X, y, zero_based


def query_group_sizes(qid: np.ndarray) -> list[int]:
    """The sizes of the runs of equal query ids, in file order: the
    ranker's ``group`` (the ids are consecutive per query, as
    :func:`read_libsvm` checks)."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    return np.diff(np.r_[starts, len(qid)]).astype(int).tolist()


#: A ``qid:`` field on a line (one at the start of a line is a feature named "qid", not a query id).
_QID_FIELD = re.compile(rb"[ \t]qid:")


def mentions_query_ids(path) -> bool:
    """Whether the first data line of a libsvm file has a ``qid:`` field
    (a ranking file; its start is enough to tell)."""
    try:
        with open(os.fspath(path), "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    for line in head.splitlines():
        data = line.split(b"#", 1)[0]
        if data.strip():
            return _QID_FIELD.search(b" " + data.strip()) is not None
    return False


#: What scikit-learn's reader takes but means otherwise than the line reader
#: (an underscore: "1_0" is 10 to int() and float(); a signed index "+1:").
_LINE_READER_NEEDED = re.compile(rb"_|(?:^|\s)[+-]\d*:")


def _load_svmlight(raw: bytes, query_ids: bool = False):
    """(X, y, qid) with the file's own indices as columns, by
    scikit-learn's reader (qid None unless ``query_ids``); (None, None,
    None) when the file must be read line by line: refused by that reader,
    holding what it would read differently, holding non-finite labels or
    values, or (with ``query_ids``) lines without a query id or queries
    whose lines are apart (the line reader names the line)."""
    from sklearn.datasets import load_svmlight_file

    if _LINE_READER_NEEDED.search(raw):
        return None, None, None
    try:
        if query_ids:
            X, y, qid = load_svmlight_file(io.BytesIO(raw), dtype=np.float64, zero_based=True, query_id=True)
        else:
            X, y = load_svmlight_file(io.BytesIO(raw), dtype=np.float64, zero_based=True)
            qid = None
    except (ValueError, OverflowError, TypeError):
        return None, None, None
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(X.data))):
        return None, None, None
    if query_ids:
        # scikit-learn lists only the ids present, so a line without one shifts the rest.
        qid = np.asarray(qid, dtype=np.int64)
        if len(qid) != len(y) or len(query_group_sizes(qid)) != len(np.unique(qid)):
            return None, None, None
    return X, y, qid


def _parse_libsvm_lines(path: str, raw: bytes, zero_based, base_source: str, query_ids: bool = False):
    """(X, y, qid) of the file read line by line, the file's own indices as
    columns (qid None unless ``query_ids``); every problem a DataError
    naming its line."""
    labels: list[float] = []
    qids: list[int] = []
    query_start: dict[int, int] = {}  # the line on which each query's run starts
    row_idx: list[np.ndarray] = []
    row_val: list[np.ndarray] = []
    hint = ""
    if os.path.splitext(path)[1].lower() == ".txt":
        hint = " (.txt files are read as libsvm; name a CSV file *.csv)"
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    for line_no, line_bytes in enumerate(raw.splitlines(), start=1):
        data_bytes = line_bytes.split(b"#", 1)[0]
        try:
            content = data_bytes.decode("utf-8").strip()
        except UnicodeDecodeError as e:
            raise DataError(f"cannot read {_quote(path)}: {_not_utf8_at(data_bytes, e.start, 0, line_no)}") from None
        if not content:
            continue
        tokens = content.split()
        label = _strict_float(tokens[0])
        if label is None:
            raise DataError(f"line {line_no} of {_quote(path)}: the label {tokens[0]!r} is not a number{hint}")
        if not np.isfinite(label):
            raise DataError(f"line {line_no} of {_quote(path)}: the label {tokens[0]!r} is not finite")
        if query_ids:
            q = _query_id(path, line_no, tokens, qids, query_start)
            qids.append(q)
            tokens = tokens[1:]
        idx, val = [], []
        for tok in tokens[1:]:
            key, sep, value = tok.partition(":")
            if key == "qid":
                if query_ids:
                    raise DataError(
                        f"line {line_no} of {_quote(path)}: {tok!r} is not right after the label; "
                        "the query id comes first (label qid:N index:value ...) and once"
                    )
                continue
            if key.startswith("-") and key[1:].isdigit():
                raise DataError(f"line {line_no} of {_quote(path)}: negative feature index {key}")
            v = _strict_float(value)
            # Digits only: int() would also take "+1", "1_0" or "١".
            if not sep or not (key.isascii() and key.isdigit()) or v is None:
                raise DataError(
                    f"line {line_no} of {_quote(path)}: expected index:value with a non-negative "
                    f"integer index, got {tok!r}{hint}"
                )
            if not np.isfinite(v):
                raise DataError(f"line {line_no} of {_quote(path)}: value {value!r} is not finite")
            k = int(key)
            if k == 0 and zero_based is False:
                raise DataError(
                    f"line {line_no} of {_quote(path)}: feature index 0, but the indices are "
                    f"1-based{' (' + base_source + ')' if base_source else ''}"
                )
            idx.append(k)
            val.append(v)
        if len(set(idx)) != len(idx):
            dup = next(k for i, k in enumerate(idx) if k in idx[:i])
            raise DataError(f"line {line_no} of {_quote(path)}: feature index {dup} is listed twice")
        labels.append(label)
        row_idx.append(np.asarray(idx, dtype=np.int64))
        row_val.append(np.asarray(val, dtype=np.float64))
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in row_idx], dtype=np.int64)])
    indices = np.concatenate(row_idx) if row_idx else np.empty(0, dtype=np.int64)
    values = np.concatenate(row_val) if row_val else np.empty(0)
    width = int(indices.max()) + 1 if indices.size else 1
    X = sp.csr_matrix((values, indices, indptr), shape=(len(labels), width))
    X.sort_indices()
    qid = np.asarray(qids, dtype=np.int64) if query_ids else None
    return X, np.asarray(labels, dtype=np.float64), qid


def _query_id(path: str, line_no: int, tokens: list[str], qids: list[int], query_start: dict[int, int]) -> int:
    """The query id of a line (``qid:N`` right after the label), checked
    to continue the previous line's query or to start a new one."""
    key, sep, value = tokens[1].partition(":") if len(tokens) > 1 else ("", "", "")
    misplaced = next((t for t in tokens[2:] if t.startswith("qid:")), None)
    if key != "qid" and misplaced is not None:
        raise DataError(
            f"line {line_no} of {_quote(path)}: {misplaced!r} is not right after the label; "
            "the query id comes first (label qid:N index:value ...) and once"
        )
    if key != "qid":
        raise DataError(
            f"line {line_no} of {_quote(path)} has no query id: ranking needs qid:N right after "
            "every label (label qid:N index:value ...)"
        )
    # Digits only, as for feature indices: int() would also take "1_0" or "١".
    digits = value[1:] if value[:1] in "+-" else value
    if not (digits.isascii() and digits.isdigit()) or not -(2**63) <= int(value) < 2**63:
        raise DataError(f"line {line_no} of {_quote(path)}: query id {value!r} is not an integer ({tokens[1]!r})")
    q = int(value)
    if qids and q != qids[-1]:
        if q in query_start:
            raise DataError(
                f"line {line_no} of {_quote(path)}: query {q} appears again after other queries (its lines "
                f"start on line {query_start[q]}); the lines of a query must be consecutive: sort the file by qid"
            )
    if q not in query_start:
        query_start[q] = line_no
    return q


def _strict_float(text: str) -> float | None:
    """A number as written in data files: float() without its underscores ("1_0" is 10 to float())."""
    if "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def parse_target(cells, *, name: str = "target", path: str = "", line_numbers=None) -> np.ndarray:
    """Read target cells: numbers if every cell is one, otherwise text labels.

    Parameters
    ----------
    cells : sequence of str
        The column's cells.
    name, path : str
        Column and file, for error messages.
    line_numbers : sequence of int, optional
        File line of each cell, for error messages.

    Returns
    -------
    numpy.ndarray
        float64 if every cell is a number, else an object array of stripped strings.

    Raises
    ------
    DataError
        If a cell is missing: every row needs a target.
    """
    stripped = [c.strip() for c in cells]
    for i, c in enumerate(stripped):
        if c.lower() in MISSING_TOKENS:
            where = f"line {line_numbers[i]}" if line_numbers is not None else f"row {i + 1}"
            raise DataError(
                f"target column {_quote(name)}{' of ' + _quote(path) if path else ''} "
                f"has a missing value ({where}: {c!r}); every row needs a target"
            )
    try:
        if any("_" in c for c in stripped):
            raise ValueError  # "1_0" is a label, not the number 10
        return np.array(stripped, dtype=np.float64)
    except ValueError:
        return np.array(stripped, dtype=object)


def _integer_valued(y: np.ndarray) -> bool:
    return y.dtype.kind == "f" and bool(np.all(np.isfinite(y))) and bool(np.all(y == np.round(y)))


def infer_task(y: np.ndarray) -> str:
    """Guess the task from the target.

    Parameters
    ----------
    y : numpy.ndarray
        As returned by :func:`parse_target`.

    Returns
    -------
    str
        ``"classification"`` if the target is not numeric or has at most
        ``MAX_CLASSES_AUTO`` (20) distinct integer values, else ``"regression"``.
    """
    if y.dtype.kind not in "fiu":
        return "classification"
    if _integer_valued(y.astype(np.float64)) and len(np.unique(y)) <= MAX_CLASSES_AUTO:
        return "classification"
    return "regression"


def class_labels(y: np.ndarray) -> np.ndarray:
    """Class labels for a classifier: integer-valued floats become int64, the rest is unchanged.

    Parameters
    ----------
    y : numpy.ndarray
        As returned by :func:`parse_target` or :func:`read_libsvm`.

    Returns
    -------
    numpy.ndarray
        So that ``1.0`` is written back as ``1``, as in the input file.
    """
    if _integer_valued(y):
        return y.astype(np.int64)
    return y
