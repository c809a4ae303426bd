"""SGLB (Langevin boosting): knowledge uncertainty is larger where data is scarce.

SGLB adds Gaussian noise to tree construction and shrinks the model, so the
boosting chain samples from a posterior. Truncating the chain at several
points gives a "virtual ensemble"; the spread of its members (knowledge
uncertainty) should be larger where the training data says less. Trees
extrapolate their edge leaves as constants, so the contrast shows between a
densely and a sparsely sampled part of the input range rather than outside it.
"""

import numpy as np

from rgbm_rs import RGBMRegressor

rng = np.random.default_rng(0)
# 950 training inputs in [-3, 0], only 50 in [0, 3]; the target is a noisy sine.
x_train = np.concatenate([rng.uniform(-3.0, 0.0, size=950), rng.uniform(0.0, 3.0, size=50)])
y_train = np.sin(x_train) + rng.normal(scale=0.1, size=x_train.size)

reg = RGBMRegressor(
    n_estimators=1000,
    learning_rate=0.1,
    max_depth=3,
    langevin=True,  # SGLB: noisy splits and leaves, model shrinkage (shrink_rate 1e-3 by default)
    temperature=1e3,  # inverse temperature: lower = more noise, more diverse members
    random_state=0,
)
reg.fit(x_train.reshape(-1, 1), y_train)

x_dense = np.linspace(-2.5, -0.5, 200)
x_sparse = np.linspace(0.5, 2.5, 200)

u_dense = reg.predict_uncertainty(x_dense.reshape(-1, 1), n_members=10)
u_sparse = reg.predict_uncertainty(x_sparse.reshape(-1, 1), n_members=10)
# "mean": mean member prediction; "knowledge": variance of the member predictions.
k_dense, k_sparse = u_dense["knowledge"].mean(), u_sparse["knowledge"].mean()
rmse = np.sqrt(np.mean((u_dense["mean"] - np.sin(x_dense)) ** 2))
print(f"RMSE of the ensemble mean where data is dense: {rmse:.4f}")
print(f"mean knowledge uncertainty, dense part  [-3, 0]: {k_dense:.3e}")
print(f"mean knowledge uncertainty, sparse part [0, 3]:  {k_sparse:.3e}  ({k_sparse / k_dense:.1f}x)")
assert k_sparse > k_dense, "expected more knowledge uncertainty where training data is sparse"
