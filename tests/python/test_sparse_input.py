"""scipy.sparse input: a sparse fit is the dense fit of the same matrix, bit for bit."""

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from rgbm_rs import RGBMClassifier, RGBMRegressor


def _data(n, p, density, seed):
    """Dense X with NaN, negative values and -0.0, mostly zero at low density."""
    rng = np.random.default_rng(seed)
    X = np.where(rng.random((n, p)) < density, rng.normal(size=(n, p)) * 3 - 0.5, 0.0)
    X[:, ::4] = np.where(X[:, ::4] != 0, 1.0, 0.0)
    X[rng.random((n, p)) < 0.02] = np.nan
    X[rng.random((n, p)) < 0.02] = -0.0
    Xz = np.nan_to_num(X)
    y = Xz[:, 0] + 2 * Xz[:, 1 % p] - Xz[:, 2 % p] + 0.1 * rng.normal(size=n)
    return X, y


def _sparse(X, kind, rng):
    """X as a scipy sparse matrix of `kind`, with some explicit zeros stored."""
    rows, cols = np.nonzero(np.nan_to_num(X, nan=1.0) != 0)
    extra = rng.random(X.shape) < 0.05
    zr, zc = np.nonzero((X == 0) & extra)
    r = np.concatenate([rows, zr])
    c = np.concatenate([cols, zc])
    coo = sp.coo_array((X[r, c], (r, c)), shape=X.shape)
    return {"csr": coo.tocsr, "csc": coo.tocsc, "coo": lambda: coo}[kind]()


def _same_model(a, b):
    assert a.get_booster().to_json() == b.get_booster().to_json()


KINDS = [
    ("csr", sp.csr_array),
    ("csc", sp.csc_array),
    ("coo", sp.coo_array),
    ("csr", sp.csr_matrix),
    ("csc", sp.csc_matrix),
    ("coo", sp.coo_matrix),
]


