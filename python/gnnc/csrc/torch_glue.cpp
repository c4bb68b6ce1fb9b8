// Part of gnnc. The PyTorch side of gnnc.torch: graphs built from
// edge_index tensors, and calls of any entry point of a compiled module
// through its reflection table (docs/abi.md, "Reflection") with tensors.
//
// A module is a shared library built by gnnc.torch from the C++ that
// `gnnc --emit=cpp --training` prints, plus one C function,
// gnnc_torch_module_info(), returning its `gnnc_module`. This extension is
// built once per PyTorch and gnnc installation; a module is only dlopen()ed,
// so a new model compiles without PyTorch's headers.
//
// This file may be compiled with another C++ library ABI than gnnc's runtime
// (PyTorch wheels before 2.7 use -D_GLIBCXX_USE_CXX11_ABI=0), so it calls
// nothing of the runtime that passes a std::string: graphs, initialisers and
// the calls themselves go through the C functions of bridge.cpp. What it
// reads directly are the reflection tables, plain structs of Abi.h.

#include <torch/extension.h>

#include "gnnc/runtime/Abi.h"

#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;
namespace rt = gnnc::rt;

namespace {

/// The C functions of bridge.cpp, from its shared library.
struct Bridge {
  void *(*graphNew)(const int64_t *, const int64_t *, int64_t, int64_t, int64_t,
                    char *, size_t) = nullptr;
  void (*graphFree)(void *) = nullptr;
  void (*graphCounts)(const void *, int64_t *) = nullptr;
  int (*initParam)(const char *, double, const int64_t *, size_t, float *,
                   uint64_t, const char *, char *, size_t) = nullptr;
  int (*call)(const rt::EntryInfo *, const rt::CallArgs *, char *,
              size_t) = nullptr;
  int (*abiVersion)() = nullptr;
};
Bridge *TheBridge = nullptr;

template <typename F> void lookup(void *handle, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  if (!fn)
    throw std::runtime_error(std::string("gnnc: the bridge library has no ") +
                             name);
}

void loadBridge(const std::string &path) {
  if (TheBridge)
    return;
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw std::runtime_error("gnnc: cannot load " + path + ": " + dlerror());
  auto b = std::make_unique<Bridge>();
  lookup(handle, "gnnc_bridge_graph_new", b->graphNew);
  lookup(handle, "gnnc_bridge_graph_free", b->graphFree);
  lookup(handle, "gnnc_bridge_graph_counts", b->graphCounts);
  lookup(handle, "gnnc_bridge_init_param", b->initParam);
  lookup(handle, "gnnc_bridge_call", b->call);
  lookup(handle, "gnnc_bridge_abi_version", b->abiVersion);
  if (b->abiVersion() != rt::kAbiVersion)
    throw std::runtime_error("gnnc: " + path + " speaks ABI version " +
                             std::to_string(b->abiVersion()) +
                             ", this extension " +
                             std::to_string(rt::kAbiVersion));
  TheBridge = b.release();
}

const Bridge &bridge() {
  if (!TheBridge)
    throw std::runtime_error("gnnc: the bridge library is not loaded");
  return *TheBridge;
}

/// An rt::Graph owned by Python (built by the bridge): built once from an
/// edge list, then passed to every call that takes the graph.
struct TorchGraph {
  void *Handle = nullptr;
  int64_t Counts[3] = {}; // sources, destinations, edges
  TorchGraph() = default;
  TorchGraph(const TorchGraph &) = delete;
  TorchGraph &operator=(const TorchGraph &) = delete;
  ~TorchGraph() {
    if (Handle)
      TheBridge->graphFree(Handle);
  }
};

at::Tensor indexRow(const at::Tensor &t, const char *what) {
  if (t.device().type() != at::kCPU)
    throw py::value_error(std::string("gnnc: ") + what +
                          " must be on the CPU to build a graph");
  if (t.scalar_type() != at::kLong)
    throw py::type_error(std::string("gnnc: ") + what +
                         " must be int64 (torch.long), not " +
                         std::string(c10::toString(t.scalar_type())));
  if (t.dim() != 1)
    throw py::value_error(std::string("gnnc: ") + what + " must be 1-D");
  return t.contiguous();
}

std::shared_ptr<TorchGraph> graphFromEdges(const at::Tensor &src,
                                           const at::Tensor &dst,
                                           int64_t numSrc, int64_t numDst) {
  at::Tensor s = indexRow(src, "the source row of edge_index");
  at::Tensor d = indexRow(dst, "the destination row of edge_index");
  if (s.numel() != d.numel())
    throw py::value_error("gnnc: edge_index rows differ in length");
  const Bridge &br = bridge();
  auto out = std::make_shared<TorchGraph>();
  char err[1024] = {};
  {
    py::gil_scoped_release release;
    out->Handle = br.graphNew(s.data_ptr<int64_t>(), d.data_ptr<int64_t>(),
                              s.numel(), numSrc, numDst, err, sizeof err);
  }
  if (!out->Handle)
    throw py::value_error(std::string("gnnc: invalid edge_index: ") + err);
  br.graphCounts(out->Handle, out->Counts);
  return out;
}

const char *graphKindName(rt::GraphKind k) {
  switch (k) {
  case rt::GraphKind::Graph:
    return "graph";
  case rt::GraphKind::Block:
    return "block";
  case rt::GraphKind::Batched:
    return "batched";
  case rt::GraphKind::Hetero:
    return "hetero";
  }
  return "unknown";
}

py::dict tensorInfo(const rt::TensorInfo &t) {
  py::dict d;
  d["name"] = t.name;
  d["role"] = t.role;
  d["init"] = t.init;
  py::list dims;
  for (int i = 0; i < t.rank; ++i)
    dims.append(t.dims[i]);
  d["dims"] = dims;
  return d;
}

std::string shapeText(const int64_t *dims, int rank) {
  std::ostringstream os;
  os << '[';
  for (int i = 0; i < rank; ++i)
    os << (i ? ", " : "") << dims[i];
  os << ']';
  return os.str();
}

/// A compiled module: the shared library and its reflection table.
class TorchModule {
public:
  explicit TorchModule(const std::string &path) {
    Handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!Handle)
      throw std::runtime_error("gnnc: cannot load " + path + ": " + dlerror());
    using InfoFn = const rt::ModuleInfo *(*)();
    auto fn = reinterpret_cast<InfoFn>(dlsym(Handle, "gnnc_torch_module_info"));
    if (!fn)
      throw std::runtime_error("gnnc: " + path +
                               " has no gnnc_torch_module_info()");
    Info = fn();
    if (Info->abiVersion != rt::kAbiVersion)
      throw std::runtime_error(
          "gnnc: " + path + " was generated for ABI version " +
          std::to_string(Info->abiVersion) + ", this gnnc.torch speaks " +
          std::to_string(rt::kAbiVersion) + "; rebuild it");
  }
  TorchModule(const TorchModule &) = delete;
  TorchModule &operator=(const TorchModule &) = delete;
  // The library stays loaded for the life of the process: autograd graphs
  // may still hold functions that call into it.

