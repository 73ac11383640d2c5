"""scikit-learn's parameter names give a TypeError naming the public class
and the dpestim equivalent (issue 24 item 10); cloning and pickling still work."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from dpestim import LinearSVC, LogisticRegression, Ridge

ESTIMATORS = [LogisticRegression, LinearSVC, Ridge]


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_C_points_to_alpha(cls):
    with pytest.raises(TypeError) as info:
        cls(C=1.0)
    message = str(info.value)
    assert message.startswith(f"{cls.__name__}.__init__() got unexpected keyword")
    assert "alpha = 1 / (C * n_samples)" in message
    assert "Base" not in message


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("name, hint", [("penalty", "L2"), ("l1_ratio", "elastic")])
def test_penalty_and_l1_ratio_are_explained(cls, name, hint):
    with pytest.raises(TypeError, match=f"{cls.__name__}.*'{name}'.*{hint}"):
        cls(**{name: 0.5}, epsilon=1.0)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_unknown_and_positional_arguments(cls):
    with pytest.raises(TypeError, match="Valid parameters: .*alpha"):
        cls(foo=1)
    with pytest.raises(TypeError, match=f"{cls.__name__}\\(\\) takes keyword"):
        cls(1.0)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_clone_pickle_and_grid_search_still_work(cls):
    est = cls(alpha=0.1, epsilon=2.0, random_state=0)
    for copy in (clone(est), pickle.loads(pickle.dumps(est))):
        assert copy.get_params() == est.get_params()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X[:, 0] if cls is Ridge else (X[:, 0] > 0).astype(int)
    extra = {} if cls is Ridge else {"classes": [0, 1]}
    search = GridSearchCV(cls(max_iter=1, **extra), {"alpha": [1e-3, 1e-2]}, cv=2)
    with pytest.warns(Warning):
        search.fit(X, y)
    assert search.best_params_["alpha"] in (1e-3, 1e-2)
