"""Data on any scale: private scales in fit, one-shot solvers and ``solver="auto"``
================================================================================

The ``"auto"`` rules of every estimator assume rows of norm of order one and
targets of order one. Users' data are rarely so: features in raw units, a
regression target in dollars. Each private fit therefore measures the few
scales its rules need, privately, with a small stated share of its budget
(``scale_share=0.05``): the median row norm (``feature_scale="auto"``) and,
for :class:`~dpestim.Ridge`, the target's range (``y_bound="auto"``). Both
estimates are part of ``dp_event_`` and of the requested epsilon, and the
privacy report lists them.

This example fits the same synthetic problem with its features multiplied by
1, 100 and 0.01 (``alpha`` scaled with the features, so the objective is the
same), then a regression whose target is in "dollars", and finally the
one-shot ``"adassp"`` solver and ``solver="auto"`` on a small regression with
a public target bound, imbalanced classes, and columns on very different
scales (one row scale cannot fix those: standardise the columns privately),
data beyond the private scales' grid (the fit warns), sparse rows that are
mostly empty, a skewed regression target (the final private intercept), a
column with a large offset (private centring in fit, or in a pipeline), and
one column left in its own units among scaled ones (the private column
balance in fit, ``feature_balance``), and public per-column constants given
as ``feature_centring`` / ``feature_balance`` arrays.
Run: ``python examples/data_on_any_scale.py``.
"""

import numpy as np

from dpestim import LogisticRegression, Ridge

rng = np.random.default_rng(0)
n, d = 20_000, 5
X = rng.normal(size=(n, d))
y = (X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0).astype(int)

# -- 1. the same classifier at any feature scale --------------------------------
for k in (1.0, 100.0, 0.01):
    clf = LogisticRegression(
        epsilon=1.0, classes=[0, 1], alpha=1e-4 * k**2, random_state=0
    ).fit(k * X, y)
    print(
        f"features x {k:g}: accuracy {clf.score(k * X, y):.3f}, "
        f"private row scale {clf.feature_scale_:.4g}, epsilon_ {clf.epsilon_:.3f}"
    )

# -- 2. a regression target in dollars, no bound given --------------------------
price = (
    2e5 + 5e4 * (X @ np.array([1.0, -0.5, 0.3, 0.0, 0.2])) + 1e4 * rng.normal(size=n)
)
reg = Ridge(epsilon=1.0, random_state=0).fit(X, price)
print(f"target in dollars: R^2 {reg.score(X, price):.3f}")
print(reg.privacy_report())

# -- 3. small data with a public target bound: the bound's unit does not matter --
# A public y_bound is scaled to the range the rules assume, as the private one
# is: the same 500 rows with the target in $100k or in dollars (bound moved the
# same way) give the same fit.
Xs, ys = X[:500] / 3, price[:500] / 1e5  # a public rescaling (units of $100k)
for solver in ("dp-sgd", "adp-sgd", "adassp", "auto"):
    m = Ridge(epsilon=2.0, solver=solver, y_bound=(0.0, 5.0), random_state=0)
    m.fit(Xs, ys)
    print(f"500 rows, solver={solver!r}: R^2 {m.score(Xs, ys):.3f}")
# "auto" reads public quantities only: a private Ridge with at most 3,000 rows
# and epsilon >= 1 gets adp-sgd (it led dp-sgd on the project's small
# regressions, benchmarks/results/public_target_bound_family.md).
print("'auto' chose:", m.hyperparameters_["solver"])
dollars = Ridge(epsilon=2.0, y_bound=(0.0, 5e5), random_state=0).fit(Xs, 1e5 * ys)
print(f"the same in dollars: R^2 {dollars.score(Xs, 1e5 * ys):.3f}")
# Without a public bound at this n x epsilon the private range needs more than
# the default 5% of epsilon: the plan raises its share (up to half the budget)
# and, where four refinements of the centre do not fit, runs fewer (down to
# one). The report states the share; nothing of it depends on the data.
few = Ridge(epsilon=1.0, random_state=0).fit(X[:400], price[:400])
print("400 rows, no bound:", few.hyperparameters_["y_bound"])
print(f"R^2 {few.score(X[:400], price[:400]):.3f}")

