"""The layer library in the benchmark (tools/bench --library): each layer of
gnn/ and dsl-examples/ that has a PyG counterpart, at width F, beside that
PyG layer configured to compute the same function.

Each entry names:
  title     the PyG class (and its configuration);
  source    the .gnn file, entry the layer's definition in it;
  defines   its hyper-parameters at width F;
  width     the F it runs at, when not the run's (NNConv: a matrix per edge);
  pyg       PyG's module at width F (a function of F and the namespace of
            PyG's classes, `ns`);
  inputs    the layer's inputs after x, in PyG's call order: name -> shape,
            each dimension an int or "N" / "E";
  call      PyG's forward: call(conv, x, edge_index, extra inputs by name);
  eval      True when PyG's module stays in eval mode in training too
            (SuperGATConv samples edges for its own loss in training mode);
  note      what differs between the two, if anything.

Inputs are random on both sides (gnnc-bench fills f32[E] inputs with 1); the
timing does not depend on their values.
"""

GAUSSIANS = 50      # SchNet's default Gaussian expansion of distances
EDGE_DIM = 16       # edge features of the layers that take them
HEADS = 4           # heads of the attention layers (F / HEADS each)
NNCONV_WIDTH = 8    # NNConv's width: its per-edge matrices are E x F x F


def _mlp(ns, sizes):
    torch = ns["torch"]
    layers = []
    for i in range(len(sizes) - 1):
        if i:
            layers.append(torch.nn.ReLU())
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
    return torch.nn.Sequential(*layers)


def _plain(conv, x, ei, ex):
    return conv(x, ei)


def _edge_attr(conv, x, ei, ex):
    return conv(x, ei, ex["edge_attr"])


def _pna(F, ns):
    torch = ns["torch"]
    # A degree histogram: deg[d] vertices of in-degree d. Only its mean of
    # log(d + 1) reaches the layer (avg_deg_log below is that mean).
    return ns["PNAConv"](F, F, ["mean", "min", "max", "std"],
                         ["identity", "amplification", "attenuation"],
                         torch.tensor([0, 4, 4]), edge_dim=EDGE_DIM)


