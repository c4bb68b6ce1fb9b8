"""Tests of gnnc.torch: .gnn layers as torch.nn.Modules.

References: the PyG goldens of tests/goldens (forward and every gradient,
float64, produced by tools/make_goldens.py), torch.autograd.gradcheck
(finite differences), and values computed here by hand.

Run: GNNC_PREFIX=<installed gnnc> python3 -m unittest discover tests/python
"""

import json
import os
import unittest

import numpy as np
import torch

import gnnc.torch as gt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GOLDENS = os.path.join(ROOT, "tests", "goldens")
EXAMPLES = os.path.join(ROOT, "dsl-examples")

torch.set_num_threads(1)


def example(name):
    return os.path.join(EXAMPLES, name)


def load_case(case):
    folder = os.path.join(GOLDENS, case)
    with open(os.path.join(folder, "case.json")) as f:
        meta = json.load(f)
    return folder, meta


def shared_array(meta, key):
    """An array of the Cora the goldens name: ../shared/datasets/cora when
    it is there, else the bundle runtime/data/cora.gnnd, which holds the
    same arrays (tools/pack_datasets.py packs them losslessly)."""
    path = os.path.join(ROOT, meta["graph_path"], key + ".npy")
    if os.path.exists(path):
        return np.load(path)
    name = os.path.basename(os.path.normpath(meta["graph_path"]))
    if name not in _BUNDLES:
        import sys
        sys.path.insert(0, os.path.join(ROOT, "tools"))
        import pack_datasets
        with open(os.path.join(ROOT, "runtime", "data", name + ".gnnd"),
                  "rb") as f:
            _BUNDLES[name] = pack_datasets.decode(f.read())
    return _BUNDLES[name][key]


_BUNDLES = {}


def case_graph(folder, meta, n):
    if meta["graph"] != "cora":   # the small or the power-law graph
        ei = np.load(os.path.join(folder, "edge_index.npy"))
    else:
        ei = shared_array(meta, "edge_index")
    ei = torch.from_numpy(ei.astype(np.int64))
    if meta["self_loops"]:
        loops = torch.arange(n).repeat(2, 1)
        ei = torch.cat([ei, loops], dim=1)
    return ei


def case_input(folder, meta, name):
    value = meta["inputs"][name]
    if value == "cora":
        a = shared_array(meta, "x")
    else:
        a = np.load(os.path.join(folder, value))
    return torch.from_numpy(a.astype(np.float32))


def close(test, got, want, what, rel=3e-5):
    want = torch.as_tensor(want, dtype=torch.float64)
    got = got.detach().to(torch.float64)
    test.assertEqual(tuple(got.shape), tuple(want.shape), what)
    scale = max(1.0, float(want.abs().max())) if want.numel() else 1.0
    err = float((got - want).abs().max()) if want.numel() else 0.0
    test.assertLessEqual(err, rel * scale,
                         "%s: max |got - want| = %g (scale %g)" %
                         (what, err, scale))


# The small cases, and Cora cases whose inputs are in ../shared/datasets.
GOLDEN_CASES = ["gcn_small", "gcn_small_selfloops", "gat_small_concat",
                "gat_small_mean", "gat_small_concat_selfloops",
                "sage_mean_small", "sage_max_small", "sage_max_small_pool7",
                "gin_small", "gin_small_weighted", "appnp_small", "gcn_cora",
                "gat_cora_concat", "sage_mean_cora",
                # The layer library (gnn/): no parameter, five, two inputs.
                "lgconv_small", "leconv_small", "gcn2conv_small_selfloops",
                # Attention, edge features, a matrix per edge on the
                # power-law graph.
                "transformerconv_small", "gineconv_small", "nnconv_power",
                # g.std and the degree scalers; layer_norm; two inputs per
                # edge and cos.
                "pnaconv_power", "genconv_small_layernorm", "cfconv_small",
                # batch_norm: buffers updated in training, read in eval.
                "genconv_small_batchnorm", "genconv_power_batchnorm_eval"]