# -- 4. imbalanced classes, and the private utility check ------------------------
# With 97% of the rows in one class, accuracy can exceed the majority rate by at
# most 3 points. After the fit, a private check (utility_check="auto": one
# Laplace count, at most 5% of epsilon, counted in the guarantee) releases the
# model's training accuracy minus the majority-class rate as lift_; a
# UtilityWarning fires when it does not show the model clearly (1 point plus
# a quarter of the release's noise scale) above the majority rate, giving the
# plan's public diagnosis (here: the released class proportions) as the likely
# reason.
# class_weight="balanced" weights the classes from the private class counts.
rare = (X[:, 0] > 1.9).astype(int)  # about 3% positives
clf = LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
clf.fit(X, rare)
print("released class proportions:", np.round(clf.class_prior_, 3))
print(f"private lift over the majority class: {clf.lift_:+.3f}")
print([w for w in clf.privacy_report().warnings if "private check" in w])
bal = LogisticRegression(
    epsilon=1.0, classes=[0, 1], class_weight="balanced", random_state=0
).fit(X, rare)  # its check measures balanced accuracy minus 1/2
print(f"class_weight='balanced': private balanced-accuracy lift {bal.lift_:+.3f}")
noise = (np.random.default_rng(1).random(X.shape[0]) < 0.2).astype(int)
useless = LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
useless.fit(X, noise)  # labels independent of X: no better than a constant
print(f"labels unrelated to X: lift {useless.lift_:+.3f}")

# -- 5. columns on very different scales: standardise them privately -----------
# The private row scale is one number for the whole row. When one column is
# in thousands (a count, a price) beside features of order one, it dominates
# every row's norm and the others are lost under the noise: the fit learns
# next to nothing. Standardise the columns first with the private
# StandardScaler (public per-column bounds; its own epsilon, composed with the
# model's), in a pipeline.
from sklearn.pipeline import make_pipeline  # noqa: E402

from dpestim.preprocessing import StandardScaler  # noqa: E402

X_mixed = X.copy()
X_mixed[:, 3] = 3000.0 + 1000.0 * X[:, 3]  # an uninformative count
raw = Ridge(epsilon=1.0, random_state=0).fit(X_mixed, price)
print(f"one column in thousands: R^2 {raw.score(X_mixed, price):.3f}")
low = np.array([-5.0, -5.0, -5.0, -2000.0, -5.0])  # public bounds per column
high = np.array([5.0, 5.0, 5.0, 8000.0, 5.0])
pipe = make_pipeline(
    StandardScaler(bounds=(low, high), epsilon=0.1, random_state=0),
    Ridge(epsilon=0.9, random_state=0),
).fit(X_mixed, price)
r2 = pipe.score(X_mixed, price)
print(f"private StandardScaler first (total epsilon 1): R^2 {r2:.3f}")

# -- 6. scales beyond the grid: the fit says so -----------------------------------
# The private scales are drawn on a public grid from about 1e-12 to 1e12. Data
# beyond it (rows of norm 1e13, a target in units of 1e-15) are estimated at
# the grid's edge and the fit is poor; the fit then warns (a UtilityWarning,
# read off the released estimate alone) and asks for a public rescaling.
import warnings  # noqa: E402

from dpestim import UtilityWarning  # noqa: E402

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    far = Ridge(epsilon=1.0, random_state=0).fit(1e13 * X, price)
print(f"rows of norm about 2e13: R^2 {far.score(1e13 * X, price):.3f}")
print([str(w.message)[:72] for w in caught if issubclass(w.category, UtilityWarning)])
near = Ridge(epsilon=1.0, random_state=0).fit(1e13 * X / 1e12, price)  # public 1e12
print(f"the same rows divided by 1e12: R^2 {near.score(1e13 * X / 1e12, price):.3f}")