LIBRARY = {
    "lgconv": dict(
        title="LGConv", source="gnn/lgconv.gnn", entry="LGConv",
        defines=lambda F: {"dim": F},
        pyg=lambda F, ns: ns["LGConv"](), inputs={}, call=_plain),
    "sgconv": dict(
        title="SGConv (K=2)", source="gnn/sgconv.gnn", entry="SGConv",
        defines=lambda F: {"in_dim": F, "out_dim": F, "k": 2},
        pyg=lambda F, ns: ns["SGConv"](F, F, K=2, add_self_loops=False),
        inputs={}, call=_plain),
    "ssgconv": dict(
        title="SSGConv (K=2)", source="gnn/ssgconv.gnn", entry="SSGConv",
        defines=lambda F: {"in_dim": F, "out_dim": F, "alpha": 0.1, "k": 2},
        pyg=lambda F, ns: ns["SSGConv"](F, F, alpha=0.1, K=2,
                                        add_self_loops=False),
        inputs={}, call=_plain),
    "graphconv": dict(
        title="GraphConv", source="gnn/graphconv.gnn", entry="GraphConv",
        defines=lambda F: {"in_dim": F, "out_dim": F},
        pyg=lambda F, ns: ns["GraphConv"](F, F), inputs={}, call=_plain),
    "leconv": dict(
        title="LEConv", source="gnn/leconv.gnn", entry="LEConv",
        defines=lambda F: {"in_dim": F, "out_dim": F},
        pyg=lambda F, ns: ns["LEConv"](F, F), inputs={}, call=_plain),
    "gcn2conv": dict(
        title="GCN2Conv", source="gnn/gcn2conv.gnn", entry="GCN2Conv",
        defines=lambda F: {"dim": F, "alpha": 0.1, "theta": 0.5, "depth": 1},
        pyg=lambda F, ns: ns["GCN2Conv"](F, alpha=0.1, theta=0.5, layer=1,
                                         add_self_loops=False),
        inputs={"x0": ("N", "F")},
        call=lambda conv, x, ei, ex: conv(x, ex["x0"], ei)),
    "resgatedgraphconv": dict(
        title="ResGatedGraphConv", source="gnn/resgatedgraphconv.gnn",
        entry="ResGatedGraphConv",
        defines=lambda F: {"in_dim": F, "out_dim": F},
        pyg=lambda F, ns: ns["ResGatedGraphConv"](F, F), inputs={},
        call=_plain),
    "agnnconv": dict(
        title="AGNNConv", source="gnn/agnnconv.gnn", entry="AGNNConv",
        defines=lambda F: {"dim": F},
        pyg=lambda F, ns: ns["AGNNConv"](requires_grad=True,
                                         add_self_loops=False),
        inputs={}, call=_plain),
    "supergatconv": dict(
        title="SuperGATConv (MX, 4 heads)", source="gnn/supergatconv.gnn",
        entry="SuperGATConv",
        defines=lambda F: {"in_dim": F, "out_dim": F // HEADS,
                           "heads": HEADS},
        pyg=lambda F, ns: ns["SuperGATConv"](F, F // HEADS, heads=HEADS,
                                             attention_type="MX",
                                             add_self_loops=False),
        inputs={}, call=_plain, eval=True),
    "faconv": dict(
        title="FAConv", source="gnn/faconv.gnn", entry="FAConv",
        defines=lambda F: {"dim": F, "eps": 0.1},
        pyg=lambda F, ns: ns["FAConv"](F, eps=0.1, add_self_loops=False),
        inputs={"x0": ("N", "F")},
        call=lambda conv, x, ei, ex: conv(x, ex["x0"], ei)),
    "transformerconv": dict(
        title="TransformerConv (4 heads)", source="gnn/transformerconv.gnn",
        entry="TransformerConv",
        defines=lambda F: {"in_dim": F, "out_dim": F // HEADS,
                           "heads": HEADS},
        pyg=lambda F, ns: ns["TransformerConv"](F, F // HEADS, heads=HEADS),
        inputs={}, call=_plain),
    "cgconv": dict(
        title="CGConv", source="gnn/cgconv.gnn", entry="CGConv",
        defines=lambda F: {"dim": F},
        pyg=lambda F, ns: ns["CGConv"](F), inputs={}, call=_plain),
    "gineconv": dict(
        title="GINEConv", source="gnn/gineconv.gnn", entry="GINEConv",
        defines=lambda F: {"in_dim": F, "out_dim": F, "mlp_dim": F},
        pyg=lambda F, ns: ns["GINEConv"](_mlp(ns, [F, F, F])),
        inputs={"edge_attr": ("E", "F")}, call=_edge_attr),
    "nnconv": dict(
        title="NNConv", source="gnn/nnconv.gnn", entry="NNConv",
        width=NNCONV_WIDTH,
        defines=lambda F: {"in_dim": F, "out_dim": F, "edge_dim": EDGE_DIM},
        pyg=lambda F, ns: ns["NNConv"](
            F, F, ns["torch"].nn.Linear(EDGE_DIM, F * F), aggr="add"),
        inputs={"edge_attr": ("E", EDGE_DIM)}, call=_edge_attr,
        note="at F = 8: both materialise an F x F matrix per edge "
             "(E x 4096 floats at F = 64)"),
    "gmmconv": dict(
        title="GMMConv (kernel_size=2)", source="gnn/gmmconv.gnn",
        entry="GMMConv",
        defines=lambda F: {"in_dim": F, "out_dim": F, "dim": 3,
                           "kernel_size": 2},
        pyg=lambda F, ns: ns["GMMConv"](F, F, dim=3, kernel_size=2),
        inputs={"pseudo": ("E", 3)},
        call=lambda conv, x, ei, ex: conv(x, ei, ex["pseudo"])),
    "edgeconv": dict(
        title="EdgeConv", source="gnn/edgeconv.gnn", entry="EdgeConv",
        defines=lambda F: {"in_dim": F, "out_dim": F},
        pyg=lambda F, ns: ns["EdgeConv"](_mlp(ns, [2 * F, F, F])),
        inputs={}, call=_plain),
    "pointnetconv": dict(
        title="PointNetConv", source="gnn/pointnetconv.gnn",
        entry="PointNetConv",
        defines=lambda F: {"in_dim": F, "out_dim": F},
        pyg=lambda F, ns: ns["PointNetConv"](_mlp(ns, [F + 3, F, F]),
                                             add_self_loops=False),
        inputs={"pos": ("N", 3)},
        call=lambda conv, x, ei, ex: conv(x, ex["pos"], ei)),
    "generalconv": dict(
        title="GeneralConv (attention, 4 heads)", source="gnn/generalconv.gnn",
        entry="GeneralConv",
        defines=lambda F: {"in_dim": F, "out_dim": F, "edge_dim": EDGE_DIM,
                           "heads": HEADS},
        pyg=lambda F, ns: ns["GeneralConv"](F, F, in_edge_channels=EDGE_DIM,
                                            heads=HEADS, attention=True),
        inputs={"edge_attr": ("E", EDGE_DIM)}, call=_edge_attr),
    "filmconv": dict(
        title="FiLMConv", source="gnn/filmconv.gnn", entry="FiLMConv",
        defines=lambda F: {"in_dim": F, "out_dim": F},
        pyg=lambda F, ns: ns["FiLMConv"](F, F), inputs={}, call=_plain),
    "simpleconv": dict(
        title="SimpleConv (sum)", source="gnn/simpleconv.gnn",
        entry="SimpleConv", defines=lambda F: {"dim": F},
        pyg=lambda F, ns: ns["SimpleConv"](aggr="sum"), inputs={},
        call=_plain),
    "wlconvcontinuous": dict(
        title="WLConvContinuous", source="gnn/wlconvcontinuous.gnn",
        entry="WLConvContinuous", defines=lambda F: {"dim": F},
        pyg=lambda F, ns: ns["WLConvContinuous"](), inputs={}, call=_plain),
    "clustergcnconv": dict(
        title="ClusterGCNConv", source="gnn/clustergcnconv.gnn",
        entry="ClusterGCNConv",
        defines=lambda F: {"in_dim": F, "out_dim": F, "diag_lambda": 0.5},
        pyg=lambda F, ns: ns["ClusterGCNConv"](F, F, diag_lambda=0.5),
        inputs={}, call=_plain,
        note="PyG replaces the graph's self-loops by one per vertex (N more "
             "edges than gnnc's graph, which is used as given)"),
    "cfconv": dict(
        title="CFConv (SchNet)", source="gnn/cfconv.gnn", entry="CFConv",
        defines=lambda F: {"in_dim": F, "out_dim": F, "num_filters": F,
                           "num_gaussians": GAUSSIANS},
        pyg=lambda F, ns: ns["CFConv"](
            F, F, F, ns["torch"].nn.Sequential(
                ns["torch"].nn.Linear(GAUSSIANS, F), ns["ShiftedSoftplus"](),
                ns["torch"].nn.Linear(F, F)), 10.0),
        inputs={"edge_weight": ("E",), "edge_attr": ("E", GAUSSIANS)},
        call=lambda conv, x, ei, ex: conv(x, ei, ex["edge_weight"],
                                          ex["edge_attr"])),
    "genconv": dict(
        title="GENConv (softmax, learnt t)", source="gnn/genconv.gnn",
        entry="GENConv",
        defines=lambda F: {"in_dim": F, "out_dim": F, "edge_dim": EDGE_DIM},
        pyg=lambda F, ns: ns["GENConv"](F, F, aggr="softmax", learn_t=True,
                                        edge_dim=EDGE_DIM, norm=None),
        inputs={"edge_attr": ("E", EDGE_DIM)}, call=_edge_attr,
        note="gnnc's layer always maps x by W_src and W_dst; PyG has no such "
             "maps when in_dim = out_dim (two N x F x F products more for "
             "gnnc)"),
    "pdnconv": dict(
        title="PDNConv", source="gnn/pdnconv.gnn", entry="PDNConv",
        defines=lambda F: {"in_dim": F, "out_dim": F, "edge_dim": EDGE_DIM,
                           "hidden": EDGE_DIM},
        pyg=lambda F, ns: ns["PDNConv"](F, F, EDGE_DIM, EDGE_DIM,
                                        add_self_loops=False),
        inputs={"edge_attr": ("E", EDGE_DIM)}, call=_edge_attr),
    "pnaconv": dict(
        title="PNAConv (4 aggregators, 3 scalers)", source="gnn/pnaconv.gnn",
        entry="PNAConv",
        # PyG's avg_deg_log of the histogram in _pna: (4 log 2 + 4 log 3) / 8.
        defines=lambda F: {"in_dim": F, "out_dim": F, "edge_dim": EDGE_DIM,
                           "avg_deg_log": 0.8958797346140275},
        pyg=_pna, inputs={"edge_attr": ("E", EDGE_DIM)}, call=_edge_attr),
    "appnp": dict(
        title="APPNP (K=10)", source="dsl-examples/appnp.gnn",
        entry="APPNPProp", defines=lambda F: {"dim": F, "k": 10, "alpha": 0.1},
        pyg=lambda F, ns: ns["APPNP"](K=10, alpha=0.1, add_self_loops=False,
                                      normalize=True),
        inputs={"h0": ("N", "F")},
        call=lambda conv, x, ei, ex: conv(x, ei),
        note="gnnc's APPNPProp takes h0 as an input, PyG's APPNP uses x"),
    "gatv2": dict(
        title="GATv2Conv (4 heads)", source="dsl-examples/gatv2.gnn",
        entry="GATv2Conv",
        defines=lambda F: {"in_dim": F, "out_dim": F // HEADS,
                           "heads": HEADS},
        pyg=lambda F, ns: ns["GATv2Conv"](F, F // HEADS, heads=HEADS,
                                          add_self_loops=False),
        inputs={}, call=_plain,
        note="PyG's lin_l and lin_r have biases, gnnc's layer has none"),
}


def pyg_namespace():
    """The PyG classes that the entries name."""
    import torch
    import torch_geometric.nn as nn
    from torch_geometric.nn.models.schnet import CFConv, ShiftedSoftplus
    ns = {"torch": torch, "CFConv": CFConv, "ShiftedSoftplus": ShiftedSoftplus}
    for name in dir(nn):
        if name[:1].isupper():
            ns[name] = getattr(nn, name)
    return ns


def layer_key(name):
    """The benchmark's layer name of a library entry."""
    return "lib_" + name


def entry_of(layer):
    """The LIBRARY entry of a benchmark layer name, or None."""
    if layer.startswith("lib_"):
        return LIBRARY.get(layer[4:])
    return None
