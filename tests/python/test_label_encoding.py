"""The classifier's label encoding equals np.unique(y, return_inverse=True)."""

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier
from rgbm_rs._validation import encode_classes

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


def _same_as_unique(y):
    classes, codes = encode_classes(y)
    ref_classes, ref_codes = np.unique(y, return_inverse=True)
    assert classes.dtype == ref_classes.dtype
    assert np.array_equal(classes, ref_classes)
    assert codes.shape == ref_codes.shape
    assert np.array_equal(codes, ref_codes)


def test_integer_and_boolean_labels_match_np_unique():
    pytest.importorskip("hypothesis")
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    @settings(max_examples=200, deadline=None)
    @given(st.sampled_from(INT_DTYPES).flatmap(lambda dt: hnp.arrays(dt, st.integers(1, 300))))
    def check(y):
        _same_as_unique(y)

    check()


@pytest.mark.parametrize(
    "y",
    [
        np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0]),  # range too wide: np.unique
        np.array([2**63 + 5, 2**63 + 1, 2**63 + 5], dtype=np.uint64),  # beyond intp
        np.array([-128, 127, 0, -128], dtype=np.int8),  # span overflows int8 arithmetic
        np.array([7, 7, 7]),
        np.array([0.5, -0.0, 0.0, 2.0]),  # floats: np.unique
        np.array(["b", "a", "b"]),
    ],
)
def test_edge_labels_match_np_unique(y):
    _same_as_unique(y)


def test_integer_labels_fit_the_same_model_as_their_string_names():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + 0.3 * rng.normal(size=300) > 0).astype(np.int64) * 5 - 2  # classes -2 and 3
    names = np.where(y == 3, "yes", "no")  # "no" < "yes" as -2 < 3
    a = RGBMClassifier(n_estimators=10, random_state=0).fit(X, y)
    b = RGBMClassifier(n_estimators=10, random_state=0).fit(X, names)
    assert a.classes_.tolist() == [-2, 3]
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