# -- 7. sparse rows, most of them empty ---------------------------------------------
# An empty row (a document with no word of the vocabulary, a user with no event)
# says nothing of the rows' scale, so the private median is taken over the
# nonzero rows only (the same sensitivity: one row adds or removes at most one
# value). With 70% of the rows empty the median of all the rows would be 0.
import scipy.sparse as sp  # noqa: E402

empty = rng.random(n) < 0.7
X_sparse = sp.csr_matrix(np.where(empty[:, None], 0.0, 30.0 * X))
sparse_clf = LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
sparse_clf.fit(X_sparse, y)
nonzero = np.median(np.linalg.norm(30.0 * X[~empty], axis=1))
print(
    f"70% of rows empty: accuracy {sparse_clf.score(X_sparse, y):.3f}, row scale "
    f"{sparse_clf.feature_scale_:.3g} (nonzero rows' median norm / 2.95: "
    f"{nonzero / 2.95:.3g})"
)
from sklearn.linear_model import LogisticRegression as SkLogisticRegression  # noqa: E402

reference = SkLogisticRegression().fit(X_sparse, y).score(X_sparse, y)
print(f"scikit-learn, non-private, same rows: accuracy {reference:.3f}")

# -- 8. a skewed target: the final private intercept ----------------------------------
# Clipped squared-loss steps move the intercept by the sign of the residuals,
# so the run alone settles near the median residual; on a skewed target (prices,
# amounts, counts) the predictions are then biased towards the median. The
# dp-sgd family therefore ends a Ridge fit with one Gaussian query, the noisy
# mean clipped residual (about 2% of the budget, counted in epsilon_), where
# its error is small; final_intercept=False on the solver turns it off.
from dpestim.solvers import DPSGD  # noqa: E402

skewed = np.exp(0.5 * X[:, 0] + 0.8 * rng.normal(size=n))  # mean above median
for solver in (DPSGD(), DPSGD(final_intercept=False)):
    sk = Ridge(epsilon=1.0, solver=solver, random_state=0).fit(X, skewed)
    print(
        f"skewed target, {solver!r}: R^2 {sk.score(X, skewed):.3f}, mean "
        f"prediction {sk.predict(X).mean():.3f} (target mean {skewed.mean():.3f}, "
        f"median {np.median(skewed):.3f})"
    )

# Under pure DP (delta=0, where "auto" picks dp-nag) the accelerated family ends
# the fit with one Laplace query instead, at 2% of epsilon, where n x epsilon is
# large enough for its error to be small (about 7,000 for one target).
from dpestim.solvers import DPNAG  # noqa: E402

for solver in (DPNAG(), DPNAG(final_intercept=False)):
    sk = Ridge(epsilon=2.0, delta=0.0, solver=solver, random_state=0).fit(X, skewed)
    print(
        f"pure DP, {solver!r}: R^2 {sk.score(X, skewed):.3f}, mean prediction "
        f"{sk.predict(X).mean():.3f}, Laplace query: "
        f"{'Laplace query' in str(sk.privacy_report())}"
    )

# -- 9. a column with a large offset: private centring ----------------------------
# One row scale cannot help when a column's offset dominates every row (a year,
# a constant): the informative columns are then tiny in the rules' units. Each
# estimator can centre the columns privately in fit (feature_centring: a private
# median L1 row norm R at 1% of epsilon, then a Laplace mean of the rows clipped
# to R at 2%; a column moves only where its mean clearly exceeds the noise).
# Every estimator does so by default ("auto"; None turns it off). Without
# an estimator, dpestim.preprocessing.PrivateCentrer does the same (Gaussian
# noise, its own budget) as a pipeline step, and workflow_guarantee composes it
# (after such a step, pass feature_centring=None to the estimator: centring twice
# spends budget for nothing).
from sklearn.pipeline import make_pipeline  # noqa: E402

