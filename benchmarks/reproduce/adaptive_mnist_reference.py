"""Non-private references for part (c) of ``reproduce_adaptive.py`` (MNIST).

The same schedule as the private MNIST runs (``eta_t = 1/sqrt(20 + t)``, batch
256, 10 epochs, ``alpha=0``, seed 0) with ``epsilon=inf``, once with the clip
norms of the private runs and once without clipping: it separates the cost of
clipping from the cost of noise. Run from the repository root::

    PYTHONPATH=. python benchmarks/reproduce/adaptive_mnist_reference.py
"""

import logging
import math
import time

from dpestim import LogisticRegression
from dpestim.datasets import load_mnist
from dpestim.solvers import ADPSGD

logging.getLogger("absl").setLevel(logging.ERROR)
data = load_mnist()
for clip in (1.0, 5.0, math.inf):
    start = time.time()
    clf = LogisticRegression(
        epsilon=math.inf,
        clip_norm=clip,
        alpha=0.0,
        max_iter=10,
        batch_size=256,
        learning_rate=1 / math.sqrt(20),
        solver=ADPSGD("invsqrt", a=20.0, c=1.0),
        classes=list(range(10)),
        random_state=0,
    )
    clf.fit(data.data, data.target)
    acc = clf.score(data.data_test, data.target_test)
    print(
        f"MNIST epsilon=inf clip_norm={clip}: test accuracy {acc:.4f} "
        f"({time.time() - start:.0f} s)"
    )
