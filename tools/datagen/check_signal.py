#!/usr/bin/env python3
"""How much a dataset's graph adds to its features, with linear models.

Trains softmax regression (full batch, Adam, 500 steps, standardised inputs,
no randomness) on the training vertices of a dataset folder
(edge_index.npy, x.npy, y.npy, train_mask.npy, test_mask.npy: what
gnnc-gen-sbm writes) and prints the test accuracy of three inputs:

  x                    the features alone (what an MLP sees)
  [x, mean_N(x)]       plus the mean of the in-neighbours' features (what one
                       GraphSAGE-mean layer sees)
  [x, m1, mean_N(m1)]  plus the mean of the neighbours' means (two hops,
                       what two layers see)

Usage: check_signal.py DATASET_DIR   (needs NumPy)
"""

import os
import sys

import numpy as np


def load(folder, name):
    return np.load(os.path.join(folder, name + ".npy"))


def neighbour_mean(h, src, dst, n):
    deg = np.bincount(dst, minlength=n).astype(np.float64)
    out = np.empty(h.shape, dtype=np.float64)
    for j in range(h.shape[1]):
        out[:, j] = np.bincount(dst, weights=h[src, j], minlength=n)
    return out / np.maximum(deg, 1.0)[:, None]


def softmax_regression(feat, y, train, test, classes, steps=500, lr=0.05,
                       weight_decay=1e-4):
    mean = feat[train].mean(0)
    sd = feat[train].std(0) + 1e-8
    z = np.hstack([(feat - mean) / sd, np.ones((feat.shape[0], 1))])
    w = np.zeros((z.shape[1], classes))
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    zt, yt = z[train], np.eye(classes)[y[train]]
    for t in range(1, steps + 1):
        logits = zt @ w
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(1, keepdims=True)
        g = zt.T @ (p - yt) / len(zt) + weight_decay * w
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return float(((z[test] @ w).argmax(1) == y[test]).mean())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    x = load(folder, "x").astype(np.float64)
    y = load(folder, "y")
    src, dst = load(folder, "edge_index")
    train, test = load(folder, "train_mask"), load(folder, "test_mask")
    n, classes = x.shape[0], int(y.max()) + 1
    m1 = neighbour_mean(x, src, dst, n)
    m2 = neighbour_mean(m1, src, dst, n)
    print(f"{folder}: N={n} E={len(src)} edge homophily "
          f"{(y[src] == y[dst]).mean():.3f}; test accuracy of softmax "
          f"regression on")
    for name, feat in (("x", x), ("[x, mean_N(x)]", np.hstack([x, m1])),
                       ("[x, m1, mean_N(m1)]", np.hstack([x, m1, m2]))):
        acc = softmax_regression(feat, y, train, test, classes)
        print(f"  {name:22s} {acc:.3f}")


if __name__ == "__main__":
    main()
