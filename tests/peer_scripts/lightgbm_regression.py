# ruff: noqa: I001 (the peer imports stay in their marked block)
"""LightGBM's scikit-learn example (python-guide/sklearn_example.py): early
stopping on l1, prediction at the best iteration, feature importances and a
grid search, on scikit-learn's diabetes data."""

import json

from sklearn.datasets import load_diabetes
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import GridSearchCV, train_test_split

# peer imports
import lightgbm as lgb
from lightgbm import LGBMRegressor

# end peer imports

X, y = load_diabetes(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

gbm = LGBMRegressor(num_leaves=31, learning_rate=0.05, n_estimators=200, verbose=-1)
gbm.fit(
    X_train,
    y_train,
    eval_set=[(X_test, y_test)],
    eval_metric="l1",
    callbacks=[lgb.early_stopping(5, verbose=False), lgb.log_evaluation(0)],
)
y_pred = gbm.predict(X_test, num_iteration=gbm.best_iteration_)
rmse = mean_squared_error(y_test, y_pred) ** 0.5
assert len(gbm.feature_importances_) == X.shape[1]
l1 = gbm.evals_result_["valid_0"]["l1"]

estimator = LGBMRegressor(num_leaves=31, verbose=-1)
param_grid = {"learning_rate": [0.01, 0.1, 1], "n_estimators": [20, 40]}
gbm_cv = GridSearchCV(estimator, param_grid, cv=3, scoring="neg_root_mean_squared_error")
gbm_cv.fit(X_train, y_train)

print(json.dumps({"n_test": len(y_test), "rmse": rmse, "best_l1": min(l1), "cv_rmse": -gbm_cv.best_score_}))