  py::list entries() const {
    py::list out;
    for (int i = 0; i < Info->numEntries; ++i) {
      const rt::EntryInfo &e = Info->entries[i];
      py::dict d;
      d["name"] = e.name;
      d["symbol"] = e.symbol;
      d["kind"] = e.kind;
      py::list graphs, sizes, args, results;
      for (int g = 0; g < e.numGraphs; ++g)
        graphs.append(graphKindName(e.graphKinds[g]));
      for (int s = 0; s < e.numSizes; ++s)
        sizes.append(e.sizeNames[s]);
      for (int a = 0; a < e.numArgs; ++a)
        args.append(tensorInfo(e.args[a]));
      for (int r = 0; r < e.numResults; ++r)
        results.append(tensorInfo(e.results[r]));
      d["graphs"] = graphs;
      d["sizes"] = sizes;
      d["args"] = args;
      d["results"] = results;
      out.append(d);
    }
    return out;
  }

  /// The concrete shape of every argument, then of every result.
  std::vector<std::vector<int64_t>>
  shapes(int index, const std::vector<std::shared_ptr<TorchGraph>> &graphs,
         const std::vector<int64_t> &sizes) const {
    const rt::EntryInfo &e = entry(index);
    Bound b = bind(e, graphs, sizes);
    std::vector<std::vector<int64_t>> out;
    auto at = b.Dims.begin();
    auto take = [&](const rt::TensorInfo &t) {
      out.emplace_back(at, at + t.rank);
      at += t.rank;
    };
    for (int a = 0; a < e.numArgs; ++a)
      take(e.args[a]);
    for (int r = 0; r < e.numResults; ++r)
      take(e.results[r]);
    return out;
  }

