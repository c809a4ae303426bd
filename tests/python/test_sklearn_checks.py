"""scikit-learn's own estimator checks."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from rgbm_rs import RGBMClassifier, RGBMRegressor


@parametrize_with_checks(
    [RGBMRegressor(n_estimators=10, min_samples_leaf=1), RGBMClassifier(n_estimators=10, min_samples_leaf=1)]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
