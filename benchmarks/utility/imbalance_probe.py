"""Probe (issue 25, item 4): COMPAS and w8a at epsilon 1, defaults, one seed.

Prints the predicted positive rate, accuracy and balanced accuracy with the
private row scale (``feature_scale="auto"``) and without (``None``).
``class_weight`` is not built yet, so this only checks for constant
predictors::

    PYTHONPATH=. nice -n 10 python benchmarks/utility/imbalance_probe.py
"""

import warnings

from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split

from dpestim import LinearSVC, LogisticRegression
from dpestim.datasets import load_compas, load_w8a


def main():
    warnings.simplefilter("ignore")
    for name, load in (("compas", load_compas), ("w8a", load_w8a)):
        b = load()
        if "data_test" in b:
            X, y, Xt, yt = b.data, b.target, b.data_test, b.target_test
        else:
            X, Xt, y, yt = train_test_split(
                b.data, b.target, test_size=0.25, random_state=0
            )
        for Est in (LogisticRegression, LinearSVC):
            for mode in ("auto", None):
                m = Est(
                    epsilon=1.0, classes=[0, 1], feature_scale=mode, random_state=0
                ).fit(X, y)
                p = m.predict(Xt)
                print(
                    f"{name} {Est.__name__} feature_scale={mode}: positive rate "
                    f"{p.mean():.3f} (true {yt.mean():.3f}), accuracy "
                    f"{(p == yt).mean():.3f}, balanced "
                    f"{balanced_accuracy_score(yt, p):.3f}, s={m.feature_scale_:.3g}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
