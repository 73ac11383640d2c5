"""Loaders for the offline benchmark datasets used by ``dpestim``.

Where the data live is controlled by :func:`get_data_home` (environment
variable ``DPESTIM_DATA``).  Every loader returns a :class:`sklearn.utils.Bunch`
and raises :class:`DatasetNotFoundError` when its files are missing.
"""

from ._home import DatasetNotFoundError, dataset_available, get_data_home
from ._libsvm import load_adult_a9a, load_farm_ads, load_mnist, load_phishing, load_w8a
from ._loaders import (
    ADULT_CATEGORIES,
    ADULT_COLUMNS,
    california_test_rows,
    load_adult,
    load_bank,
    load_california_housing,
    load_compas,
    load_german,
)

__all__ = [
    "ADULT_CATEGORIES",
    "ADULT_COLUMNS",
    "DatasetNotFoundError",
    "california_test_rows",
    "dataset_available",
    "get_data_home",
    "load_adult",
    "load_adult_a9a",
    "load_bank",
    "load_california_housing",
    "load_compas",
    "load_farm_ads",
    "load_german",
    "load_mnist",
    "load_phishing",
    "load_w8a",
]
