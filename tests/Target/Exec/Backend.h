//===- Backend.h - The backends of the execution suite ----------*- C++ -*-===//
//
// Part of gnnc. What differs between calling code printed by the C++
// printer and code printed by the CUDA printer (the Backend interface of
// ExecSupport.h): where graphs and tensors live, and how a call is made.
//
//   CppBackend   host pointers; a call returns when it is done.
//   CudaBackend  device graphs and tensors (uploaded, downloaded), a stream
//                per call, waited for; calls run only when a device is
//                there. Built by nvcc for a GPU, or as C++ with the host
//                emulation of tests/Target/Exec/emu (GNNC_CUDA_EMULATION),
//                which has always one device.
//
// GNNC_EXEC_BACKEND_CUDA selects the suite's Backend.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_TARGET_EXEC_BACKEND_H
#define GNNC_TESTS_TARGET_EXEC_BACKEND_H

#include "ExecSupport.h"

#include "gnnc/runtime/Invoke.h"
#include "gnnc/runtime/Ops.h"
#if GNNC_EXEC_BACKEND_CUDA
#include "gnnc/runtime/cuda/DeviceOps.h"
#include "gnnc/runtime/cuda/Invoke.h"
#endif

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace gnnc::testing_support {

/// Code printed by the C++ printer: host graphs and host tensors.
struct CppBackend {
  using ModuleInfo = rt::ModuleInfo;
  using EntryInfo = rt::EntryInfo;
  using Invocation = rt::Invocation;
  static constexpr const char *kName = "C++";
  /// Whether Cora runs (the models as written, 1433 features).
  static constexpr bool kRunsCora = true;
  /// Whether a backward may be given null outputs for the gradients of its
  /// inputs (docs/abi.md).
  static constexpr bool kNullInputGradients = true;

  static bool available() { return true; }

  /// A test graph with the argument structures of every kind.
  struct Graphs {
    explicit Graphs(const TestGraph &graph) : host(graph) {
      batch.graph = host.graph.get();
      batch.graphOf = host.graphOf.data();
      batch.numGraphs = host.numGraphs;
      for (const auto &[name, g] : host.relations)
        relations.push_back({name.c_str(), g.get()});
      hetero.numVertices = host.numDst();
      hetero.relations = relations.data();
      hetero.numRelations = static_cast<int64_t>(relations.size());
      args.graph = host.graph.get();
      args.batched = &batch;
      args.hetero = &hetero;
    }

    rt::Status status;
    rt::GraphArgs args;
    TestGraph host;
    rt::BatchedGraph batch;
    std::vector<rt::Relation> relations;
    rt::HeteroGraph hetero;
  };

  static std::shared_ptr<const Graphs> prepare(const TestGraph &graph) {
    return std::make_shared<Graphs>(graph);
  }

  /// Inputs, outputs and the workspace are host memory; inputs are copies,
  /// which a training forward's buffer updates write.
  class Buffers {
  public:
    rt::Status input(const Array &a, const float *&data) {
      inputs.push_back(a.data);
      data = inputs.back().data();
      return rt::Status();
    }
    rt::Status readInput(std::size_t i, Array &out) {
      out.data = inputs[i];
      return rt::Status();
    }
    rt::Status output(const std::vector<int64_t> &shape, float *&data) {
      outputs.emplace_back(numElements(shape),
                           std::numeric_limits<float>::quiet_NaN());
      data = outputs.back().data();
      return rt::Status();
    }
    rt::Status workspace(std::size_t bytes, void *&data) {
      if (bytes) {
        space.reset(std::aligned_alloc(rt::kWorkspaceAlign, bytes));
        std::memset(space.get(), 0xFF, bytes);
      }
      data = space.get();
      return rt::Status();
    }
    rt::Status run(const Invocation &call, bool training, uint64_t seed) {
      return call.call(training, seed);
    }
    rt::Status result(std::size_t i, Array &out) {
      out.data = outputs[i];
      return rt::Status();
    }

  private:
    std::vector<std::vector<float>> inputs, outputs;
    std::unique_ptr<void, decltype(&std::free)> space{nullptr, &std::free};
  };
};

#if GNNC_EXEC_BACKEND_CUDA

/// Code printed by the CUDA printer: device graphs and tensors, a stream.
struct CudaBackend {
  using ModuleInfo = rt::cuda::ModuleInfo;
  using EntryInfo = rt::cuda::EntryInfo;
  using Invocation = rt::cuda::Invocation;
#ifdef GNNC_CUDA_EMULATION
  static constexpr const char *kName = "CUDA (host emulation)";
  /// Cora is left to a device: the emulation runs every thread as a fiber.
  static constexpr bool kRunsCora = false;
#else
  static constexpr const char *kName = "CUDA";
  static constexpr bool kRunsCora = true;
#endif
  /// Generated CUDA skips a null gradient of an input too (docs/abi.md).
  static constexpr bool kNullInputGradients = true;

  /// Whether a CUDA device can run the tests (always in the emulation).
  static bool available() {
    static const bool have = [] {
      int count = 0;
      rt::Status s = rt::cuda::deviceCount(count);
      if (!s.ok())
        std::cerr << "cudaGetDeviceCount: " << s.message() << "\n";
      return s.ok() && count > 0;
    }();
    return have;
  }

  /// The device copies of a test graph (all kinds).
  struct Graphs {
    rt::Status status;
    rt::cuda::GraphArgs args;
    rt::cuda::DeviceGraph graph;
    rt::cuda::DeviceBatchedGraph batch;
    std::vector<std::unique_ptr<rt::cuda::DeviceGraph>> relationGraphs;
    std::vector<rt::cuda::DeviceRelation> relations;
    rt::cuda::DeviceHeteroGraph hetero;
    /// The host graphs, kept alive: the cache is keyed by their address.
    TestGraph host;
  };

  /// Uploads a test graph once: test graphs are built once per suite, and
  /// keyed by their host graph.
  static std::shared_ptr<const Graphs> prepare(const TestGraph &graph) {
    static std::map<std::pair<const void *, GK>, std::shared_ptr<Graphs>> cache;
    const void *key =
        graph.graph ? static_cast<const void *>(graph.graph.get())
        : graph.relations.empty()
            ? nullptr
            : static_cast<const void *>(graph.relations.begin()->second.get());
    std::shared_ptr<Graphs> &slot = cache[{key, graph.kind}];
    if (slot)
      return slot;
    slot = std::make_shared<Graphs>();
    Graphs &d = *slot;
    d.host = graph;
    if (graph.graph) {
      d.status = rt::cuda::DeviceGraph::upload(*graph.graph, nullptr, d.graph);
      if (d.status.ok() && graph.kind == GK::batched) {
        rt::BatchedGraph b;
        b.graph = graph.graph.get();
        b.graphOf = graph.graphOf.data();
        b.numGraphs = graph.numGraphs;
        d.status =
            rt::cuda::DeviceBatchedGraph::upload(b, d.graph, nullptr, d.batch);
      }
    }
    for (const auto &[name, g] : graph.relations) {
      if (!d.status.ok())
        break;
      d.relationGraphs.push_back(std::make_unique<rt::cuda::DeviceGraph>());
      d.status =
          rt::cuda::DeviceGraph::upload(*g, nullptr, *d.relationGraphs.back());
    }
    for (size_t i = 0; i < d.relationGraphs.size(); ++i)
      d.relations.push_back(
          {std::next(d.host.relations.begin(), i)->first.c_str(),
           d.relationGraphs[i].get()});
    d.hetero.numVertices = graph.numDst();
    d.hetero.relations = d.relations.data();
    d.hetero.numRelations = static_cast<int64_t>(d.relations.size());
    d.args.graph = &d.graph;
    d.args.batched = &d.batch;
    d.args.hetero = &d.hetero;
    return slot;
  }

  /// Uploads the inputs, allocates the outputs and the workspace on the
  /// device, calls on a stream of its own, waits for it and downloads the
  /// results.
  class Buffers {
  public:
    Buffers() {
      if (cudaStreamCreate(&stream) != cudaSuccess)
        status = rt::Status::error("cudaStreamCreate failed");
    }
    ~Buffers() {
      if (stream)
        (void)cudaStreamDestroy(stream);
    }
    Buffers(const Buffers &) = delete;
    Buffers &operator=(const Buffers &) = delete;

    rt::Status input(const Array &a, const float *&data) {
      if (!status.ok())
        return status;
      inputs.push_back(std::make_unique<rt::cuda::DeviceTensor>());
      rt::Status s = rt::cuda::DeviceTensor::upload(a.data.data(), a.shape,
                                                    stream, *inputs.back());
      data = inputs.back()->data();
      return s;
    }
    rt::Status output(const std::vector<int64_t> &shape, float *&data) {
      if (!status.ok())
        return status;
      outputs.push_back(std::make_unique<rt::cuda::DeviceTensor>());
      rt::cuda::DeviceTensor &t = *outputs.back();
      if (rt::Status s = rt::cuda::DeviceTensor::allocate(shape, t); !s.ok())
        return s;
      data = t.data();
      return memsetNaN(t.data(),
                       static_cast<size_t>(t.numElements()) * sizeof(float));
    }
    rt::Status workspace(std::size_t bytes, void *&data) {
      if (rt::Status s = rt::cuda::DeviceBuffer::allocate(bytes, space);
          !s.ok())
        return s;
      data = space.data();
      return bytes ? memsetNaN(space.data(), bytes) : rt::Status();
    }
    rt::Status run(const Invocation &call, bool training, uint64_t seed) {
      if (rt::Status s = call.call(training, seed, stream); !s.ok())
        return s;
      return rt::cuda::toStatus(cudaStreamSynchronize(stream),
                                call.entry().name, __FILE__, __LINE__);
    }
    rt::Status result(std::size_t i, Array &out) {
      out.data.resize(static_cast<size_t>(outputs[i]->numElements()));
      return outputs[i]->download(out.data.data(), stream);
    }
    rt::Status readInput(std::size_t i, Array &out) {
      out.data.resize(static_cast<size_t>(inputs[i]->numElements()));
      return inputs[i]->download(out.data.data(), stream);
    }

  private:
    rt::Status memsetNaN(void *data, size_t bytes) {
      if (cudaMemsetAsync(data, 0xFF, bytes, stream) != cudaSuccess)
        return rt::Status::error("cudaMemsetAsync failed");
      return rt::Status();
    }

    rt::Status status;
    cudaStream_t stream = nullptr;
    std::vector<std::unique_ptr<rt::cuda::DeviceTensor>> inputs, outputs;
    rt::cuda::DeviceBuffer space;
  };
};

using Backend = CudaBackend;
#else
using Backend = CppBackend;
#endif

} // namespace gnnc::testing_support

#endif // GNNC_TESTS_TARGET_EXEC_BACKEND_H
