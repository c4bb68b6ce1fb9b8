//===- KernelExecTest.cpp - Kernels against the reference interpreter -----===//
//
// Part of gnnc. Every gnn.aggregate of the examples (after the fusion
// pipeline) and of tests/Dialect/GNNK/Transforms/lower-ops.mlir is run
// twice on a small random graph with random inputs:
//
//   - in the reference interpreter (float, training mode so that dropout
//     applies), as a function that attaches its inputs, runs the aggregate
//     and collects one result;
//   - as the kernel gnn-lower-to-kernels makes of it, compiled to native
//     code: a test-only lowering replaces the graph by CSR (or CSC) arrays
//     (gnnk.for_vertices and gnnk.for_edges become scf.for loops,
//     gnnk.degree a difference of offsets, gnnk.dropout_keep the splitmix64
//     hash in arith), MLIR's standard conversions take it to the LLVM
//     dialect and the ExecutionEngine runs it.
//
// The kernel follows the interpreter operation by operation and both call
// the same libm, so the results agree to the last bit in practice; the test
// allows a few ulps so that it does not depend on the host's libm or code
// generator. Every output row is pre-filled with a sentinel, which must be
// overwritten. The random graph has a multi-edge, a self-loop, a
// destination without in-edges and a source without out-edges, so empty
// neighbourhoods and the first-edge logic are exercised both ways.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gnnc/Conversion/ASTToGNN/MLIRGen.h"
#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Dialect/GNNK/Transforms/Passes.h"
#include "gnnc/Interpreter/Interpreter.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace gnnc;

