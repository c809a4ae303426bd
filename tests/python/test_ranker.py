"""RGBMRanker: NDCG as scikit-learn computes it, ranking quality against
LightGBM's LGBMRanker on the same queries, query groups from sizes or ids,
persistence and exports, and clear refusals."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import ndcg_score

from rgbm_rs import RGBMRanker, RGBMRegressor, load_model, to_onnx


def queries(n_queries, seed, p=8):
    """Queries of 3..29 rows; grades 0..4 rise with a hidden score plus noise."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 30, n_queries)
    n = int(sizes.sum())
    X = rng.normal(size=(n, p))
    s = X[:, 0] + 0.8 * X[:, 1] * X[:, 2] - 0.5 * np.abs(X[:, 3]) + 0.5 * np.sin(2 * X[:, 4])
    y = np.clip(np.floor(s + rng.normal(scale=0.6, size=n) + 2), 0, 4).astype(int)
    return X, y, sizes


def sklearn_ndcg(y, scores, sizes, k=None):
    """Mean NDCG@k over the queries: scikit-learn's, with the gain 2^y - 1
    (it takes the grades as gains); a query with no relevant row counts 1."""
    out, start = [], 0
    for q in sizes:
        yy, ss = y[start : start + q], scores[start : start + q]
        start += q
        out.append(ndcg_score([2.0**yy - 1], [ss], k=k) if yy.max() > 0 else 1.0)
    return float(np.mean(out))


SMALL = dict(n_estimators=30, max_depth=None, max_leaves=15, min_samples_leaf=5, random_state=0)


@pytest.mark.parametrize("eval_at", [None, 3, 10])
def test_recorded_ndcg_is_scikit_learns(eval_at):
    X, y, g = queries(120, 1)
    Xv, yv, gv = queries(60, 2)
    est = RGBMRanker(**SMALL, eval_at=eval_at).fit(X, y, group=g, eval_set=[(Xv, yv)], eval_group=[gv])
    name = "ndcg" if eval_at is None else f"ndcg@{eval_at}"
    history = est.evals_result_["valid_0"][name]
    assert len(history) == 30
    for rounds, scores in enumerate(est.staged_predict(Xv), start=1):
        if rounds in (1, 15, 30):
            assert history[rounds - 1] == pytest.approx(sklearn_ndcg(yv, scores, gv, eval_at), abs=1e-12)
    assert history[-1] > history[0]


def test_ranks_as_well_as_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y, g = queries(800, 3)
    Xt, yt, gt = queries(400, 4)
    ours = RGBMRanker(n_estimators=100, max_depth=None, max_leaves=31, random_state=0).fit(X, y, group=g)
    theirs = lgb.LGBMRanker(n_estimators=100, num_leaves=31, verbose=-1, random_state=0).fit(X, y, group=g)
    for k in (5, 10):
        a, b = sklearn_ndcg(yt, ours.predict(Xt), gt, k), sklearn_ndcg(yt, theirs.predict(Xt), gt, k)
        assert a > b - 0.01, (k, a, b)
    # Far better than an unlearned order.
    assert sklearn_ndcg(yt, ours.predict(Xt), gt, 10) > sklearn_ndcg(yt, np.zeros(len(yt)), gt, 10) + 0.1


def test_group_and_qid_give_the_same_model():
    X, y, g = queries(50, 5)
    qid = np.repeat(np.arange(100, 100 + len(g)), g)
    a = RGBMRanker(**SMALL).fit(X, y, group=g)
    b = RGBMRanker(**SMALL).fit(X, y, qid=qid)
    assert np.array_equal(a.predict(X), b.predict(X))
    # Lists of Python ints work as well as arrays.
    c = RGBMRanker(**SMALL).fit(X, y.tolist(), group=g.tolist())
    assert np.array_equal(a.predict(X), c.predict(X))


def test_early_stopping_keeps_the_best_ndcg_round():
    X, y, g = queries(100, 6)
    Xv, yv, gv = queries(40, 7)
    est = RGBMRanker(**{**SMALL, "n_estimators": 200}, learning_rate=0.5, early_stopping_rounds=5, eval_at=5)
    est.fit(X, y, group=g, eval_set=[(Xv, yv)], eval_group=[gv])
    history = est.evals_result_["valid_0"]["ndcg@5"]
    best = est.best_iteration
    assert history[best] == max(history[: best + 6])
    assert len(history) == best + 6 or len(history) == 200
    assert est.best_score_["valid_0"]["ndcg@5"] == history[best]


def test_persistence_shap_and_onnx(tmp_path):
    X, y, g = queries(60, 8)
    est = RGBMRanker(**SMALL).fit(X, y, group=g)
    scores = est.predict(X)
    est.save_model(tmp_path / "ranker.json")
    loaded = load_model(tmp_path / "ranker.json")
    assert type(loaded) is RGBMRanker and np.array_equal(loaded.predict(X), scores)
    assert np.array_equal(pickle.loads(pickle.dumps(est)).predict(X), scores)
    contrib = est.predict(X, pred_contrib=True)
    assert np.allclose(contrib.sum(axis=1), scores, atol=1e-9)
    assert est.predict(X, pred_leaf=True).shape == (len(y), 30)
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    runner = ort.InferenceSession(to_onnx(est).SerializeToString(), providers=["CPUExecutionProvider"])
    got = runner.run(None, {"X": X.astype(np.float32)})[0].ravel()
    assert np.allclose(got, est.predict(X.astype(np.float32)), atol=1e-5)
    assert clone(est).get_params() == est.get_params()


