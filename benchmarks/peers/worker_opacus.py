"""Opacus DP-SGD worker (runs in the opacus venv; see install_peers.sh).

Task ``dpsgd``: a single linear layer trained with Opacus' ``PrivacyEngine``
(Poisson sampling, flat per-example clipping of weight and bias together,
Gaussian noise ``noise_multiplier * clip_norm``, plain SGD, mean reduction over
the expected batch size), on float32 copies of the task's data. Prints wall
time per epoch, peak RSS during training, test accuracy and Opacus' own
accountant epsilon.
"""

import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import digest, load_task_data, reset_peak_rss, rss_mib, run_worker  # noqa: E402


def dpsgd(task):
    import numpy as np
    import opacus
    import torch
    from opacus import PrivacyEngine
    from torch.utils.data import DataLoader, TensorDataset

    threads = int(task["threads"])
    torch.set_num_threads(threads)
    torch.manual_seed(task["seed"])
    X, y, Xt, yt = load_task_data(task["data"])
    data_digest = digest(X, y)
    n, d = X.shape
    n_classes = int(task["n_classes"])
    Xf = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32))
    Xtf = torch.from_numpy(np.ascontiguousarray(Xt, dtype=np.float32))
    del X, Xt
    if n_classes == 2:
        out_dim, loss_fn = 1, torch.nn.BCEWithLogitsLoss()
        yf = torch.from_numpy(y.astype(np.float32)).reshape(-1, 1)
    else:
        out_dim, loss_fn = n_classes, torch.nn.CrossEntropyLoss()
        yf = torch.from_numpy(y)
    batch = int(task["batch_size"])
    if n % batch:
        raise ValueError(
            "batch_size must divide n_samples (Opacus uses q = 1/len(loader))"
        )
    model = torch.nn.Linear(d, out_dim, dtype=torch.float32)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    opt = torch.optim.SGD(model.parameters(), lr=float(task["learning_rate"]))
    loader = DataLoader(TensorDataset(Xf, yf), batch_size=batch)
    engine = PrivacyEngine(accountant="rdp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, opt, loader = engine.make_private(
            module=model,
            optimizer=opt,
            data_loader=loader,
            noise_multiplier=float(task["noise_multiplier"]),
            max_grad_norm=float(task["clip_norm"]),
            poisson_sampling=True,
        )
    sample_rate = float(loader.sample_rate)
    rss_data, _ = rss_mib()
    reset_peak_rss()
    epoch_s, epoch_cpu_s = [], []
    steps = 0
    for _ in range(int(task["epochs"])):
        t0, c0 = time.perf_counter(), time.process_time()
        for xb, yb in loader:
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            steps += 1
        epoch_s.append(time.perf_counter() - t0)
        epoch_cpu_s.append(time.process_time() - c0)
    _, peak_train = rss_mib()
    with torch.no_grad():
        scores = model(Xtf)
        if n_classes == 2:
            pred = (scores[:, 0] > 0).long().numpy()
        else:
            pred = scores.argmax(1).numpy()
    acc = float(np.mean(pred == yt))
    eps = float(engine.get_epsilon(float(task["delta"])))
    return {
        "library": f"opacus {opacus.__version__} (torch {torch.__version__})",
        "epoch_s": epoch_s,
        "epoch_cpu_s": epoch_cpu_s,
        "time_per_epoch_s": sum(epoch_s) / len(epoch_s),
        "cpu_per_epoch_s": sum(epoch_cpu_s) / len(epoch_cpu_s),
        "steps": steps,
        "sample_rate": sample_rate,
        "test_accuracy": acc,
        "epsilon": eps,
        "accountant": "opacus RDP",
        "rss_after_data_mib": rss_data,
        "peak_rss_training_mib": peak_train,
        "torch_threads": torch.get_num_threads(),
        "data_digest": data_digest,
    }


if __name__ == "__main__":
    run_worker({"dpsgd": dpsgd})
