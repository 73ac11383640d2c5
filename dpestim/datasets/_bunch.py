"""scikit-learn style returns of the loaders: ``return_X_y`` and ``as_frame``."""

import numpy as np
import scipy.sparse as sp

__all__ = ["finish"]

_DATA = ("data", "data_train", "data_test")
_TARGETS = ("target", "target_train", "target_test")


def _columns(bunch, n_features):
    names = bunch.get("feature_names")
    if names is not None and len(names) == n_features:
        return [str(name) for name in names]
    return [f"x{j}" for j in range(n_features)]


def _frame(X, columns):
    import pandas as pd

    if sp.issparse(X):
        return pd.DataFrame.sparse.from_spmatrix(X, columns=columns)
    return pd.DataFrame(np.asarray(X), columns=columns)


def finish(bunch, return_X_y, as_frame):
    """Apply a loader's ``return_X_y`` / ``as_frame`` to its Bunch.

    ``as_frame``: every ``data*`` entry becomes a pandas DataFrame (columns
    named by ``feature_names``, else ``x0, x1, ...``) and every ``target*``
    entry a Series named ``target``; ``frame`` holds ``data`` and ``target``
    side by side. ``return_X_y``: ``(data, target)``.
    """
    if as_frame:
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError("as_frame=True needs pandas: pip install pandas") from exc
        columns = _columns(bunch, bunch["data"].shape[1])
        for key in _DATA:
            if key in bunch:
                bunch[key] = _frame(bunch[key], columns)
        for key in _TARGETS:
            if key in bunch:
                bunch[key] = pd.Series(np.asarray(bunch[key]), name="target")
        bunch["frame"] = pd.concat([bunch["data"], bunch["target"]], axis=1)
    if return_X_y:
        return bunch["data"], bunch["target"]
    return bunch