class Goldens(unittest.TestCase):
    """Forward and every stored gradient against PyG (float64 goldens;
    gnnc computes in float32: 3e-5 of max(1, max |reference|))."""

    def run_case(self, case):
        folder, meta = load_case(case)
        definition = meta["definition"]
        if meta.get("variant"):
            definition = "GATConvMean"
        layer = gt.load(os.path.join(ROOT, meta["gnn"]), definition,
                        **meta["hparams"])
        # Parameters and buffers (batch_norm's running statistics) alike.
        state = dict(layer.named_parameters())
        state.update(layer.named_buffers())
        with torch.no_grad():
            for name in meta["params"]:
                p = np.load(os.path.join(folder, "params", name + ".npy"))
                state[name].copy_(torch.from_numpy(p.astype(np.float32)))
        inputs = {name: case_input(folder, meta, name).requires_grad_()
                  for name in meta["inputs"]}
        n = meta["num_nodes"]
        ei = case_graph(folder, meta, n)
        layer.train(meta.get("training", False))
        out = layer(*inputs.values(), ei)
        expected = os.path.join(folder, "expected")
        close(self, out, np.load(os.path.join(expected, "out.npy")),
              case + " out")
        # The module's buffers as PyG's were after its forward.
        buffers = dict(layer.named_buffers())
        for name, path in meta.get("buffers", {}).items():
            close(self, buffers[name], np.load(os.path.join(folder, path)),
                  "%s buffer %s" % (case, name))
        grads = meta.get("gradients", {})
        if not grads or not grads.get("cotangent"):
            return
        c = np.load(os.path.join(folder, grads["cotangent"]))
        out.backward(torch.from_numpy(c.astype(np.float32)))
        for name, path in grads["inputs"].items():
            close(self, inputs[name].grad, np.load(os.path.join(folder, path)),
                  "%s grad_%s" % (case, name))
        params = dict(layer.named_parameters())
        for name, path in grads["params"].items():
            close(self, params[name].grad,
                  np.load(os.path.join(folder, path)),
                  "%s grad %s" % (case, name))

    def test_cases(self):
        for case in GOLDEN_CASES:
            with self.subTest(case=case):
                self.run_case(case)


