"""Private logistic regression on Adult, with its privacy report
=============================================================

Fits ``dpestim.LogisticRegression`` with DP-SGD at epsilon = 1 on the LIBSVM
version of Adult (binary features, so no data-dependent scaling is needed), and
compares it with the non-private scikit-learn model of the same objective
(``C = 1 / (alpha n)``). Falls back to scikit-learn's breast-cancer data, scaled
by a public constant, when the shared datasets are absent.

Run: ``python examples/private_logistic_regression.py``
"""

import numpy as np
import sklearn.linear_model as sk
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from dpestim import LogisticRegression
from dpestim.datasets import dataset_available, load_adult_a9a

if dataset_available("adult_a9a"):
    d = load_adult_a9a()
    X, y, X_test, y_test = d.data, d.target, d.data_test, d.target_test
else:
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = X / 4000.0  # a public bound on the largest feature (area), not a statistic
    X, X_test, y, y_test = train_test_split(X, y, random_state=0)

alpha = 1e-4
clf = LogisticRegression(
    epsilon=1.0,
    delta=1e-5,
    classes=[0, 1],  # public label set: no PrivacyLeakWarning
    clip_norm=1.0,
    alpha=alpha,
    max_iter=10,
    batch_size=256,
    learning_rate=0.5,
    random_state=0,  # reproducible for the example; use None for a real release
).fit(X, y)
print(clf.privacy_report())
print(f"\nprivate test accuracy   : {clf.score(X_test, y_test):.4f}")

ref = sk.LogisticRegression(C=1 / (alpha * X.shape[0]), max_iter=1000).fit(X, y)
print(f"non-private (sklearn)   : {ref.score(X_test, y_test):.4f}")

# The same run, stated the other way round: fix the noise, read epsilon. The
# fit above spent a small share of epsilon on a private histogram of the class
# counts (class_prior="auto": its intercept starts at their log-odds); the
# fixed-noise fit reuses the released proportions ``class_prior_`` as a public
# prior (post-processing, no cost), so its epsilon_ is the solver's part alone.
fixed = clone(clf).set_params(
    epsilon=None, noise_multiplier=clf.noise_multiplier_, class_prior=clf.class_prior_
)
fixed.fit(X, y)
print(
    f"noise_multiplier={fixed.noise_multiplier_:.4f} -> epsilon_={fixed.epsilon_:.4f}"
    f" (of the {clf.epsilon_:.4f} above; the rest bought the class counts)"
)
assert fixed.epsilon_ <= clf.epsilon_
np.testing.assert_allclose(fixed.intercept_, clf.intercept_, rtol=0.5, atol=0.5)

# %%
# Public bounds on the released model
# -----------------------------------
# ``clip_norm="auto"`` resolved to 1.0 for this private fit (``inf`` only at
# ``epsilon=inf``), and ``coef_bound="auto"`` projected the released coefficients
# on a ball of radius ``sqrt(2 loss(0) / alpha)`` that contains the optimum.
# Both are public: they depend on the loss, ``alpha`` and the budget, never
# on the data, and the projection is post-processing (no privacy cost).
print(f"clip_norm_ = {clf.clip_norm_:g}, coef_bound_ = {clf.coef_bound_:.1f}")
print(f"||coef_|| = {np.linalg.norm(clf.coef_):.2f} (at most coef_bound_)")
assert np.linalg.norm(clf.coef_) <= clf.coef_bound_ * (1 + 1e-12)

# %%
# What the budget costs
# ---------------------
# The same configuration at several budgets (median of three seeds), beside the
# non-private model: accuracy approaches scikit-learn's as epsilon grows.
epsilons = [0.1, 0.25, 0.5, 1.0, 2.0, 4.0]
params = clf.get_params()
scores = [
    np.median(
        [
            LogisticRegression(**{**params, "epsilon": eps, "random_state": seed})
            .fit(X, y)
            .score(X_test, y_test)
            for seed in range(3)
        ]
    )
    for eps in epsilons
]
for eps, score in zip(epsilons, scores):
    print(f"epsilon={eps:<5g} test accuracy {score:.4f}")

try:
    import matplotlib.pyplot as plt
except ImportError:  # the plot is optional: pip install ".[demo]"
    plt = None
if plt is not None:
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(epsilons, scores, "o-", label="dpestim dp-sgd (delta = 1e-5)")
    ax.axhline(ref.score(X_test, y_test), color="black", ls="-.", label="scikit-learn")
    ax.set_xscale("log")
    ax.set_xticks(epsilons, [f"{e:g}" for e in epsilons])
    ax.minorticks_off()
    ax.set_xlabel("epsilon")
    ax.set_ylabel("test accuracy")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig("private_logistic_regression.png", dpi=110)
