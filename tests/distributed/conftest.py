"""A 2-worker ``dask.distributed.LocalCluster`` shared by the Dask tests."""

import pytest


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c
