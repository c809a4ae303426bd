"""Multiclass (softmax) boosting with callbacks: early stopping and recording.

Ten-class digits: one tree per class per round. Callbacks run after every
round with a rgbm_rs.callback.CallbackEnv; early_stopping(10) stops after 10
rounds without improvement of the first metric on the last eval set, and
record_evaluation fills a dict with every metric value as training runs.
"""

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import rgbm_rs
from rgbm_rs import RGBMClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
X_train, X_valid, y_train, y_valid = train_test_split(X_train, y_train, test_size=0.2, random_state=0, stratify=y_train)

history = {}  # record_evaluation fills it: {set: {metric: [value per round]}}
clf = RGBMClassifier(
    n_estimators=300,
    learning_rate=0.1,
    max_depth=4,
    eval_metric=["multi_logloss", "multi_error"],  # early stopping watches the first
    random_state=0,
)
clf.fit(
    X_train,
    y_train,
    eval_set=[(X_valid, y_valid)],
    callbacks=[rgbm_rs.early_stopping(10), rgbm_rs.record_evaluation(history)],
)

valid = history["valid_0"]
print(f"classes: {clf.n_classes_}, rounds trained: {len(valid['multi_logloss'])}")
print(f"best_iteration_: {clf.best_iteration_}")
b = clf.best_iteration_
print(
    f"valid multi_logloss at best: {valid['multi_logloss'][b]:.4f}, multi_error at best: {valid['multi_error'][b]:.4f}"
)
print(f"test accuracy: {clf.score(X_test, y_test):.4f}")
