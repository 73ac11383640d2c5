"""Loaders of the numeric benchmark sets: LIBSVM files and MNIST.

Rows are used as published (LIBSVM's binary features, MNIST pixels divided by
their public maximum 255): nothing is fitted on the data.
"""

import gzip

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.utils import Bunch

from ._bunch import finish
from ._home import _paths


def _svmlight(path, n_features, *, dense=False):
    """Read a (possibly gzipped) 1-based LIBSVM file; labels > 0 become 1."""
    X, y = load_svmlight_file(
        str(path), n_features=n_features, dtype=np.float64, zero_based=False
    )
    X = X.tocsr()
    return (X.toarray() if dense else X), (y > 0).astype(np.int64)


# ------------------------------------------------------------ LIBSVM sets
def load_adult_a9a(*, data_home=None, return_X_y=False, as_frame=False):
    """Load LIBSVM a9a (Adult, 123 binary features), train and test.

    The data come from UCI Adult (Becker and Kohavi, 1996; CC BY 4.0) in the LIBSVM
    a9a / a9a.t binarisation (J. Platt's preprocessing), files ``adult/a9a`` and
    ``adult/a9a.t`` of the data home, copied from ``tensorflow/privacy`` and
    ``Astraeus-Q/SVM-Classifier`` (commits and checksums in the data home's README).
    Nothing is downloaded: the file must be in the folder given by
    :func:`get_data_home`.

    Parameters
    ----------
    data_home : path-like, default=None
        Folder holding the datasets; defaults to :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch.
    as_frame : bool, default=False
        Give ``data`` (and ``data_test``) as a pandas DataFrame and the
        targets as Series (needs pandas; sparse data become sparse columns).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (32561 x 123 CSR float64), ``target`` ({0, 1}, 1 = >50K),
        ``data_test`` (16281 x 123), ``target_test``, ``DESCR``.
    """
    train, test = _paths("adult_a9a", data_home)
    X, y = _svmlight(train, 123)
    X_test, y_test = _svmlight(test, 123)
    bunch = Bunch(
        data=X,
        target=y,
        data_test=X_test,
        target_test=y_test,
        DESCR="UCI Adult, LIBSVM a9a/a9a.t binarisation; 1 = >50K.",
    )
    return finish(bunch, return_X_y, as_frame)


def load_phishing(*, data_home=None, return_X_y=False, as_frame=False):
    """Load LIBSVM phishing (11055 x 68, rows of unit norm).

    The data come from LIBSVM ``phishing`` (from UCI "Phishing Websites"), file
    ``phishing/phishing`` of the data home, copied from ``tensorflow/privacy``
    (commit and checksum in the data home's README). Nothing is downloaded: the file
    must be in the folder given by :func:`get_data_home`.

    Parameters
    ----------
    data_home : path-like, default=None
        Folder holding the datasets; defaults to :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch.
    as_frame : bool, default=False
        Give ``data`` (and ``data_test``) as a pandas DataFrame and the
        targets as Series (needs pandas; sparse data become sparse columns).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (dense float64), ``target`` ({0, 1}, 0 = phishing), ``DESCR``.
    """
    (path,) = _paths("phishing", data_home)
    X, y = _svmlight(path, 68, dense=True)
    bunch = Bunch(
        data=X, target=y, DESCR="LIBSVM phishing websites; 0 = phishing, 1 = legit."
    )
    return finish(bunch, return_X_y, as_frame)


def load_w8a(*, data_home=None, return_X_y=False, as_frame=False):
    """Load LIBSVM w8a (train part only: 49749 x 300 sparse binary).

    The data come from LIBSVM ``w8a`` (J. Platt's "web" data), file ``w8a/w8a`` of
    the data home, copied from ``tensorflow/privacy`` (commit and checksum in the
    data home's README). Nothing is downloaded: the file must be in the folder given
    by :func:`get_data_home`.

    Parameters
    ----------
    data_home : path-like, default=None
        Folder holding the datasets; defaults to :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch.
    as_frame : bool, default=False
        Give ``data`` (and ``data_test``) as a pandas DataFrame and the
        targets as Series (needs pandas; sparse data become sparse columns).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (CSR float64), ``target`` ({0, 1}, 1479 positives),
        ``DESCR``.
    """
    (path,) = _paths("w8a", data_home)
    X, y = _svmlight(path, 300)
    bunch = Bunch(
        data=X, target=y, DESCR="LIBSVM w8a (Platt's web keywords), train part."
    )
    return finish(bunch, return_X_y, as_frame)


def load_farm_ads(*, data_home=None, return_X_y=False, as_frame=False):
    """Load UCI Farm Ads (4143 x 54877 sparse binary bag of words).

    The data come from UCI Farm Ads (Mesterharm and Pazzani, 2011; CC BY 4.0), file
    ``farm_ads/farm-ads-vect.gz`` of the data home (provenance and checksum in the
    data home's README). Nothing is downloaded: the file must be in the folder given
    by :func:`get_data_home`.

    Parameters
    ----------
    data_home : path-like, default=None
        Folder holding the datasets; defaults to :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch.
    as_frame : bool, default=False
        Give ``data`` (and ``data_test``) as a pandas DataFrame and the
        targets as Series (needs pandas; sparse data become sparse columns).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (CSR float64), ``target`` ({0, 1}, 1 = ad accepted),
        ``DESCR``.
    """
    (path,) = _paths("farm_ads", data_home)
    X, y = _svmlight(path, 54877)
    return finish(
        Bunch(data=X, target=y, DESCR="UCI Farm Ads bag of words; 1 = ad accepted."),
        return_X_y,
        as_frame,
    )


# ------------------------------------------------------------------ MNIST
def _read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if raw[:3] != b"\x00\x00\x08":
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    ndim = raw[3]
    shape = np.frombuffer(raw, ">i4", count=ndim, offset=4)
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_mnist(*, data_home=None, return_X_y=False, as_frame=False):
    """Load MNIST from the four original IDX files.

    The data come from MNIST (LeCun, Cortes and Burges), the four original IDX files
    in ``mnist/`` of the data home (provenance, rebuild and checksums in the data
    home's README). Standard split: 60,000 training, 10,000 test images. Nothing is
    downloaded: the file must be in the folder given by :func:`get_data_home`.

    Parameters
    ----------
    data_home : path-like, default=None
        Folder holding the datasets; defaults to :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch.
    as_frame : bool, default=False
        Give ``data`` (and ``data_test``) as a pandas DataFrame and the
        targets as Series (needs pandas; sparse data become sparse columns).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (60000 x 784 float64 in [0, 1], pixel / 255), ``target``
        (int64 digits), ``data_test`` (10000 x 784), ``target_test``,
        ``DESCR``.
    """
    Xtr, ytr, Xte, yte = (_read_idx(p) for p in _paths("mnist", data_home))
    bunch = Bunch(
        data=Xtr.reshape(len(Xtr), -1) / 255.0,
        target=ytr.astype(np.int64),
        data_test=Xte.reshape(len(Xte), -1) / 255.0,
        target_test=yte.astype(np.int64),
        DESCR="MNIST handwritten digits, pixels scaled by 1/255.",
    )
    return finish(bunch, return_X_y, as_frame)