@pytest.mark.parametrize("shape,density", [((300, 7), 0.1), ((800, 25), 0.03), ((200, 4), 0.7)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_regressor_fit_equals_dense_fit(shape, density, dtype):
    X, y = _data(*shape, density, seed=shape[0])
    X = X.astype(dtype)
    rng = np.random.default_rng(1)
    w = rng.integers(0, 4, size=len(y)).astype(float)
    half = len(y) // 2
    params = dict(n_estimators=15, max_depth=4, random_state=0)
    dense = RGBMRegressor(**params).fit(X, y, sample_weight=w, eval_set=[(X[:half], y[:half])])
    expected = dense.predict(X)
    for kind, cls in KINDS:
        Xs = cls(_sparse(X, kind, rng))
        ev = cls(_sparse(X[:half], "csr", rng))
        model = RGBMRegressor(**params).fit(Xs, y, sample_weight=w, eval_set=[(ev, y[:half])])
        _same_model(dense, model)
        assert model.evals_result_ == dense.evals_result_
        assert np.array_equal(model.predict(Xs), expected, equal_nan=True)
        assert np.array_equal(dense.predict(Xs), expected)
        assert model.n_features_in_ == X.shape[1]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_sparse_classifier_fit_equals_dense_fit(n_classes):
    X, y = _data(600, 12, 0.08, seed=n_classes)
    labels = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
    params = dict(
        n_estimators=12,
        max_leaves=7,
        max_depth=None,
        subsample=0.8,
        random_state=3,
        validation_fraction=0.2,
        early_stopping_rounds=5,
    )
    dense = RGBMClassifier(**params).fit(X, labels)
    model = RGBMClassifier(**params).fit(sp.csr_array(X), labels)
    _same_model(dense, model)
    assert model.evals_result_ == dense.evals_result_
    assert np.array_equal(model.predict_proba(sp.csc_matrix(X)), dense.predict_proba(X))
    # Staged prediction reads sparse rows too.
    for a, b in zip(model.staged_predict_proba(sp.csr_matrix(X[:50])), dense.staged_predict_proba(X[:50])):
        assert np.array_equal(a, b)


def test_explicit_and_implicit_zeros_are_one_value_and_stored_nan_is_missing():
    X, y = _data(400, 6, 0.2, seed=9)
    Xs = sp.csc_array(X)
    # Every entry stored, zeros included.
    explicit = sp.csc_array((X.T.ravel(), np.tile(np.arange(400), 6), np.arange(0, 2401, 400)), shape=X.shape)
    assert explicit.nnz == X.size and np.isnan(explicit.data).any()
    a = RGBMRegressor(n_estimators=10, random_state=0).fit(Xs, y)
    b = RGBMRegressor(n_estimators=10, random_state=0).fit(explicit, y)
    c = RGBMRegressor(n_estimators=10, random_state=0).fit(X, y)
    _same_model(a, b)
    _same_model(a, c)


def test_duplicates_and_unsorted_indices_are_summed_without_touching_the_input():
    X, y = _data(200, 5, 0.3, seed=4)
    coo = sp.coo_array(X)
    # Each entry split into two halves: scipy sums duplicates.
    half = coo.data / 2
    dup = sp.coo_array(
        (
            np.concatenate([half, half])[::-1],
            (np.concatenate([coo.row, coo.row])[::-1], np.concatenate([coo.col, coo.col])[::-1]),
        ),
        shape=X.shape,
    ).tocsr()
    before = dup.data.copy()
    model = RGBMRegressor(n_estimators=5, random_state=0).fit(dup, y)
    assert np.array_equal(dup.data, before, equal_nan=True)
    dense = RGBMRegressor(n_estimators=5, random_state=0).fit(dup.toarray(), y)
    _same_model(model, dense)


def test_sparse_bad_input_is_refused():
    X, y = _data(100, 5, 0.3, seed=2)
    model = RGBMRegressor(n_estimators=3).fit(sp.csr_array(X), y)
    bad = np.nan_to_num(X)
    bad[7, 3] = np.inf
    with pytest.raises(ValueError, match="infinity at row 7, column 3"):
        RGBMRegressor(n_estimators=3).fit(sp.csr_array(bad), y)
    with pytest.raises(ValueError, match="infinity at row 7, column 3"):
        model.predict(sp.csr_array(bad))
    with pytest.raises(ValueError, match="infinity"):
        RGBMRegressor(n_estimators=3).fit(X, y, eval_set=[(sp.csr_array(bad), y)])
    with pytest.raises(ValueError, match="features"):
        model.predict(sp.csr_array(np.zeros((3, 6))))
    # A model fitted dense predicts sparse rows and the other way round.
    dense = RGBMRegressor(n_estimators=3).fit(X, y)
    assert np.array_equal(dense.predict(sp.csr_matrix(X)), dense.predict(X))
    assert np.array_equal(model.predict(X), model.predict(sp.coo_array(X)))
    # Sparse evaluation data for a dense fit (and float32 training with float64 eval data).
    a = RGBMRegressor(n_estimators=3, random_state=0).fit(X.astype(np.float32), y, eval_set=[(sp.csr_array(X), y)])
    b = RGBMRegressor(n_estimators=3, random_state=0).fit(X.astype(np.float32), y, eval_set=[(X, y)])
    assert a.evals_result_ == b.evals_result_
    # Non-numeric sparse data.
    with pytest.raises((TypeError, ValueError)):
        RGBMRegressor(n_estimators=3).fit(sp.csr_array(np.array([["a", "b"]], dtype=object)), [1.0])


def test_sparse_predict_uncertainty_and_virtual_ensemble():
    X, y = _data(300, 6, 0.2, seed=5)
    params = dict(n_estimators=20, langevin=True, random_state=0)
    a = RGBMRegressor(**params).fit(sp.csc_matrix(X), y)
    b = RGBMRegressor(**params).fit(X, y)
    _same_model(a, b)
    ua = a.predict_uncertainty(sp.csr_array(X), n_members=4)
    ub = b.predict_uncertainty(X, n_members=4)
    for s, d in zip(ua, ub):
        assert np.array_equal(s, d)


@pytest.mark.parametrize("kind", [sp.csr_array, sp.csr_matrix, sp.csc_array, sp.csc_matrix])
def test_a_decreasing_index_pointer_is_refused_before_scipy_reads_it(kind):
    # scipy's sum_duplicates (run to canonicalise the matrix) does not check
    # indptr: a decreasing one gave RuntimeError "vector::_M_default_append".
    X, y = _data(60, 4, 0.5, seed=5)
    good = kind(np.nan_to_num(X))
    indptr = good.indptr.copy()
    indptr[1], indptr[2] = indptr[2], indptr[1]
    assert indptr[2] < indptr[1]
    bad = kind((good.data, good.indices, indptr), shape=good.shape)
    match = rf"sparse X \({good.format}\): indptr must not decrease, but it falls from {indptr[1]} to {indptr[2]}"
    with pytest.raises(ValueError, match=match):
        RGBMRegressor(n_estimators=2).fit(bad, y)
    model = RGBMRegressor(n_estimators=2, random_state=0).fit(good, y)
    for predict in (model.predict, model.apply):
        with pytest.raises(ValueError, match=match):
            predict(bad)
    with pytest.raises(ValueError, match=match):
        RGBMRegressor(n_estimators=2).fit(good, y, eval_set=[(bad, y)])
    # An index pointer that does not end at the number of entries.
    short = good.copy()
    short.indptr[-1] -= 1
    with pytest.raises(ValueError, match=r"indptr must run from 0 to the number of stored entries"):
        RGBMRegressor(n_estimators=2).fit(short, y)
    # The check passes valid matrices: the intact one fits as its dense form.
    _same_model(model, RGBMRegressor(n_estimators=2, random_state=0).fit(np.nan_to_num(X), y))


_WIDE = """
import resource, sys
import numpy as np
import scipy.sparse as sp
from rgbm_rs import RGBMRegressor

with open("/proc/self/status") as f:
    used = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
cap = used + (2500 << 20)
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
cols = int(sys.argv[1])
rng = np.random.default_rng(0)
rows, at = np.arange(3000) % 1000, (np.arange(3000) * 7919) % cols
at[:2000] = at[:2000] % 5  # five columns the trees can split on
X = sp.csr_matrix((rng.normal(size=3000), (rows, at)), shape=(1000, cols))
X.sum_duplicates()
y = np.asarray(X[:, :5].sum(axis=1)).ravel() + rng.normal(scale=0.1, size=1000)
wide = RGBMRegressor(n_estimators=20, random_state=0).fit(X, y).predict(X)
used_cols = np.unique(X.indices)
narrow = RGBMRegressor(n_estimators=20, random_state=0).fit(X[:, used_cols], y).predict(X[:, used_cols])
print(float(np.max(np.abs(wide - narrow))), float(np.std(wide)))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
def test_wide_sparse_fits_in_memory_that_scales_with_its_entries():
    # 1000 x 10^7 with 3000 entries: a dense binned matrix would be 10 GB.
    # Under 2.5 GB of headroom the fit runs, and equals the fit on the
    # matrix's non-empty columns (the empty ones can split nothing).
    out = subprocess.run([sys.executable, "-c", _WIDE, str(10**7)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    diff, spread = map(float, out.stdout.split())
    assert spread > 0.1
    assert diff <= 1e-9 * (1 + spread)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
def test_wider_sparse_input_than_memory_allows_raises_memory_error():
    # 1000 x 10^8 under 2.5 GB: the per-column state no longer fits; the
    # fit must raise MemoryError, not abort the process.
    script = _WIDE.replace(
        "wide = RGBMRegressor",
        "try:\n    RGBMRegressor(n_estimators=2).fit(X, y)\nexcept MemoryError as e:\n    print('MemoryError', e)\n"
        "    sys.exit(0)\nwide = RGBMRegressor",
    )
    out = subprocess.run([sys.executable, "-c", script, str(10**8)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("MemoryError") or len(out.stdout.split()) == 2, out.stdout
