"""scikit-learn's own estimator checks."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from rgbm_rs import RGBMClassifier, RGBMRegressor

# min_samples_leaf and min_data_in_bin count rows, so a row of weight k
# equals k copies of it (check_sample_weight_equivalence) only at 1.
ROWS_NOT_COUNTED = dict(n_estimators=10, min_samples_leaf=1, min_data_in_bin=1)


@parametrize_with_checks([RGBMRegressor(**ROWS_NOT_COUNTED), RGBMClassifier(**ROWS_NOT_COUNTED)])
def test_sklearn_compatible(estimator, check):
    check(estimator)
