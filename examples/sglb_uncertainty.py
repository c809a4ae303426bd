"""SGLB (Langevin boosting): knowledge uncertainty grows away from the data.

SGLB adds Gaussian noise to tree construction and shrinks the model, so the
boosting chain samples from a posterior. Truncating the chain at several
points gives a "virtual ensemble"; the spread of its members (knowledge
uncertainty) should be larger where there was no training data.
"""

import numpy as np

from rgbm_rs import RGBMRegressor

rng = np.random.default_rng(0)
# Training inputs only in [-3, 3]; the target is a noisy sine.
x_train = rng.uniform(-3.0, 3.0, size=1000)
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

x_in = np.linspace(-2.5, 2.5, 200)  # inside the training range
x_out = np.concatenate([np.linspace(-6.0, -4.0, 100), np.linspace(4.0, 6.0, 100)])  # outside it

u_in = reg.predict_uncertainty(x_in.reshape(-1, 1), n_members=10)
u_out = reg.predict_uncertainty(x_out.reshape(-1, 1), n_members=10)
# "mean": mean member prediction; "knowledge": variance of the member predictions.
k_in, k_out = u_in["knowledge"].mean(), u_out["knowledge"].mean()
rmse_in = np.sqrt(np.mean((u_in["mean"] - np.sin(x_in)) ** 2))
print(f"RMSE of the ensemble mean inside the range: {rmse_in:.4f}")
print(f"mean knowledge uncertainty inside  [-3, 3]: {k_in:.3e}")
print(f"mean knowledge uncertainty outside [-3, 3]: {k_out:.3e}  ({k_out / k_in:.1f}x)")
assert k_out > k_in, "expected more knowledge uncertainty outside the training range"
