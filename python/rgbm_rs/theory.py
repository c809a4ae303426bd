"""Closed forms the papers use to explain their methods.

The per-round quantities of a fit (weak-learnability ratios, the cosine of
each tree with the residual, RGB's complexity term) are in the estimators'
``training_log_``; see "Seeing the theory" in docs/methods.md.
"""

from __future__ import annotations

from numbers import Integral

from . import _core

__all__ = ["type1_theta"]


def type1_theta(p: int, t: int) -> float:
    """Minimal cosine angle of Type 1 random selection, Lu & Mazumder's (18).

    For ``p`` orthogonal weak learners of which ``t`` are drawn uniformly
    each round (``selection="random"``), Theta = min_i (1/sqrt(i)) *
    sum_{j <= i} gamma(j) with gamma(j) = C(p - j, t - 1) / C(p, t), the
    chance that the j-th best learner is the best one drawn. RGBM's linear
    rate is (1 - mu/sigma * Theta^2) per round (their Theorem 4.1). ``t = p``
    (full selection) gives 1/sqrt(p), ``t = 1`` gives 1/p; the paper's
    Figure 4 plots it against p.

    Raises
    ------
    TypeError
        If ``p`` or ``t`` is not an integer.
    ValueError
        Unless 1 <= t <= p.
    """
    for name, v in (("p", p), ("t", t)):
        if isinstance(v, bool) or not isinstance(v, Integral):
            raise TypeError(f"{name} must be an int, got {type(v).__name__}")
    if not 1 <= t <= p:
        raise ValueError(f"t must be in 1..p (p = {p}), got {t}")
    return _core.type1_theta(int(p), int(t))
