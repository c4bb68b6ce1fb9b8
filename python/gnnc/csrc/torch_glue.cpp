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
// CUDA modules (`gnnc --target=cuda --emit=cuda`, built by nvcc) are called
// the same way through bridge_cuda.cpp, which this file needs no CUDA
// headers for: streams are PyTorch's current ones, passed as integers, and a
// module's CUDA tables are read through the layout they share with the C++
// ones (rt::BasicModuleInfo, whatever its CallArgs).
//
// This file may be compiled with another C++ library ABI than gnnc's runtime
// (PyTorch wheels before 2.7 use -D_GLIBCXX_USE_CXX11_ABI=0), so it calls
// nothing of the runtime that passes a std::string: graphs, initialisers and
// the calls themselves go through the C functions of bridge.cpp. What it
// reads directly are the reflection tables, plain structs of Abi.h.

#include <torch/extension.h>

#include "gnnc/runtime/Abi.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <map>
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
  void (*setThreads)(int) = nullptr;
  int (*abiVersion)() = nullptr;
};
Bridge *TheBridge = nullptr;

/// The C functions of bridge_cuda.cpp, loaded on the first CUDA module.
struct CudaBridge {
  void *(*graphUpload)(const void *, void *, char *, size_t) = nullptr;
  void (*graphFree)(void *) = nullptr;
  void (*shapes)(const void *, const rt::CallArgs *, int64_t *) = nullptr;
  size_t (*workspaceBytes)(const void *, const rt::CallArgs *) = nullptr;
  int (*call)(const void *, const rt::CallArgs *, void *, char *,
              size_t) = nullptr;
  int (*abiVersion)() = nullptr;
};
CudaBridge *TheCudaBridge = nullptr;

template <typename F> void lookup(void *handle, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  if (!fn)
    throw std::runtime_error(std::string("gnnc: the bridge library has no ") +
                             name);
}

/// dlopen()s `path`, or throws with dlerror()'s reason.
void *openLibrary(const std::string &path) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw std::runtime_error("gnnc: cannot load " + path + ": " + dlerror());
  return handle;
}

/// Throws unless the library at `path` speaks this extension's ABI.
void checkAbi(const std::string &path, int version) {
  if (version != rt::kAbiVersion)
    throw std::runtime_error("gnnc: " + path + " speaks ABI version " +
                             std::to_string(version) + ", this extension " +
                             std::to_string(rt::kAbiVersion));
}

void loadBridge(const std::string &path) {
  if (TheBridge)
    return;
  void *handle = openLibrary(path);
  auto b = std::make_unique<Bridge>();
  lookup(handle, "gnnc_bridge_graph_new", b->graphNew);
  lookup(handle, "gnnc_bridge_graph_free", b->graphFree);
  lookup(handle, "gnnc_bridge_graph_counts", b->graphCounts);
  lookup(handle, "gnnc_bridge_init_param", b->initParam);
  lookup(handle, "gnnc_bridge_call", b->call);
  lookup(handle, "gnnc_bridge_set_threads", b->setThreads);
  lookup(handle, "gnnc_bridge_abi_version", b->abiVersion);
  checkAbi(path, b->abiVersion());
  TheBridge = b.release();
}

void loadCudaBridge(const std::string &path) {
  if (TheCudaBridge)
    return;
  void *handle = openLibrary(path);
  auto b = std::make_unique<CudaBridge>();
  lookup(handle, "gnnc_cuda_bridge_graph_upload", b->graphUpload);
  lookup(handle, "gnnc_cuda_bridge_graph_free", b->graphFree);
  lookup(handle, "gnnc_cuda_bridge_shapes", b->shapes);
  lookup(handle, "gnnc_cuda_bridge_workspace_bytes", b->workspaceBytes);
  lookup(handle, "gnnc_cuda_bridge_call", b->call);
  lookup(handle, "gnnc_cuda_bridge_abi_version", b->abiVersion);
  checkAbi(path, b->abiVersion());
  TheCudaBridge = b.release();
}

