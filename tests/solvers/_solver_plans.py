"""The small ``ERMPlan`` the solver tests build (one factory, per-test values)."""

from dpestim.solvers import ERMPlan


def erm_plan(n, d, K, loss, **kw):
    """An ``ERMPlan`` with an intercept; ``kw`` sets or overrides any field."""
    base = dict(
        n_samples=n,
        n_features=d,
        n_outputs=K,
        loss=loss,
        alpha=0.05,
        fit_intercept=True,
        clip_norm=0.8,
        max_iter=3,
        batch_size=8,
        learning_rate=0.3,
    )
    base.update(kw)
    return ERMPlan(**base)
