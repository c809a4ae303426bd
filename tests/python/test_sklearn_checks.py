"""scikit-learn's own estimator checks."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from rgbm_rs import RGBMClassifier, RGBMRegressor

# min_samples_leaf and min_data_in_bin count rows, and min_child_weight is
# measured on weights normalised to mean 1, so a row of weight k equals k
# copies of it (check_sample_weight_equivalence) only where none binds.
NO_LEAF_MINIMUMS = dict(n_estimators=10, min_samples_leaf=1, min_data_in_bin=1, min_child_weight=1e-3)


@parametrize_with_checks([RGBMRegressor(**NO_LEAF_MINIMUMS), RGBMClassifier(**NO_LEAF_MINIMUMS)])
def test_sklearn_compatible(estimator, check):
    check(estimator)
