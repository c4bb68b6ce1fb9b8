//===- HostModule.h - The host side every printer shares --------*- C++ -*-===//
//
// Part of gnnc. The C++ and CUDA printers give a module the same host ABI
// (docs/abi.md): an entry point `F(graphs, sizes, inputs, params, outputs,
// workspace, training, seed)` and `F_workspace_bytes(graphs, sizes)` per
// public host function, a parameter struct per distinct parameter list (an
// empty one for functions without parameters), a saved-state struct
// `F_Saved` per function with a saving forward `F.train` (with
// `F_saved_bytes` and `F_saved_layout`), a Layout struct of workspace
// offsets, reflection tables, and a header that declares it all. What differs
// (the graph types, the runtime namespace, a trailing `cudaStream_t stream`,
// the ops themselves, the kernels) is a HostABI and the hooks of
// HostFunctionPrinter and HostModulePrinter.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TARGET_HOSTMODULE_H
#define GNNC_TARGET_HOSTMODULE_H

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Dialect/GNNK/IR/GNNK.h"
#include "gnnc/Target/CodeWriter.h"
#include "gnnc/Target/HostPlan.h"
#include "gnnc/Target/HostShapes.h"
#include "gnnc/Target/PrinterSupport.h"
#include "gnnc/Target/SourceInfo.h"
#include "gnnc/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace gnnc::target {

//===----------------------------------------------------------------------===//
// Module-level information
//===----------------------------------------------------------------------===//

/// The parameter struct shared by functions with the same parameters.
struct ParamStruct {
  std::string name;
  std::vector<std::string> paths, fields, inits;
  std::vector<std::vector<int64_t>> shapes;
  /// Which are buffers (gnn.buffer): not trained, updated by a training
  /// forward.
  std::vector<bool> buffers;
};

struct HostFunc;

/// The saved-state struct of a function F with a saving forward: one
/// pointer per tensor that F.train saves (in the order of its results) and
/// F.backward reads, named after F (`GCN_Saved`).
struct SavedStruct {
  std::string name;                // "GCN_Saved"
  std::string bytesSymbol;         // "GCN_saved_bytes"
  std::string layoutSymbol;        // "GCN_saved_layout"
  std::vector<std::string> names;  // the gnn.saved names
  std::vector<std::string> fields; // their C fields
  std::vector<unsigned> results;   // their results of F.train
  const HostFunc *train = nullptr; // F.train: graphs, sizes and shapes
};

/// One host function: its C names and ABI.
struct HostFunc {
  mlir::func::FuncOp func;
  std::string symbol;
  std::string kind;
  const FunctionShapes *shapes = nullptr;
  /// C names of the size symbols (by symbol id).
  std::vector<std::string> symbolNames;
  struct Arg {
    enum Kind { Graph, Input, Param, Saved } kind = Input;
    std::string name;   // the C parameter name (graphs, inputs)
    std::string source; // the .gnn name of an input (the reflection table's)
    std::string field;  // the struct field (parameters, saved tensors)
    gnn::GraphKind graphKind = gnn::GraphKind::graph;
  };
  std::vector<Arg> args;
  const ParamStruct *params = nullptr;
  struct Result {
    std::string name;       // the C parameter name ("out", "grad_x")
    std::string role;       // output, grad, saved
    std::string field;      // grads.<field> when packed
    std::string savedField; // saved.<field> (a tensor F.train saves)
    std::string of;         // grad_of / saved name
    /// The gradient of an input (not of a parameter) of a backward: the
    /// caller may pass null, and the ops that only it needs are skipped
    /// (only where HostABI::optionalInputGrads says so).
    bool optional = false;
  };
  std::vector<Result> results;
  bool packGrads = false;
  /// The saved-state struct that F.train writes (after its outputs) and
  /// F.backward reads (before argument `savedBefore`, its cotangent).
  const SavedStruct *saved = nullptr;
  int savedBefore = -1;

  /// One group of the entry point's parameters before the workspace: a
  /// graph or input argument (`index`: the argument), an explicit size
  /// (`index`: the symbol), the parameter struct, an output (`index`: the
  /// result), the saved-state struct or the gradient struct.
  struct Part {
    enum Kind { Graph, Size, Input, Params, Output, Saved, Grads };
    Kind kind = Graph;
    unsigned index = 0;
  };
  /// The parameters of the entry point in order, up to the workspace
  /// (docs/abi.md, "Entry points").
  std::vector<Part> entryParts() const;

