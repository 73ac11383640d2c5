"""Choosing and searching solvers, and what a search costs in privacy
==================================================================

``solver=`` takes a registry name or a solver object. This example compares
``dp-sgd`` and ``dp-gd`` on a multiclass problem (scikit-learn's digits, pixels
scaled by their public maximum 16), then runs a small grid search.

Every fit in a grid search is a separate release computed from the same data:
the privacy cost of the whole search is the composition of all of them (here 9
fits: 4 candidates x 2 folds, plus the refit). The example prints that bound so
the cost of tuning is visible.

Run: ``python examples/choosing_a_solver.py``
"""

from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, train_test_split

from dpestim import LogisticRegression

X, y = load_digits(return_X_y=True)
X = X / 16.0
X, X_test, y, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
classes = list(range(10))

for solver, schedule in [
    ("dp-sgd", dict(max_iter=20, batch_size=64, learning_rate=0.5)),
    ("dp-gd", dict(max_iter=100, learning_rate=2.0)),
]:
    clf = LogisticRegression(
        epsilon=2.0, classes=classes, solver=solver, random_state=0, **schedule
    ).fit(X, y)
    print(
        f"{solver:7s} epsilon_={clf.epsilon_:.3f} steps={clf.n_iter_:5d} "
        f"noise_multiplier={clf.noise_multiplier_:.3f} "
        f"test accuracy={clf.score(X_test, y_test):.3f}"
    )

grid = GridSearchCV(
    LogisticRegression(
        epsilon=0.5, classes=classes, random_state=0, max_iter=20, batch_size=64
    ),
    {"learning_rate": [0.2, 1.0], "solver": ["dp-sgd", "dp-gd"]},
    cv=2,
).fit(X, y)
n_fits = 4 * 2 + 1
print(f"\nbest {grid.best_params_} test accuracy={grid.score(X_test, y_test):.3f}")
print(
    f"the refit spent epsilon={grid.best_estimator_.epsilon_:.3f}; the search ran "
    f"{n_fits} fits on the same records, so by basic composition it spent up to "
    f"{n_fits} x 0.5 = {n_fits * 0.5:g} (and {n_fits} x delta). Budget for "
    "tuning, or tune on public data."
)
