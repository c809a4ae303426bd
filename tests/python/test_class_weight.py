"""class_weight against scikit-learn's compute_sample_weight: a fit with
class_weight is the fit with the weights scikit-learn defines, bit for bit."""

import numpy as np
import pytest
from sklearn.utils.class_weight import compute_sample_weight

from rgbm_rs import RGBMClassifier

rng = np.random.default_rng(3)
X = rng.normal(size=(300, 4))
LABELS = {
    "binary": np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0.8, "yes", "no"),
    "multiclass": np.digitize(X[:, 0] + 0.3 * X[:, 1], [-1.0, 0.2, 1.5]),
}


def _same_model(a, b):
    assert a.dump_model() == b.dump_model()
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


@pytest.mark.parametrize("task", sorted(LABELS))
@pytest.mark.parametrize("with_sample_weight", [False, True])
def test_balanced_equals_computed_weights(task, with_sample_weight):
    y = LABELS[task]
    sw = rng.uniform(0.5, 2.0, size=len(y)) if with_sample_weight else None
    expected = compute_sample_weight("balanced", y) * (1.0 if sw is None else sw)
    a = RGBMClassifier(n_estimators=5, class_weight="balanced", random_state=0).fit(X, y, sample_weight=sw)
    b = RGBMClassifier(n_estimators=5, random_state=0).fit(X, y, sample_weight=expected)
    _same_model(a, b)
    # Balancing changes the model when the classes are unbalanced.
    c = RGBMClassifier(n_estimators=5, random_state=0).fit(X, y, sample_weight=sw)
    assert a.dump_model() != c.dump_model()


def test_dict_weights_by_original_label_and_missing_classes_weigh_one():
    y = LABELS["binary"]
    a = RGBMClassifier(n_estimators=5, class_weight={"yes": 3.0}, random_state=0).fit(X, y)
    b = RGBMClassifier(n_estimators=5, random_state=0).fit(X, y, sample_weight=np.where(y == "yes", 3.0, 1.0))
    _same_model(a, b)


def test_class_weight_reaches_the_validation_split_like_scikit_learn():
    y = LABELS["multiclass"]
    a = RGBMClassifier(n_estimators=5, class_weight="balanced", validation_fraction=0.2, random_state=0).fit(X, y)
    b = RGBMClassifier(n_estimators=5, validation_fraction=0.2, random_state=0).fit(
        X, y, sample_weight=compute_sample_weight("balanced", y)
    )
    _same_model(a, b)
    assert a.evals_result_ == b.evals_result_


@pytest.mark.parametrize(
    "class_weight,error,match",
    [
        ("even", ValueError, "class_weight"),
        ({"yes": -1.0}, ValueError, "class_weight values must be finite numbers >= 0"),
        ({"yes": float("nan")}, ValueError, "class_weight values must be finite numbers >= 0"),
        ({"yes": "heavy"}, ValueError, "class_weight values must be finite numbers >= 0"),
        ({"maybe": 2.0}, ValueError, r"class_weight names labels not in y: \['maybe'\]"),
        ([1.0, 2.0], ValueError, "class_weight"),
    ],
)
def test_bad_class_weight_is_refused(class_weight, error, match):
    with pytest.raises(error, match=match):
        RGBMClassifier(n_estimators=2, class_weight=class_weight).fit(X, LABELS["binary"])


def test_zero_weight_for_every_class_is_refused_naming_class_weight():
    with pytest.raises(ValueError, match=r"class_weight=\{'yes': 0.0, 'no': 0.0\} gives every row weight 0"):
        RGBMClassifier(n_estimators=2, class_weight={"yes": 0.0, "no": 0.0}).fit(X, LABELS["binary"])
    # The same with integer labels and valid sample weights: class_weight is at fault.
    y = (LABELS["binary"] == "yes").astype(int)
    with pytest.raises(ValueError, match="class_weight=.* gives every row weight 0") as e:
        RGBMClassifier(n_estimators=2, class_weight={0: 0.0, 1: 0.0}).fit(X, y, sample_weight=np.ones(len(y)))
    assert "Sample weights" not in str(e.value)


def test_sample_weight_zero_where_class_weight_is_positive_is_refused_naming_both():
    y = LABELS["binary"]
    with pytest.raises(ValueError, match="sample_weight times class_weight is zero on every row"):
        RGBMClassifier(n_estimators=2, class_weight={"no": 0.0}).fit(X, y, sample_weight=(y == "no").astype(float))


def test_an_overflowing_product_of_weights_names_class_weight_and_the_product():
    y = LABELS["binary"]
    with pytest.raises(ValueError, match=r"sample_weight times class_weight overflows: row 0 weighs 10.0 \* 1e\+308"):
        RGBMClassifier(n_estimators=2, class_weight={"yes": 1e308, "no": 1e308}).fit(
            X, y, sample_weight=np.full(len(y), 10.0)
        )
    # Each of them alone is fine, and so is a large product that stays finite:
    # the model is the one of the explicit weights (only relative weights matter).
    big = RGBMClassifier(n_estimators=5, class_weight={"yes": 1e308, "no": 1e308}, random_state=0).fit(X, y)
    plain = RGBMClassifier(n_estimators=5, random_state=0).fit(X, y)
    np.testing.assert_allclose(big.predict_proba(X), plain.predict_proba(X), rtol=0, atol=1e-12)
    sw = rng.uniform(1.0, 10.0, size=len(y))
    a = RGBMClassifier(n_estimators=5, class_weight={"yes": 1e300, "no": 2e300}, random_state=0).fit(
        X, y, sample_weight=sw
    )
    b = RGBMClassifier(n_estimators=5, random_state=0).fit(X, y, sample_weight=sw * np.where(y == "yes", 1e300, 2e300))
    _same_model(a, b)
