"""The model file: what save_model writes, and what load_model accepts.

A loaded model must predict as the saved one did; a file with invalid
content is refused with a ValueError naming the field, never loaded into an
estimator that predicts NaN, infinity or duplicate classes;
test_model_file_mutations.py mutates saved models at random (Hypothesis) and
checks exactly that.
"""

import copy
import json
import math
import os

import numpy as np
import pytest

from rgbm_rs import RGBMClassifier, RGBMRegressor, load_model

try:
    import pandas  # noqa: F401
except ImportError:
    HAVE_PANDAS = False
else:
    HAVE_PANDAS = True
NEEDS_PANDAS = pytest.mark.skipif(not HAVE_PANDAS, reason="pandas checks these values")

KW = dict(n_estimators=4, max_depth=2, min_samples_leaf=5, random_state=0)


def _write(tmp_path, doc, prefix=""):
    path = tmp_path / "model.json"
    path.write_text(prefix + (doc if isinstance(doc, str) else json.dumps(doc)), encoding="utf-8")
    return path


def _refused(tmp_path, doc, fragment):
    path = _write(tmp_path, doc)
    with pytest.raises(ValueError) as info:
        load_model(path)
    assert fragment in str(info.value), str(info.value)


# ------------------------------------------------------------------ invalid content


@pytest.mark.parametrize(
    "kind,classes",
    [
        ("clf", [1, 1.0]),
        ("clf", [True, 1]),
        ("clf", [1, "1"]),
        ("clf", [0, [1]]),
        ("clf", [2**70, 1]),
        ("mc", ["a", "b", "a"]),
    ],
)
def test_classes_must_be_distinct_labels_of_one_kind(docs, tmp_path, kind, classes):
    doc = copy.deepcopy(docs[kind])
    doc["classes"] = classes
    _refused(tmp_path, doc, "distinct classes")


@pytest.mark.parametrize("field,value", [("gain", -1.0), ("gain", -1e-300), ("count", -3.0)])
def test_negative_gains_and_counts_are_refused(docs, tmp_path, field, value):
    doc = copy.deepcopy(docs["reg"])
    doc["model"]["trees"][1][field][0] = value
    _refused(tmp_path, doc, f"tree 1: node 0 has {field}")


def test_gains_near_the_float_limit_give_finite_importances(docs, tmp_path, data):
    doc = copy.deepcopy(docs["reg"])
    for tree in doc["model"]["trees"]:
        tree["gain"] = [1.7e308] * len(tree["gain"])
    est = load_model(_write(tmp_path, doc))
    imp = est.feature_importances_
    splits = est.get_booster().feature_importances("split")
    # Equal gains: the gain importance is the split-count importance.
    np.testing.assert_allclose(imp, splits, rtol=1e-12)
    assert math.isclose(imp.sum(), 1.0)


@pytest.mark.parametrize("where", ["leaf", "base"])
def test_gaussian_log_std_beyond_the_limit_is_refused(docs, tmp_path, where):
    doc = copy.deepcopy(docs["gauss"])
    if where == "leaf":
        doc["model"]["trees"][1]["leaf_value"][0] = 1e200  # tree 1 is round 0's log-std tree
        fragment = "tree 1: leaf 0 = 1e200 is a log standard deviation"
    else:
        doc["model"]["base_score"][1] = -400.0
        fragment = "base_score[1] = -400.0 is a log standard deviation"
    _refused(tmp_path, doc, fragment)
    # The mean tree may hold such a value: it is no log std.
    ok = copy.deepcopy(docs["gauss"])
    ok["model"]["trees"][0]["leaf_value"][0] = 1e200
    load_model(_write(tmp_path, ok))


