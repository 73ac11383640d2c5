"""Private worst-group and fairness-constrained classifiers on Adult
=================================================================

Fits MinimaxLogisticRegression, FairLogisticRegression (demographic parity),
LogisticRegression(solver="dp-sgd") and a private threshold post-processing
of the latter at epsilon = 1 with the sensitive attribute "sex", and prints
test accuracy, worst-group accuracy and the demographic-parity difference.
The group list and the label set are public (passed as parameters); the group
proportions are estimated privately with 10% of the budget.

Run: ``python examples/private_fairness.py`` (needs the shared Adult files,
see ``dpestim.datasets.get_data_home``).
"""

import numpy as np

from dpestim import (
    FairLogisticRegression,
    LogisticRegression,
    MinimaxLogisticRegression,
)
from dpestim.datasets import load_adult
from dpestim.postprocessing import PrivateThresholdOptimizer

ad = load_adult()
a, a_test = ad.sensitive["sex"], ad.sensitive_test["sex"]
groups = ["Female", "Male"]  # public category list
common = dict(epsilon=1.0, delta=1e-5, classes=[0, 1], random_state=0)

models = {
    "MinimaxLogisticRegression": MinimaxLogisticRegression(groups=groups, **common),
    "FairLogisticRegression": FairLogisticRegression(groups=groups, **common),
    "LogisticRegression(dp-sgd)": LogisticRegression(solver="dp-sgd", **common),
}
print(f"{'model':<28}{'eps':>6}{'accuracy':>10}{'worst grp':>11}{'DP diff':>9}")
for name, model in models.items():
    if name.startswith("LogisticRegression"):
        model.fit(ad.data, ad.target)
    else:
        model.fit(ad.data, ad.target, sensitive_features=a)
    pred = model.predict(ad.data_test)
    correct = pred == ad.target_test
    worst = min(correct[a_test == g].mean() for g in groups)
    rates = [pred[a_test == g].mean() for g in groups]
    print(
        f"{name:<28}{model.epsilon_:>6.2f}{correct.mean():>10.4f}{worst:>11.4f}"
        f"{max(rates) - min(rates):>9.4f}"
    )
# post-processing: 0.85 of the budget for dp-sgd, a histogram on top; the
# guarantee of the pair is their composition (epsilon_ below: the histogram's
# 0.23 keeps it within 1; with 0.42 it was 1.19, above the budget of the others)
base = LogisticRegression(solver="dp-sgd", **dict(common, epsilon=0.85, delta=5e-6))
post = PrivateThresholdOptimizer(
    base, epsilon=0.23, delta=5e-6, groups=groups, n_bins=20, random_state=0
).fit(ad.data, ad.target, sensitive_features=a)
pred = post.predict(ad.data_test, sensitive_features=a_test)  # needs the group
correct = pred == ad.target_test
rates = [pred[a_test == g].mean() for g in groups]
worst = min(correct[a_test == g].mean() for g in groups)
print(
    f"{'PostProcessing(dp-sgd)':<28}{post.epsilon_:>6.2f}{correct.mean():>10.4f}"
    f"{worst:>11.4f}{max(rates) - min(rates):>9.4f}"
)
weights = np.round(models["MinimaxLogisticRegression"].group_weights_, 3)
print("released group weights (Female, Male):", weights)
# the private utility check of the minimax and fair classifiers (lift_: training
# accuracy minus the majority rate, a Laplace release inside epsilon; a
# UtilityWarning when it does not show the model a point above that rate)
for name in ("MinimaxLogisticRegression", "FairLogisticRegression"):
    print(f"{name}: lift_ {models[name].lift_:+.3f}")
