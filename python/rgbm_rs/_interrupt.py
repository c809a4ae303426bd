"""Stopping a fit that runs on a thread other than the main one, which
Python's signals (Ctrl-C) do not reach: the fit polls an event instead."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

#: Per thread: the event that stops the fits run on it (see :func:`interrupted_by`).
_THREAD = threading.local()


@contextlib.contextmanager
def interrupted_by(event: threading.Event) -> Iterator[None]:
    """Fits run on this thread in the block stop with KeyboardInterrupt,
    mid-round as at Ctrl-C, once ``event`` is set: Python delivers signals
    to the main thread only, so Ctrl-C cannot reach a fit on another."""
    _THREAD.interrupt = event
    try:
        yield
    finally:
        _THREAD.interrupt = None


def fit_interrupt() -> threading.Event | None:
    """The event that stops fits on this thread, if any."""
    return getattr(_THREAD, "interrupt", None)
