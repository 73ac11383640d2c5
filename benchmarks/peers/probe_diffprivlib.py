"""Does diffprivlib work with the installed scikit-learn? Prints the error if not.

Run with the interpreter of a venv holding diffprivlib, e.g.::

    /work/venvs/diffprivlib/bin/python benchmarks/peers/probe_diffprivlib.py
    /work/venvs/sklearn18/bin/python benchmarks/peers/probe_diffprivlib.py

It imports diffprivlib and fits its LogisticRegression on 1,000 seeded rows
of unit norm; README.md records what it printed for each scikit-learn version.
"""

import traceback
import warnings

import numpy as np
import sklearn

print("sklearn", sklearn.__version__)
try:
    import diffprivlib

    print("diffprivlib", diffprivlib.__version__)
    from diffprivlib.models import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = LogisticRegression(epsilon=1.0, data_norm=1.0, random_state=0).fit(X, y)
    print("fit ok, training accuracy", m.score(X, y))
except Exception:
    traceback.print_exc(limit=3)