  std::string symbolName(int s) const { return symbolNames[s]; }

  /// Graph sizes fixed at compile time (`gnnc -D N0=4096`, static shapes),
  /// by symbol: the entry point declares them constexpr, checks its graphs
  /// against them and plans its workspace once.
  std::map<int, int64_t> staticSizes;
};

/// A kernel and how the host calls it (the CUDA printer's `symbol` is the
/// host launcher, `symbol_kernel` the __global__ function).
struct KernelInfo {
  mlir::func::FuncOp func;
  std::string symbol;
  std::vector<std::string> argNames; // after the graph
  bool usesDropout = false;
  int numOutputs = 0;
  /// The rows the kernel runs over (set by the CUDA printer, which passes
  /// the matching layout of the graph).
  gnnk::Side side = gnnk::Side::dst;
};

/// The `rt::GraphKind` enumerator of a graph kind.
std::string graphKindEnum(gnn::GraphKind kind);
/// The name of a graph kind in documentation ("graph", "batched").
std::string graphKindName(gnn::GraphKind kind);

/// What the host code of one printer spells differently from another's.
struct HostABI {
  /// The printer in diagnostics ("C++": "the C++ printer needs ...").
  std::string printerName;
  /// The namespace, relative to gnnc, of the runtime's graph helpers and
  /// reflection types ("rt" or "rt::cuda": rt::cuda::findRelation,
  /// rt::cuda::CallArgs).
  std::string runtime;
  /// The parameter types of the graph kinds: graphs and blocks, batched
  /// graphs, heterogeneous graphs ("const gnnc::rt::Graph &").
  std::string graphType, batchedGraphType, heteroGraphType;
  /// The type a relation of a heterogeneous graph is looked up as
  /// ("rt::Graph"; a `const T *`).
  std::string relationType;
  /// A parameter that every entry point takes last and passes on to what it
  /// calls (type "cudaStream_t", name "stream"); none when the name is
  /// empty.
  std::string extraParamType, extraParamName;
  /// Whether the gradients of a backward's inputs may be null (then what
  /// only they need is not computed).
  bool optionalInputGrads = false;
  /// How float literals of host code spell infinities and NaN.
  NonFiniteSpelling nonFinite = NonFiniteSpelling::NumericLimits;
  /// The header guard starts with this ("GNNC_GENERATED_").
  std::string guardPrefix;
  /// The runtime header the generated header includes.
  std::string runtimeHeader;
  /// The extension of the generated source (".cpp", ".cu").
  std::string sourceExtension;
  /// The memory the pointers of entry points point to, in documentation
  /// ("memory", "device memory").
  std::string bufferMemory = "memory";

  /// The parameter type of a graph of `kind` ("const gnnc::rt::Graph &").
  const std::string &graphTypeOf(gnn::GraphKind kind) const;
  /// "the C++ printer".
  std::string printer() const { return "the " + printerName + " printer"; }
};

/// The host-plan traits of the printer of `abi` (by its name: "C++",
/// "CUDA").
const HostTraits &hostTraitsOf(const HostABI &abi);

/// The C++ expression of a size symbol, read from the graph arguments of `f`
/// (`graph(i)` is the expression of graph argument i).
std::string symbolSource(const SizeSymbol &s, const HostFunc &f,
                         const std::function<std::string(unsigned)> &graph,
                         const HostABI &abi);

//===----------------------------------------------------------------------===//
// Host functions
//===----------------------------------------------------------------------===//

/// Prints one host function: its Layout struct, its entry point and its
/// workspace size. A printer derives from it to print the ops (printOp).
class HostFunctionPrinter {
public:
  HostFunctionPrinter(const HostABI &abi, HostFunc &f, SourceFiles &sources,
                      const std::map<std::string, HostFunc *> &functions,
                      const std::map<std::string, KernelInfo> &kernels)
      : abi(abi), f(f), func(f.func), shapes(*f.shapes), sources(sources),
        functions(functions), kernels(kernels) {}
  virtual ~HostFunctionPrinter();

