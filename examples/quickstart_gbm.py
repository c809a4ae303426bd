"""Plain gradient boosting: a classifier with a validation set and early stopping.

Run: python examples/quickstart_gbm.py  (uses scikit-learn's bundled breast-cancer data)
"""

from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from rgbm_rs import RGBMClassifier

X, y = load_breast_cancer(return_X_y=True)
# Three-way split: fit on train, watch valid for early stopping, report on test.
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
X_train, X_valid, y_train, y_valid = train_test_split(X_train, y_train, test_size=0.2, random_state=0, stratify=y_train)

clf = RGBMClassifier(
    n_estimators=500,  # an upper bound: early stopping decides how many rounds are kept
    learning_rate=0.05,
    max_depth=3,
    early_stopping_rounds=20,  # stop after 20 rounds without improvement on the last eval set
    eval_metric=["logloss", "error"],  # the first metric is the one early stopping watches
    random_state=0,
)
clf.fit(X_train, y_train, eval_set=[(X_valid, y_valid)], eval_names=["valid"])

# best_iteration_ is 0-based; predictions use the model of that round.
print(f"rounds trained:  {clf.n_estimators_}")
print(f"best_iteration_: {clf.best_iteration_}")
print(f"best_score_:     {clf.best_score_}")
print(f"test accuracy:   {clf.score(X_test, y_test):.4f}")

# The per-round validation curves are in evals_result_ ({set: {metric: [values]}}).
curve = clf.evals_result_["valid"]["logloss"]
print(f"valid logloss: round 0 {curve[0]:.4f} -> best {min(curve):.4f}")