const CudaBridge &cudaBridge() {
  if (!TheCudaBridge)
    throw std::runtime_error("gnnc: the CUDA bridge library is not loaded");
  return *TheCudaBridge;
}

const Bridge &bridge() {
  if (!TheBridge)
    throw std::runtime_error("gnnc: the bridge library is not loaded");
  return *TheBridge;
}

/// A graph owned by Python: an rt::Graph (built by the bridge once from an
/// edge list), or its upload to a GPU, an rt::cuda::DeviceGraph (built by
/// the CUDA bridge); passed to every call that takes the graph.
struct TorchGraph {
  void *Handle = nullptr;
  int64_t Counts[3] = {}; // sources, destinations, edges
  int Device = -1;        // the CUDA device, or -1 on the host
  TorchGraph() = default;
  TorchGraph(const TorchGraph &) = delete;
  TorchGraph &operator=(const TorchGraph &) = delete;
  ~TorchGraph() {
    if (Handle && Device < 0)
      TheBridge->graphFree(Handle);
    else if (Handle)
      TheCudaBridge->graphFree(Handle);
  }
};

/// `g` uploaded to the current CUDA device (`device`, which the caller
/// made current) on `stream`.
std::shared_ptr<TorchGraph> uploadGraph(const std::shared_ptr<TorchGraph> &g,
                                        int device, uintptr_t stream) {
  if (!g || g->Device >= 0)
    throw py::value_error("gnnc: only a host graph is uploaded");
  const CudaBridge &br = cudaBridge();
  auto out = std::make_shared<TorchGraph>();
  char err[1024] = {};
  {
    py::gil_scoped_release release;
    out->Handle = br.graphUpload(g->Handle, reinterpret_cast<void *>(stream),
                                 err, sizeof err);
  }
  if (!out->Handle)
    throw std::runtime_error(std::string("gnnc: uploading a graph: ") + err);
  std::copy(g->Counts, g->Counts + 3, out->Counts);
  out->Device = device;
  return out;
}

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

/// Buffers for the results of calls, kept for reuse when their tensors die.
/// A fresh result of some megabytes costs its page faults on every call (13
/// ms for the 32 MiB of a GCN layer's output on rmat-17, a third of the
/// layer); a C++ caller keeps its buffers, and a training loop asks for the
/// same shapes every step, so a buffer of the same size is handed out again.
/// Only large buffers are cached (small ones cost malloc nothing); at most
/// `limit` bytes are kept free (gnnc.torch.set_buffer_cache_limit), and
/// gnnc.torch.empty_buffer_cache() releases them.
class BufferCache : public std::enable_shared_from_this<BufferCache> {
public:
  static constexpr std::size_t kMinBytes = std::size_t{1} << 20;
  static constexpr std::size_t kAlign = 64; // what the ABI asks of a tensor

  static std::shared_ptr<BufferCache> &instance() {
    static auto *cache =
        new std::shared_ptr<BufferCache>(std::make_shared<BufferCache>());
    return *cache; // leaked: tensors may die after static destructors ran
  }

  at::Tensor empty(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t d : shape) {
      if (d < 0)
        throw py::value_error("gnnc: a negative dimension");
      n *= d;
    }
    std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    if (bytes < kMinBytes)
      return at::empty(shape, at::kFloat);
    bytes = (bytes + kAlign - 1) / kAlign * kAlign;
    void *p = take(bytes);
    if (!p) {
      p = std::aligned_alloc(kAlign, bytes);
      if (!p)
        throw std::bad_alloc();
    }
    std::shared_ptr<BufferCache> self = shared_from_this();
    return at::from_blob(
        p, shape, [self, bytes](void *q) { self->give(q, bytes); },
        at::TensorOptions().dtype(at::kFloat));
  }

  void setLimit(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(Mutex);
    Limit = bytes;
    trim();
  }

  void clear() {
    std::lock_guard<std::mutex> lock(Mutex);
    std::size_t keep = Limit;
    Limit = 0;
    trim();
    Limit = keep;
  }

  py::dict stats() {
    std::lock_guard<std::mutex> lock(Mutex);
    py::dict d;
    d["free_bytes"] = FreeBytes;
    d["free_buffers"] = Free.size();
    d["limit_bytes"] = Limit;
    d["reused"] = Reused;
    d["allocated"] = Allocated;
    return d;
  }

  static constexpr std::size_t LimitDefault = std::size_t{1} << 30;

