"""Per-round Python work during a fit: callbacks, logging, a progress bar."""

from __future__ import annotations

import logging
import sys
import time

from .callback import CallbackEnv, TrainingModel, log_evaluation

logger = logging.getLogger("rgbm_rs")


class ProgressAwareHandler(logging.Handler):
    """Writes to stderr through tqdm when it is installed, so log lines do not break a progress bar."""

    def emit(self, record):
        try:
            text = self.format(record)
            try:
                from tqdm.auto import tqdm
            except ImportError:
                sys.stderr.write(text + "\n")
            else:
                tqdm.write(text, file=sys.stderr)
        except Exception:
            self.handleError(record)


class Progress:
    """Per-round Python work during fit: callbacks, logging, a progress bar.

    Runs on the native training thread with the GIL taken for the call, once
    per round; only installed when there is something to do.
    """

    def __init__(self, estimator, callbacks, n_rounds, spelling=None):
        self.estimator = estimator
        self.before = [cb for cb in callbacks if getattr(cb, "before_iteration", False)]
        self.callbacks = [cb for cb in callbacks if not getattr(cb, "before_iteration", False)]
        self.model = TrainingModel()
        self.params = dict(estimator.get_params(deep=False))
        self.n_rounds = n_rounds
        # Metrics asked for by a peer's name are reported under it.
        self.spelling = spelling or {}
        self.period = int(estimator.verbose)
        self.evals = {}
        self.started = time.perf_counter()
        self.bar = None
        # verbose=k logs exactly what the log_evaluation(k) callback logs.
        self.log = log_evaluation(self.period) if self.period > 0 else None
        if self.period > 0:
            if not logger.hasHandlers():
                # verbose asks for output even when the application did not configure logging.
                handler = ProgressAwareHandler()
                handler.setFormatter(logging.Formatter("%(message)s"))
                logger.addHandler(handler)
            if logger.getEffectiveLevel() > logging.INFO:
                logger.setLevel(logging.INFO)
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                # disable=None: no bar when stderr is not a terminal (a file, a pipe), so the log stays lines.
                self.bar = tqdm(
                    total=n_rounds, desc=type(estimator).__name__, unit="round", file=sys.stderr, disable=None
                )

    def before_round(self, iteration):
        """Runs the before-iteration callbacks; the learning rate they set, or None."""
        self.model._iteration = iteration
        if not self.before:
            return None
        elapsed = time.perf_counter() - self.started
        env = CallbackEnv(self.estimator, iteration, self.n_rounds, [], self.evals, elapsed, self.model, self.params)
        for cb in self.before:
            cb(env)
        rate = self.model._take_learning_rate()
        if rate is not None:
            self.params["learning_rate"] = rate
        return rate

    def __call__(self, iteration, items):
        items = [(str(s), self.spelling.get(str(m), str(m)), float(v), bool(h)) for s, m, v, h in items]
        for s, m, v, _ in items:
            self.evals.setdefault(s, {}).setdefault(m, []).append(v)
        elapsed = time.perf_counter() - self.started
        if self.bar is not None:
            self.bar.update(1)
        self.model._iteration = iteration + 1
        env = CallbackEnv(self.estimator, iteration, self.n_rounds, items, self.evals, elapsed, self.model, self.params)
        if self.log is not None:
            self.log(env)
        stop = False
        for cb in self.callbacks:
            stop = bool(cb(env)) or stop
        return stop

    def close(self):
        if self.bar is not None:
            self.bar.close()
