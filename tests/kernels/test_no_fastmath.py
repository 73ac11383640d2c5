"""No numba kernel of dpestim may use fastmath (clipping, norms and noise must
be computed exactly as analysed), and every kernel caches to disk."""

import importlib
import pkgutil

import numba.core.registry
import pytest

import dpestim


def _dispatchers():
    for mod_info in pkgutil.walk_packages(dpestim.__path__, "dpestim."):
        if mod_info.name.endswith("__main__"):
            continue
        module = importlib.import_module(mod_info.name)
        for name, obj in vars(module).items():
            if isinstance(obj, numba.core.registry.CPUDispatcher):
                if obj.__module__ == module.__name__:
                    yield f"{module.__name__}.{name}", obj


KERNELS = dict(_dispatchers())


def test_kernels_found():
    assert {
        "dpestim._kernels.clipping.clipped_grad_sum",
        "dpestim._kernels.sampling.poisson_sample",
        "dpestim.solvers.sgd._descent._noisy_sgd_loop",
    } <= set(KERNELS)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_no_fastmath_and_cached(name):
    options = KERNELS[name].targetoptions
    assert not options.get("fastmath"), f"{name} uses fastmath"
    assert type(KERNELS[name]._cache).__name__ != "NullCache", f"{name} not cached"