  /// Names every value and decides where it lives.
  mlir::LogicalResult plan();
  /// The C names of the operands of each launch of a kernel.
  void kernelArgNames(std::map<std::string, KernelInfo> &kernels) const;
  /// Prints the Layout struct, the entry point and its workspace size.
  mlir::LogicalResult print(CodeWriter &w);

protected:
  /// How a host value is stored.
  struct Storage {
    enum Kind { Arg, Alias, Buffer, Output, Scalar, Graph } kind = Buffer;
    std::string name;      // variable or expression of its pointer
    bool isConst = false;  // a const float *
    bool declared = false; // has its own variable (Buffer, Alias)
  };

  /// Prints `op` (neither a call nor a view that prints nothing) into `w`,
  /// the declarations of its buffers into `decl`.
  virtual mlir::LogicalResult printOp(mlir::Operation *op, CodeWriter &w,
                                      CodeWriter &decl) = 0;
  /// The statement that copies `count` floats from `from` into the result
  /// `to` at the end.
  virtual std::string copyStatement(const std::string &from,
                                    const std::string &to,
                                    const std::string &count) = 0;
  /// Whether a constant lives in a workspace buffer (device memory) instead
  /// of a `const float[1]` (Storage::Scalar).
  virtual bool constantsInWorkspace() const { return false; }
  /// Prints a call of the runtime's `fn` ("gather") with `args`.
  virtual void printRuntimeCall(CodeWriter &w, const std::string &fn,
                                const std::string &args) = 0;
  /// Prints a call of the runtime's `fn` that returns an rt::Status, which
  /// the entry point returns when it is an error. Every CUDA runtime call
  /// is one already.
  virtual void printCheckedRuntimeCall(CodeWriter &w, const std::string &fn,
                                       const std::string &args) {
    printRuntimeCall(w, fn, args);
  }
  /// The pointer to the source (`src`) or destination vertex of every edge
  /// of the kernel graph of `graph`.
  virtual std::string edgeEnds(mlir::Value graph, bool src) = 0;

  /// Prints the ops that every printer prints as one call of its runtime
  /// (degrees, gathers, scatters, elementwise ops, softmax, copies, dropout,
  /// ...), views and calls of host functions; reports an error on any
  /// other op.
  mlir::LogicalResult printRuntimeOp(mlir::Operation *op, CodeWriter &w,
                                     CodeWriter &decl);
  /// Prints a call of another host function.
  mlir::LogicalResult printCall(mlir::func::CallOp call, CodeWriter &w,
                                CodeWriter &decl);

  /// The rt::Side of a domain ("rt::Side::Src").
  static std::string sideEnum(gnn::Domain d);
  /// `s` with its first letter in upper case ("max" -> "Max").
  static std::string capitalized(llvm::StringRef s);
  /// (outer, len, inner) of axis `axis` of v's full shape.
  std::string axisSplit(mlir::Value v, size_t axis) {
    return dims(v, 0, axis) + ", " + dims(v, axis, axis + 1) + ", " +
           dims(v, axis + 1, shapes.shape(v).size());
  }
  /// An operand of an elementwise op with its shape `aligned` to the op's
  /// result and then, with leading 1s, to `rank` axes ("a, {N, 8, 1}"); an
  /// absorbed broadcast is read as its input.
  std::string elementwiseOperand(mlir::Value v, Shape aligned, size_t rank);
  /// Both operands of an elementwise op so ("a, {N, 8, 1}, b, {1, 8, 8}"),
  /// to at least `rank` axes.
  std::string binaryOperands(gnn::BinaryOp b, size_t rank = 0);
  /// The (outer, len, inner) sizes of a reduction of `input` over `axis`
  /// (of its rows, when it is a vertex or edge tensor), or over whole rows
  /// when there is no axis.
  std::string reduceSplit(mlir::Value input, mlir::IntegerAttr axis);

