"""gnnc layers and models as torch.nn.Modules (docs/python.md).

    import gnnc.torch as gt
    conv = gt.load("gat.gnn", "GATConv", in_dim=64, out_dim=8, heads=8)
    out = conv(x, edge_index)
    out.sum().backward()

`load` compiles the definition with gnnc, builds the generated C++ and
returns a module whose parameters are named as in the .gnn file. Calls go
through the generated entry points: the plain forward without autograd,
`F.train` and `F.backward` with it.
"""

import math
import weakref

import torch

from . import _build
from ._build import BuildError, GnncError

__all__ = ["load", "Graph", "GnnModule", "GnncError", "BuildError",
           "as_graph", "from_pyg_state_dict", "to_pyg_state_dict",
           "set_buffer_cache_limit", "empty_buffer_cache", "buffer_cache_stats"]


def _parse_init(text):
    """'glorot' -> ('glorot', 0.0); 'normal(std=0.1)' -> ('normal', 0.1)."""
    if "(" not in text:
        return text, 0.0
    name, inside = text.split("(", 1)
    inside = inside.rstrip(")")
    if "=" in inside:
        inside = inside.split("=", 1)[1]
    return name, float(inside)


class Graph:
    """A graph in the runtime's layout (CSR by destination and CSC by
    source), built once from an edge list. Reuse one across layers and
    steps; `as_graph` caches it on the tensor it was built from."""

    def __init__(self, native):
        self._native = native
        self._uploads = {}

    def _on(self, device):
        """The native graph for a call on `device`: this one for the CPU
        (None), else its upload to that GPU, made once on the device's
        current stream and kept."""
        if device is None:
            return self._native
        idx = device.index
        if idx not in self._uploads:
            glue = _build.cuda_glue()
            with torch.cuda.device(idx):
                self._uploads[idx] = glue.upload_graph(
                    self._native, idx, torch.cuda.current_stream(idx).cuda_stream)
        return self._uploads[idx]

    @property
    def num_src(self):
        return self._native.num_src

    @property
    def num_dst(self):
        return self._native.num_dst

    @property
    def num_nodes(self):
        return self._native.num_dst

    @property
    def num_edges(self):
        return self._native.num_edges

    def __repr__(self):
        return "gnnc.torch.Graph(num_src=%d, num_dst=%d, num_edges=%d)" % (
            self.num_src, self.num_dst, self.num_edges)

    @staticmethod
    def from_edge_index(edge_index, num_nodes=None, num_dst=None):
        """edge_index: int64 [2, E], row 0 the sources, row 1 the
        destinations. num_nodes: the vertices (the sources of a block, whose
        destinations are num_dst); by default one more than the largest
        index."""
        if not isinstance(edge_index, torch.Tensor):
            raise TypeError("gnnc: edge_index must be a tensor, not %s" %
                            type(edge_index).__name__)
        if edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError("gnnc: edge_index must have shape [2, E], not %s"
                             % list(edge_index.shape))
        if edge_index.dtype != torch.long:
            raise TypeError("gnnc: edge_index must be int64 (torch.long), "
                            "not %s" % edge_index.dtype)
        ei = edge_index.detach()
        if type(ei) is not torch.Tensor:      # PyG's EdgeIndex and the like
            ei = ei.as_subclass(torch.Tensor)
        if num_nodes is None:
            num_nodes = int(ei.max()) + 1 if ei.numel() else 0
        if num_dst is None:
            num_dst = num_nodes
        return Graph(_build.glue().graph_from_edges(
            ei[0], ei[1], int(num_nodes), int(num_dst)))

    @staticmethod
    def from_csr(rowptr, col, num_src=None):
        """CSR by destination: the in-edges of destination v are
        col[rowptr[v]:rowptr[v+1]] (their sources)."""
        dst, col = _expand(rowptr, col, "rowptr", "col")
        n = rowptr.numel() - 1
        return Graph.from_edge_index(torch.stack([col, dst]),
                                     num_nodes=n if num_src is None else
                                     num_src, num_dst=n)

    @staticmethod
    def from_csc(colptr, row, num_dst=None):
        """CSC by source: the out-edges of source u are
        row[colptr[u]:colptr[u+1]] (their destinations)."""
        src, row = _expand(colptr, row, "colptr", "row")
        n = colptr.numel() - 1
        return Graph.from_edge_index(torch.stack([src, row]), num_nodes=n,
                                     num_dst=n if num_dst is None else num_dst)