from dpestim.model_selection import workflow_guarantee  # noqa: E402
from dpestim.preprocessing import PrivateCentrer  # noqa: E402

year = rng.integers(1990, 2021, n).astype(float)
X_year = np.c_[X, year]
signal = X @ np.array([1.0, -1.0, 0.5, 0.0, 0.0]) + 0.1 * (year - 2005)
y_year = (signal > 0).astype(int)
for centring in (None, "auto"):
    reg = Ridge(epsilon=1.0, random_state=0, feature_centring=centring)
    reg.fit(X_year, signal)
    print(
        f"Ridge, a year column, feature_centring={centring!r}: R^2 "
        f"{reg.score(X_year, signal):.3f}"
    )
print(
    f"its private centre of the year column: {reg.feature_centre_[-1]:.1f} "
    f"(exact {year.mean():.1f}); {reg.hyperparameters_['feature_centring']}"
)
models = {
    "feature_centring=None": LogisticRegression(
        epsilon=1.0, classes=[0, 1], random_state=0, feature_centring=None
    ),
    "the default (centred)": LogisticRegression(
        epsilon=1.0, classes=[0, 1], random_state=0
    ),
    "PrivateCentrer first": make_pipeline(
        PrivateCentrer(epsilon=0.05, random_state=0),
        LogisticRegression(
            epsilon=0.95, classes=[0, 1], random_state=0, feature_centring=None
        ),
    ),
}
for name, model in models.items():
    model.fit(X_year, y_year)
    print(f"a year column, {name}: accuracy {model.score(X_year, y_year):.3f}")
pipeline = models["PrivateCentrer first"]
print(
    "the pipeline's epsilon, both steps: "
    f"{workflow_guarantee(pipeline, delta=1e-5).epsilon:.3f}"
)

# -- 10. one column in its own units among scaled ones: private column balance ---
# Centring removes offsets, not spreads. A column left in its own units beside
# scaled ones (a sampling weight of 1e5, a count in thousands) still sets the row
# scale alone, and the other columns barely move the model, at any epsilon. Right
# after the centring, each estimator measures the columns' mean squares privately
# (a Laplace release at 1% of epsilon, on the rows clipped to the centring's
# radius) and divides a column that carries more than half of the rows' squared
# norms by its root mean square (feature_balance="auto", the default; None turns
# it off). feature_balance_ holds the scales; coef_ is in the columns' own units.
weight = 2e5 + 1e5 * rng.standard_normal(n)  # in its own units, no signal
X_weight = np.c_[X, weight]
y_weight = (X @ np.array([1.0, -1.0, 0.5, 0.0, 0.0]) > 0).astype(int)
for balance in (None, "auto"):
    clf = LogisticRegression(
        epsilon=1.0, classes=[0, 1], random_state=0, feature_balance=balance
    ).fit(X_weight, y_weight)
    print(
        f"a raw weight column, feature_balance={balance!r}: accuracy "
        f"{clf.score(X_weight, y_weight):.3f}"
    )
print(
    f"the weight column's private scale: {clf.feature_balance_[-1]:.3g} "
    f"(its standard deviation: {weight.std():.3g}); "
    f"{clf.hyperparameters_['feature_balance']}"
)

