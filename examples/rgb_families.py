"""RGB: regularized boosting over tree families (Cortes, Mohri & Storcheus 2019).

Each round draws rgb_candidates families (n internal nodes, leaf L2 radius
lambda), grows the best tree of each, and keeps the candidate with the lowest
training loss + rgb_beta * complexity. rgb_family_counts_ shows which
families were chosen how often.
"""

from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from rgbm_rs import RGBMClassifier

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)

clf = RGBMClassifier(
    booster="rgb",
    n_estimators=100,
    max_depth=None,  # let the families' node counts bound the trees
    rgb_candidates=4,  # families drawn per round
    rgb_beta=0.1,  # weight of the complexity penalty
    rgb_nodes=[2, 4, 8, 16],  # a small family grid (default: the paper's 2..256, 0.001..4)
    rgb_lambdas=[0.01, 0.1, 1.0],
    random_state=0,
)
clf.fit(X_train, y_train)

print(f"test accuracy: {clf.score(X_test, y_test):.4f}")
print("chosen families (internal nodes, lambda): rounds")
for (nodes, lam), count in clf.rgb_family_counts_.items():
    print(f"  ({nodes:3d}, {lam:g}): {count}")
