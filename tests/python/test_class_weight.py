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


def test_zero_weight_for_every_class_is_refused():
    with pytest.raises(ValueError, match="non-zero"):
        RGBMClassifier(n_estimators=2, class_weight={"yes": 0.0, "no": 0.0}).fit(X, LABELS["binary"])
