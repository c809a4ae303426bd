"""Brute-force SHAP's building block, shared by the SHAP tests: a dumped
tree's expected output when only some features are known, the others
averaged by the node counts (the covers TreeSHAP's path-dependent values
use)."""

import math


def goes_left(node, v):
    """Whether value v takes the left child of a dump_model node."""
    if "categories" in node:
        member = not math.isnan(v) and v >= 0 and v == int(v) and int(v) in node["categories"]
        return node["default_left"] != member
    if math.isnan(v):
        return node["default_left"]
    return v <= node["threshold"]


def expected(node, x, known):
    """A tree's expected output when only the features in `known` are known."""
    if "leaf_index" in node:
        return node["value"]
    j = node["split_feature"]
    if j in known:
        return expected(node["left"] if goes_left(node, x[j]) else node["right"], x, known)
    left, right = node["left"], node["right"]
    return (left["count"] * expected(left, x, known) + right["count"] * expected(right, x, known)) / node["count"]