  /// Calls entry `index`. `inputs` holds every tensor argument, `outputs`
  /// every result; an output may be None only where it is the gradient of
  /// an input (the backward then skips its work, docs/abi.md).
  void call(int index, const std::vector<std::shared_ptr<TorchGraph>> &graphs,
            const std::vector<int64_t> &sizes,
            const std::vector<at::Tensor> &inputs,
            const std::vector<std::optional<at::Tensor>> &outputs,
            bool training, uint64_t seed) {
    const rt::EntryInfo &e = entry(index);
    Bound b = bind(e, graphs, sizes);
    if (static_cast<int>(inputs.size()) != e.numArgs ||
        static_cast<int>(outputs.size()) != e.numResults)
      throw py::value_error(std::string("gnnc: ") + e.name + " takes " +
                            std::to_string(e.numArgs) + " tensors and " +
                            std::to_string(e.numResults) + " results");
    std::vector<const float *> in(e.numArgs);
    std::vector<float *> out(e.numResults);
    size_t at = 0;
    for (int a = 0; a < e.numArgs; ++a) {
      in[a] = checked(e, e.args[a], inputs[a], b.Dims.data() + at);
      at += e.args[a].rank;
    }
    for (int r = 0; r < e.numResults; ++r) {
      const rt::TensorInfo &t = e.results[r];
      if (outputs[r].has_value())
        out[r] =
            const_cast<float *>(checked(e, t, *outputs[r], b.Dims.data() + at));
      else if (!optionalResult(e, t))
        throw py::value_error(std::string("gnnc: ") + e.name + ": result '" +
                              t.name + "' is not optional");
      at += t.rank;
    }
    b.Args.inputs = in.data();
    b.Args.outputs = out.data();
    b.Args.training = training;
    b.Args.seed = seed;
    std::size_t bytes = e.workspaceBytes(b.Args);
    // The module keeps one workspace and reuses it, as a C++ caller would:
    // a fresh one every call costs its page faults (10 ms for 32 MiB). A
    // call made while another holds it (another thread) gets its own.
    std::unique_lock<std::mutex> reuse(WorkspaceMutex, std::try_to_lock);
    at::Tensor own;
    if (bytes > 0) {
      at::Tensor &ws = reuse.owns_lock() ? Workspace : own;
      if (!ws.defined() || static_cast<std::size_t>(ws.numel()) < bytes)
        // PyTorch's CPU allocator aligns to 64 bytes, what the ABI asks.
        ws = at::empty({static_cast<int64_t>(bytes)}, at::kByte);
      b.Args.workspace = ws.data_ptr();
    }
    const Bridge &br = bridge();
    char err[1024] = {};
    int failed;
    {
      py::gil_scoped_release release;
      failed = br.call(&e, &b.Args, err, sizeof err);
    }
    if (failed)
      throw std::runtime_error(std::string("gnnc: ") + err);
  }

  std::string source() const { return Info->source; }

private:
  struct Bound {
    std::vector<const void *> Graphs;
    std::vector<int64_t> Sizes;
    std::vector<int64_t> Dims;
    rt::CallArgs Args{};
  };

  const rt::EntryInfo &entry(int index) const {
    if (index < 0 || index >= Info->numEntries)
      throw py::index_error("gnnc: no entry point " + std::to_string(index));
    return Info->entries[index];
  }

  static bool optionalResult(const rt::EntryInfo &e, const rt::TensorInfo &t) {
    if (std::string_view(t.role) != "grad")
      return false;
    for (int a = 0; a < e.numArgs; ++a)
      if (std::string_view(e.args[a].name) == t.name)
        return std::string_view(e.args[a].role) == "input";
    return false;
  }