# Several columns in their own units (a raw CSV: a weight, a count, an age) hide
# the smaller ones under the first release's noise, which the largest sets. Two
# later rounds measure the balanced rows again (1% more of epsilon each where n x
# epsilon is 10,100 or more, here 40,000; more per round below, within 15% of
# epsilon in all; planned from n and epsilon alone), so the count column is found
# too (uncentred: the first centring's noise,
# set by the weight, hides its offset; it is scaled by offset and spread
# together).
big = np.random.default_rng(1)
Z = big.standard_normal((40_000, 5))
raw = np.c_[
    2e5 + 1e5 * big.standard_normal(40_000), 300 + 50 * big.standard_normal(40_000)
]
X_raw, y_raw = np.c_[Z, raw], (Z @ np.array([1.0, -1.0, 0.5, 0.0, 0.0]) > 0).astype(int)
clf = LogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0).fit(X_raw, y_raw)
print(
    f"two raw columns: accuracy {clf.score(X_raw, y_raw):.3f}, their private "
    f"scales {clf.feature_balance_[-2]:.3g} and {clf.feature_balance_[-1]:.3g}; "
    f"{clf.hyperparameters_['feature_balance']}"
)

# The usual scikit-learn pipeline returns a sparse matrix: one-hot columns beside
# raw numeric ones passed through (ColumnTransformer's sparse_threshold=0.3).
# Sparse rows are not centred (it would fill them) but are balanced as given: a
# private median row norm of their own (1% more), then the same rounds; dividing
# columns keeps the matrix sparse.
from sklearn.compose import ColumnTransformer  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import OneHotEncoder  # noqa: E402

codes = big.integers(0, 8, size=(40_000, 4))
age = 40 + 13 * big.standard_normal(40_000)
table = np.c_[codes, age, 2e5 + 1e5 * big.standard_normal(40_000)]
y_table = ((codes[:, 0] < 3) + (age - 40) / 13 > 0.5).astype(int)
onehot = ColumnTransformer(
    [("categories", OneHotEncoder(), [0, 1, 2, 3])], remainder="passthrough"
)
for balance in (None, "auto"):
    pipe = make_pipeline(
        onehot,
        LogisticRegression(
            epsilon=1.0, classes=[0, 1], random_state=0, feature_balance=balance
        ),
    ).fit(table, y_table)
    print(
        f"sparse one-hot + raw columns, feature_balance={balance!r}: accuracy "
        f"{pipe.score(table, y_table):.3f}; "
        f"{pipe[-1].hyperparameters_.get('feature_balance', 'off')}"
    )

# The minimax and fairness estimators clip every coordinate at ``feature_bound``
# after one private row unit, so a column in its own units used to set that unit
# alone (Adult's raw CSV: the majority rate). They balance their rows as given
# (``feature_balance="auto"``, the same rule and rounds, not centred;
# ``feature_centring=True`` centres first), and prediction clips each column in
# its own units.
from dpestim import FairLogisticRegression  # noqa: E402

group = big.integers(0, 2, 40_000)
for balance in (None, "auto"):
    fair = FairLogisticRegression(
        epsilon=1.0,
        classes=[0, 1],
        groups=[0, 1],
        random_state=0,
        feature_balance=balance,
    ).fit(X_raw, y_raw, sensitive_features=group)
    print(
        f"FairLogisticRegression on two raw columns, feature_balance={balance!r}: "
        f"accuracy {fair.score(X_raw, y_raw):.3f}"
    )

# -- 11. public per-column constants: feature_centring / feature_balance arrays --
# Where the columns' centres and spreads are public (a codebook, a documented
# range), give them: the fit runs on (x - c) / sigma, spends nothing on them,
# and releases the model in X's units. (PrivateSearchCV gives its candidates
# its own private estimates this way.)
centre = np.r_[np.zeros(X_raw.shape[1] - 2), 2e5, 300.0]  # the two raw columns'
scales = np.r_[np.ones(X_raw.shape[1] - 2), 1e5, 50.0]  # documented centres, spreads
public = LogisticRegression(
    epsilon=1.0,
    classes=[0, 1],
    random_state=0,
    feature_centring=centre,
    feature_balance=scales,
).fit(X_raw, y_raw)
print(
    f"public centre and scales: accuracy {public.score(X_raw, y_raw):.3f}; "
    f"{public.hyperparameters_['feature_centring']}; "
    f"{public.hyperparameters_['feature_balance']}"
)
