"""White-box audit of dp-sgda, the Euclidean saddle solver of bilinear games.

dp-sgda runs on :class:`~dpestim.solvers.saddle.BilinearGame` problems only
(no estimator uses it), so its audit calls the solver itself: the plan and
the accounted epsilon come from :func:`~dpestim.solvers.saddle.plan_saddle`
(what :func:`~dpestim.solvers.saddle.run_saddle` checks and reports), then
``solver.solve`` runs once per trial.

Worst case under dp-sgda's relation (replace-one): a game with ``A0 = 0``,
``u = k (1, -1)``, ``v = (1, 0)``, two records. At the uniform starting point
a record ``s`` has the gradient ``(s k / 2) (1, -1)`` in ``x`` and 0 in
``y``; with ``k / sqrt(2) = 2 clip_norm`` the clipped gradients of ``s = +1``
(the canary) and ``s = -1`` (its mirror) differ by ``2 clip_norm``, the
replace-one sensitivity. ``n = 2``, ``T = 2`` steps of one row: the released
average ``(x_0 + x_1) / 2`` shows the first step only, so the canary is put
where the public permutation puts the first batch. That is a valid audit:
dp-sgda's guarantee (parallel composition, one Gaussian mechanism) holds for
every fixed permutation, so choosing the pair after it costs nothing. With
a small learning rate the projection onto the simplex never binds, and the
score ``x_avg[1] - x_avg[0]`` is the Gaussian mechanism of the accounted
noise on a shift of exactly the sensitivity.
"""

import copy
import math

import numpy as np

from dpestim.audit._audit import _result_from_scores
from dpestim.audit._solver_audit import _FittedThreshold
from dpestim.privacy import check_guarantee
from dpestim.solvers.saddle import BilinearGame, SaddlePlan, plan_saddle

__all__ = ["audit_game_solver"]


def audit_game_solver(
    solver,
    *,
    epsilon=1.0,
    delta=1e-2,
    n_trials=2000,
    alpha=0.05,
    clip_norm=1.0,
    learning_rate=0.01,
    random_state=None,
):
    """Lower bound on the epsilon of a dp-sgda-like solver (white box).

    Returns an :class:`~dpestim.audit.AuditResult` (threshold fitted on 10%
    of the trials, bound on the other 90%).
    """
    solver = copy.deepcopy(solver).set_params(
        max_iter=2, clip_norm=clip_norm, learning_rate=learning_rate
    )
    k = 2.0 * math.sqrt(2.0) * clip_norm
    A0, u, v = np.zeros((2, 2)), k * np.array([1.0, -1.0]), np.array([1.0, 0.0])
    probe = BilinearGame(A0, u, v, np.zeros(2))
    plan = SaddlePlan(
        n_samples=2, dim_x=2, dim_y=2, lipschitz=probe.lipschitz,
        smoothness=0.0, second_order=0.0,
    )  # fmt: skip
    params, _, eps = plan_saddle(solver, plan, epsilon, delta)
    check_guarantee(eps, epsilon, what=f"solver={solver.name!r}")
    seeds = np.random.SeedSequence(random_state).generate_state(2 * n_trials)
    scores = []
    for t, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        first = int(copy.deepcopy(rng).permutation(2)[0])  # the first batch
        s = np.zeros(2)
        s[first] = 1.0 if t % 2 else -1.0  # in: the canary; out: its mirror
        game = BilinearGame(A0, u, v, s)
        result = solver.solve(game, plan, params, rng)
        scores.append(result.x[1] - result.x[0])
    scores = np.asarray(scores)
    return _result_from_scores(
        scores[0::2],
        scores[1::2],
        epsilon=float(eps),
        delta=float(delta),
        alpha=alpha,
        threshold=_FittedThreshold(laplace=False),
        selection_fraction=0.1,
        kind="gradient (worst case, bilinear game)",
    )
