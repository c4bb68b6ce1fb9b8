"""PyG's examples/gcn.py (Kipf and Welling's GCN on Planetoid) with PyG's
GCNConv swapped for gnnc's (dsl-examples/gcn.gnn), through gnnc.torch.

    GNNC_PREFIX=<gnnc installation> python3 dsl-examples/python/gcn_cora.py

The rest is PyG's script: dropout 0.5 on each layer's input, ReLU, Adam with
lr 0.01 and weight decay 5e-4 on the first layer only, 200 epochs.
"""

import os

import torch
import torch.nn.functional as F

import gnnc.torch as gt
import planetoid

GNN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                   "gcn.gnn")


class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.conv1 = gt.load(GNN, "GCNConv", in_dim=in_channels,
                             out_dim=hidden_channels)
        self.conv2 = gt.load(GNN, "GCNConv", in_dim=hidden_channels,
                             out_dim=out_channels)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.5, training=self.training)
        x = self.conv1(x, edge_index).relu()
        x = F.dropout(x, p=0.5, training=self.training)
        x = self.conv2(x, edge_index)
        return x


def main():
    args = planetoid.arguments(__doc__.splitlines()[0], epochs=200)
    planetoid.run(
        lambda f, c: GCN(f, 16, c),
        lambda m: torch.optim.Adam([
            dict(params=m.conv1.parameters(), weight_decay=5e-4),
            dict(params=m.conv2.parameters(), weight_decay=0)], lr=0.01),
        args, "GCN (gnnc.torch)")


if __name__ == "__main__":
    main()
