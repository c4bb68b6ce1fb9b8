"""Cora and Citeseer (Planetoid split) for the example scripts: the .npy
copies in --data/<name>/ when they are there (../shared/datasets, see its
README), else the bundle gnnc ships, runtime/data/<name>.gnnd (the same
arrays, read with tools/pack_datasets.py's reference reader).

The features are row-normalised (PyG's NormalizeFeatures) and one self-loop
per vertex is appended (PyG's add_self_loops), as both papers propagate over
A + I: gnnc's layers add no edges of their own."""

import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared",
                                             "datasets"))


def arguments(description, epochs):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--dataset", default="cora", choices=["cora", "citeseer"])
    p.add_argument("--data", default=DEFAULT_DATA,
                   help="folder holding <dataset>/x.npy ... (default: %s; "
                   "without it, runtime/data/<dataset>.gnnd)" % DEFAULT_DATA)
    p.add_argument("--epochs", type=int, default=epochs)
    p.add_argument("--seeds", type=int, default=1,
                   help="runs with torch.manual_seed(seed), seed+1, ...")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args()
    if args.epochs < 1 or args.seeds < 1 or args.seed < 0:
        p.error("--epochs and --seeds must be positive, --seed >= 0")
    return args


KEYS = ("x", "y", "edge_index", "train_mask", "val_mask", "test_mask")


def arrays(name, folder):
    """The raw arrays of dataset `name`: from folder/name/*.npy, else from
    the bundle in runtime/data."""
    d = os.path.join(folder, name)
    if os.path.exists(os.path.join(d, "x.npy")):
        return {k: np.load(os.path.join(d, k + ".npy")) for k in KEYS}
    root = os.path.normpath(os.path.join(HERE, "..", ".."))
    sys.path.insert(0, os.path.join(root, "tools"))
    import pack_datasets  # the bundle format's reference reader
    with open(os.path.join(root, "runtime", "data", name + ".gnnd"),
              "rb") as f:
        return pack_datasets.decode(f.read())


def load(name, folder):
    arr = arrays(name, folder)
    x = torch.from_numpy(arr["x"].astype(np.float32))
    x = x / x.sum(1, keepdim=True).clamp(min=1)          # NormalizeFeatures
    n = x.size(0)
    ei = torch.from_numpy(arr["edge_index"].astype(np.int64))
    loops = torch.arange(n).repeat(2, 1)
    ei = torch.cat([ei, loops], dim=1)                   # add_self_loops
    masks = [torch.from_numpy(arr[k]) for k in
             ("train_mask", "val_mask", "test_mask")]
    y = torch.from_numpy(arr["y"].astype(np.int64))
    return x, ei, y, masks


def run(make_model, make_optimizer, args, label):
    """Trains one model per seed, reports the test accuracy at the epoch of
    best validation accuracy (as PyG's examples and gnnc-train do)."""
    import torch.nn.functional as F
    x, ei, y, (train, val, test) = load(args.dataset, args.data)
    results = []
    for seed in range(args.seed, args.seed + args.seeds):
        torch.manual_seed(seed)
        model = make_model(x.size(1), int(y.max()) + 1)
        opt = make_optimizer(model)
        best_val = best_test = 0.0
        best_epoch = 0
        for epoch in range(1, args.epochs + 1):
            model.train()
            opt.zero_grad()
            out = model(x, ei)
            loss = F.cross_entropy(out[train], y[train])
            loss.backward()
            opt.step()
            model.eval()
            with torch.no_grad():
                pred = model(x, ei).argmax(1)
            accs = [float((pred[m] == y[m]).float().mean()) for m in
                    (train, val, test)]
            if accs[1] > best_val:
                best_val, best_test, best_epoch = accs[1], accs[2], epoch
            if not args.quiet:
                print("epoch %3d loss %.4f train %.4f val %.4f test %.4f" %
                      (epoch, float(loss), *accs))
        print("seed %d: test %.4f at best val %.4f (epoch %d)" %
              (seed, best_test, best_val, best_epoch))
        results.append(best_test)
    mean = 100 * float(np.mean(results))
    std = 100 * float(np.std(results))
    print("== %s %s, %d seed(s), %d epochs: test accuracy %.2f +- %.2f %%" %
          (label, args.dataset, args.seeds, args.epochs, mean, std))
    return mean