namespace {

//===----------------------------------------------------------------------===//
// The graph and the data
//===----------------------------------------------------------------------===//

/// A random graph: numEdges random edges, a self-loop (1, 1) when sources
/// and destinations are one set, and a repeated edge. Destination
/// numDst - 1 receives no edge; sources 0 and numSrc - 1 send none.
std::shared_ptr<const rt::Graph> randomGraph(int64_t numSrc, int64_t numDst,
                                             int64_t numEdges,
                                             std::mt19937 &rng) {
  std::vector<int64_t> src, dst;
  std::uniform_int_distribution<int64_t> pickSrc(1, numSrc - 2);
  std::uniform_int_distribution<int64_t> pickDst(0, numDst - 2);
  for (int64_t e = 0; e < numEdges; ++e) {
    src.push_back(pickSrc(rng));
    dst.push_back(pickDst(rng));
  }
  if (numSrc == numDst) { // a self-loop
    src.push_back(1);
    dst.push_back(1);
  }
  src.push_back(src.front()); // a multi-edge
  dst.push_back(dst.front());
  auto graph = std::make_shared<rt::Graph>();
  rt::Status s = rt::Graph::fromEdgeIndex(src.data(), dst.data(),
                                          static_cast<int64_t>(src.size()),
                                          numSrc, numDst, *graph);
  EXPECT_TRUE(s.ok()) << s.message();
  return graph;
}

int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// One aggregate as standalone functions
//===----------------------------------------------------------------------===//

/// `@agg_<r>(graph, inputs as dense [count, row...]) -> result r as dense`:
/// attaches the inputs, runs a clone of `aggregate`, collects result r.
OwningOpRef<ModuleOp> extract(gnn::AggregateOp aggregate) {
  MLIRContext *context = aggregate.getContext();
  Location loc = aggregate.getLoc();
  OpBuilder b(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  auto dense = [](gnn::DomainTensorType t) {
    if (!t.isVertexOrEdge())
      return t;
    SmallVector<int64_t> shape{ShapedType::kDynamic};
    shape.append(t.getShape().begin(), t.getShape().end());
    return gnn::DomainTensorType::get(t.getContext(), gnn::Domain::dense, shape,
                                      t.getElementType());
  };
  for (unsigned r = 0; r < aggregate.getNumResults(); ++r) {
    SmallVector<Type> args{aggregate.getGraph().getType()};
    for (Value input : aggregate.getInputs())
      args.push_back(dense(cast<gnn::DomainTensorType>(input.getType())));
    auto resultType =
        dense(cast<gnn::DomainTensorType>(aggregate.getResult(r).getType()));
    b.setInsertionPointToEnd(module->getBody());
    auto func =
        b.create<func::FuncOp>(loc, "agg_" + std::to_string(r),
                               FunctionType::get(context, args, {resultType}));
    Block *entry = func.addEntryBlock();
    b.setInsertionPointToStart(entry);
    Value graph = entry->getArgument(0);
    IRMapping mapping;
    mapping.map(aggregate.getGraph(), graph);
    for (auto [i, input] : llvm::enumerate(aggregate.getInputs())) {
      Value arg = entry->getArgument(1 + i);
      auto type = cast<gnn::DomainTensorType>(input.getType());
      if (type.isVertexOrEdge())
        arg = b.create<gnn::AttachOp>(loc, type, graph, arg);
      mapping.map(input, arg);
    }
    Operation *clone = b.clone(*aggregate, mapping);
    Value collected =
        b.create<gnn::CollectOp>(loc, resultType, graph, clone->getResult(r));
    b.create<func::ReturnOp>(loc, collected);
  }
  return module;
}

//===----------------------------------------------------------------------===//
// Kernel to native code (test only)
//===----------------------------------------------------------------------===//

/// splitmix64 of (seed, index) in arith, as interp::dropoutKeeps.
Value expandDropoutKeep(OpBuilder &b, gnnk::DropoutKeepOp op) {
  Location loc = op.getLoc();
  Type i64 = b.getI64Type();
  auto c = [&](uint64_t v) -> Value {
    return b.create<arith::ConstantOp>(
        loc, b.getIntegerAttr(i64, static_cast<int64_t>(v)));
  };
  auto mix = [&](Value z, unsigned shift, uint64_t mul) -> Value {
    Value x = b.create<arith::XOrIOp>(
        loc, z, b.create<arith::ShRUIOp>(loc, z, c(shift)));
    return b.create<arith::MulIOp>(loc, x, c(mul));
  };
  Value index = b.create<arith::IndexCastOp>(loc, i64, op.getIndex());
  Value z =
      b.create<arith::MulIOp>(loc, op.getSeed(), c(0x9E3779B97F4A7C15ull));
  z = b.create<arith::AddIOp>(loc, z, index);
  z = b.create<arith::AddIOp>(loc, z, c(0x9E3779B97F4A7C15ull));
  z = mix(z, 30, 0xBF58476D1CE4E5B9ull);
  z = mix(z, 27, 0x94D049BB133111EBull);
  z = b.create<arith::XOrIOp>(loc, z, b.create<arith::ShRUIOp>(loc, z, c(31)));
  Value top = b.create<arith::ShRUIOp>(loc, z, c(11));
  Value u = b.create<arith::MulFOp>(
      loc, b.create<arith::UIToFPOp>(loc, b.getF64Type(), top),
      b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(0x1.0p-53)));
  double p = op.getP().convertToDouble();
  Value keep = b.create<arith::CmpFOp>(
      loc, arith::CmpFPredicate::OGE, u,
      b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(p)));
  Type t = op.getType();
  Value scale =
      b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, 1.0 / (1.0 - p)));
  Value zero = b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, 0.0));
  return b.create<arith::SelectOp>(loc, keep, scale, zero);
}