def test_bad_groups_labels_and_options_are_refused():
    X, y, g = queries(20, 9)
    qid = np.repeat(np.arange(len(g)), g)
    est = RGBMRanker(**SMALL)
    for kwargs, match in [
        ({}, "exactly one of group"),
        ({"group": g, "qid": qid}, "exactly one of group"),
        ({"group": np.r_[g[:-1], g[-1] + 1]}, "add up to"),
        ({"group": np.r_[0, g]}, "at least 1"),
        ({"group": g.astype(float)}, "integer query sizes"),
        ({"qid": qid[::-1].copy()[np.r_[1 : len(qid), 0]]}, "consecutive"),
        ({"qid": qid[:-1]}, "one query id per row"),
    ]:
        with pytest.raises(ValueError, match=match):
            est.fit(X, y, **kwargs)
    for bad, match in [(y + 0.5, "integer relevance labels"), (np.where(y == 0, -1, y), "integer relevance labels")]:
        with pytest.raises(ValueError, match=match):
            est.fit(X, bad, group=g)
    with pytest.raises(ValueError, match="exactly one of group"):
        est.fit(X, y, group=g, eval_set=[(X, y)])
    with pytest.raises(ValueError, match="need eval_set"):
        est.fit(X, y, group=g, eval_group=[g])
    with pytest.raises(ValueError, match="'loss' parameter of RGBMRanker"):
        RGBMRanker(loss="squared").fit(X, y, group=g)
    for metric in ([lambda y, f: ("m", 0.0, True)], lambda y, f: ("m", 0.0, True)):
        with pytest.raises(ValueError, match="metric names"):
            RGBMRanker(eval_metric=metric).fit(X, y, group=g)
    # A metric name the ranker lacks: its message offers names only, as the
    # ranker takes no functions (the regressor's offers functions too).
    with pytest.raises(ValueError, match=r"eval_metric 'rmse' is not available for this loss; choose from \['ndcg'\]$"):
        RGBMRanker(eval_metric="rmse").fit(X, y, group=g)
    with pytest.raises(ValueError, match=r"choose from \['l2', 'rmse', 'mae'\] or pass a function$"):
        RGBMRegressor(eval_metric="ndcg").fit(X, y)
    with pytest.raises(TypeError):
        est.fit(X, y, group=g, sample_weight=np.ones(len(y)))
    assert not hasattr(est, "_booster")


@pytest.mark.parametrize(
    "params, match",
    [
        ({"eval_at": 0}, "'eval_at' parameter of RGBMRanker"),
        ({"eval_at": 2.5}, "'eval_at' parameter of RGBMRanker"),
        ({"lambdarank_truncation_level": 0}, "'lambdarank_truncation_level' parameter"),
        ({"lambdarank_truncation_level": "all"}, "'lambdarank_truncation_level' parameter"),
    ],
)
def test_bad_ranking_parameters_are_refused(params, match):
    X, y, g = queries(10, 10)
    with pytest.raises(ValueError, match=match):
        RGBMRanker(**params).fit(X, y, group=g)


def test_hostile_groups_are_refused():
    X, y, g = queries(10, 11)
    for group in ([2**70], np.array([len(y)], dtype=np.uint64) * 3, [[len(y)]], "10"):
        with pytest.raises(ValueError):
            RGBMRanker(**SMALL).fit(X, y, group=group)
    qid = np.repeat(np.arange(len(g)), g).astype(float)
    qid[0] = np.nan
    with pytest.raises(ValueError):
        RGBMRanker(**SMALL).fit(X, y, qid=qid)


def test_tree_options_carry_over_to_ranking():
    # SGLB, subsampling, RGBM selection and a monotone constraint on the
    # feature the grades rise with: the scores never fall as it grows.
    X, y, g = queries(150, 12)
    est = RGBMRanker(
        **SMALL,
        langevin=True,
        temperature=1e3,
        subsample=0.7,
        selection="groups",
        selection_size=3,
        monotone_constraints=[1] + [0] * (X.shape[1] - 1),
    ).fit(X, y, group=g)
    grid = np.repeat(X[:20], 41, axis=0)
    grid[:, 0] = np.tile(np.linspace(-3, 3, 41), 20)
    scores = est.predict(grid).reshape(20, 41)
    assert (np.diff(scores, axis=1) >= 0).all()
    assert sklearn_ndcg(y, est.predict(X), g, 10) > sklearn_ndcg(y, np.zeros(len(y)), g, 10)


def test_continued_training_equals_one_long_fit():
    X, y, g = queries(80, 13)
    long = RGBMRanker(**{**SMALL, "n_estimators": 30}).fit(X, y, group=g)
    first = RGBMRanker(**{**SMALL, "n_estimators": 20}).fit(X, y, group=g)
    more = RGBMRanker(**{**SMALL, "n_estimators": 10}).fit(X, y, group=g, init_model=first)
    assert more.n_estimators_ == 30
    assert np.allclose(more.predict(X), long.predict(X), rtol=0, atol=1e-10)
    warm = RGBMRanker(**{**SMALL, "n_estimators": 20}, warm_start=True).fit(X, y, group=g)
    warm.set_params(n_estimators=30).fit(X, y, group=g)
    assert np.allclose(warm.predict(X), long.predict(X), rtol=0, atol=1e-10)