  std::string sym(int s) {
    usedSymbols.insert(s);
    return f.symbolName(s);
  }
  std::string dim(Dim d) {
    return dimExpr(d, [&](int s) { return sym(s); });
  }
  std::string numel(const Shape &s) {
    return productExpr(s, [&](int x) { return sym(x); });
  }
  std::string numel(mlir::Value v) { return numel(shapes.shape(v)); }
  std::string shapeList(const Shape &s) {
    std::string out = "{";
    for (auto [i, d] : llvm::enumerate(s))
      out += (i ? ", " : "") + dim(d);
    return out + "}";
  }
  std::string ptr(mlir::Value v) { return storage[v].name; }
  std::string graph(mlir::Value g);
  std::string kernelGraph(mlir::Value g);
  /// `member` of the graph expression `g` ("*p" is a pointer).
  static std::string member(const std::string &g, const std::string &member) {
    return g[0] == '*' ? g.substr(1) + "->" + member : g + "." + member;
  }
  /// The product of dims [from, to) of v's shape.
  std::string dims(mlir::Value v, size_t from, size_t to) {
    Shape s = shapes.shape(v);
    to = std::min(to, s.size());
    return numel(Shape(s.begin() + std::min(from, to), s.begin() + to));
  }
  std::string rowSize(mlir::Value v) {
    Shape s = shapes.shape(v);
    return dims(v, 1, s.size());
  }
  /// A matmul as the printers call it: per operand, the value it reads (the
  /// input of a transpose the matmul absorbs) and whether that is
  /// transposed, and the sizes "rows, k, n".
  struct MatmulOperands {
    mlir::Value a, w;
    bool transA = false, transW = false;
    std::string sizes;
  };
  MatmulOperands matmulOperands(gnn::MatmulOp m);
  /// The probability, seed and training arguments of a dropout's runtime
  /// call (rt::dropout and the products that drop their input).
  std::string dropoutArgs(gnn::DropoutOp d);
  /// Declares the variable of a fresh value (a workspace buffer).
  void declare(mlir::Value v, CodeWriter &w);
  /// The condition under which `op` runs: "" (always), or "grad_x || ..."
  /// when every result it contributes to is optional (may be null).
  std::string guardOf(mlir::Operation *op) const;
  /// The same for the results value `v` contributes to.
  std::string guardOfValue(mlir::Value v) const;
  /// The name of `result` of `op`, whose .gnn location is `loc`; `last`:
  /// no later op of the body comes from the same line.
  std::string valueName(mlir::Operation *op, mlir::Value result,
                        const SourceLoc &loc, bool last, unsigned ssa,
                        bool &meaningful);

  const HostABI &abi;
  HostFunc &f;
  mlir::func::FuncOp func;
  const FunctionShapes &shapes;
  SourceFiles &sources;
  const std::map<std::string, HostFunc *> &functions;
  const std::map<std::string, KernelInfo> &kernels;
  Namer namer;
  llvm::DenseMap<mlir::Value, Storage> storage;
  /// A buffer of the workspace: its name, its byte count (an expression)
  /// and the ops (by position in the body) between which it is live.
  struct Slot {
    std::string name, bytes;
    unsigned first = 0, last = 0;
    /// The earlier slot whose bytes it takes over (in place), or -1.
    int reuses = -1;
  };
  std::vector<Slot> layout;
  /// The value whose buffer each slot holds now (a result written in place
  /// takes over the slot of the operand it overwrites).
  llvm::DenseMap<unsigned, mlir::Value> slotHolders;
  /// The recorded workspace plan of this printer (gnn.workspace): the
  /// slots in placement order, with their lifetimes.
  std::vector<WorkspaceSlot> plannedSlots;
  /// The position of every op of the body, and for every value whose
  /// buffer is its own, the position of the last op that reads it (a
  /// recorded lifetime may be longer, never shorter).
  llvm::DenseMap<mlir::Operation *, unsigned> position;
  llvm::DenseMap<mlir::Value, unsigned> lastUse;
  /// Whether a slot was asked for that the plan does not have next.
  bool slotMismatch = false;
  /// Adds the next slot of the plan: the buffer of `value` (a result of
  /// `op`), else the scratch of `op` or the workspace of the function it
  /// calls. Reports an error when the plan's next slot is another or
  /// lives shorter than it must.
  void addSlot(std::string name, std::string bytes, mlir::Operation *op,
               mlir::Value value = mlir::Value());
  std::set<int> usedSymbols;
  bool usesTraining = false, usesSeed = false, usesWorkspace = false;
  /// Whether the body reads HostABI::extraParamName.
  bool usesExtraParam = false;
  std::set<unsigned> usedGraphs;
  /// Result i copied from a value at the end.
  std::vector<bool> copyResult;
  /// Ops whose results reach the return (the others are not printed).
  llvm::DenseSet<mlir::Operation *> live;
  /// The results of the function (by index) each value contributes to,
  /// through the ops that read it; an op's set is the union of its
  /// results'.
  llvm::DenseMap<mlir::Value, llvm::SmallBitVector> valueFeeds;
  llvm::DenseMap<mlir::Operation *, llvm::SmallBitVector> opFeeds;
  bool hasOptionalResults = false;
  std::string guardFor(const llvm::SmallBitVector &results) const;
  /// The recorded host fusions the printer prints (gnn.host_fusion; none
  /// for a printer without them): absorbed transposes are views of their
  /// input that print nothing, fused ops print nothing.
  HostFusions fusions;
  /// Ops that only name another buffer (attach, collect, reshape, absorbed
  /// transposes and broadcasts).
  bool isView(mlir::Operation *op) const {
    return mlir::isa<gnn::AttachOp, gnn::CollectOp, gnn::ReshapeOp>(op) ||
           isAbsorbed(fusions, op);
  }
  /// Whether a printed op reads `v`'s data (broadcast_like reads only the
  /// shape of its second operand, which is known without it).
  bool isUsed(mlir::Value v) const {
    return llvm::any_of(v.getUses(), [&](mlir::OpOperand &use) {
      mlir::Operation *user = use.getOwner();
      if (mlir::isa<gnn::BroadcastLikeOp>(user) && use.getOperandNumber() == 1)
        return false;
      return live.count(user) > 0;
    });
  }
};

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

