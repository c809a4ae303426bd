# ruff: noqa: I001 (the peer imports stay in their marked block)
"""LightGBM's binary classification with a pandas category column (the
docs' "categorical_feature" advice: pandas categories are used as they are),
bagging, feature fraction and L2 regularisation, AUC on a held-out set."""

import json

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import train_test_split

# peer imports
import lightgbm as lgb
from lightgbm import LGBMClassifier

# end peer imports

rng = np.random.default_rng(42)
n = 6000
city = rng.choice([f"city_{i}" for i in range(30)], size=n)
effect = dict(zip(sorted(set(city)), rng.normal(size=30)))
df = pd.DataFrame(
    {
        "city": pd.Categorical(city),
        "age": rng.integers(18, 80, size=n),
        "income": rng.lognormal(10, 0.5, size=n),
        "score": rng.normal(size=n),
    }
)
logit = np.array([effect[c] for c in city]) + 0.03 * (df["age"] - 50) + df["score"]
y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
X_train, X_test, y_train, y_test = train_test_split(df, y, test_size=0.3, random_state=42)

clf = LGBMClassifier(
    objective="binary",
    n_estimators=300,
    learning_rate=0.05,
    num_leaves=15,
    min_child_samples=20,
    subsample=0.8,
    subsample_freq=1,
    colsample_bytree=0.75,
    reg_lambda=1.0,
    random_state=42,
    verbose=-1,
)
clf.fit(
    X_train,
    y_train,
    eval_set=[(X_test, y_test)],
    eval_metric="auc",
    callbacks=[lgb.early_stopping(20, verbose=False)],
)
proba = clf.predict_proba(X_test)[:, 1]
print(
    json.dumps(
        {
            "n_test": len(y_test),
            "auc": roc_auc_score(y_test, proba),
            "accuracy": accuracy_score(y_test, clf.predict(X_test)),
        }
    )
)
