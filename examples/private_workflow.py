"""One privacy budget from a raw CSV to a released model (Adult)
=============================================================

Everything that looks at the training data is charged to one
``PrivacyBudget(epsilon=1, delta=1e-5)``:

1. preprocessing: a private ``StandardScaler`` on the numeric columns (their
   bounds are public: census codebook ranges), one-hot encoding with the
   public category lists of ``adult.names`` (free: learns nothing), and
   ``RowNormClipper`` (free);
2. model selection: ``PrivateSearchCV`` over the default space, with
   ``epsilon=None`` so that it spends exactly what the budget has left;
3. the released model is the selected candidate (no extra refit).

At the end the budget's ledger and ``workflow_guarantee`` of the released
pipeline both report the composed guarantee, computed by dp-accounting on the
composition of every step's ``DpEvent``.

Run: ``python examples/private_workflow.py`` (needs the shared Adult files,
see ``dpestim.datasets.get_data_home``).
"""

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from dpestim import LogisticRegression
from dpestim.datasets import ADULT_CATEGORIES, ADULT_COLUMNS, get_data_home
from dpestim.model_selection import PrivacyBudget, PrivateSearchCV, workflow_guarantee
from dpestim.preprocessing import RowNormClipper, StandardScaler

# -- 1. the raw CSV ------------------------------------------------------------
folder = get_data_home() / "adult"
read = dict(names=list(ADULT_COLUMNS), skipinitialspace=True, comment="|")
train = pd.read_csv(folder / "adult.data", **read)
test = pd.read_csv(folder / "adult.test", **read)
y = (train["income"].str.rstrip(".") == ">50K").to_numpy(int)
y_test = (test["income"].str.rstrip(".") == ">50K").to_numpy(int)

# Public schema: numeric ranges from the census codebook (capital amounts on a
# log scale, top-coded at 99999), category lists from adult.names.
numeric = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
lower = [17, 1, 0, 0, 1]
upper = [90, 16, np.log1p(99999), np.log1p(99999), 99]


def _log_capital(X):
    X = np.asarray(X, dtype=float)
    return np.column_stack([X[:, :2], np.log1p(X[:, 2:4]), X[:, 4:]])


log_capital = FunctionTransformer(_log_capital)
categorical = list(ADULT_CATEGORIES)
categories = list(ADULT_CATEGORIES.values())

budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
with budget:
    # -- 2. private preprocessing ------------------------------------------
    prep = make_pipeline(
        ColumnTransformer(
            [
                (
                    "num",
                    make_pipeline(
                        log_capital,
                        StandardScaler(
                            bounds=(lower, upper), epsilon=0.1, random_state=0
                        ),
                    ),
                    numeric,
                ),
                (
                    "cat",
                    OneHotEncoder(categories=categories, handle_unknown="ignore"),
                    categorical,
                ),
            ],
            sparse_threshold=0,
        ),
        RowNormClipper(max_norm=4.0),
    )
    X = prep.fit_transform(train, y)
    print(f"after preprocessing: {budget.spent()[0]:.3f} of epsilon spent")

    # -- 3. private model selection with what is left -------------------------
    search = PrivateSearchCV(
        LogisticRegression(classes=[0, 1]),
        epsilon=None,
        budget=budget,
        random_state=0,
    ).fit(X, y)

# -- 4. the released model and its guarantee -------------------------------------
model = make_pipeline(prep, search)
print(f"selected: {search.best_params_}")
print(f"test accuracy: {model.score(test, y_test):.4f}")
print(budget.report())
print(workflow_guarantee(model, delta=1e-5))
