"""scikit-learn's estimator checks on the private transformers."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from dpestim.preprocessing import (
    PrivateCentrer,
    PrivateRowNormClipper,
    RowNormClipper,
    StandardScaler,
)


@parametrize_with_checks(
    [
        RowNormClipper(),
        PrivateRowNormClipper(random_state=0),
        StandardScaler(bounds=(-100, 100), epsilon=1.0, random_state=0),
        PrivateCentrer(random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
