"""save_model(format="xgboost"): XGBoost, loading the file, predicts what
rgbm_rs predicts.

XGBoost reads features as float32 and sums float32 leaf values in float32,
so rows are compared on float32 input. Two checks per model: every row
reaches, in every tree, the leaf it reaches in rgbm_rs (XGBoost's leaf
values per tree, from ``pred_leaf``, against the model's own, exactly past
the first round), and raw margins and predictions agree to 1e-6.
"""

import json

import numpy as np
import pytest

xgb = pytest.importorskip("xgboost")

from rgbm_rs import RGBMClassifier, RGBMRanker, RGBMRegressor, load_model  # noqa: E402

# XGBoost's float32 sum: a margin of 5 after 30 trees is off by about 1e-6.
ATOL = RTOL = 1e-6
F32 = np.float32


def float32_at_most(t):
    """The largest float32 <= t for each t."""
    t = np.asarray(t, dtype=np.float64)
    near = t.astype(F32)
    above = near.astype(np.float64) > t
    near[above] = np.nextafter(near[above], F32(-np.inf))
    return near


def export(est, tmp_path):
    path = tmp_path / "model.xgb.json"
    est.save_model(path, format="xgboost")
    return xgb.Booster(model_file=str(path)), json.loads(path.read_text())


def margins(booster, X32):
    """XGBoost's raw margins."""
    return booster.inplace_predict(X32, predict_type="margin", validate_features=False)


def scale_of(est):
    link = est.get_booster().link()
    return link[1] if link[0] == "sigmoid" else 1.0


def check_leaves(est, booster, doc, X32):
    """Every row reaches, in every tree, a leaf of the value it reaches in rgbm_rs."""
    nodes = booster.predict(xgb.DMatrix(X32), pred_leaf=True, validate_features=False).astype(np.int64)
    nodes = nodes.reshape(len(X32), -1)
    written = doc["learner"]["gradient_booster"]["model"]["trees"]
    theirs = np.stack([np.asarray(t["split_conditions"])[nodes[:, i]] for i, t in enumerate(written)], axis=1)
    model = json.loads(est.get_booster().to_json())
    leaves = est.apply(X32).reshape(len(X32), -1)
    ours = np.stack([np.asarray(t["leaf_value"])[leaves[:, i]] for i, t in enumerate(model["trees"])], axis=1)
    ours = (ours / scale_of(est)).astype(F32)
    k = est.get_booster().n_outputs
    # Past the first round, exactly the leaf value; the first round also carries any folded base score.
    np.testing.assert_array_equal(theirs[:, k:], ours[:, k:])
    first = theirs[:, :k] - ours[:, :k]
    np.testing.assert_allclose(first, np.broadcast_to(first[:1], first.shape), rtol=0, atol=1e-6)


def compare(est, booster, doc, X32, raw, pred):
    """Margins and predictions of XGBoost against rgbm_rs's; the largest differences."""
    check_leaves(est, booster, doc, X32)
    m = margins(booster, X32).reshape(raw.shape)
    p = booster.inplace_predict(X32, validate_features=False).reshape(pred.shape)
    np.testing.assert_allclose(m, raw / scale_of(est), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(p, pred, rtol=RTOL, atol=ATOL)
    return np.abs(m - raw / scale_of(est)).max(), np.abs(p - pred).max()


def split_values(est):
    """(feature, threshold) of every threshold node."""
    model = json.loads(est.get_booster().to_json())
    out = []
    for t in model["trees"]:
        cats = t.get("categories") or [[]] * len(t["feature"])
        out += [(f, s) for f, s, c in zip(t["feature"], t["threshold"], cats) if not c]
    return out


def edge_rows(est, X32, rng):
    """Rows holding, in one feature each, the float32 values around every
    split (the largest <= threshold and the next), the threshold rounded
    to nearest, and NaN, ±float32 max, ±0 (rgbm_rs refuses ±inf)."""
    rows = []
    for f, t in split_values(est):
        below = float32_at_most([t])[0]
        for v in (below, np.nextafter(below, F32(np.inf)), F32(t)):
            row = X32[rng.integers(len(X32))].copy()
            row[f] = v
            rows.append(row)
    big = np.finfo(F32).max
    for v in (np.nan, big, -big, 0.0, -0.0):
        for f in range(X32.shape[1]):
            row = X32[rng.integers(len(X32))].copy()
            row[f] = v
            rows.append(row)
    return np.asarray(rows, dtype=F32)


def with_nans(X, rng, rate=0.1):
    X = X.copy()
    X[rng.random(X.shape) < rate] = np.nan
    return X


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 5))
    y = 2 * X[:, 0] + X[:, 1] ** 2 + np.sin(3 * X[:, 2]) + 0.1 * rng.normal(size=1500)
    return with_nans(X, rng), y


