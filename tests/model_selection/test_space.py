"""The default search space: small, centred on the estimator's resolved plan."""

import numpy as np
import pytest
from scipy.stats import loguniform
from sklearn.pipeline import make_pipeline

from dpestim import LogisticRegression
from dpestim.model_selection import PrivateSearchCV, Relative, default_space
from dpestim.model_selection._space import Factor, sample_candidate
from dpestim.preprocessing import StandardScaler


def test_default_space_is_two_relative_parameters():
    space = default_space(LogisticRegression())
    assert set(space) == {"learning_rate", "clip_norm"}
    assert all(isinstance(d, Relative) for d in space.values())
    pipe = make_pipeline(StandardScaler(bounds=(-1, 1)), LogisticRegression())
    assert set(default_space(pipe)) == {
        "logisticregression__learning_rate",
        "logisticregression__clip_norm",
    }


def test_default_candidates_are_centred_on_the_plan():
    rng = np.random.default_rng(0)
    space = default_space(LogisticRegression())
    draws = [sample_candidate(space, rng) for _ in range(4000)]
    lr = np.array([d["learning_rate"] for d in draws])
    clip = np.array([d["clip_norm"] for d in draws])
    assert all(isinstance(d["learning_rate"], Factor) for d in draws)
    # each parameter keeps the resolved value with probability 1/2
    for values in (lr, clip):
        share = np.mean(values == 1.0)
        assert abs(share - 0.5) < 4 * np.sqrt(0.25 / values.size)
    # both at the plan (the plain "auto" fit) with probability 1/4
    both = np.mean((lr == 1.0) & (clip == 1.0))
    assert abs(both - 0.25) < 4 * np.sqrt(0.1875 / lr.size)
    assert lr.min() >= 1 / 3 and lr.max() <= 3
    assert clip.min() >= 1 / 2 and clip.max() <= 2
    # the other half is spread over the whole range on the log scale
    spread = np.log(lr[lr != 1.0])
    assert spread.min() < np.log(0.4) and spread.max() > np.log(2.5)


def test_relative_centre_is_validated():
    with pytest.raises(ValueError, match="centre"):
        Relative(loguniform(0.5, 2), centre=1.5)
    with pytest.raises(TypeError, match="Generator"):
        Relative(loguniform(0.5, 2), centre=0.5).rvs()


def test_search_resolves_factors_against_the_plan():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2000, 4)) / 2
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    est = LogisticRegression(
        classes=[0, 1], max_iter=2, batch_size=100, learning_rate=0.3
    )
    s = PrivateSearchCV(est, epsilon=1.0, n_candidates=4, random_state=3).fit(X, y)
    lr, clip = s.best_params_["learning_rate"], s.best_params_["clip_norm"]
    assert not isinstance(lr, Factor) and not isinstance(clip, Factor)
    assert 0.1 - 1e-12 <= lr <= 0.9 + 1e-12  # a factor in [1/3, 3] of 0.3
    assert 0.5 <= clip <= 2.0  # a factor in [1/2, 2] of the private clip 1.0
    assert s.best_estimator_.get_params()["clip_norm"] == clip
