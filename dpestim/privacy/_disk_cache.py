"""Persistent on-disk cache of noise calibrations.

A calibration depends only on public quantities (the event as a function of
the noise multiplier, the budget and the accountant), so repeated scripts and
joblib workers can share it. Each entry is a small JSON file named by the
SHA-256 of its key; the key holds the ``dp_accounting`` version, the
accountant, the neighbouring relation, the budget, the solver's calibration
key and the exact event at a reference noise. An entry is used only if it
parses, its stored key equals the requested one, its checksum matches, and
(checked by the caller) the event it stores is exactly the event the solver
builds at the stored noise and its stored epsilon meets the budget; anything
else is ignored and recomputed. Writes are atomic (``os.replace``), so
concurrent workers never read a half-written entry.

The cache lives in ``$DPESTIM_CACHE_DIR`` if set, else in
``$XDG_CACHE_HOME/dpestim`` (``~/.cache/dpestim``). Set
``DPESTIM_CALIBRATION_CACHE=0`` or call
:func:`dpestim.privacy.set_calibration_cache` with ``False`` to disable it.
"""

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

__all__ = ["cache_directory", "load", "set_calibration_cache", "store"]

_FORMAT = 1
_state = {"enabled": None, "directory": None}


def set_calibration_cache(enabled=True, directory=None):
    """Enable or disable the on-disk calibration cache, or move it.

    Parameters
    ----------
    enabled : bool, default=True
        ``False`` makes every calibration run from scratch and write nothing.
    directory : str or path-like or None, default=None
        Where entries are stored; ``None`` restores the default
        (``$DPESTIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/dpestim`` or
        ``~/.cache/dpestim``).
    """
    _state["enabled"] = bool(enabled)
    _state["directory"] = None if directory is None else Path(directory)


def cache_directory():
    """The directory of calibration entries, or ``None`` when disabled."""
    enabled = _state["enabled"]
    if enabled is None:
        switch = os.environ.get("DPESTIM_CALIBRATION_CACHE", "1").strip().lower()
        enabled = switch not in ("0", "false", "no", "off", "")
    if not enabled:
        return None
    base = _state["directory"]
    if base is None:
        env = os.environ.get("DPESTIM_CACHE_DIR")
        if env:
            base = Path(env)
        else:
            xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
            base = Path(xdg).expanduser() / "dpestim"
    return base / "calibration"


@functools.lru_cache(maxsize=1)
def _dp_accounting_version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dp-accounting")
    except PackageNotFoundError:  # pragma: no cover - vendored copies
        return "unknown"


def make_key(fields):
    """The key text of an entry: JSON of ``fields`` with the format and version."""
    return json.dumps(
        [_FORMAT, _dp_accounting_version(), *fields], sort_keys=True, default=repr
    )


def _checksum(key, payload):
    text = json.dumps([key, payload], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _path(directory, key):
    return directory / (hashlib.sha256(key.encode()).hexdigest() + ".json")


def load(key):
    """The payload stored under ``key``, or ``None`` (missing, stale, corrupted)."""
    directory = cache_directory()
    if directory is None:
        return None
    try:
        entry = json.loads(_path(directory, key).read_text())
        if entry["key"] != key or entry["checksum"] != _checksum(key, entry["payload"]):
            return None
        payload = entry["payload"]
        return payload if isinstance(payload, dict) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(key, payload):
    """Write ``payload`` under ``key`` atomically; failures are ignored."""
    directory = cache_directory()
    if directory is None:
        return
    entry = {"key": key, "payload": payload, "checksum": _checksum(key, payload)}
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump(entry, fh)
        os.replace(tmp, _path(directory, key))
    except OSError:
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