def random_graph(n, e, seed):
    """A graph with every awkward feature: a vertex without in-edges (and one
    without any edge), self-loops, and repeated edges."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, n - 2, (e,), generator=g)
    dst = torch.randint(0, n - 3, (e,), generator=g)
    extra = torch.tensor([[1, 1, 2, 2, 0, n - 2],
                          [1, 1, 2, 0, 3, 1]])      # loops, a repeat, n-2 -> 1
    return torch.cat([torch.stack([src, dst]), extra], dim=1)


class GradCheck(unittest.TestCase):
    """torch.autograd.gradcheck (central differences) of x and every
    parameter. The kernels compute in float32, so the differences use
    eps = 1e-3 and compare with atol = 1e-3, rtol = 1e-2: float32 rounding
    in f(x + eps) - f(x - eps) is about 1e-4 here, and eps = 1e-2 would let
    the perturbation cross ReLU and LeakyReLU kinks."""

    def check(self, layer, ei, extra=()):
        torch.manual_seed(3)
        n = int(ei.max()) + 3
        x = torch.randn(n, int(layer._inputs[0]["dims"][1]),
                        requires_grad=True)
        layer.eval()
        params = list(layer.parameters())

        def f(x, *ps):
            with torch.no_grad():
                for p, v in zip(params, ps):
                    p.copy_(v)
            # The parameters as leaves of this call: route them through.
            return _with_params(layer, ps, x, ei, *extra)

        # Random parameters: zero biases would put vertices without
        # in-edges exactly on ReLU's kink, where finite differences see a
        # slope of 1/2.
        inputs = (x,) + tuple((0.5 * torch.randn(p.shape)).requires_grad_()
                              for p in params)
        self.assertTrue(torch.autograd.gradcheck(
            f, inputs, eps=1e-3, atol=1e-3, rtol=1e-2, nondet_tol=0.0))

    def test_layers(self):
        ei = random_graph(9, 20, seed=1)
        cases = [("gcn.gnn", "GCNConv", dict(in_dim=3, out_dim=4)),
                 ("gat.gnn", "GATConv", dict(in_dim=3, out_dim=2, heads=2)),
                 ("sage_mean.gnn", "SAGEConv", dict(in_dim=3, out_dim=4)),
                 ("sage_max.gnn", "SAGEPoolConv",
                  dict(in_dim=3, out_dim=2, pool_dim=4))]
        for file, name, hp in cases:
            with self.subTest(layer=name):
                self.check(gt.load(example(file), name, **hp), ei)

    def test_gin_edge_weights(self):
        ei = random_graph(9, 20, seed=2)
        layer = gt.load(example("gin.gnn"), "GINConv", in_dim=3, out_dim=2,
                        mlp_dim=4, eps=0.5)
        w = torch.rand(ei.size(1), generator=torch.Generator().manual_seed(5))
        self.check(layer, ei, extra=(w,))

    def test_model(self):
        ei = random_graph(9, 20, seed=4)
        model = gt.load(example("gcn.gnn"), "GCN", in_dim=3, hidden=5,
                        classes=2)
        self.check(model, ei)

    def test_every_input_gets_its_gradient(self):
        """Attention over scores given as an input named `s` (which the
        printer names `s_1` in C++): both inputs' gradients, by gradcheck.
        The reflection table must name the input as the .gnn file does,
        or its gradient is lost on the way back."""
        ei = random_graph(9, 20, seed=6)
        layer = gt.load(os.path.join(ROOT, "tests", "Target", "Exec", "Inputs",
                                     "softmax_limits.gnn"), "SoftmaxLimits")
        self.assertEqual([a["name"] for a in layer._forward.args], ["s", "x"])
        torch.manual_seed(4)
        n = int(ei.max()) + 3
        s = torch.randn(n, 1, requires_grad=True)
        x = torch.randn(n, 2, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(
            lambda s, x: layer(s, x, ei), (s, x), eps=1e-3, atol=1e-3,
            rtol=1e-2, nondet_tol=0.0))
        layer(s, x, ei).sum().backward()
        self.assertIsNotNone(s.grad)
        self.assertGreater(float(s.grad.abs().sum()), 0.0)


def _with_params(layer, ps, x, ei, *extra):
    """Calls `layer` with the tensors `ps` standing for its parameters, so
    that gradcheck differentiates with respect to them."""
    graphs = [gt.as_graph(ei, x.size(0))]
    tensors = [x] + list(extra)
    sizes = layer._sizes(tensors)
    return gt._Call.apply(layer, graphs, sizes, False, 0,
                          *layer._arguments(tensors, ps))


class Module(unittest.TestCase):
    def test_parameter_names_and_init(self):
        torch.manual_seed(7)
        model = gt.load(example("gcn.gnn"), "GCN", in_dim=10, hidden=6,
                        classes=3)
        names = [n for n, _ in model.named_parameters()]
        self.assertEqual(names, ["conv1.W", "conv1.b", "conv2.W", "conv2.b"])
        self.assertEqual(list(model.state_dict()), names)
        w = model.conv1.W.detach()
        bound = (6.0 / (10 + 6)) ** 0.5               # glorot: U(-s, s)
        self.assertLessEqual(float(w.abs().max()), bound)
        self.assertGreater(float(w.abs().max()), 0.5 * bound)
        self.assertEqual(float(model.conv1.b.abs().max()), 0.0)   # zeros
        # Seeded by torch.manual_seed.
        torch.manual_seed(7)
        again = gt.load(example("gcn.gnn"), "GCN", in_dim=10, hidden=6,
                        classes=3)
        self.assertTrue(torch.equal(again.conv1.W, model.conv1.W))
        torch.manual_seed(8)
        other = gt.load(example("gcn.gnn"), "GCN", in_dim=10, hidden=6,
                        classes=3)
        self.assertFalse(torch.equal(other.conv1.W, model.conv1.W))
        # state_dict round trip.
        other.load_state_dict(model.state_dict())
        self.assertTrue(torch.equal(other.conv2.W, model.conv2.W))

    def test_grad_x_skipped_gives_same_parameter_gradients(self):
        ei = random_graph(30, 90, seed=3)
        torch.manual_seed(0)
        layer = gt.load(example("gat.gnn"), "GATConv", in_dim=6, out_dim=3,
                        heads=2)
        x = torch.randn(31, 6)
        c = torch.randn(31, 6)
        grads = []
        for need_x in (True, False):
            layer.zero_grad()
            xi = x.clone().requires_grad_(need_x)
            layer(xi, ei).backward(c)
            grads.append([p.grad.clone() for p in layer.parameters()])
            self.assertEqual(xi.grad is not None, need_x)
        for a, b in zip(*grads):
            self.assertTrue(torch.equal(a, b))

    def test_dropout_follows_mode_and_seed(self):
        ei = random_graph(40, 150, seed=5)
        torch.manual_seed(0)
        model = gt.load(example("gat.gnn"), "GAT", in_dim=8, hidden=4,
                        heads=2, classes=3)
        x = torch.randn(41, 8)
        model.eval()
        a, b = model(x, ei), model(x, ei)
        self.assertTrue(torch.equal(a, b))
        model.train()
        torch.manual_seed(1)
        c = model(x, ei)
        torch.manual_seed(1)
        d = model(x, ei)
        e = model(x, ei)
        self.assertTrue(torch.equal(c, d))
        self.assertFalse(torch.equal(d, e))
        self.assertFalse(torch.equal(c, a))
        # Training output with gradients: the same mask in F.train and
        # F.backward, checked against the plain forward with the same seed.
        torch.manual_seed(1)
        with_grad = model(x.clone().requires_grad_(), ei)
        self.assertTrue(torch.equal(with_grad.detach(), c))

    def test_graph_forms_agree_and_are_cached(self):
        ei = random_graph(12, 40, seed=6)
        n = 13
        torch.manual_seed(0)
        layer = gt.load(example("sage_mean.gnn"), "SAGEConv", in_dim=4,
                        out_dim=3)
        x = torch.randn(n, 4)
        ref = layer(x, ei)
        self.assertIs(gt.as_graph(ei, n), gt.as_graph(ei, n))
        g = gt.as_graph(ei, n)
        self.assertEqual((g.num_nodes, g.num_edges), (n, ei.size(1)))
        self.assertTrue(torch.equal(layer(g, x), ref))       # gnnc order
        # A sparse adjacency holds each edge once: compare with the
        # de-duplicated edge list.
        dedup = torch.unique(ei, dim=1)
        self.assertTrue(torch.equal(layer(x, _pattern(dedup, n)),
                                    layer(x, dedup)))
        self.assertTrue(torch.equal(layer(x, _pattern(dedup, n)
                                          .to_sparse_csr()),
                                    layer(x, dedup)))
        with self.assertRaises(ValueError):
            layer(x, _pattern(dedup, n) * 2.0)
        order = torch.argsort(dedup[1] * n + dedup[0])
        dst, src = dedup[1][order], dedup[0][order]
        rowptr = torch.zeros(n + 1, dtype=torch.long)
        rowptr[1:] = torch.cumsum(torch.bincount(dst, minlength=n), 0)
        self.assertTrue(torch.allclose(layer(x, (rowptr, src)),
                                       layer(x, dedup), atol=1e-6))
        self.assertTrue(torch.allclose(
            layer(x, gt.Graph.from_csr(rowptr, src)), layer(x, dedup),
            atol=1e-6))
        corder = torch.argsort(dedup[0] * n + dedup[1])
        src_c, dst_c = dedup[0][corder], dedup[1][corder]
        colptr = torch.zeros(n + 1, dtype=torch.long)
        colptr[1:] = torch.cumsum(torch.bincount(src_c, minlength=n), 0)
        self.assertTrue(torch.allclose(
            layer(x, gt.Graph.from_csc(colptr, dst_c)), layer(x, dedup),
            atol=1e-6))
        bad = rowptr.clone()
        bad[-1] -= 1                                 # does not end at E
        with self.assertRaises(ValueError):
            gt.Graph.from_csr(bad, src)
        # An in-place change of the edge_index rebuilds the graph.
        ei2 = ei.clone()
        g1 = gt.as_graph(ei2, n)
        ei2[0, 0] = (ei2[0, 0] + 1) % n
        self.assertIsNot(gt.as_graph(ei2, n), g1)


    def test_reused_workspace_across_sizes(self):
        """A module reuses its workspace; calls on graphs of other sizes in
        between (a larger one grows it) leave results unchanged."""
        torch.manual_seed(0)
        layer = gt.load(example("gat.gnn"), "GATConv", in_dim=4, out_dim=3,
                        heads=2)
        layer.eval()
        small, big = random_graph(10, 30, seed=8), random_graph(60, 400, 9)
        xs, xb = torch.randn(11, 4), torch.randn(61, 4)
        first = layer(xs, small)
        big_out = layer(xb, big)
        self.assertTrue(torch.equal(layer(xs, small), first))
        self.assertTrue(torch.equal(layer(xb, big), big_out))

    def test_buffer_cache_reuses_dead_results_only(self):
        """Results of 1 MiB and more come from the buffer cache: a live
        result is never handed out again, a dead one is, and the values of
        every result are its own."""
        torch.manual_seed(0)
        layer = gt.load(example("sage_mean.gnn"), "SAGEConv", in_dim=8,
                        out_dim=64)
        n = 5000                                    # 5000 x 64 floats: 1.2 MiB
        ei = random_graph(n - 1, 20000, seed=10)
        x, y = torch.randn(n, 8), torch.randn(n, 8)
        gt.empty_buffer_cache()
        a = layer(x, ei)
        want = a.clone()
        b = layer(y, ei)                            # a is alive
        self.assertNotEqual(a.data_ptr(), b.data_ptr())
        self.assertTrue(torch.equal(a, want))
        before = gt.buffer_cache_stats()
        ptr = a.data_ptr()
        del a
        self.assertEqual(gt.buffer_cache_stats()["free_buffers"],
                         before["free_buffers"] + 1)
        c = layer(x, ei)
        self.assertEqual(c.data_ptr(), ptr)         # a's memory, reused
        self.assertEqual(gt.buffer_cache_stats()["reused"],
                         before["reused"] + 1)
        self.assertTrue(torch.equal(c, want))
        self.assertFalse(torch.equal(b, want))
        # A limit of 0 keeps nothing; a negative one is an error.
        gt.set_buffer_cache_limit(0)
        del b, c
        self.assertEqual(gt.buffer_cache_stats()["free_bytes"], 0)
        gt.set_buffer_cache_limit(1 << 30)
        with self.assertRaises(ValueError):
            gt.set_buffer_cache_limit(-1)


# The layers the CUDA tests compare with the C++ module, with their output
# width.
CUDA_LAYERS = [("gcn.gnn", "GCNConv", dict(in_dim=6, out_dim=5), 5),
               ("gat.gnn", "GATConv", dict(in_dim=6, out_dim=3, heads=2), 6),
               ("sage_mean.gnn", "SAGEConv", dict(in_dim=6, out_dim=4), 4)]


def _cuda_build_available():
    try:
        prefix = gt._build.find_prefix()
        gt._build._cuda_paths(prefix)
        return True
    except gt.BuildError:
        return False


class CudaBuild(unittest.TestCase):
    """Without a GPU: the CUDA module and the CUDA bridge build (nvcc, for
    sm_90), load, and the module's reflection table, read through the C++
    layout, names the entry points, tensors and shapes of the C++ module's."""

    @unittest.skipUnless(_cuda_build_available(),
                         "no nvcc, or gnnc was built without CUDA")
    def test_cuda_module_builds_and_has_the_same_table(self):
        os.environ["GNNC_TORCH_CUDA_ARCH"] = "90"
        try:
            archs = gt._build.cuda_arch(None)
        finally:
            del os.environ["GNNC_TORCH_CUDA_ARCH"]
        self.assertEqual(archs, ["90"])
        path = gt._build.build_module(example("gcn.gnn"), "GCNConv",
                                      dict(in_dim=6, out_dim=5),
                                      cuda_archs=archs)
        glue = gt._build.cuda_glue()
        cuda_lib = glue.Module(path, True)
        self.assertTrue(cuda_lib.cuda)
        torch.manual_seed(0)
        layer = gt.load(example("gcn.gnn"), "GCNConv", in_dim=6, out_dim=5)
        cpu_lib = layer._lib
        self.assertFalse(cpu_lib.cuda)
        self.assertEqual(cuda_lib.entries(), cpu_lib.entries())
        # A host graph goes to C++ modules only; a CUDA module refuses it
        # before touching the device.
        g = gt.as_graph(random_graph(10, 30, seed=2), 11)
        with self.assertRaises(ValueError):
            cuda_lib.shapes(0, [g._native], [])
        with self.assertRaises(ValueError):
            cpu_lib.call(0, [g._native], [], [torch.zeros(11, 6)] +
                         [p.detach() for p in layer.parameters()],
                         [torch.zeros(11, 5)], False, 0, 0, 0)
        os.environ["GNNC_TORCH_CUDA_ARCH"] = "sm_90"
        try:
            with self.assertRaisesRegex(ValueError, "compute capabilities"):
                gt._build.cuda_arch(None)
        finally:
            del os.environ["GNNC_TORCH_CUDA_ARCH"]


