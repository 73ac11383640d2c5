"""Import paths of the solver modules before the families became subpackages.

``import dpestim.solvers.dp_sgd`` (and the other flat module names) keeps
working for one release: the old name resolves to the module's new home with
a :class:`FutureWarning` naming it. ``dpestim.solvers.saddle`` and
``dpestim.solvers.accelerated`` are now packages that re-export the public
names of the modules they replace, so they need no alias.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

__all__ = ["MOVED", "install"]

_PKG = __name__.rsplit(".", 1)[0]

#: Old module name (under ``dpestim.solvers``) -> new one.
MOVED = {
    "dp_sgd": "sgd.dp_sgd",
    "adp_sgd": "sgd.adp_sgd",
    "dp_lssgd": "sgd.dp_lssgd",
    "dp_gd": "accelerated.dp_gd",
    "momentum": "accelerated.momentum",
    "_accelerated_kernels": "accelerated._kernels",
    "_accelerated_policy": "accelerated._policy",
    "_accelerated_schedules": "accelerated._schedules",
    "dp_scd": "coordinate.dp_scd",
    "seq_dp_scd": "coordinate.seq_dp_scd",
    "sgda": "saddle.sgda",
    "dp_smd_sco": "saddle.dp_smd_sco",
    "_saddle_kernels": "saddle._kernels",
    "_saddle_accounting": "saddle._accounting",
    "_saddle_problems": "saddle._problems",
    "_sgda_kernels": "saddle._sgda_kernels",
    "_games": "saddle._games",
    "_l1_ball": "saddle._l1_ball",
}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import system set the alias's spec on the shared module object:
        # give the module its own spec back (nothing is executed twice)
        module.__spec__ = self._spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        prefix = _PKG + "."
        if not fullname.startswith(prefix):
            return None
        new = MOVED.get(fullname[len(prefix) :])
        if new is None:
            return None
        warnings.warn(
            f"{fullname} moved to {_PKG}.{new}; the old import path will be "
            "removed in the next release.",
            FutureWarning,
            stacklevel=2,
        )
        return importlib.util.spec_from_loader(fullname, _AliasLoader(f"{_PKG}.{new}"))


def install():
    """Put the alias finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