def _expand(ptr, idx, pname, iname):
    """The compressed axis of a CSR or CSC pair, one entry per edge, and the
    other axis (checked)."""
    ptr, idx = _index_pair(ptr, idx, pname, iname)
    owner = torch.repeat_interleave(torch.arange(ptr.numel() - 1),
                                    ptr[1:] - ptr[:-1])
    return owner, idx


def _index_pair(ptr, idx, pname, iname):
    for t, name in ((ptr, pname), (idx, iname)):
        if not isinstance(t, torch.Tensor) or t.dtype != torch.long or \
                t.dim() != 1:
            raise TypeError("gnnc: %s must be a 1-D int64 tensor" % name)
    if ptr.numel() == 0 or int(ptr[0]) != 0 or int(ptr[-1]) != idx.numel() \
            or bool((ptr[1:] < ptr[:-1]).any()):
        raise ValueError("gnnc: %s must start at 0, never decrease and end at "
                         "len(%s) = %d" % (pname, iname, idx.numel()))
    return ptr.detach().cpu(), idx.detach().cpu()


def as_graph(obj, num_nodes=None):
    """A Graph from what PyG users pass as the graph:
    * a Graph;
    * an edge_index tensor [2, E] (also PyG's EdgeIndex);
    * a torch sparse adjacency adj_t (COO or CSR, [N, N], row = destination,
      column = source, as PyG's `adj_t`), whose values must all be 1: a
      layer computes its own edge weights;
    * a (rowptr, col) pair: CSR by destination.
    The graph built from a tensor is cached on that tensor and rebuilt only
    when it changes in place (its version counter) or num_nodes differs. A
    tensor on a GPU is read back once to build it; the graph is uploaded to
    each GPU it is used on once (`Graph._on`)."""
    if isinstance(obj, Graph):
        if num_nodes is not None and obj.num_src != num_nodes:
            raise ValueError("gnnc: the graph has %d vertices, the features "
                             "%d rows" % (obj.num_src, num_nodes))
        return obj
    if isinstance(obj, tuple) and len(obj) == 2:
        return Graph.from_csr(obj[0], obj[1], num_src=num_nodes)
    if not isinstance(obj, torch.Tensor):
        raise TypeError("gnnc: cannot use %s as a graph (pass an edge_index "
                        "tensor, a sparse adjacency, a (rowptr, col) pair or "
                        "a gnnc.torch.Graph)" % type(obj).__name__)
    key = (obj._version, num_nodes)
    cached = getattr(obj, "_gnnc_graph", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    host = obj.cpu() if obj.device.type != "cpu" else obj
    if host.layout == torch.sparse_coo or host.layout == torch.sparse_csr:
        g = _from_sparse(host, num_nodes)
    else:
        g = Graph.from_edge_index(host, num_nodes=num_nodes)
    try:
        obj._gnnc_graph = (key, g)
    except (AttributeError, RuntimeError):
        pass
    return g


def _from_sparse(adj, num_nodes):
    if adj.dim() != 2 or adj.size(0) != adj.size(1):
        raise ValueError("gnnc: a sparse adjacency must be square, not %s" %
                         list(adj.shape))
    if num_nodes is not None and adj.size(0) != num_nodes:
        raise ValueError("gnnc: the adjacency is %d x %d, the features have "
                         "%d rows" % (adj.size(0), adj.size(1), num_nodes))
    if adj.layout == torch.sparse_csr:
        values = adj.values()
        dst, src = _expand(adj.crow_indices().long(),
                           adj.col_indices().long(), "crow_indices",
                           "col_indices")
    else:
        adj = adj.coalesce()
        values = adj.values()
        dst, src = adj.indices()
    if values.numel() and not bool((values == 1).all()):
        raise ValueError("gnnc: the sparse adjacency has values other than 1; "
                         "a gnnc layer computes its own edge weights, so pass "
                         "the pattern (or an edge_index)")
    return Graph.from_edge_index(torch.stack([src.long(), dst.long()]),
                                 num_nodes=adj.size(0))


class _Entry:
    def __init__(self, info, index):
        self.index = index
        self.name = info["name"]
        self.kind = info["kind"]
        self.graphs = list(info["graphs"])
        self.sizes = list(info["sizes"])
        self.args = info["args"]
        self.results = info["results"]


class _Target:
    """A module's library for one device: the C++ one for the CPU (device
    None), a CUDA one per GPU architecture, and its entries by name."""

    def __init__(self, lib, device, entries=None):
        self.lib, self.device = lib, device
        self.entries = entries if entries is not None else _entries(lib)


def _entries(lib):
    """{name: _Entry} of a loaded module's reflection table."""
    return {e["name"]: _Entry(e, i) for i, e in enumerate(lib.entries())}


def _device_of(tensors):
    """None for CPU tensors, else the GPU of the first tensor (the others
    must be there too: the extension checks every one)."""
    for t in tensors:
        return None if t.device.type == "cpu" else t.device
    return None


def _run(mod, entry, graphs, sizes, tensors, training, seed, skip=()):
    """Calls `entry` of `mod` on the device of `tensors` with new outputs of
    the shapes it reports (None for the results named in `skip`) and
    returns them. On the CPU, large outputs come from the buffer cache
    (`buffer_cache_stats`): a buffer whose tensor died is handed out again,
    without the page faults of fresh memory. On a GPU, the call is queued on
    PyTorch's current stream of that device and the outputs come from
    PyTorch's caching allocator."""
    target = mod._target(_device_of(tensors))
    lib, e = target.lib, target.entries[entry.name]
    natives = [g._on(target.device) for g in graphs]
    shapes = lib.shapes(e.index, natives, sizes)[len(e.args):]
    if target.device is None:
        outs = [None if r["name"] in skip else lib.empty(s)
                for r, s in zip(e.results, shapes)]
        lib.call(e.index, natives, sizes, list(tensors), outs, training,
                 seed, -1, 0)
        return outs
    idx = target.device.index
    with torch.cuda.device(idx):
        outs = [None if r["name"] in skip else
                torch.empty(s, device=target.device)
                for r, s in zip(e.results, shapes)]
        lib.call(e.index, natives, sizes, list(tensors), outs, training,
                 seed, idx, torch.cuda.current_stream(idx).cuda_stream)
    return outs


class _Call(torch.autograd.Function):
    """A call that autograd records: F.train now (keeping what it saves),
    F.backward in backward(). Calls that need no gradient run the plain F
    (GnnModule._call_plain)."""

    @staticmethod
    def forward(ctx, mod, graphs, sizes, training, seed, *tensors):
        tr = mod._train
        outs = _run(mod, tr, graphs, sizes, tensors, training, seed)
        saved = {r["name"]: t for r, t in zip(tr.results, outs)
                 if r["role"] == "saved"}
        ctx.mod, ctx.graphs, ctx.sizes = mod, graphs, sizes
        ctx.training, ctx.seed = training, seed
        ctx.saved_names = list(saved)
        ctx.save_for_backward(*tensors, *saved.values())
        return outs[0]

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, cotangent):
        mod = ctx.mod
        fwd, bwd = mod._train, mod._backward
        stored = ctx.saved_tensors
        nargs = len(fwd.args)
        by_name = {a["name"]: t for a, t in zip(fwd.args, stored[:nargs])}
        saved = dict(zip(ctx.saved_names, stored[nargs:]))
        inputs = []
        for a in bwd.args:
            if a["role"] == "saved":
                inputs.append(saved[a["name"]])
            elif a["name"] in by_name:
                inputs.append(by_name[a["name"]])
            else:                       # the cotangent, after the saved ones
                inputs.append(cotangent.contiguous())
        # The gradient of an input nobody wants is passed as null: the
        # backward skips its work (docs/abi.md).
        skip = {a["name"] for a, need in
                zip(fwd.args, ctx.needs_input_grad[5:])
                if a["role"] == "input" and not need}
        outs = _run(mod, bwd, ctx.graphs, ctx.sizes, inputs, ctx.training,
                    ctx.seed, skip)
        grads = {r["name"]: t for r, t in zip(bwd.results, outs)}
        result = [None] * 5
        for a, need in zip(fwd.args, ctx.needs_input_grad[5:]):
            result.append(grads.get(a["name"]) if need else None)
        return tuple(result)


