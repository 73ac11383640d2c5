"""Random datasets for the sensitivity tests of the clipped sums."""


def random_scaled_rows(rng):
    """``(D, r, k)``: rows of very different scales, a radius, a row index.

    ``n`` in 2-29 rows of 1-11 columns, each row scaled by ``10^U(-3, 3)``;
    with probability 0.3 one row is multiplied by 1e150 (huge, and some
    overflow), with probability 0.2 one entry is 1e300 or 1e200; the radius
    ``r`` is ``10^U(-2, 2)`` and ``k`` the row a neighbour removes or
    replaces.
    """
    n, d = int(rng.integers(2, 30)), int(rng.integers(1, 12))
    D = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-3, 3, size=(n, 1))
    if rng.random() < 0.3:
        D[int(rng.integers(n))] *= 1e150
    if rng.random() < 0.2:
        D[int(rng.integers(n)), 0] = 1e300 if rng.random() < 0.5 else 1e200
    r = float(10.0 ** rng.uniform(-2, 2))
    return D, r, int(rng.integers(n))