/// Replaces the kernel's graph by three `memref<?xi64>` arguments: the
/// offsets (CSR by destination or CSC by source), the neighbour of each
/// position and the edge id of each position, and the gnnk ops by loops
/// over them. Scratch allocas move out of the vertex loop: the loop is
/// sequential here and every iteration sets them before reading them.
void lowerGraph(func::FuncOp kernel) {
  MLIRContext *context = kernel.getContext();
  Location loc = kernel.getLoc();
  auto ids =
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 64));
  for (unsigned i = 1; i <= 3; ++i)
    kernel.insertArgument(i, ids, DictionaryAttr::get(context), loc);
  Value ptr = kernel.getArgument(1), nbr = kernel.getArgument(2),
        eid = kernel.getArgument(3);
  IRRewriter rw(context);
  auto indexOf = [&](Value array, Value at) -> Value {
    Value v = rw.create<memref::LoadOp>(loc, array, at);
    return rw.create<arith::IndexCastOp>(loc, rw.getIndexType(), v);
  };
  auto bounds = [&](Value vertex) -> std::pair<Value, Value> {
    Value one = rw.create<arith::ConstantIndexOp>(loc, 1);
    Value next = rw.create<arith::AddIOp>(loc, vertex, one);
    return {indexOf(ptr, vertex), indexOf(ptr, next)};
  };

  SmallVector<gnnk::DropoutKeepOp> drops;
  kernel.walk([&](gnnk::DropoutKeepOp op) { drops.push_back(op); });
  for (gnnk::DropoutKeepOp op : drops) {
    rw.setInsertionPoint(op);
    rw.replaceOp(op, expandDropoutKeep(rw, op));
  }
  SmallVector<gnnk::DegreeOp> degrees;
  kernel.walk([&](gnnk::DegreeOp op) { degrees.push_back(op); });
  for (gnnk::DegreeOp op : degrees) {
    rw.setInsertionPoint(op);
    auto [begin, end] = bounds(op.getVertex());
    rw.replaceOp(op, rw.create<arith::SubIOp>(loc, end, begin).getResult());
  }
  SmallVector<gnnk::ForEdgesOp> edgeLoops;
  kernel.walk([&](gnnk::ForEdgesOp op) { edgeLoops.push_back(op); });
  for (gnnk::ForEdgesOp op : edgeLoops) {
    rw.setInsertionPoint(op);
    auto [begin, end] = bounds(op.getVertex());
    Value one = rw.create<arith::ConstantIndexOp>(loc, 1);
    auto loop = rw.create<scf::ForOp>(loc, begin, end, one);
    rw.setInsertionPointToStart(loop.getBody());
    Value k = loop.getInductionVar();
    Value e = indexOf(eid, k), u = indexOf(nbr, k);
    Block *body = op.getBodyBlock();
    rw.eraseOp(body->getTerminator());
    rw.inlineBlockBefore(body, loop.getBody()->getTerminator(), {e, u});
    rw.eraseOp(op);
  }
  SmallVector<gnnk::ForVerticesOp> vertexLoops;
  kernel.walk([&](gnnk::ForVerticesOp op) { vertexLoops.push_back(op); });
  for (gnnk::ForVerticesOp op : vertexLoops) {
    rw.setInsertionPoint(op);
    Value zero = rw.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rw.create<arith::ConstantIndexOp>(loc, 1);
    Value size = rw.create<memref::DimOp>(loc, ptr, zero);
    Value count = rw.create<arith::SubIOp>(loc, size, one);
    auto loop = rw.create<scf::ForOp>(loc, zero, count, one);
    Block *body = op.getBodyBlock();
    rw.eraseOp(body->getTerminator());
    rw.inlineBlockBefore(body, loop.getBody()->getTerminator(),
                         {loop.getInductionVar()});
    rw.eraseOp(op);
    SmallVector<memref::AllocaOp> allocas;
    for (Operation &inner : *loop.getBody())
      if (auto alloca = dyn_cast<memref::AllocaOp>(inner))
        allocas.push_back(alloca);
    for (memref::AllocaOp alloca : allocas)
      alloca->moveBefore(loop);
  }
  kernel.eraseArgument(0);
  kernel->removeAttr(gnnk::GNNKDialect::getKernelAttrName());
  kernel->setAttr("llvm.emit_c_interface", UnitAttr::get(context));
}

/// A memref descriptor: allocated and aligned pointers, offset, sizes,
/// strides (row-major), as 64-bit words.
std::vector<int64_t> descriptor(void *data, ArrayRef<int64_t> shape) {
  std::vector<int64_t> d(3 + 2 * shape.size());
  auto bits = static_cast<int64_t>(reinterpret_cast<intptr_t>(data));
  d[0] = d[1] = bits;
  d[2] = 0;
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    d[3 + i] = shape[i];
    d[3 + shape.size() + i] = stride;
    stride *= shape[i];
  }
  return d;
}

/// Distance in units in the last place between two floats (0 when both
/// are NaN).
int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  auto key = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  return std::llabs(key(a) - key(b));
}

//===----------------------------------------------------------------------===//
// The check
//===----------------------------------------------------------------------===//