/// Prints a module as `<stem>.h` and `<stem><HostABI::sourceExtension>`:
/// collects its host functions and kernels, names them, prints the header
/// (parameter structs, declarations) and the source (kernels, host
/// functions, reflection tables). A printer derives from it to print
/// kernels and to make its HostFunctionPrinter.
class HostModulePrinter {
public:
  /// Prints `module` as `options` say; the C++ namespace defaults to the
  /// stem (as a C identifier).
  HostModulePrinter(HostABI abi, mlir::ModuleOp module,
                    const TargetOptions &options);
  virtual ~HostModulePrinter();

  mlir::LogicalResult print(std::vector<GeneratedFile> &files);

protected:
  /// The printer of host function `f`.
  virtual std::unique_ptr<HostFunctionPrinter>
  createHostPrinter(HostFunc &f) = 0;
  /// Prints kernel `k` into the anonymous namespace of the source.
  virtual mlir::LogicalResult printKernel(KernelInfo &k, CodeWriter &w) = 0;
  /// The comment lines of the header after its "Generated by" line.
  virtual void printHeaderAbout(CodeWriter &w) = 0;
  /// The includes of the source after its own header.
  virtual void printSourceIncludes(CodeWriter &w) = 0;
  /// The last documentation line of a declaration (on pointers and the
  /// workspace).
  virtual std::string memoryNote(const HostFunc &f) = 0;

  const HostABI abi;
  mlir::ModuleOp module;
  const TargetOptions options;
  SourceFiles sources;
  std::vector<std::unique_ptr<HostFunc>> hosts; // callee-first
  std::map<std::string, HostFunc *> byName;
  std::map<std::string, KernelInfo> kernels;

private:
  mlir::LogicalResult collect();
  mlir::LogicalResult planFunction(HostFunc &f);
  void printHeader(CodeWriter &w);
  void printParamStruct(CodeWriter &w, const ParamStruct &p);
  void printSavedStruct(CodeWriter &w, const SavedStruct &s);
  /// The parameters of F_saved_bytes (and after `void *buffer`, of
  /// F_saved_layout): F.train's graphs and explicit sizes. When `used` is
  /// given, those not in it are commented out (a graph by its argument
  /// index, an explicit size by the number of arguments plus its symbol).
  std::vector<std::string> savedSizeParams(const SavedStruct &s,
                                           const std::set<unsigned> *used);
  void printSavedLayout(CodeWriter &w, const SavedStruct &s);
  void printDeclaration(CodeWriter &w, const HostFunc &f);
  void printReflection(CodeWriter &w);
  std::string tensorInfo(const std::string &name, const std::string &role,
                         const std::string &init, const Shape &shape,
                         const HostFunc &f);

  std::vector<std::string> kernelOrder;
  llvm::StringMap<FunctionShapes> analyses;
  std::vector<std::unique_ptr<ParamStruct>> structs;
  std::vector<std::unique_ptr<SavedStruct>> savedStructs;
  std::vector<std::unique_ptr<HostFunctionPrinter>> printers;
};

} // namespace gnnc::target

#endif // GNNC_TARGET_HOSTMODULE_H