def inputs(est, X, seed=1):
    rng = np.random.default_rng(seed)
    X32 = np.asarray(X, dtype=F32)
    return np.concatenate([X32[:300], edge_rows(est, X32, rng)])


@pytest.mark.parametrize(
    "loss,extra",
    [
        ("squared", {}),
        ("huber", {"huber_delta": 0.5}),
        ("absolute_error", {}),
        ("quantile", {"alpha": 0.8}),
        ("poisson", {}),
        ("gamma", {}),
        ("tweedie", {"tweedie_variance_power": 1.3}),
    ],
)
def test_regression(data, tmp_path, loss, extra):
    X, y = data
    if loss in ("poisson", "tweedie"):
        y = np.random.default_rng(1).poisson(np.exp(y / 3)).astype(float)
    elif loss == "gamma":
        y = np.exp(y / 3)
    est = RGBMRegressor(loss=loss, n_estimators=30, max_depth=4, random_state=0, **extra).fit(X, y)
    booster, doc = export(est, tmp_path)
    X32 = inputs(est, X)
    compare(est, booster, doc, X32, est.get_booster().predict_raw(X32), est.predict(X32))
    objective = doc["learner"]["objective"]["name"]
    assert (
        objective
        == {
            "squared": "reg:squarederror",
            "huber": "reg:pseudohubererror",
            "absolute_error": "reg:absoluteerror",
            "quantile": "reg:quantileerror",
            "poisson": "count:poisson",
            "gamma": "reg:gamma",
            "tweedie": "reg:tweedie",
        }[loss]
    )


@pytest.mark.parametrize(
    "loss,extra",
    [("logistic", {}), ("exponential", {}), ("sla01", {"gain": "gradient", "leaf": "gradient", "sla_scale": 0.3})],
)
def test_binary(data, tmp_path, loss, extra):
    X, y = data
    est = RGBMClassifier(loss=loss, n_estimators=30, max_depth=4, random_state=0, **extra).fit(X, y > 1)
    booster, doc = export(est, tmp_path)
    X32 = inputs(est, X)
    compare(est, booster, doc, X32, est.decision_function(X32), est.predict_proba(X32)[:, 1])
    assert doc["learner"]["objective"]["name"] == "binary:logistic"
    # The base score is carried by the first tree: base_score is p = 0.5, margin 0.
    assert doc["learner"]["learner_model_param"]["base_score"] == "[0.5]"


def test_binary_with_a_large_base_margin(tmp_path):
    # XGBoost's float32 logit of base_score would be off by 4e-4 at a margin of 10.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20000, 3))
    y = (rng.random(20000) > 1e-4) & (X[:, 0] < 3.5)
    est = RGBMClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    assert est.get_booster().base_score[0] > 7
    booster, doc = export(est, tmp_path)
    X32 = inputs(est, X)
    compare(est, booster, doc, X32, est.decision_function(X32), est.predict_proba(X32)[:, 1])


def test_multiclass(data, tmp_path):
    X, y = data
    labels = np.digitize(y, [-1, 0.5, 2])
    est = RGBMClassifier(n_estimators=20, max_depth=3, random_state=0).fit(X, np.array(["a", "b", "c", "d"])[labels])
    booster, doc = export(est, tmp_path)
    X32 = inputs(est, X)
    compare(est, booster, doc, X32, est.decision_function(X32), est.predict_proba(X32))
    learner = doc["learner"]
    assert learner["objective"] == {"name": "multi:softprob", "softmax_multiclass_param": {"num_class": "4"}}
    assert learner["learner_model_param"]["num_class"] == "4"
    model = learner["gradient_booster"]["model"]
    assert model["tree_info"] == [0, 1, 2, 3] * 20
    assert model["iteration_indptr"] == list(range(0, 81, 4))
    # Softmax margins are kept as they are: one base score per class.
    base = json.loads(learner["learner_model_param"]["base_score"])
    np.testing.assert_allclose(base, est.get_booster().base_score, rtol=1e-7)