class KernelExec : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }

  /// Runs every aggregate of `module` both ways; returns how many it ran.
  int checkAll(ModuleOp module, const std::string &what) {
    SmallVector<gnn::AggregateOp> aggregates;
    module.walk([&](gnn::AggregateOp op) { aggregates.push_back(op); });
    for (auto [i, aggregate] : llvm::enumerate(aggregates)) {
      SCOPED_TRACE(what + ": aggregate " + std::to_string(i) + " of @" +
                   aggregate->getParentOfType<func::FuncOp>().getName().str());
      check(aggregate, 1000 + static_cast<unsigned>(i));
    }
    return static_cast<int>(aggregates.size());
  }

  void check(gnn::AggregateOp aggregate, unsigned seed) {
    MLIRContext *context = aggregate.getContext();
    registerBuiltinDialectTranslation(*context);
    registerLLVMDialectTranslation(*context);
    std::mt19937 rng(seed);
    auto graphType = cast<gnn::GraphType>(aggregate.getGraph().getType());
    bool homogeneous = graphType.getKind() != gnn::GraphKind::block;
    int64_t numSrc = 9, numDst = homogeneous ? 9 : 7;
    std::shared_ptr<const rt::Graph> graph =
        randomGraph(numSrc, numDst, 24, rng);
    bool byDst = aggregate.getBy() == gnn::Domain::dst;
    int64_t count = byDst ? numDst : numSrc;

    // Inputs: random dense tensors, one row per vertex or edge.
    interp::GraphValue graphValue;
    graphValue.kind = graphType.getKind();
    graphValue.graph = graph;
    graphValue.numVertices = numDst;
    if (graphValue.kind == gnn::GraphKind::batched) {
      graphValue.numGraphs = 1;
      graphValue.graphOf.assign(numDst, 0);
    }
    std::vector<interp::Value<float>> args{graphValue};
    std::vector<std::vector<float>> inputData;
    std::vector<std::vector<int64_t>> inputShapes;
    std::uniform_real_distribution<float> uniform(-1.5f, 1.5f);
    for (Value input : aggregate.getInputs()) {
      auto type = cast<gnn::DomainTensorType>(input.getType());
      std::vector<int64_t> shape;
      switch (type.getDomain()) {
      case gnn::Domain::src:
        shape.push_back(numSrc);
        break;
      case gnn::Domain::dst:
        shape.push_back(numDst);
        break;
      case gnn::Domain::edge:
        shape.push_back(graph->numEdges());
        break;
      case gnn::Domain::dense:
        break;
      }
      shape.insert(shape.end(), type.getShape().begin(), type.getShape().end());
      std::vector<float> data(product(shape));
      for (float &x : data)
        x = uniform(rng);
      for (size_t k = 0; nanEvery > 0 && k < data.size(); k += nanEvery)
        data[k] = std::numeric_limits<float>::quiet_NaN();
      args.push_back(interp::Tensor<float>::dense(shape, data));
      inputData.push_back(std::move(data));
      inputShapes.push_back(std::move(shape));
    }

    // The reference: one interpreter run per result.
    OwningOpRef<ModuleOp> module = extract(aggregate);
    std::vector<interp::Tensor<float>> expected(aggregate.getNumResults());
    interp::RunOptions options;
    options.training = true;
    for (unsigned r = 0; r < aggregate.getNumResults(); ++r) {
      rt::Status s = interp::run<float>(*module, "agg_" + std::to_string(r),
                                        args, expected[r], options);
      ASSERT_TRUE(s.ok()) << s.message();
    }

    // The kernel, lowered to LLVM and compiled.
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &d) {
      errorStream << d.getLocation() << ": " << d << "\n";
      return success();
    });
    PassManager lower(context);
    lower.addPass(gnnk::createGNNLowerToKernels());
    ASSERT_TRUE(succeeded(lower.run(*module))) << errors;
    auto kernel = module->lookupSymbol<func::FuncOp>("agg_0.aggregate0");
    ASSERT_TRUE(kernel);
    OwningOpRef<ModuleOp> jit = ModuleOp::create(kernel.getLoc());
    auto copy = cast<func::FuncOp>(kernel->clone());
    jit->push_back(copy);
    std::string name = copy.getName().str();
    lowerGraph(copy);
    PassManager llvmPipeline(context);
    llvmPipeline.addPass(createConvertSCFToCFPass());
    llvmPipeline.addPass(createConvertMathToLibmPass());
    llvmPipeline.addPass(memref::createExpandStridedMetadataPass());
    llvmPipeline.addPass(createFinalizeMemRefToLLVMConversionPass());
    llvmPipeline.addPass(createConvertMathToLLVMPass());
    llvmPipeline.addPass(createArithToLLVMConversionPass());
    llvmPipeline.addPass(createConvertControlFlowToLLVMPass());
    llvmPipeline.addPass(createConvertFuncToLLVMPass());
    llvmPipeline.addPass(createReconcileUnrealizedCastsPass());
    ASSERT_TRUE(succeeded(llvmPipeline.run(*jit))) << errors;
    auto engine = ExecutionEngine::create(jit->getOperation());
    ASSERT_TRUE(static_cast<bool>(engine))
        << llvm::toString(engine.takeError());

    // Buffers: the graph's arrays for this side, inputs, outputs (filled
    // with a sentinel that every row must overwrite).
    std::vector<int64_t> ptr = byDst ? graph->inPtr() : graph->outPtr();
    std::vector<int64_t> nbr = byDst ? graph->inSrc() : graph->outDst();
    std::vector<int64_t> eid = byDst ? graph->inEdge() : graph->outEdge();
    std::vector<std::vector<int64_t>> descriptors;
    descriptors.push_back(descriptor(ptr.data(), {(int64_t)ptr.size()}));
    descriptors.push_back(descriptor(nbr.data(), {(int64_t)nbr.size()}));
    descriptors.push_back(descriptor(eid.data(), {(int64_t)eid.size()}));
    for (size_t i = 0; i < inputData.size(); ++i)
      descriptors.push_back(descriptor(inputData[i].data(), inputShapes[i]));
    const float sentinel = 1234.5f;
    std::vector<std::vector<float>> outputs;
    for (unsigned r = 0; r < aggregate.getNumResults(); ++r)
      outputs.emplace_back(product(expected[r].shape), sentinel);
    for (unsigned r = 0; r < aggregate.getNumResults(); ++r)
      descriptors.push_back(descriptor(outputs[r].data(), expected[r].shape));
    std::vector<void *> pointers;
    for (std::vector<int64_t> &d : descriptors)
      pointers.push_back(d.data());
    std::vector<void *> packed;
    for (void *&p : pointers)
      packed.push_back(&p);
    llvm::Error error = (*engine)->invokePacked("_mlir_ciface_" + name, packed);
    ASSERT_FALSE(static_cast<bool>(error)) << llvm::toString(std::move(error));

    for (unsigned r = 0; r < aggregate.getNumResults(); ++r) {
      ASSERT_EQ(expected[r].shape.front(), count);
      ASSERT_EQ(outputs[r].size(), expected[r].data.size());
      int64_t worst = 0;
      for (size_t j = 0; j < outputs[r].size(); ++j) {
        nanOutputs += std::isnan(outputs[r][j]);
        int64_t d = ulps(outputs[r][j], expected[r].data[j]);
        worst = std::max(worst, d);
        EXPECT_LE(d, 4) << "result " << r << " element " << j << ": kernel "
                        << outputs[r][j] << ", interpreter "
                        << expected[r].data[j];
        if (d > 4)
          return;
      }
      ++checkedResults;
      maxUlps = std::max(maxUlps, worst);
    }
  }

  int checkedResults = 0;
  int64_t maxUlps = 0;
  /// When positive, every nanEvery-th element of each input is a NaN.
  size_t nanEvery = 0;
  /// How many output elements were NaN.
  int64_t nanOutputs = 0;
};