class GnnModule(torch.nn.Module):
    """A compiled gnnc layer or model. Parameters are registered under their
    .gnn paths ("conv1.W" is the parameter W of submodule conv1), so
    state_dict() keys are those paths.

    forward(*args): the graph (anything `as_graph` takes) and the tensor
    inputs, in any order relative to each other (PyG's `conv(x, edge_index)`
    and gnnc's `conv(g, x)` both work); tensor inputs keep the order of the
    .gnn definition. Keyword `num_nodes` overrides the vertex count taken
    from the first input's rows."""

    def __init__(self, library, entry, source, defines):
        super().__init__()
        glue = _build.glue()
        self._lib = glue.Module(library)
        self.source, self.entry, self.defines = source, entry, dict(defines)
        entries = _entries(self._lib)
        if entry is None:
            tops = [e for e in entries.values() if e.kind in ("layer", "model")
                    and "." not in e.name]
            if len(tops) != 1:
                raise ValueError("gnnc: %s defines %s; name the one to load" %
                                 (source, ", ".join(sorted(e.name for e in
                                                           tops))))
            entry = tops[0].name
        if entry not in entries:
            raise ValueError("gnnc: %s has no layer or model %r" %
                             (source, entry))
        self._targets = {None: _Target(self._lib, None, entries)}
        self._forward = entries[entry]
        self._train = entries.get(entry + ".train")
        self._backward = entries.get(entry + ".backward")
        if self._train is None or self._backward is None:
            raise BuildError("gnnc: %s was built without %s.train and "
                             "%s.backward" % (library, entry, entry))
        if len(self._forward.results) != 1:
            raise ValueError("gnnc: %s returns %d tensors; gnnc.torch calls "
                             "functions with one result" %
                             (entry, len(self._forward.results)))
        for g in self._forward.graphs:
            if g not in ("graph", "block"):
                raise ValueError("gnnc: %s takes a %s graph, which gnnc.torch "
                                 "does not pass yet" % (entry, g))
        self._param_paths, self._buffer_paths = [], []
        for a in self._forward.args:
            if a["role"] not in ("param", "buffer"):
                continue
            try:
                shape = [int(d) for d in a["dims"]]
            except ValueError:
                raise ValueError("gnnc: parameter %s has a shape that depends "
                                 "on the graph (%s)" % (a["name"], a["dims"]))
            owner = self
            parts = a["name"].split(".")
            for p in parts[:-1]:
                if p not in owner._modules:
                    owner.add_module(p, torch.nn.Module())
                owner = owner._modules[p]
            if a["role"] == "buffer":
                # State that is not trained (batch_norm's running
                # statistics): a training forward updates it in place, as
                # torch's BatchNorm updates its buffers.
                owner.register_buffer(parts[-1], torch.empty(shape))
                self._buffer_paths.append((a["name"], a["init"]))
                continue
            owner.register_parameter(parts[-1],
                                     torch.nn.Parameter(torch.empty(shape)))
            self._param_paths.append((a["name"], a["init"]))
        self._inputs = [a for a in self._forward.args if a["role"] == "input"]
        self.reset_parameters()

    def reset_parameters(self):
        """Initialises every parameter and buffer by its .gnn initialiser,
        from a seed drawn from PyTorch's default generator
        (torch.manual_seed)."""
        seed = int(torch.randint(0, 2 ** 62, ()).item())
        params = dict(self.named_parameters())
        buffers = dict(self.named_buffers())
        glue = _build.glue()
        with torch.no_grad():
            for paths, tensors in ((self._param_paths, params),
                                   (self._buffer_paths, buffers)):
                for path, init in paths:
                    name, arg = _parse_init(init)
                    glue.init_param(name, arg, tensors[path].data, seed, path)

    def extra_repr(self):
        text = "%s from %s" % (self._forward.name, self.source)
        if self.defines:
            text += ", " + ", ".join("%s=%s" % kv for kv in
                                     sorted(self.defines.items()))
        return text

    def _split(self, args, num_nodes):
        graphs, tensors = [], []
        for a in args:
            if isinstance(a, torch.Tensor) and a.is_floating_point() and \
                    a.layout == torch.strided:
                tensors.append(a)
            else:
                graphs.append(a)
        if len(graphs) != len(self._forward.graphs):
            raise TypeError("gnnc: %s takes %d graph(s) and %d tensor(s), got "
                            "%d and %d" % (self._forward.name,
                                           len(self._forward.graphs),
                                           len(self._inputs), len(graphs),
                                           len(tensors)))
        if len(tensors) != len(self._inputs):
            raise TypeError("gnnc: %s takes %d tensor input(s) (%s), got %d" %
                            (self._forward.name, len(self._inputs),
                             ", ".join(a["name"] for a in self._inputs),
                             len(tensors)))
        if num_nodes is None and tensors and len(graphs) == 1 and \
                self._inputs[0]["dims"][:1] == ["N"]:
            num_nodes = tensors[0].size(0) if tensors[0].dim() else None
        return [as_graph(g, num_nodes) for g in graphs], tensors

    def _sizes(self, tensors):
        sizes = []
        for name in self._forward.sizes:
            for a, t in zip(self._inputs, tensors):
                if name in a["dims"] and t.dim() == len(a["dims"]):
                    sizes.append(t.size(a["dims"].index(name)))
                    break
            else:
                raise ValueError("gnnc: cannot tell the size %s of %s from "
                                 "its inputs" % (name, self._forward.name))
        return sizes

    def forward(self, *args, num_nodes=None):
        graphs, tensors = self._split(args, num_nodes)
        sizes = self._sizes(tensors)
        params = dict(self.named_parameters())
        buffers = dict(self.named_buffers())
        ordered = self._arguments(
            tensors, [params[path] for path, _ in self._param_paths],
            [buffers[path] for path, _ in self._buffer_paths])
        seed = int(torch.randint(0, 2 ** 62, ()).item()) if self.training \
            else 0
        if torch.is_grad_enabled() and any(t.requires_grad for t in ordered):
            return _Call.apply(self, graphs, sizes, self.training, seed,
                               *ordered)
        return self._call_plain(graphs, sizes, ordered, seed)

    def _arguments(self, tensors, params, buffers=()):
        """The entry point's tensor arguments: `tensors` (the inputs),
        `params` and `buffers` (each in declaration order), interleaved as
        the .gnn declares."""
        by_role = {"input": iter(tensors), "param": iter(params),
                   "buffer": iter(buffers)}
        return [next(by_role[a["role"]]) for a in self._forward.args]

    def _call_plain(self, graphs, sizes, tensors, seed):
        return _run(self, self._forward, graphs, sizes,
                    [t.detach() for t in tensors], self.training, seed)[0]

    def _target(self, device):
        """The library for calls on `device` (None: the CPU). The CUDA one is
        built on the first call on a GPU (gnnc --target=cuda, nvcc, for the
        GPU's architecture or $GNNC_TORCH_CUDA_ARCH) and kept."""
        key = None if device is None else device.index
        target = self._targets.get(key)
        if target is None:
            archs = _build.cuda_arch(device)
            library = _build.build_module(self.source, self._forward.name,
                                          self.defines, cuda_archs=archs)
            lib = _build.cuda_glue().Module(library, True)
            target = self._targets[key] = _Target(lib, device)
        return target


