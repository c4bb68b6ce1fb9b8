"""gnnc from Python. `gnnc.torch` loads .gnn layers and models as
torch.nn.Modules (docs/python.md)."""

__version__ = "0.1.0"