@unittest.skipUnless(torch.cuda.is_available(),
                     "no GPU: the CUDA path of gnnc.torch runs on one")
class Cuda(unittest.TestCase):
    """The CUDA module against the C++ one: forward and every gradient."""

    def pair(self, file, name, hp):
        torch.manual_seed(0)
        cpu = gt.load(example(file), name, **hp)
        gpu = gt.load(example(file), name, **hp)
        gpu.load_state_dict(cpu.state_dict())
        cpu.eval()
        gpu.eval()
        return cpu, gpu.cuda()

    def test_forward_and_gradients_match_the_cpu(self):
        ei = random_graph(40, 160, seed=11)
        for file, name, hp, out in CUDA_LAYERS:
            cpu, gpu = self.pair(file, name, hp)
            x = torch.randn(41, hp["in_dim"])
            c = torch.randn(41, out)
            xc = x.clone().requires_grad_()
            want = cpu(xc, ei)
            want.backward(c)
            xg = x.cuda().requires_grad_()
            got = gpu(xg, ei.cuda())
            self.assertEqual(got.device.type, "cuda")
            got.backward(c.cuda())
            close(self, got.cpu(), want, name + " forward", rel=1e-4)
            close(self, xg.grad.cpu(), xc.grad, name + " grad x", rel=1e-4)
            for (pn, pc), (_, pg) in zip(cpu.named_parameters(),
                                         gpu.named_parameters()):
                self.assertEqual(pg.grad.device.type, "cuda")
                close(self, pg.grad.cpu(), pc.grad, name + " grad " + pn,
                      rel=1e-4)
            with torch.no_grad():
                close(self, gpu(x.cuda(), ei).cpu(), want, name + " plain",
                      rel=1e-4)

    def test_current_stream_and_cached_upload(self):
        cpu, gpu = self.pair("gcn.gnn", "GCNConv", dict(in_dim=6, out_dim=5))
        ei = random_graph(30, 100, seed=12)
        x = torch.randn(31, 6)
        want = cpu(x, ei)
        stream = torch.cuda.Stream()
        xg = x.cuda()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            got = gpu(xg, ei)
        stream.synchronize()
        close(self, got.cpu(), want, "on a side stream", rel=1e-4)
        g = gt.as_graph(ei, 31)
        dev = torch.device("cuda", torch.cuda.current_device())
        self.assertIs(g._on(dev), g._on(dev))
        self.assertEqual(g._on(dev).device, dev.index)

    def test_tensors_on_different_devices(self):
        _, gpu = self.pair("gcn.gnn", "GCNConv", dict(in_dim=6, out_dim=5))
        ei = random_graph(10, 30, seed=13)
        with self.assertRaisesRegex(ValueError, "is on cpu"):
            gpu.cpu()(torch.randn(11, 6).cuda(), ei)