/// A whole .gnn file after the fusion pipeline (or the training pipeline:
/// forward, saving forward and backward of every function, fused).
struct Compiled {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

::testing::AssertionResult compileExample(Compiled &c, const std::string &name,
                                          bool training = false) {
  if (auto ok =
          testing_support::lowerExample(c.context, name, "", {}, c.module);
      !ok)
    return ok;
  return testing_support::runPipeline(c.context, *c.module,
                                      [&](PassManager &pm) {
                                        if (training)
                                          gnn::buildTrainingPipeline(pm);
                                        else
                                          gnn::buildFusionPipeline(pm);
                                      });
}

class KernelExample : public KernelExec,
                      public ::testing::WithParamInterface<const char *> {};

TEST_P(KernelExample, MatchesInterpreter) {
  Compiled c;
  ASSERT_TRUE(compileExample(c, GetParam()));
  int n = checkAll(*c.module, GetParam());
  EXPECT_GT(n, 0) << "no gnn.aggregate in " << GetParam();
  EXPECT_GT(checkedResults, 0);
  std::cout << "[          ] " << GetParam() << ": " << n
            << " aggregates, worst difference " << maxUlps << " ulp\n";
}

/// The aggregations of the training module: the backward's (by source
/// over the CSC too) and the saving forward's (logsumexp statistics merged
/// into the softmax aggregation).
TEST_P(KernelExample, TrainingMatchesInterpreter) {
  Compiled c;
  ASSERT_TRUE(compileExample(c, GetParam(), /*training=*/true));
  int n = checkAll(*c.module, GetParam());
  EXPECT_GT(n, 0) << "no gnn.aggregate in " << GetParam();
  std::cout << "[          ] " << GetParam() << " (training): " << n
            << " aggregates, worst difference " << maxUlps << " ulp\n";
}

INSTANTIATE_TEST_SUITE_P(
    Examples, KernelExample,
    ::testing::Values("gcn.gnn", "gat.gnn", "gat_msgl.gnn", "gatv2.gnn",
                      "sage_mean.gnn", "sage_max.gnn", "gin.gnn", "appnp.gnn",
                      "out_gcn.gnn", "rgcn.gnn", "sage_block.gnn",
                      "readout.gnn", "sage2_block.gnn", "gat2_block.gnn"),
    [](const ::testing::TestParamInfo<const char *> &info) {
      return testing_support::testName(llvm::sys::path::stem(info.param));
    });

/// NaN inputs: relu, leaky_relu, elu, max and min of a kernel keep a NaN as
/// the interpreter (and PyTorch) does, and the sums carry it to the output.
TEST_F(KernelExec, NaNInputsMatchInterpreter) {
  const char *source = R"gnn(
layer NaNOps(d: int = 4):
    def forward(g: Graph, x: f32[N, d]) -> f32[N, 5 * d]:
        g.set_vertex_attr({"h": x})
        for v in g.dst_vertex:
            v.a = g.sum([relu(u.h) for u in v.innbs])
            v.b = g.sum([leaky_relu(u.h, 0.2) for u in v.innbs])
            v.c = g.sum([elu(u.h) for u in v.innbs])
            v.m = g.sum([max(u.h, v.h) for u in v.innbs])
            v.n = g.sum([min(v.h, u.h) for u in v.innbs])
        return concat([[v.a for v in g.dst_vertex], [v.b for v in g.dst_vertex],
                       [v.c for v in g.dst_vertex], [v.m for v in g.dst_vertex],
                       [v.n for v in g.dst_vertex]], 1)
)gnn";
  Compiled c;
  ASSERT_TRUE(testing_support::lowerGNN(c.context, source, "nan.gnn", "NaNOps",
                                        {}, c.module));
  ASSERT_TRUE(
      testing_support::runPipeline(c.context, *c.module, [](PassManager &pm) {
        gnn::buildFusionPipeline(pm);
      }));
  nanEvery = 7;
  int n = checkAll(*c.module, "nan.gnn");
  EXPECT_GT(n, 0);
  EXPECT_GT(checkedResults, 0);
  EXPECT_GT(nanOutputs, 0);
}

/// Every op of a body and every reduction kind, from the lit test's input.
TEST_F(KernelExec, LowerOpsTestFile) {
  MLIRContext context;
  loadGNNDialects(context);
  std::string path = std::string(GNNC_SOURCE_DIR) +
                     "/tests/Dialect/GNNK/Transforms/lower-ops.mlir";
  llvm::SourceMgr sourceMgr;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(static_cast<bool>(buffer)) << "cannot read " << path;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  ASSERT_TRUE(module);
  int n = checkAll(*module, "lower-ops.mlir");
  EXPECT_GE(n, 4);
  std::cout << "[          ] lower-ops.mlir: " << n
            << " aggregates, worst difference " << maxUlps << " ulp\n";
}

} // namespace
