"""Arrays in any memory layout fit and predict exactly as their contiguous,
aligned copies: strided views, Fortran order, and unaligned buffers (a
memmap at an odd offset) for X, y, sample_weight and evaluation sets."""

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor

KW = dict(n_estimators=5, max_depth=3, min_samples_leaf=5, random_state=0)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    return X, X[:, 0] + 0.1 * rng.normal(size=200), rng.uniform(0.5, 2.0, size=200)


def unaligned(a, path):
    """A read-only memmap of ``a`` starting 4 bytes into the file ``path``: C-contiguous, not aligned."""
    with open(path, "wb") as f:
        f.write(b"\0" * 4 + np.ascontiguousarray(a).tobytes())
    m = np.memmap(path, dtype=a.dtype, mode="r", offset=4, shape=a.shape)
    assert m.flags.c_contiguous and not m.flags.aligned
    return m


def strided(a):
    """``a`` as a view with a stride of two elements."""
    doubled = np.repeat(a, 2, axis=0)
    view = doubled[::2]
    assert not view.flags.c_contiguous
    return view


@pytest.mark.parametrize("layout", ["unaligned", "strided", "fortran"])
def test_fit_and_predict_ignore_the_layout(data, tmp_path, layout):
    X, y, w = data
    if layout == "unaligned":
        Xl, yl, wl = (unaligned(a, tmp_path / f"{i}.bin") for i, a in enumerate((X, y, w)))
    elif layout == "strided":
        Xl, yl, wl = strided(X), strided(y), strided(w)
    else:
        Xl, yl, wl = np.asfortranarray(X), y, w
    ref = RGBMRegressor(**KW).fit(X, y, sample_weight=w, eval_set=[(X, y)])
    est = RGBMRegressor(**KW).fit(Xl, yl, sample_weight=wl, eval_set=[(Xl, yl)])
    np.testing.assert_array_equal(est.predict(Xl), ref.predict(X))
    np.testing.assert_array_equal(est.predict(Xl[:3]), ref.predict(X[:3]))  # the small-batch path
    assert est.evals_result_ == ref.evals_result_


def test_classifier_eval_labels_in_any_layout(data):
    X, y, _ = data
    yb = (y > 0).astype(int)
    ref = RGBMClassifier(**KW).fit(X, yb, eval_set=[(X.copy(), yb.copy())])
    est = RGBMClassifier(**KW).fit(X, yb, eval_set=[(strided(X), strided(yb))])
    assert est.evals_result_ == ref.evals_result_