def test_margins_are_the_float32_sum_of_the_leaves_reached(data, tmp_path):
    """XGBoost's margin is float32(base) + the float32 leaves, added in
    float32 tree by tree: computed here from the leaves rgbm_rs reaches, it
    is XGBoost's output bit for bit."""
    X, y = data
    est = RGBMClassifier(n_estimators=100, max_depth=4, random_state=0).fit(X, np.digitize(y, [0, 1, 3]))
    booster, doc = export(est, tmp_path)
    X32 = inputs(est, X)
    model = json.loads(est.get_booster().to_json())
    k = est.get_booster().n_outputs
    leaves = est.apply(X32).reshape(len(X32), -1)
    acc = np.tile(np.asarray(model["base_score"], dtype=F32), (len(X32), 1))
    for i, t in enumerate(model["trees"]):
        acc[:, i % k] += np.asarray(t["leaf_value"], dtype=F32)[leaves[:, i]]
    np.testing.assert_array_equal(margins(booster, X32).reshape(acc.shape), acc)


def test_ranker(data, tmp_path):
    X, y = data
    rel = np.digitize(y, [0, 1, 3])
    est = RGBMRanker(n_estimators=20, max_depth=3, random_state=0).fit(X, rel, group=[30] * 50)
    booster, doc = export(est, tmp_path)
    X32 = inputs(est, X)
    compare(est, booster, doc, X32, est.predict(X32), est.predict(X32))
    assert doc["learner"]["objective"]["name"] == "rank:ndcg"


def test_infinity_goes_where_the_largest_float32_goes(data, tmp_path):
    # predict refuses ±inf; XGBoost takes them, and routes them as ±float32 max
    # when every threshold is within the float32 range.
    X, y = data
    est = RGBMRegressor(n_estimators=20, max_depth=4, random_state=0).fit(X, y)
    booster, _ = export(est, tmp_path)
    X32 = np.asarray(X[:200], dtype=F32)
    X32[::2, 0], X32[1::2, 1] = np.inf, -np.inf
    big = np.where(np.isinf(X32), np.sign(X32) * np.finfo(F32).max, X32)
    np.testing.assert_allclose(margins(booster, X32), est.predict(big), rtol=RTOL, atol=ATOL)


def test_float64_input_is_read_as_float32(data, tmp_path):
    """XGBoost rounds float64 features to float32 before comparing: values
    between two float32 neighbours route as rgbm_rs routes their rounding."""
    X, y = data
    est = RGBMRegressor(n_estimators=20, max_depth=4, random_state=0).fit(X, y)
    booster, _ = export(est, tmp_path)
    rng = np.random.default_rng(2)
    rows = []
    for f, t in split_values(est):
        low = float32_at_most([t])[0]
        high = np.nextafter(low, F32(np.inf))
        for v in (t, (float(low) + float(high)) / 2, float(low) + (float(high) - float(low)) / 4):
            row = np.asarray(X[rng.integers(len(X))], dtype=np.float64).copy()
            row[f] = v
            rows.append(row)
    X64 = np.asarray(rows)
    np.testing.assert_allclose(margins(booster, X64), est.predict(X64.astype(F32)), rtol=RTOL, atol=ATOL)


def test_missing_values_follow_the_default_side(tmp_path):
    # Missing values carry information: rows with NaN get their own side.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(2000, 3))
    y = X[:, 0] + np.where(rng.random(2000) < 0.3, 5.0, 0.0)
    X[y > 3, 0] = np.nan
    est = RGBMRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    booster, doc = export(est, tmp_path)
    defaults = [d for t in doc["learner"]["gradient_booster"]["model"]["trees"] for d in t["default_left"]]
    assert 0 in defaults and 1 in defaults
    X32 = inputs(est, X)
    compare(est, booster, doc, X32, est.predict(X32), est.predict(X32))
    assert np.isnan(X32[:, 0]).any()


@pytest.mark.parametrize("booster_kind", ["rgb", "sglb"])
def test_rgb_and_sglb_models(data, tmp_path, booster_kind):
    X, y = data
    extra = {"booster": "rgb", "max_depth": None} if booster_kind == "rgb" else {"langevin": True, "max_depth": 4}
    est = RGBMRegressor(n_estimators=30, random_state=0, **extra).fit(X, y)
    booster, doc = export(est, tmp_path)
    X32 = inputs(est, X)
    compare(est, booster, doc, X32, est.predict(X32), est.predict(X32))
    clf = RGBMClassifier(n_estimators=30, random_state=0, **extra).fit(X, y > 1)
    booster, doc = export(clf, tmp_path)
    compare(clf, booster, doc, X32, clf.decision_function(X32), clf.predict_proba(X32)[:, 1])