def test_a_predicted_std_that_would_overflow_is_an_error(docs, tmp_path, data):
    X = data[0]
    doc = copy.deepcopy(docs["gauss"])
    for tree in doc["model"]["trees"][1::2]:
        tree["leaf_value"] = [300.0] * len(tree["leaf_value"])  # each allowed, their sum is not
    est = load_model(_write(tmp_path, doc))
    assert np.all(np.isfinite(est.predict(X)))
    with pytest.raises(ValueError, match=r"log standard deviation of 1199\.9\d* for row 0"):
        est.predict(X, return_std=True)


@pytest.mark.parametrize(
    "categories,fragment",
    [
        ([[["a"], "b"], None, None, None], "categories[0][0] is not a category value"),
        ([[{"x": 1}], None, None, None], "categories[0][0] is not a category value"),
        ([["a", "a"], None, None, None], "categories[0] repeats a category"),
        ([[1, 1.0], None, None, None], "categories[0] repeats a category"),
        ([[{"float": "nan"}], None, None, None], "categories[0][0]: 'nan' is not"),
        pytest.param(
            [[{"interval": [2, 1], "closed": "right"}], None, None, None],
            "categories[0][0] is not a valid pandas",
            marks=NEEDS_PANDAS,
        ),
        pytest.param(
            [[{"timestamp": 5, "tz": None}], None, None, None],
            "categories[0][0]: a timestamp is written as text",
            marks=NEEDS_PANDAS,
        ),
        ([["a"], None, None], "categories must be a list of 4"),
    ],
)
def test_invalid_categories_are_refused(docs, tmp_path, categories, fragment):
    doc = copy.deepcopy(docs["reg"])
    doc["categories"] = categories
    _refused(tmp_path, doc, fragment)