def set_buffer_cache_limit(nbytes):
    """Keeps at most `nbytes` of output buffers (of 1 MiB and more) for
    reuse after their tensors die (1 GiB by default; 0 keeps none)."""
    _build.glue().set_buffer_cache_limit(int(nbytes))


def empty_buffer_cache():
    """Frees the output buffers kept for reuse (tensors alive keep theirs)."""
    _build.glue().empty_buffer_cache()


def buffer_cache_stats():
    """The buffer cache: free_bytes and free_buffers kept now, limit_bytes,
    and how many large outputs were allocated and how many reused."""
    return dict(_build.glue().buffer_cache_stats())


def load(path, name=None, *, verbose=False, **hparams):
    """Compiles layer or model `name` of the .gnn file `path` (the only one
    when None) with the given hyper-parameters (gnnc -D NAME=VALUE), builds
    it (cached by the hash of the source, the options and gnnc) and returns
    a GnnModule. Raises GnncError with gnnc's message for a bad .gnn file."""
    library = _build.build_module(path, name, hparams, verbose=verbose)
    return GnnModule(library, name, path, hparams)


# --- PyG parameter mapping -------------------------------------------------

def _pyg_rules(kind):
    """(gnnc name, PyG name, to_gnnc, to_pyg) for the PyG layer matching each
    layer of dsl-examples/. The transposes follow PyG's Linear (weight is
    [out, in]; gnnc's W is [in, out])."""
    t = (lambda w: w.t().contiguous())
    same = (lambda w: w.clone())
    head = (lambda a: a.reshape(a.shape[-2:]).clone())       # [1,H,C]->[H,C]
    unhead = (lambda a: a.unsqueeze(0).clone())
    # A PyG name may be a tuple of the names different PyG versions use
    # (GATConv's one linear is lin_src up to 2.4, lin from 2.5 on).
    rules = {
        "GCNConv": [("W", "lin.weight", t, t), ("b", "bias", same, same)],
        "GATConv": [("W", ("lin.weight", "lin_src.weight"), t, t),
                    ("a_src", "att_src", head, unhead),
                    ("a_dst", "att_dst", head, unhead),
                    ("b", "bias", same, same)],
        "SAGEConv": [("W_self", "lin_r.weight", t, t),
                     ("W_neigh", "lin_l.weight", t, t),
                     ("b", "lin_l.bias", same, same)],
        "SAGEPoolConv": [("W_pool", "lin.weight", t, t),
                         ("b_pool", "lin.bias", same, same),
                         ("W_self", "lin_r.weight", t, t),
                         ("W_neigh", "lin_l.weight", t, t),
                         ("b", "lin_l.bias", same, same)],
        "GINConv": [("W1", "nn.0.weight", t, t), ("b1", "nn.0.bias", same, same),
                    ("W2", "nn.2.weight", t, t), ("b2", "nn.2.bias", same, same)],
    }
    if kind not in rules:
        raise ValueError("gnnc: no PyG mapping for %r (known: %s)" %
                         (kind, ", ".join(sorted(rules))))
    return rules[kind]


def from_pyg_state_dict(kind, state, prefix=""):
    """A gnnc state_dict from a PyG layer's state_dict: kind is the gnnc
    layer (GCNConv, GATConv, SAGEConv of dsl-examples/), prefix the gnnc path
    of the layer inside a model ("conv1.")."""
    out = {}
    for ours, theirs, to_gnnc, _ in _pyg_rules(kind):
        names = theirs if isinstance(theirs, tuple) else (theirs,)
        found = [n for n in names if n in state]
        if not found:
            raise KeyError("gnnc: the PyG state_dict has no %s" %
                           " or ".join(repr(n) for n in names))
        out[prefix + ours] = to_gnnc(state[found[0]])
    return out


def to_pyg_state_dict(kind, state, prefix="", pyg_names=None):
    """The inverse of from_pyg_state_dict. pyg_names: the keys of the target
    PyG layer's state_dict, to pick between the names of PyG versions."""
    out = {}
    for ours, theirs, _, to_pyg in _pyg_rules(kind):
        names = theirs if isinstance(theirs, tuple) else (theirs,)
        name = next((n for n in names if pyg_names is None or
                     n in pyg_names), names[0])
        out[name] = to_pyg(state[prefix + ours])
    return out