def category_data(n=3000, seed=4):
    rng = np.random.default_rng(seed)
    city = rng.choice([f"c{i}" for i in range(12)], size=n)
    x = rng.normal(size=n)
    y = np.isin(city, ["c3", "c7", "c8", "c0", "c11"]) * 2.0 + x + 0.1 * rng.normal(size=n)
    return city, x, y


def test_pandas_category_column(tmp_path):
    pd = pytest.importorskip("pandas")
    city, x, y = category_data()
    cats = sorted(set(city))
    frame = pd.DataFrame({"city": pd.Categorical(city, categories=cats), "x": x})
    est = RGBMRegressor(
        n_estimators=20, max_depth=3, categorical_features="auto", min_data_per_group=10, random_state=0
    ).fit(frame, y)
    booster, doc = export(est, tmp_path)
    learner = doc["learner"]
    assert learner["feature_names"] == ["city", "x"]
    assert learner["feature_types"] == ["c", "float"]
    trees = learner["gradient_booster"]["model"]["trees"]
    assert any(1 in t["split_type"] for t in trees)
    # Unseen categories (c12, zz) and missing values at predict.
    new = np.array(["c0", "c3", "c5", "c11", "c12", "zz", None, "c7"] * 50, dtype=object)
    test = pd.DataFrame({"city": pd.Categorical(new), "x": np.linspace(-3, 3, len(new))})
    expected = est.predict(test)
    # XGBoost reads a frame's category codes as they are: give it the fit-time categories.
    same = test.assign(city=pd.Categorical(np.where(np.isin(new, cats), new, None), categories=cats))
    got = booster.predict(xgb.DMatrix(same, enable_categorical=True))
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    # Or the codes as a float32 array, unseen values as -1 (pandas' code) or NaN.
    codes = same["city"].cat.codes.to_numpy().astype(F32)
    X32 = np.column_stack([codes, same["x"].to_numpy(F32)])
    np.testing.assert_allclose(margins(booster, X32), expected, rtol=RTOL, atol=ATOL)
    X32[codes < 0, 0] = np.nan
    np.testing.assert_allclose(margins(booster, X32), expected, rtol=RTOL, atol=ATOL)


def test_the_category_encoder_maps_a_frame_by_value(tmp_path):
    pd = pytest.importorskip("pandas")
    city, x, y = category_data(seed=9)
    rng = np.random.default_rng(9)
    size = rng.choice([30, 4, 17, 9], size=len(x))
    y = y + (size == 17)
    cats = sorted(set(city))
    frame = pd.DataFrame({"city": pd.Categorical(city, categories=cats), "x": x, "size": pd.Categorical(size)})
    est = RGBMRegressor(n_estimators=30, min_data_per_group=10, random_state=0).fit(frame, y)
    booster, doc = export(est, tmp_path)
    enc = doc["learner"]["gradient_booster"]["model"]["cats"]
    assert enc["feature_segments"] == [0, 12, 12, 16]
    assert enc["enc"][2] == {"type": 15, "values": [4, 9, 17, 30]}
    # The same categories in another order (and as other integer codes): XGBoost maps them by value, as predict.
    test = frame.iloc[:400]
    shuffled = test.assign(
        city=pd.Categorical(test["city"].astype(str), categories=cats[::-1]),
        size=pd.Categorical(test["size"].astype(int), categories=[17, 30, 9, 4]),
    )
    expected = est.predict(shuffled)
    np.testing.assert_allclose(est.predict(test), expected)
    np.testing.assert_allclose(booster.predict(xgb.DMatrix(shuffled, enable_categorical=True)), expected, atol=ATOL)
    np.testing.assert_allclose(booster.inplace_predict(shuffled), expected, atol=ATOL)
    # A category unseen at fit: predict takes it as missing; XGBoost refuses the frame.
    unseen = shuffled.assign(city=pd.Categorical(shuffled["city"].astype(str), categories=[*cats, "new"]))
    with pytest.raises(xgb.core.XGBoostError, match="category not in the training set"):
        booster.inplace_predict(unseen)


