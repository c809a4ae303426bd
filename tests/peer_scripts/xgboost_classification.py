# ruff: noqa: I001 (the peer imports stay in their marked block)
"""XGBoost's scikit-learn interface as its docs show it (sklearn_examples,
"Early stopping"): eval_metric and early_stopping_rounds in the constructor,
fit with an eval_set and verbose=False, evals_result() and best_iteration."""

import json

from sklearn.datasets import load_breast_cancer
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split

# peer imports
from xgboost import XGBClassifier

# end peer imports

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=94)

clf = XGBClassifier(
    tree_method="hist",
    n_estimators=500,
    max_depth=3,
    learning_rate=0.1,
    subsample=0.8,
    colsample_bytree=0.8,
    eval_metric="logloss",
    early_stopping_rounds=10,
    random_state=0,
)
clf.fit(X_train, y_train, eval_set=[(X_test, y_test)], verbose=False)
results = clf.evals_result()
best = clf.best_iteration
assert results["validation_0"]["logloss"][best] == min(results["validation_0"]["logloss"])
proba = clf.predict_proba(X_test)[:, 1]
print(
    json.dumps(
        {
            "n_test": len(y_test),
            "logloss": log_loss(y_test, proba),
            "accuracy": accuracy_score(y_test, clf.predict(X_test)),
        }
    )
)