private:
  void *take(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(Mutex);
    auto it = Free.find(bytes);
    if (it == Free.end()) {
      ++Allocated;
      return nullptr;
    }
    void *p = it->second;
    Free.erase(it);
    FreeBytes -= bytes;
    ++Reused;
    return p;
  }

  void give(void *p, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(Mutex);
    if (FreeBytes + bytes > Limit) {
      std::free(p);
      return;
    }
    Free.emplace(bytes, p);
    FreeBytes += bytes;
  }

  /// Frees buffers, largest first, until at most Limit bytes are kept.
  void trim() {
    while (FreeBytes > Limit && !Free.empty()) {
      auto it = std::prev(Free.end());
      FreeBytes -= it->first;
      std::free(it->second);
      Free.erase(it);
    }
  }

  std::mutex Mutex;
  std::multimap<std::size_t, void *> Free;
  std::size_t FreeBytes = 0;
  std::size_t Limit = LimitDefault;
  int64_t Reused = 0, Allocated = 0;
};

/// A compiled module: the shared library and its reflection table. A CUDA
/// module's table is an rt::cuda::ModuleInfo, read here through the
/// rt::ModuleInfo it is laid out as (the two differ only in the argument
/// type of their function pointers, which only the CUDA bridge calls).
class TorchModule {
public:
  TorchModule(const std::string &path, bool cuda) : Cuda(cuda) {
    Handle = openLibrary(path);
    using InfoFn = const void *(*)();
    auto fn = reinterpret_cast<InfoFn>(dlsym(Handle, "gnnc_torch_module_info"));
    if (!fn)
      throw std::runtime_error("gnnc: " + path +
                               " has no gnnc_torch_module_info()");
    Info = static_cast<const rt::ModuleInfo *>(fn());
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
  /// A CUDA module runs on `device` (which the caller made current), on
  /// `stream` (PyTorch's current stream there, as an integer); a C++ module
  /// takes device -1 and stream 0.
  void call(int index, const std::vector<std::shared_ptr<TorchGraph>> &graphs,
            const std::vector<int64_t> &sizes,
            const std::vector<at::Tensor> &inputs,
            const std::vector<std::optional<at::Tensor>> &outputs,
            bool training, uint64_t seed, int device, uintptr_t stream) {
    if (Cuda != (device >= 0))
      throw py::value_error(Cuda ? "gnnc: a CUDA module needs a device"
                                 : "gnnc: a C++ module runs on the CPU");
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
      in[a] = checked(e, e.args[a], inputs[a], b.Dims.data() + at, device);
      at += e.args[a].rank;
    }
    for (int r = 0; r < e.numResults; ++r) {
      const rt::TensorInfo &t = e.results[r];
      if (outputs[r].has_value())
        out[r] = const_cast<float *>(
            checked(e, t, *outputs[r], b.Dims.data() + at, device));
      else if (!optionalResult(e, t))
        throw py::value_error(std::string("gnnc: ") + e.name + ": result '" +
                              t.name + "' is not optional");
      at += t.rank;
    }
    b.Args.inputs = in.data();
    b.Args.outputs = out.data();
    b.Args.training = training;
    b.Args.seed = seed;
    if (Cuda) {
      callCuda(e, b, device, stream);
      return;
    }
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
    // The loops run on as many threads as PyTorch's own CPU operations
    // (torch.set_num_threads), whichever OpenMP runtime PyTorch has.
    int threads = at::get_num_threads();
    {
      py::gil_scoped_release release;
      br.setThreads(threads);
      failed = br.call(&e, &b.Args, err, sizeof err);
    }
    if (failed)
      throw std::runtime_error(std::string("gnnc: ") + err);
  }

  std::string source() const { return Info->source; }
  bool cuda() const { return Cuda; }

private:
  struct Bound {
    std::vector<const void *> Graphs;
    std::vector<int64_t> Sizes;
    std::vector<int64_t> Dims;
    rt::CallArgs Args{};
  };