@pytest.fixture
def frame_model(tmp_path):
    """A model of a frame whose category column `c` (6 categories) the
    trees split by category sets, its file's document, and the frame."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(9)
    n = 600
    codes = rng.integers(0, 6, n)
    df = pd.DataFrame(
        {"c": pd.Categorical.from_codes(codes, list("abcdef")), "x": rng.normal(size=n), "z": rng.normal(size=n)}
    )
    est = RGBMRegressor(n_estimators=20, random_state=0).fit(df, df["x"].to_numpy() + (codes % 2) * 3)
    path = tmp_path / "frame.json"
    est.save_model(path)
    return est, json.loads(path.read_text()), df


def _largest_code(doc, feature):
    """The largest category code any category set of `feature` holds (by hand from the bitsets)."""
    top = -1
    for tree in doc["model"]["trees"]:
        for node, words in enumerate(tree.get("categories", [])):
            if words and tree["feature"][node] == feature:
                top = max(top, max(32 * w + b for w, word in enumerate(words) for b in range(32) if word >> b & 1))
    return top


def test_category_lists_must_cover_the_codes_the_trees_split_on(frame_model, tmp_path):
    est, doc, df = frame_model
    top = _largest_code(doc, 0)
    assert top == 5  # the odd codes go one way: code 5 is in a set
    # As many categories as the largest code needs loads (one more than the
    # trees use is fine too); one fewer is refused naming the field.
    for extra in ([], ["g"]):
        ok = copy.deepcopy(doc)
        ok["categories"][0] = list("abcdef")[: top + 1] + extra
        np.testing.assert_array_equal(load_model(_write(tmp_path, ok)).predict(df), est.predict(df))
    for cut in (top, 2):
        short = copy.deepcopy(doc)
        short["categories"][0] = short["categories"][0][:cut]
        _refused(tmp_path, short, f"categories[0] has {cut} categories, but tree ")
        _refused(tmp_path, short, f"on category code {top}: a list of at least {top + 1} is needed")


def test_categories_on_a_feature_the_model_does_not_split_as_categorical_are_refused(frame_model, tmp_path):
    _est, doc, _df = frame_model
    assert doc["model"]["params"]["categorical_features"] == [0]
    bad = copy.deepcopy(doc)
    bad["categories"][1] = ["p", "q"]
    _refused(
        tmp_path, bad, "categories[1] lists categories for feature 1, which the model does not split as categorical"
    )


def test_duplicate_feature_names_are_refused(frame_model, tmp_path):
    est, doc, df = frame_model
    for names, fragment in (
        (["c", "c", "x"], 'feature_names_in repeats the name "c" (features 0 and 1)'),
        (["c", "x", "c"], 'feature_names_in repeats the name "c" (features 0 and 2)'),
        (["c", "x"], "2 feature names for 3 features"),
    ):
        bad = copy.deepcopy(doc)
        bad["feature_names_in"] = names
        _refused(tmp_path, bad, fragment)
    # Other distinct names load, and name the frame's columns.
    renamed = copy.deepcopy(doc)
    renamed["feature_names_in"] = ["c", "x", "w"]
    loaded = load_model(_write(tmp_path, renamed))
    np.testing.assert_array_equal(loaded.predict(df.rename(columns={"z": "w"})), est.predict(df))


def test_unknown_fields_are_refused(docs, tmp_path):
    doc = copy.deepcopy(docs["reg"])
    doc["clases"] = [0, 1]
    _refused(tmp_path, doc, "unknown fields ['clases']")


def test_a_utf8_bom_is_accepted(docs, tmp_path, data):
    X = data[0]
    path = _write(tmp_path, docs["clf"], prefix="\ufeff")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    np.testing.assert_array_equal(
        load_model(path).predict_proba(X), load_model(_write(tmp_path, docs["clf"])).predict_proba(X)
    )


# ------------------------------------------------------------------ what save_model writes


def test_numpy_typed_hyperparameters_are_saved(data, tmp_path):
    from sklearn.model_selection import GridSearchCV

    X, yr, _, _ = data
    search = GridSearchCV(
        RGBMRegressor(n_estimators=3), {"max_depth": np.arange(2, 4), "learning_rate": np.array([0.1])}, cv=2
    )
    best = search.fit(X, yr).best_estimator_
    assert isinstance(best.max_depth, np.integer)
    best.save_model(tmp_path / "m.json")
    back = load_model(tmp_path / "m.json")
    assert back.get_params() == {
        k: (v.item() if isinstance(v, np.generic) else v) for k, v in best.get_params().items()
    }
    np.testing.assert_array_equal(back.predict(X), best.predict(X))


def test_a_parameter_without_json_form_is_refused_and_nothing_is_written(data, tmp_path):
    X, yr, _, _ = data
    path = tmp_path / "m.json"
    path.write_text("keep me")
    est = RGBMRegressor(n_estimators=3).fit(X, yr)
    est.min_split_gain = np.float64("nan")
    with pytest.raises(ValueError, match="min_split_gain=nan"):
        est.save_model(path)
    est.min_split_gain = 1 + 2j
    with pytest.raises(TypeError, match=r"min_split_gain=\(1\+2j\)"):
        est.save_model(path)
    assert path.read_text() == "keep me"


def _key_types(params):
    return {name: [type(k) for k in v] for name, v in params.items() if isinstance(v, dict)}


def _dict_param_cases(data):
    X, yr, yb, y3 = data
    labels = np.unique(y3)  # np.int64 labels, as np.unique gives them
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    return [
        (RGBMClassifier, {"class_weight": {0: 1.0, 1: 5.0}}, X, yb),
        (RGBMClassifier, {"class_weight": {labels[0]: 1.0, labels[2]: np.float64(4.0)}}, X, y3),
        (RGBMClassifier, {"class_weight": {np.uint8(1): 3.0}}, X, yb),
        (RGBMClassifier, {"class_weight": {True: 2.0}}, X, yb.astype(bool)),
        (RGBMClassifier, {"class_weight": {0.0: 2.0, 1.0: 0.5}}, X, yb.astype(float)),
        (RGBMRegressor, {"monotone_constraints": {0: 1, 1: -1}}, X, yr),
        (RGBMRegressor, {"monotone_constraints": {np.int64(0): 1, -1: -1}}, X, yr),
        # String keys stay a JSON object, as before.
        (RGBMRegressor, {"monotone_constraints": {"a": 1, "d": -1}}, frame, yr),
        (RGBMClassifier, {"class_weight": {"yes": 2.0}}, X, np.where(yb == 1, "yes", "no")),
    ]


def test_dict_parameters_keep_their_key_types_through_save_load_clone_and_pickle(data, tmp_path):
    import pickle

    from sklearn.base import clone

    for cls, params, X, y in _dict_param_cases(data):
        fitted = cls(**KW, **params).fit(X, y)
        fitted.save_model(tmp_path / "m.json")
        loaded = load_model(tmp_path / "m.json")
        assert loaded.get_params() == fitted.get_params(), params
        assert _key_types(loaded.get_params()) == _key_types(fitted.get_params()), params
        np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))
        # Fitting a clone of the loaded estimator is fitting the original parameters from scratch.
        refit = clone(loaded).fit(X, y)
        fresh = cls(**KW, **params).fit(X, y)
        assert refit.get_booster().to_json() == fresh.get_booster().to_json(), params
        unpickled = pickle.loads(pickle.dumps(fitted))
        assert _key_types(unpickled.get_params()) == _key_types(fitted.get_params())
        assert clone(unpickled).fit(X, y).get_booster().to_json() == fresh.get_booster().to_json()
    # The weights matter: the model differs from the unweighted one.
    X, _, yb, _ = data
    weighted = RGBMClassifier(**KW, class_weight={0: 1.0, 1: 5.0}).fit(X, yb)
    assert weighted.get_booster().to_json() != RGBMClassifier(**KW).fit(X, yb).get_booster().to_json()


def test_string_keyed_dicts_are_written_as_json_objects(data, tmp_path):
    X, _, yb, _ = data
    y = np.where(yb == 1, "yes", "no")
    RGBMClassifier(**KW, class_weight={"yes": 2.0}).fit(X, y).save_model(tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text())["params"]["class_weight"] == {"yes": 2.0}
    RGBMClassifier(**KW, class_weight={np.int64(1): 2.0}).fit(X, yb).save_model(tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text())["params"]["class_weight"] == {
        "dict": [[{"numpy": np.dtype(np.int64).str, "value": 1}, 2.0]]
    }


@pytest.mark.parametrize(
    "written,fragment",
    [
        ({"dict": {"0": 1.0}}, "list of [key, value] pairs"),
        ({"dict": [[0, 1.0, 2.0]]}, "list of [key, value] pairs"),
        ({"dict": [[0, 1.0], [0, 2.0]]}, "repeats the key 0"),
        ({"dict": [[{"numpy": "<M8[ns]", "value": 0}, 1.0]]}, "is not a NumPy bool, integer, float or string dtype"),
        ({"dict": [[{"numpy": "not a dtype", "value": 0}, 1.0]]}, "is not a NumPy"),
        ({"dict": [[{"numpy": "|u1", "value": 300}, 1.0]]}, "300 does not fit in dtype uint8"),
        ({"dict": [[{"numpy": "|u1", "value": -1}, 1.0]]}, "does not fit in dtype uint8"),
        ({"dict": [[{"numpy": "<i8", "value": 1.5}, 1.0]]}, "is not a value of dtype int64"),
        ({"dict": [[{"numpy": "<i8", "value": True}, 1.0]]}, "is not a value of dtype int64"),
        ({"dict": [[[0], 1.0]]}, "params.class_weight key 0 is not a dict key"),
        ({"dict": [[{"interval": 1}, 1.0]]}, "params.class_weight key 0 is not a category value"),
    ],
)
def test_tampered_dict_parameters_are_refused(docs, tmp_path, written, fragment):
    doc = copy.deepcopy(docs["clf"])
    doc["params"]["class_weight"] = written
    _refused(tmp_path, doc, fragment)


def test_dict_keys_without_a_file_form_are_refused_at_save(data, tmp_path):
    X, _, yb, _ = data
    est = RGBMClassifier(**KW).fit(X, yb)
    est.class_weight = {(0, 1): 1.0}
    with pytest.raises(TypeError, match=r"cannot save the parameter class_weight: its key \(0, 1\) is a tuple"):
        est.save_model(tmp_path / "m.json")
    est.class_weight = {float("nan"): 1.0}
    with pytest.raises(ValueError, match="cannot save the parameter class_weight: one of its keys is NaN"):
        est.save_model(tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()


def _frame_with(data, column):
    pd = pytest.importorskip("pandas")
    X = data[0]
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    frame["c"] = column
    return frame


CATEGORICAL_KINDS = [
    "cut",
    "cut_inf",
    "qcut_closed_left",
    "naive_timestamp",
    "aware_timestamp",
    "datetime_interval",
    "timedelta",
    "period",
]


def _categorical_columns(n):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    values = rng.normal(size=n)
    stamps = pd.to_datetime("2024-03-01") + pd.to_timedelta(rng.integers(0, 3, n), unit="D")
    columns = {
        "cut": pd.cut(values, 4),
        "cut_inf": pd.cut(values, [-np.inf, -0.5, 0.5, np.inf]),
        "qcut_closed_left": pd.cut(values, [-10.0, 0.0, 10.0], right=False),
        "naive_timestamp": pd.Categorical(stamps),
        "aware_timestamp": pd.Categorical(stamps.tz_localize("Europe/Paris")),
        "datetime_interval": pd.cut(stamps, 2),
        "timedelta": pd.Categorical(pd.to_timedelta(rng.integers(0, 3, n), unit="h")),
        "period": pd.Categorical(pd.PeriodIndex(stamps, freq="M")),
    }
    assert list(columns) == CATEGORICAL_KINDS
    return columns


@pytest.mark.parametrize("kind", CATEGORICAL_KINDS)
def test_pandas_categories_survive_a_round_trip(data, tmp_path, kind):
    X, yr, _, _ = data
    column = _categorical_columns(len(yr))[kind]
    frame = _frame_with(data, column)
    est = RGBMRegressor(**KW).fit(frame, yr)
    est.save_model(tmp_path / "m.json")
    back = load_model(tmp_path / "m.json")
    assert back._categories_ == est._categories_
    np.testing.assert_array_equal(back.predict(frame), est.predict(frame))
    # Prediction maps values through the restored categories: a reordered frame agrees.
    shuffled = frame.copy()
    shuffled["c"] = shuffled["c"].cat.reorder_categories(list(reversed(shuffled["c"].cat.categories)))
    np.testing.assert_array_equal(back.predict(shuffled), est.predict(frame))


def test_unsupported_category_values_are_refused_at_save(data, tmp_path):
    pd = pytest.importorskip("pandas")
    X, yr, _, _ = data
    frame = _frame_with(data, pd.Categorical([(i % 2, "x") for i in range(len(yr))]))
    est = RGBMRegressor(**KW).fit(frame, yr)
    with pytest.raises(TypeError, match="categories of feature 2: a value of type tuple"):
        est.save_model(tmp_path / "m.json")
    assert not os.listdir(tmp_path)


def test_the_libsvm_base_survives_load_and_save(docs, tmp_path, data):
    doc = copy.deepcopy(docs["reg"])
    doc["libsvm_index_base"] = 0
    est = load_model(_write(tmp_path, doc))
    est.save_model(tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text())["libsvm_index_base"] == 0
    est.fit(data[0], data[1])  # a refit from Python forgets how a libsvm file was read
    est.save_model(tmp_path / "refit.json")
    assert "libsvm_index_base" not in json.loads((tmp_path / "refit.json").read_text())
    doc["libsvm_index_base"] = 2
    _refused(tmp_path, doc, "libsvm_index_base must be 0 or 1")