  Bound bind(const rt::EntryInfo &e,
             const std::vector<std::shared_ptr<TorchGraph>> &graphs,
             const std::vector<int64_t> &sizes) const {
    if (static_cast<int>(graphs.size()) != e.numGraphs)
      throw py::value_error(std::string("gnnc: ") + e.name + " takes " +
                            std::to_string(e.numGraphs) + " graph(s), not " +
                            std::to_string(graphs.size()));
    if (static_cast<int>(sizes.size()) != e.numSizes)
      throw py::value_error(std::string("gnnc: ") + e.name + " takes " +
                            std::to_string(e.numSizes) + " size(s), not " +
                            std::to_string(sizes.size()));
    Bound b;
    for (int g = 0; g < e.numGraphs; ++g) {
      rt::GraphKind k = e.graphKinds[g];
      if (k != rt::GraphKind::Graph && k != rt::GraphKind::Block)
        throw py::value_error(std::string("gnnc: ") + e.name +
                              ": graph arguments of kind '" + graphKindName(k) +
                              "' cannot be passed from PyTorch");
      if (!graphs[g])
        throw py::value_error("gnnc: a graph argument is None");
      if (k == rt::GraphKind::Graph &&
          graphs[g]->Counts[0] != graphs[g]->Counts[1])
        throw py::value_error(std::string("gnnc: ") + e.name +
                              ": a 'graph' argument needs as many sources as "
                              "destinations");
      b.Graphs.push_back(graphs[g]->Handle);
    }
    for (int64_t s : sizes)
      if (s < 0)
        throw py::value_error("gnnc: a size is negative");
    b.Sizes = sizes;
    size_t numDims = 0;
    for (int a = 0; a < e.numArgs; ++a)
      numDims += e.args[a].rank;
    for (int r = 0; r < e.numResults; ++r)
      numDims += e.results[r].rank;
    b.Dims.assign(numDims, 0);
    b.Args.graphs = b.Graphs.data();
    b.Args.sizes = b.Sizes.data();
    e.shapes(b.Args, b.Dims.data());
    return b;
  }

  static const float *checked(const rt::EntryInfo &e, const rt::TensorInfo &t,
                              const at::Tensor &x, const int64_t *dims) {
    std::string what = std::string("gnnc: ") + e.name + ": '" + t.name + "'";
    if (x.device().type() != at::kCPU)
      throw py::value_error(what + " is on " + x.device().str() +
                            "; this module runs on the CPU");
    if (x.scalar_type() != at::kFloat)
      throw py::type_error(what + " must be float32, not " +
                           std::string(c10::toString(x.scalar_type())));
    if (!x.is_contiguous())
      throw py::value_error(what + " must be contiguous (call .contiguous())");
    bool same = x.dim() == t.rank;
    for (int i = 0; same && i < t.rank; ++i)
      same = x.size(i) == dims[i];
    if (!same) {
      std::vector<int64_t> got(x.sizes().begin(), x.sizes().end());
      throw py::value_error(
          what + " has shape " +
          shapeText(got.data(), static_cast<int>(got.size())) + ", expected " +
          shapeText(dims, t.rank));
    }
    return x.numel() == 0 ? nullptr : x.data_ptr<float>();
  }

  void *Handle = nullptr;
  const rt::ModuleInfo *Info = nullptr;
  std::mutex WorkspaceMutex;
  at::Tensor Workspace;
};

void initParam(const std::string &init, double arg, at::Tensor &t,
               uint64_t seed, const std::string &path) {
  if (t.scalar_type() != at::kFloat || !t.is_contiguous() ||
      t.device().type() != at::kCPU)
    throw py::value_error("gnnc: init_param needs a contiguous float32 CPU "
                          "tensor");
  std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
  char err[1024] = {};
  if (bridge().initParam(init.c_str(), arg, shape.data(), shape.size(),
                         t.data_ptr<float>(), seed, path.c_str(), err,
                         sizeof err))
    throw py::value_error("gnnc: initialising " + path + ": " + err);
}

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "gnnc.torch's native part: graphs and calls of compiled modules";
  m.attr("abi_version") = rt::kAbiVersion;
  m.def("load_bridge", &loadBridge, py::arg("path"));
  py::class_<TorchGraph, std::shared_ptr<TorchGraph>>(m, "Graph")
      .def_property_readonly("num_src",
                             [](const TorchGraph &g) { return g.Counts[0]; })
      .def_property_readonly("num_dst",
                             [](const TorchGraph &g) { return g.Counts[1]; })
      .def_property_readonly("num_edges",
                             [](const TorchGraph &g) { return g.Counts[2]; });
  m.def("graph_from_edges", &graphFromEdges, py::arg("src"), py::arg("dst"),
        py::arg("num_src"), py::arg("num_dst"));
  py::class_<TorchModule>(m, "Module")
      .def(py::init<const std::string &>())
      .def("entries", &TorchModule::entries)
      .def("shapes", &TorchModule::shapes)
      .def("call", &TorchModule::call)
      .def_property_readonly("source", &TorchModule::source);
  m.def("init_param", &initParam);
}