def _pattern(ei, n):
    return torch.sparse_coo_tensor(torch.stack([ei[1], ei[0]]),
                                   torch.ones(ei.size(1)), (n, n)).coalesce()


class BadInput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        cls.layer = gt.load(example("gcn.gnn"), "GCNConv", in_dim=4,
                            out_dim=2)
        cls.ei = torch.tensor([[0, 1, 2], [1, 2, 0]])

    def expect(self, exc, text, *args, **kw):
        with self.assertRaises(exc) as cm:
            self.layer(*args, **kw)
        self.assertIn(text, str(cm.exception))

    def test_wrong_shape(self):
        self.expect(ValueError, "'x' has shape [3, 5], expected [3, 4]",
                    torch.randn(3, 5), self.ei)

    def test_wrong_dtype(self):
        self.expect(TypeError, "must be float32, not Double",
                    torch.randn(3, 4, dtype=torch.float64), self.ei)
        self.expect(TypeError, "edge_index must be int64",
                    torch.randn(3, 4), self.ei.int())

    def test_non_contiguous(self):
        self.expect(ValueError, "must be contiguous",
                    torch.randn(4, 3).t(), self.ei)

    def test_index_equal_to_n(self):
        bad = torch.tensor([[0, 3], [1, 0]])
        self.expect(ValueError, "source 3 is outside [0, 3)",
                    torch.randn(3, 4), bad)

    def test_wrong_number_of_inputs(self):
        self.expect(TypeError, "takes 1 tensor input(s) (x), got 2",
                    torch.randn(3, 4), torch.randn(3, 4), self.ei)

    def test_gnn_error_is_located(self):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                            "gnnc_torch_bad_%d.gnn" % os.getpid())
        with open(path, "w") as f:
            f.write("layer L(d: int):\n"
                    "    def forward(g: Graph, x: f32[N, d]) -> f32[N, d]:\n"
                    "        return x @ W\n")
        try:
            with self.assertRaises(gt.GnncError) as cm:
                gt.load(path, "L", d=3)
            self.assertRegex(str(cm.exception),
                             r"gnnc_torch_bad_\d+\.gnn:3:\d+: error: ")
            self.assertIn("^", str(cm.exception))
        finally:
            os.remove(path)

    def test_bad_hyper_parameter(self):
        with self.assertRaises(gt.GnncError) as cm:
            gt.load(example("gcn.gnn"), "GCNConv", in_dim=4, out_dmi=2)
        self.assertIn("out_dmi", str(cm.exception))


class PygMapping(unittest.TestCase):
    def test_gat_round_trip(self):
        """The documented mapping, on the shapes of PyG's GATConv state."""
        torch.manual_seed(0)
        layer = gt.load(example("gat.gnn"), "GATConv", in_dim=5, out_dim=4,
                        heads=3)
        pyg = {"lin.weight": torch.randn(12, 5), "att_src": torch.randn(1, 3, 4),
               "att_dst": torch.randn(1, 3, 4), "bias": torch.randn(12)}
        layer.load_state_dict(gt.from_pyg_state_dict("GATConv", pyg))
        self.assertTrue(torch.equal(layer.W, pyg["lin.weight"].t()))
        self.assertTrue(torch.equal(layer.a_src, pyg["att_src"][0]))
        back = gt.to_pyg_state_dict("GATConv", layer.state_dict(),
                                    pyg_names=list(pyg))
        for k, v in pyg.items():
            self.assertTrue(torch.equal(back[k], v), k)


if __name__ == "__main__":
    unittest.main()
