"""``rgbm demo``: compare GBM, RGBM, SGLB and RGB on data bundled with scikit-learn."""

from __future__ import annotations

import os
import time
from typing import Any

from ._report import CLIError, one_line


def _demo_datasets(seed: int):
    """Breast cancer and digits 3 vs 8, split 75/25 stratified: name -> (X_tr, X_te, y_tr, y_te)."""
    import numpy as np
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_breast_cancer(return_X_y=True)
    digits = load_digits()
    keep = np.isin(digits.target, (3, 8))
    sets = {"breast cancer": (X, y), "digits 3 vs 8": (digits.data[keep], digits.target[keep])}
    return {
        name: tuple(train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y))
        for name, (X, y) in sets.items()
    }


_DEMO_SETTINGS: dict[str, Any] = dict(n_estimators=200, learning_rate=0.1, max_depth=4)


def _demo_methods(p: int):
    """(method, note, estimator parameters) for a data set with p features."""
    t = max(1, round(p / 5))
    return [
        ("GBM", f"greedy search over all {p} features", {}),
        ("RGBM", f'selection="groups", t={t} of {p} features per tree', dict(selection="groups", selection_size=t)),
        ("SGLB", "langevin=True (Langevin noise + model shrinkage)", dict(langevin=True)),
        ("RGB", 'booster="rgb" (tree families + SRM penalty)', dict(booster="rgb")),
    ]


def _figure_of(obj):
    """The matplotlib Figure behind what a plotting function returned."""
    from matplotlib.figure import Figure

    if isinstance(obj, Figure):
        return obj
    if hasattr(obj, "figure") and obj.figure is not None:
        return obj.figure
    if hasattr(obj, "flat"):  # an array of Axes
        return next(iter(obj.flat)).figure
    if isinstance(obj, (tuple, list)) and obj:
        return _figure_of(obj[0])
    raise TypeError(f"cannot find the figure in a {type(obj).__name__}")


def _demo_plots(models, data, out_dir, seed, report) -> None:
    """Draw the importance and selection-comparison plots, or say why not."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        report.info("plots skipped: matplotlib is not installed (pip install matplotlib)")
        return
    import matplotlib

    matplotlib.use("Agg")
    try:
        from .. import plotting
    except ImportError as e:
        report.info(f"plots skipped: rgbm_rs.plotting cannot be imported ({one_line(e)})")
        return
    missing = [f for f in ("plot_importance", "plot_selection_comparison") if not hasattr(plotting, f)]
    if missing:
        report.info(f"plots skipped: rgbm_rs.plotting has no {' / '.join(missing)}")
        return

    import matplotlib.pyplot as plt

    from .._files import replace_atomically
    from ..sklearn import RGBMClassifier

    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise CLIError(f"cannot create --out-dir {out_dir!r}: {e.strerror or e}") from None

    def draw(name, make):
        try:
            fig = _figure_of(make())
            path = os.path.join(out_dir, name)
            with replace_atomically(path, "wb") as f:
                fig.savefig(f, format="png", dpi=100, bbox_inches="tight")
            plt.close(fig)
        except OSError as e:
            raise CLIError(f"cannot write {os.path.join(out_dir, name)!r}: {e.strerror or e}") from None
        except Exception as e:  # the plotting module is optional: a failure must not end the demo
            report.info(f"plot {name} skipped: {type(e).__name__}: {one_line(e)}")
            return
        report.info(f"plot: {path}")

    from sklearn.datasets import load_breast_cancer

    names = list(load_breast_cancer().feature_names)

    title = f"GBM on breast cancer ({_DEMO_SETTINGS['n_estimators']} trees): feature importance"
    gbm = models[("breast cancer", "GBM")]
    draw("demo_importance.png", lambda: plotting.plot_importance(gbm, feature_names=names, title=title))

    X_tr, _, y_tr, _ = data["breast cancer"]
    p = X_tr.shape[1]
    sizes = [1, 3, 10]
    fitted, labels = [], []
    for t in sizes:
        est = RGBMClassifier(
            selection="groups", selection_size=t, record_train_loss=True, random_state=seed, **_DEMO_SETTINGS
        )
        fitted.append(est.fit(X_tr, y_tr))
        labels.append(f"RGBM t={t}")
    fitted.append(RGBMClassifier(record_train_loss=True, random_state=seed, **_DEMO_SETTINGS).fit(X_tr, y_tr))
    labels.append(f"GBM (t={p}, all)")
    title = f"RGBM on breast cancer: t of {p} features searched per tree, against GBM (all {p})"
    draw("demo_selection.png", lambda: plotting.plot_selection_comparison(fitted, labels=labels, title=title))


def cmd_demo(args, report) -> int:
    """Compare GBM, RGBM, SGLB and RGB on scikit-learn's bundled data.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``demo`` arguments (``seed``, ``out_dir``).
    report : Reporter
        Where to print progress; the results table is always printed.

    Returns
    -------
    int
        0 on success.
    """
    import numpy as np
    from sklearn.metrics import accuracy_score, log_loss

    from ..sklearn import RGBMClassifier

    data = _demo_datasets(args.seed)
    for name, (X_tr, X_te, _, _) in data.items():
        report.info(
            f"{name}: {len(X_tr)} train / {len(X_te)} test rows, {X_tr.shape[1]} features (bundled with scikit-learn)"
        )
    settings = ", ".join(f"{k}={v}" for k, v in _DEMO_SETTINGS.items())
    report.info(f"common settings: {settings} (RGB ignores learning_rate)")

    lightgbm: Any
    try:
        import lightgbm
    except ImportError:
        lightgbm = None

    # Start the native thread pool before timing anything.
    X_tr, _, y_tr, _ = data["breast cancer"]
    RGBMClassifier(n_estimators=2, random_state=0).fit(X_tr, y_tr)

    rows, models = [], {}
    for name, (X_tr, X_te, y_tr, y_te) in data.items():
        methods = [
            (m, note, RGBMClassifier(random_state=args.seed, **_DEMO_SETTINGS, **kw))
            for m, note, kw in _demo_methods(X_tr.shape[1])
        ]
        if lightgbm is not None:
            methods.append(
                (
                    "LightGBM",
                    "reference (installed)",
                    lightgbm.LGBMClassifier(
                        n_estimators=200,
                        learning_rate=0.1,
                        max_depth=4,
                        num_leaves=16,
                        verbose=-1,
                        random_state=args.seed,
                    ),
                )
            )
        for method, note, est in methods:
            start = time.perf_counter()
            est.fit(X_tr, y_tr)
            fit_s = time.perf_counter() - start
            proba = est.predict_proba(X_te)
            pred = est.classes_[np.argmax(proba, axis=1)]
            rows.append(
                (name, method, accuracy_score(y_te, pred), log_loss(y_te, proba, labels=est.classes_), fit_s, note)
            )
            models[(name, method)] = est

    wd = max(len("dataset"), *(len(r[0]) for r in rows))
    wm = max(len("method"), *(len(r[1]) for r in rows))
    print()
    print(f"{'dataset':<{wd}}  {'method':<{wm}}  accuracy  log-loss  fit (s)  settings")
    for name, method, acc, ll, fit_s, note in rows:
        print(f"{name:<{wd}}  {method:<{wm}}  {acc:8.4f}  {ll:8.4f}  {fit_s:7.3f}  {note}")
    print(flush=True)
    _demo_plots(models, data, args.out_dir, args.seed, report)
    return 0