def test_no_category_encoder_for_categories_xgboost_cannot_read_back(tmp_path):
    pd = pytest.importorskip("pandas")
    city, x, y = category_data(seed=10)
    # XGBoost 3.2 stores a string's bytes but counts its characters: not ASCII, no encoder.
    frame = pd.DataFrame({"city": pd.Categorical(np.char.add(city, "é")), "x": x})
    est = RGBMRegressor(n_estimators=10, min_data_per_group=10, random_state=0).fit(frame, y)
    booster, doc = export(est, tmp_path)
    assert doc["learner"]["gradient_booster"]["model"]["cats"] == {"enc": [], "feature_segments": [], "sorted_idx": []}
    codes = frame["city"].cat.codes.to_numpy().astype(F32)
    np.testing.assert_allclose(margins(booster, np.c_[codes, x].astype(F32)), est.predict(frame), atol=ATOL)


@pytest.mark.parametrize("classes", [2, 3])
def test_integer_coded_categorical_features(tmp_path, classes):
    city, x, y = category_data(seed=6)
    codes = np.array([int(c[1:]) for c in city], dtype=np.float64)
    X = np.column_stack([x, codes])
    X[::17, 1] = np.nan
    target = y > 1 if classes == 2 else np.digitize(y, [0.5, 2])
    est = RGBMClassifier(
        n_estimators=20, max_depth=3, categorical_features=[1], min_data_per_group=10, random_state=0
    ).fit(X, target)
    booster, doc = export(est, tmp_path)
    assert doc["learner"]["feature_types"] == ["float", "c"]
    # Codes unseen at fit (12, 40, 1000), beyond XGBoost's category range (2**24), below 0 (-1, -7).
    unseen = np.array([12, 40, 1000, 2.0**24, 2.0**25, -1, -7, np.nan], dtype=np.float64)
    extra = np.column_stack([np.linspace(-2, 2, 8 * 20), np.tile(unseen, 20)])
    X32 = np.concatenate([inputs(est, X), extra.astype(F32)])
    proba = est.predict_proba(X32)
    compare(est, booster, doc, X32, est.decision_function(X32), proba[:, 1] if classes == 2 else proba)


def test_category_nodes_whose_default_side_is_left(tmp_path):
    # Fitting puts a category node's default side on the right; a model file
    # may hold either: flipping every such node (and swapping its children)
    # keeps the model, and the export.
    city, x, y = category_data(seed=6)
    X = np.column_stack([x, [float(c[1:]) for c in city]])
    est = RGBMRegressor(n_estimators=10, max_depth=3, categorical_features=[1], random_state=0).fit(X, y)
    est.save_model(tmp_path / "model.json")
    doc = json.loads((tmp_path / "model.json").read_text())
    flipped = 0
    for t in doc["model"]["trees"]:
        for i, words in enumerate(t.get("categories") or []):
            if words:
                t["default_left"][i] = not t["default_left"][i]
                t["left"][i], t["right"][i] = t["right"][i], t["left"][i]
                flipped += 1
    assert flipped
    (tmp_path / "flipped.json").write_text(json.dumps(doc))
    other = load_model(tmp_path / "flipped.json")
    X32 = np.concatenate([inputs(est, X), np.array([[0.0, 12], [1.0, -1], [2.0, np.nan], [0.5, 999]], dtype=F32)])
    np.testing.assert_array_equal(other.predict(X32), est.predict(X32))
    booster, doc = export(other, tmp_path)
    compare(other, booster, doc, X32, other.predict(X32), other.predict(X32))


def test_models_xgboost_cannot_express(data, tmp_path):
    X, y = data
    path = tmp_path / "model.json"
    gaussian = RGBMRegressor(loss="gaussian", n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="loss='gaussian'.*two values per row"):
        gaussian.save_model(path, format="xgboost")

    def squared(y_true, raw):
        return raw - y_true, np.ones_like(raw)

    custom = RGBMRegressor(loss=squared, n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="custom loss"):
        custom.save_model(path, format="xgboost")
    assert not path.exists()  # nothing is written

    # A leaf value beyond float32 (a model file may hold up to 1e200).
    est = RGBMRegressor(n_estimators=3).fit(X, y)
    est.save_model(path)
    doc = json.loads(path.read_text())
    doc["model"]["trees"][1]["leaf_value"][0] = 1e100
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="leaf value of 1e\\+100, beyond the float32 range"):
        load_model(path).save_model(tmp_path / "big.json", format="xgboost")


