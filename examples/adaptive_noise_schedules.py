"""Adaptive private SGD: noise shaped to the step size
===================================================

``solver="adp-sgd"`` (Wu et al., 2021) keeps DP-SGD's privacy budget but adds
less noise where the steps are large and more where they are small
(``sigma_t`` proportional to ``eta_t ** -1/2``). ``solver="adp-adagrad"``
chooses AdaGrad-norm step sizes from the *released* noisy gradients. Both
expose the per-step noise multipliers and step sizes as fitted attributes;
this example fits them next to DP-SGD with the same decaying steps and plots
the schedules (written to ``adaptive_noise_schedules.png``).
"""

import math

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from dpestim import LogisticRegression
from dpestim.solvers import ADPSGD, ADPAdaGrad

X, y = make_classification(
    n_samples=6000, n_features=50, n_informative=20, random_state=0
)
X = X / math.sqrt(X.shape[1])  # public rescaling: rows of norm about 1
X, X_test, y, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

common = dict(
    epsilon=1.0,
    delta=1e-5,
    clip_norm=1.0,
    batch_size=256,
    max_iter=10,
    learning_rate=1.0,
    classes=[0, 1],
    random_state=0,
)
models = {
    "adp-sgd (sigma_t ~ eta_t^-1/2)": ADPSGD("invsqrt", a=20.0, c=1.0),
    "dp-sgd, same steps": ADPSGD("invsqrt", a=20.0, c=1.0, noise_shape="constant"),
    "adp-adagrad": ADPAdaGrad(alpha_growth=0.02),
}
fitted = {}
for label, solver in models.items():
    clf = LogisticRegression(solver=solver, **common).fit(X, y)
    fitted[label] = clf
    print(
        f"{label:32s} epsilon_={clf.epsilon_:.4f} "
        f"noise multiplier={clf.noise_multiplier_:.3f} "
        f"test accuracy={clf.score(X_test, y_test):.4f}"
    )

print()
print(fitted["adp-sgd (sigma_t ~ eta_t^-1/2)"].privacy_report())

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # pragma: no cover
    plt = None
if plt is not None:
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    for label, clf in fitted.items():
        steps = np.arange(clf.n_iter_)
        ax1.plot(steps, clf.noise_multipliers_, label=label)
        ax2.plot(steps, clf.learning_rates_, label=label)
    ax1.set_xlabel("step t")
    ax1.set_ylabel("noise multiplier at step t")
    ax2.set_xlabel("step t")
    ax2.set_ylabel("step size eta_t")
    ax1.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig("adaptive_noise_schedules.png", dpi=110)
    print("schedules plotted to adaptive_noise_schedules.png")
