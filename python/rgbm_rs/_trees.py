"""A fitted model's trees as the exporters (ONNX, XGBoost) walk them.

One reading of the native model document (see :mod:`rgbm_rs._introspect`
for its layout), so that every export routes rows as ``predict`` does:

* a threshold node sends ``x <= split`` to ``left``, NaN to ``left`` when
  ``default_left``, else to ``right``;
* a category-set node sends its member ``codes`` to ``left`` and every other
  value (other and unseen categories, NaN, non-integers) to ``right``: the
  model's default side is always ``right`` here, whichever side it was.

Child references are the model's: ``c >= 0`` internal node ``c``, ``c < 0``
leaf ``~c``. Leaf values already include the learning rate and any model
shrinkage, as ``predict`` sums them.
"""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np

__all__ = ["Ensemble", "Node", "Tree", "read_ensemble"]


class Node(NamedTuple):
    """One internal node (see the module docstring for how it routes)."""

    feature: int
    split: float
    codes: list[int] | None
    default_left: bool
    left: int
    right: int


class Tree:
    """One tree: its internal nodes, leaf values and the output it adds to."""

    def __init__(self, tree: dict, output: int):
        self.output = output
        self.leaves: list[float] = tree["leaf_value"]
        self.leaf_counts: list[float] = tree.get("leaf_count") or []
        self.gains: list[float] = tree["gain"]
        self.counts: list[float] = tree["count"]
        self.nodes: list[Node] = []
        m = len(tree["feature"])
        splits = np.array([np.nan if v is None else v for v in tree["threshold"]], dtype=np.float64)
        sets = tree.get("categories") or [[]] * m
        for i in range(m):
            left, right, default_left = tree["left"][i], tree["right"][i], bool(tree["default_left"][i])
            codes = _codes(sets[i])
            if codes:
                # Member codes leave the default side; everything else (NaN included) follows it.
                away, stay = (right, left) if default_left else (left, right)
                self.nodes.append(Node(int(tree["feature"][i]), 0.0, codes, False, away, stay))
            else:
                self.nodes.append(Node(int(tree["feature"][i]), float(splits[i]), None, default_left, left, right))


def _codes(words: list) -> list[int]:
    """The category codes of a bitset of 32-bit words, ascending."""
    return [32 * w + b for w, word in enumerate(words) for b in range(32) if word >> b & 1]


class Ensemble(NamedTuple):
    """The whole model: raw score k of a row is ``base[k]`` plus the leaves
    it reaches in the trees of output k; ``link`` (None for a custom loss
    without one) and ``scale`` turn raw scores into predictions as the core
    does (``sigmoid(f / scale)`` for the binary losses)."""

    loss: str
    params: dict
    link: str | None
    scale: float
    n_outputs: int
    n_features: int
    base: list[float]
    trees: list[Tree]

    @property
    def categorical_features(self) -> list[int]:
        """The features some category-set node splits on, ascending."""
        return sorted({n.feature for t in self.trees for n in t.nodes if n.codes})


def read_ensemble(booster) -> Ensemble:
    """The trees of a native booster, read from its model document."""
    doc = json.loads(booster.to_json())
    link = booster.link()
    k = booster.n_outputs
    return Ensemble(
        loss=doc["params"]["loss"],
        params=doc["params"],
        link=None if link is None else link[0],
        scale=1.0 if link is None else float(link[1]),
        n_outputs=k,
        n_features=booster.n_features,
        base=[float(b) for b in booster.base_score],
        trees=[Tree(t, i % k) for i, t in enumerate(doc["trees"])],
    )
