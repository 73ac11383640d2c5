"""Where the offline datasets live: the data home and each dataset's files."""

import errno
import os
from pathlib import Path

__all__ = ["DatasetNotFoundError", "dataset_available", "get_data_home"]

_ENV = "DPESTIM_DATA"

# Files needed by each loader, relative to the data home.
_FILES = {
    "adult_a9a": ("adult/a9a", "adult/a9a.t"),
    "adult": ("adult/adult.data", "adult/adult.test"),
    "mnist": tuple(
        f"mnist/{f}-ubyte.gz"
        for f in (
            "train-images-idx3",
            "train-labels-idx1",
            "t10k-images-idx3",
            "t10k-labels-idx1",
        )
    ),
    "phishing": ("phishing/phishing",),
    "w8a": ("w8a/w8a",),
    "farm_ads": ("farm_ads/farm-ads-vect.gz",),
    "california_housing": ("california_housing/housing.csv.gz",),
    "compas": ("compas/compas-scores-two-years.csv",),
    "german": ("german/german.data",),
    "bank": ("bank/bank.csv",),
}


class DatasetNotFoundError(FileNotFoundError):
    """A dataset file is missing from the data home.

    Parameters
    ----------
    path : path-like
        The missing file.
    """

    def __init__(self, path):
        super().__init__(
            errno.ENOENT,
            f"Dataset file not found (set the {_ENV} environment variable "
            f"to the folder holding the datasets; it is currently "
            f"{os.environ.get(_ENV) or 'unset'})",
            str(path),
        )


def get_data_home():
    """Return the folder holding the datasets.

    This is the single setting for where data live:

    1. the environment variable ``DPESTIM_DATA`` if set (and non-empty);
    2. else the first existing folder among ``Path.cwd().parent / "shared" /
       "datasets"`` and ``<repo>/../shared/datasets`` (relative to this file,
       for an in-tree or editable checkout);
    3. else the cwd-based default, even though it does not exist.

    Returns
    -------
    pathlib.Path
    """
    env = os.environ.get(_ENV)
    if env:
        return Path(env).expanduser()
    default = Path.cwd().parent / "shared" / "datasets"
    candidates = [default]
    parents = Path(__file__).resolve().parents
    if len(parents) > 3:
        candidates.append(parents[3] / "shared" / "datasets")
    for cand in candidates:
        if cand.is_dir():
            return cand
    return default


def _paths(name, data_home=None, *, check=True):
    if name not in _FILES:
        raise ValueError(f"Unknown dataset {name!r}; known: {sorted(_FILES)}")
    home = Path(data_home) if data_home is not None else get_data_home()
    paths = [home / f for f in _FILES[name]]
    if check:
        for p in paths:
            if not p.is_file():
                raise DatasetNotFoundError(p)
    return paths


def dataset_available(name, *, data_home=None):
    """Tell whether all files of a dataset are present.

    Parameters
    ----------
    name : str
        Dataset name, the suffix of its loader: ``"adult_a9a"``, ``"adult"``,
        ``"mnist"``, ``"phishing"``, ``"w8a"``, ``"farm_ads"``,
        ``"california_housing"``, ``"compas"``, ``"german"`` or ``"bank"``.
    data_home : path-like, default=None
        Folder holding the datasets; defaults to :func:`get_data_home`.

    Returns
    -------
    bool
    """
    return all(p.is_file() for p in _paths(name, data_home, check=False))