  /// A CUDA call: the workspace from PyTorch's caching allocator on the
  /// device (freed, as PyTorch frees on a stream, once the queued work that
  /// uses it is done), the call queued on `stream`.
  void callCuda(const rt::EntryInfo &e, Bound &b, int device,
                uintptr_t stream) {
    const CudaBridge &br = cudaBridge();
    std::size_t bytes = br.workspaceBytes(&e, &b.Args);
    at::Tensor ws;
    if (bytes > 0) {
      ws = at::empty({static_cast<int64_t>(bytes)},
                     at::TensorOptions().dtype(at::kByte).device(
                         at::Device(at::kCUDA, device)));
      b.Args.workspace = ws.data_ptr();
    }
    char err[1024] = {};
    int failed;
    {
      py::gil_scoped_release release;
      failed = br.call(&e, &b.Args, reinterpret_cast<void *>(stream), err,
                       sizeof err);
    }
    if (failed)
      throw std::runtime_error(std::string("gnnc: ") + err);
  }

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
      if ((graphs[g]->Device >= 0) != Cuda)
        throw py::value_error(Cuda ? "gnnc: a CUDA module needs graphs on "
                                     "the device"
                                   : "gnnc: a C++ module needs host graphs");
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
    if (Cuda)
      cudaBridge().shapes(&e, &b.Args, b.Dims.data());
    else
      e.shapes(b.Args, b.Dims.data());
    return b;
  }

  static const float *checked(const rt::EntryInfo &e, const rt::TensorInfo &t,
                              const at::Tensor &x, const int64_t *dims,
                              int device) {
    std::string what = std::string("gnnc: ") + e.name + ": '" + t.name + "'";
    at::Device want =
        device < 0 ? at::Device(at::kCPU) : at::Device(at::kCUDA, device);
    if (x.device() != want)
      throw py::value_error(what + " is on " + x.device().str() +
                            "; this call runs on " + want.str());
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

  bool Cuda = false;
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
  m.def("load_cuda_bridge", &loadCudaBridge, py::arg("path"));
  py::class_<TorchGraph, std::shared_ptr<TorchGraph>>(m, "Graph")
      .def_property_readonly("num_src",
                             [](const TorchGraph &g) { return g.Counts[0]; })
      .def_property_readonly("num_dst",
                             [](const TorchGraph &g) { return g.Counts[1]; })
      .def_property_readonly("num_edges",
                             [](const TorchGraph &g) { return g.Counts[2]; })
      .def_property_readonly("device",
                             [](const TorchGraph &g) { return g.Device; });
  m.def("upload_graph", &uploadGraph, py::arg("graph"), py::arg("device"),
        py::arg("stream"));
  m.def("graph_from_edges", &graphFromEdges, py::arg("src"), py::arg("dst"),
        py::arg("num_src"), py::arg("num_dst"));
  py::class_<TorchModule>(m, "Module")
      .def(py::init<const std::string &, bool>(), py::arg("path"),
           py::arg("cuda") = false)
      .def("entries", &TorchModule::entries)
      .def("shapes", &TorchModule::shapes)
      .def("call", &TorchModule::call)
      .def_static("empty",
                  [](const std::vector<int64_t> &shape) {
                    return BufferCache::instance()->empty(shape);
                  })
      .def_property_readonly("source", &TorchModule::source)
      .def_property_readonly("cuda", &TorchModule::cuda);
  m.def("init_param", &initParam);
  m.def("empty", [](const std::vector<int64_t> &shape) {
    return BufferCache::instance()->empty(shape);
  });
  m.def("set_buffer_cache_limit", [](int64_t bytes) {
    if (bytes < 0)
      throw py::value_error("gnnc: a negative buffer cache limit");
    BufferCache::instance()->setLimit(static_cast<std::size_t>(bytes));
  });
  m.def("empty_buffer_cache", [] { BufferCache::instance()->clear(); });
  m.def("buffer_cache_stats", [] { return BufferCache::instance()->stats(); });
}
