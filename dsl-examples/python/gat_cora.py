"""PyG's examples/gat.py (Velickovic et al.'s GAT on Planetoid) with PyG's
GATConv swapped for gnnc's (dsl-examples/gat.gnn), through gnnc.torch.

    GNNC_PREFIX=<gnnc installation> python3 dsl-examples/python/gat_cora.py

The rest is PyG's script: 8 heads of 8 units with ELU, one output head,
dropout 0.6 on each layer's input and on the attention coefficients
(gnnc's attn_drop, which follows module.train() and torch.manual_seed),
Adam with lr 0.005 and weight decay 5e-4, 200 epochs.
"""

import os

import torch
import torch.nn.functional as F

import gnnc.torch as gt
import planetoid

GNN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                   "gat.gnn")


class GAT(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, heads):
        super().__init__()
        self.conv1 = gt.load(GNN, "GATConv", in_dim=in_channels,
                             out_dim=hidden_channels, heads=heads,
                             attn_drop=0.6)
        self.conv2 = gt.load(GNN, "GATConv", in_dim=hidden_channels * heads,
                             out_dim=out_channels, heads=1, attn_drop=0.6)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.6, training=self.training)
        x = F.elu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.6, training=self.training)
        x = self.conv2(x, edge_index)
        return x


def main():
    args = planetoid.arguments(__doc__.splitlines()[0], epochs=200)
    planetoid.run(
        lambda f, c: GAT(f, 8, c, heads=8),
        lambda m: torch.optim.Adam(m.parameters(), lr=0.005,
                                   weight_decay=5e-4),
        args, "GAT (gnnc.torch)")


if __name__ == "__main__":
    main()