def test_bad_format(data, tmp_path):
    X, y = data
    est = RGBMRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="format must be 'rgbm_rs' or 'xgboost', got 'XGBoost'"):
        est.save_model(tmp_path / "m.json", format="XGBoost")
    with pytest.raises(TypeError, match="format must be a str"):
        est.save_model(tmp_path / "m.json", format=None)
    assert not (tmp_path / "m.json").exists()


def test_feature_names_and_a_frame_for_xgboost(tmp_path):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(8)
    frame = pd.DataFrame(rng.normal(size=(800, 3)).astype(F32), columns=["age", "income", "score"])
    y = frame["age"] * 2 + frame["score"] ** 2
    est = RGBMRegressor(n_estimators=20, max_depth=3, random_state=0).fit(frame, y)
    booster, doc = export(est, tmp_path)
    assert doc["learner"]["feature_names"] == ["age", "income", "score"]
    assert booster.feature_names == ["age", "income", "score"]
    np.testing.assert_allclose(booster.predict(xgb.DMatrix(frame)), est.predict(frame), rtol=RTOL, atol=ATOL)
    # The written file loads and saves again in XGBoost.
    booster.save_model(tmp_path / "again.json")
    again = xgb.Booster(model_file=str(tmp_path / "again.json"))
    np.testing.assert_array_equal(again.predict(xgb.DMatrix(frame)), booster.predict(xgb.DMatrix(frame)))


@pytest.mark.parametrize("classes", [2, 3])
def test_models_of_single_leaves_and_of_no_trees(data, tmp_path, classes):
    X, y = data
    target = np.digitize(y, [1] if classes == 2 else [0, 1])
    est = RGBMClassifier(n_estimators=3, min_split_gain=1e9).fit(X, target)
    X32 = np.asarray(X[:100], dtype=F32)
    booster, doc = export(est, tmp_path)
    compare(
        est,
        booster,
        doc,
        X32,
        est.decision_function(X32),
        est.predict_proba(X32)[:, 1] if classes == 2 else est.predict_proba(X32),
    )
    # A model file may hold no trees: the base score alone.
    est.save_model(tmp_path / "model.json")
    saved = json.loads((tmp_path / "model.json").read_text())
    saved["model"]["trees"] = []
    (tmp_path / "model.json").write_text(json.dumps(saved))
    empty = load_model(tmp_path / "model.json")
    booster, doc = export(empty, tmp_path)
    assert doc["learner"]["gradient_booster"]["model"]["tree_info"] == list(range(1 if classes == 2 else classes))
    np.testing.assert_allclose(
        margins(booster, X32).reshape(len(X32), -1),
        empty.decision_function(X32).reshape(len(X32), -1),
        rtol=RTOL,
        atol=ATOL,
    )


def edited(est, tmp_path, edit):
    """``est`` saved, its model document changed by ``edit``, loaded again."""
    path = tmp_path / "edited.json"
    est.save_model(path)
    doc = json.loads(path.read_text())
    edit(doc["model"])
    path.write_text(json.dumps(doc))
    return load_model(path)


def test_a_log_link_base_score_beyond_float32(data, tmp_path):
    # exp(100) is beyond float32: the base score goes into the first tree instead.
    X, y = data
    est = RGBMRegressor(loss="poisson", n_estimators=5, max_depth=3).fit(X, np.exp(y / 3))

    def shift(model):
        model["base_score"] = [100.0]

    big = edited(est, tmp_path, shift)
    booster, doc = export(big, tmp_path)
    assert doc["learner"]["learner_model_param"]["base_score"] == "[1.0]"
    X32 = inputs(big, X)
    raw = big.get_booster().predict_raw(X32)
    np.testing.assert_allclose(margins(booster, X32), raw, rtol=RTOL, atol=ATOL)


def test_thresholds_beyond_float32(data, tmp_path):
    X, y = data
    est = RGBMRegressor(n_estimators=2, max_depth=2).fit(X, y)

    def widen(model):
        model["trees"][0]["threshold"][0] = 1e39
        model["trees"][1]["threshold"][0] = -1e39

    wide = edited(est, tmp_path, widen)
    booster, doc = export(wide, tmp_path)
    big = np.finfo(F32).max
    X32 = np.asarray(X[:50], dtype=F32)
    X32 = np.concatenate([X32, np.full((4, X.shape[1]), [big], F32), np.full((4, X.shape[1]), [-big], F32)])
    check_leaves(wide, booster, doc, X32)
    np.testing.assert_allclose(margins(booster, X32), wide.predict(X32), rtol=RTOL, atol=ATOL)
