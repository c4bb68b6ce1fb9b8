//===- main.cpp - Train the GCN example on Cora ---------------------------===//
//
// Part of gnnc. The smallest complete training program for a model compiled
// by gnnc: dsl-examples/gcn.gnn, compiled to C++ with its training entry
// points (gnnc_add_model(... TRAINING) in CMakeLists.txt), trained on Cora
// on the CPU with the runtime's dataset loader and training helpers
// (gnnc/runtime/Train.h):
//
//   train-gcn [EPOCHS]        (default 200)
//
// Every epoch runs GCN_train (the forward pass, which also fills the values
// the backward pass needs), the softmax cross-entropy over the training
// vertices, GCN_backward (the gradients of the parameters), one Adam step,
// and GCN (inference, dropout off) for the accuracies.
//
//===----------------------------------------------------------------------===//

#include "gcn.h" // generated: namespace gcn (GCN, GCN_train, GCN_backward)

#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Invoke.h" // HostBuffer
#include "gnnc/runtime/Train.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace rt = gnnc::rt;

namespace {

/// Stops the program with the error of `st`, if any.
void check(const rt::Status &st, const char *what) {
  if (st.ok())
    return;
  fmt::print(stderr, "train-gcn: error: {}: {}\n", what, st.message());
  std::exit(1);
}

/// Zeroed memory aligned for generated code (workspaces, saved values).
rt::HostBuffer allocate(std::size_t bytes) {
  rt::HostBuffer buffer;
  check(rt::HostBuffer::allocate(bytes, buffer), "allocating memory");
  return buffer;
}

} // namespace

int main(int argc, char **argv) {
  int epochs = argc > 1 ? std::atoi(argv[1]) : 200;
  if (epochs < 1) {
    fmt::print(stderr, "usage: train-gcn [EPOCHS]\n");
    return 1;
  }

  // Cora: 2708 vertices, 1433 features, 7 classes, the Planetoid split. GCN
  // propagates over A + I, so the graph gets one self-loop per vertex, and
  // the features are row-normalised, as in the paper.
  rt::Dataset ds;
#ifdef CORA_GNND
  check(rt::loadDataset(CORA_GNND, ds), "loading Cora");
#else
  check(rt::findDataset("cora", ds), "loading Cora");
#endif
  rt::Graph g;
  check(rt::Graph::fromEdgeIndex(ds.EdgeSrc.data(), ds.EdgeDst.data(),
                                 ds.numEdges(), ds.NumNodes, ds.NumNodes, g),
        "building the graph");
  check(rt::addSelfLoops(g, g), "adding self-loops");
  check(rt::normalizeRows(ds.X.data(), ds.NumNodes, ds.NumFeatures),
        "normalising the features");
  const int64_t n = ds.NumNodes, c = ds.NumClasses;

  // The parameters and their gradients, as the generated GCN_Params
  // describes them: initialised as gcn.gnn declares (glorot, zeros).
  using Params = gcn::GCN_Params;
  std::vector<std::vector<float>> values(Params::kNumParams),
      gradValues(Params::kNumParams);
  Params params{}, grads{};
  const uint64_t seed = 0;
  for (int i = 0; i < Params::kNumParams; ++i) {
    values[i].resize(Params::kNumElements[i]);
    gradValues[i].resize(Params::kNumElements[i]);
    params.set(i, values[i].data());
    grads.set(i, gradValues[i].data());
    check(rt::initParam(Params::kInits[i], 0.0, Params::kShapes[i],
                        Params::kRanks[i], values[i].data(),
                        rt::paramSeed(seed, Params::kPaths[i])),
          Params::kPaths[i]);
  }

  // Adam with the paper's settings: learning rate 0.01, weight decay 5e-4
  // on the first layer only.
  rt::AdamOptions decayed, plain;
  decayed.LearningRate = plain.LearningRate = 0.01;
  decayed.WeightDecay = 5e-4;
  rt::Adam adamFirst(decayed), adamSecond(plain);
  check(adamFirst.addParam(params.conv1_W, Params::kNumElements[0]), "adam");
  check(adamFirst.addParam(params.conv1_b, Params::kNumElements[1]), "adam");
  check(adamSecond.addParam(params.conv2_W, Params::kNumElements[2]), "adam");
  check(adamSecond.addParam(params.conv2_b, Params::kNumElements[3]), "adam");

  // What the entry points need besides the tensors: a workspace, one for
  // all three since they run one after another and none reads another's
  // intermediates, and the values GCN_train saves for GCN_backward.
  rt::HostBuffer workspace = allocate(std::max(
      {gcn::GCN_train_workspace_bytes(g), gcn::GCN_backward_workspace_bytes(g),
       gcn::GCN_workspace_bytes(g)}));
  rt::HostBuffer savedBuf = allocate(gcn::GCN_saved_bytes(g));
  gcn::GCN_Saved saved = gcn::GCN_saved_layout(savedBuf.data(), g);
  std::vector<float> logits(n * c), gradLogits(n * c), evalLogits(n * c);

  fmt::print("GCN on Cora: {} vertices, {} edges (with self-loops), {} "
             "features, {} classes; {} epochs\n",
             n, g.numEdges(), ds.NumFeatures, c, epochs);
  double test = 0.0;
  rt::SplitMix64 dropoutSeeds(seed);
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    // One training step: a new dropout mask every epoch (the same seed for
    // the forward and the backward pass).
    uint64_t stepSeed = dropoutSeeds.next() | 1;
    check(gcn::GCN_train(g, ds.X.data(), params, logits.data(), saved,
                         workspace.data(), /*training=*/true, stepSeed),
          "GCN_train");
    double loss = 0.0;
    check(rt::softmaxCrossEntropy(logits.data(), n, c, ds.Y.data(),
                                  ds.TrainMask.data(), loss, gradLogits.data()),
          "loss");
    // No gradient of the features: grad_x may be null.
    check(gcn::GCN_backward(g, ds.X.data(), saved, gradLogits.data(), params,
                            /*grad_x=*/nullptr, grads, workspace.data(),
                            /*training=*/true, stepSeed),
          "GCN_backward");
    check(adamFirst.step({grads.conv1_W, grads.conv1_b}), "adam");
    check(adamSecond.step({grads.conv2_W, grads.conv2_b}), "adam");

    // Inference (dropout off) and the accuracy on each part of the split.
    check(gcn::GCN(g, ds.X.data(), params, evalLogits.data(), workspace.data(),
                   /*training=*/false, /*seed=*/0),
          "GCN");
    double train = 0.0, val = 0.0;
    check(rt::maskedAccuracy(evalLogits.data(), n, c, ds.Y.data(),
                             ds.TrainMask.data(), train),
          "accuracy");
    check(rt::maskedAccuracy(evalLogits.data(), n, c, ds.Y.data(),
                             ds.ValMask.data(), val),
          "accuracy");
    check(rt::maskedAccuracy(evalLogits.data(), n, c, ds.Y.data(),
                             ds.TestMask.data(), test),
          "accuracy");
    fmt::print("epoch {:3}  loss {:.4f}  train {:.4f}  val {:.4f}  test "
               "{:.4f}\n",
               epoch, loss, train, val, test);
  }
  fmt::print("test accuracy after {} epochs: {:.4f}\n", epochs, test);
  return 0;
}
