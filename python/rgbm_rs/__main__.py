"""Command line: ``python -m rgbm_rs demo`` (console script ``rgbm``)."""
from __future__ import annotations

import argparse
import sys
import time


def _demo(args) -> int:
    import numpy as np
    from sklearn.datasets import load_breast_cancer
    from sklearn.metrics import accuracy_score, roc_auc_score
    from sklearn.model_selection import train_test_split

    from . import RGBMClassifier

    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=args.seed, stratify=y)
    print(f"breast cancer (scikit-learn bundled): {len(X_train)} train / {len(X_test)} test rows, {X.shape[1]} features")
    rows = []
    settings = dict(n_estimators=200, learning_rate=0.1, max_leaves=31, max_depth=None, min_samples_leaf=20)
    models = {
        "rgbm_rs LogitBoost (newton/newton)": RGBMClassifier(random_state=args.seed, **settings),
        "rgbm_rs MART (gradient/newton)": RGBMClassifier(gain="gradient", random_state=args.seed, **settings),
    }
    try:
        import lightgbm

        models["LightGBM"] = lightgbm.LGBMClassifier(
            n_estimators=200, learning_rate=0.1, num_leaves=31, min_child_samples=20, verbose=-1, random_state=args.seed
        )
    except ImportError:
        print("(LightGBM is not installed: pip install lightgbm to compare)")
    for name, model in models.items():
        start = time.perf_counter()
        model.fit(X_train, y_train)
        fit_s = time.perf_counter() - start
        proba = model.predict_proba(X_test)[:, 1]
        rows.append((name, accuracy_score(y_test, (proba > 0.5).astype(int)), roc_auc_score(y_test, proba), fit_s))
    width = max(len(r[0]) for r in rows)
    print(f"{'model':<{width}}  accuracy  AUC     fit (s)")
    for name, acc, auc, fit_s in rows:
        print(f"{name:<{width}}  {acc:.4f}    {auc:.4f}  {fit_s:.3f}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="rgbm", description="rgbm_rs: gradient boosting with a Rust core")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="train on scikit-learn's breast-cancer data and compare with LightGBM")
    demo.add_argument("--seed", type=int, default=0, help="train/test split and model seed")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return _demo(args)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
