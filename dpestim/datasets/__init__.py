"""Loaders for the offline benchmark datasets used by ``dpestim``.

Where the data live is controlled by :func:`get_data_home` (environment
variable ``DPESTIM_DATA``).  Every loader returns a :class:`sklearn.utils.Bunch`
and raises :class:`DatasetNotFoundError` when its files are missing.
"""

from ._loaders import (
    DatasetNotFoundError,
    dataset_available,
    get_data_home,
    load_adult,
    load_adult_a9a,
    load_bank,
    load_california_housing,
    load_compas,
    load_farm_ads,
    load_german,
    load_mnist,
    load_phishing,
    load_w8a,
)

__all__ = [
    "DatasetNotFoundError",
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
