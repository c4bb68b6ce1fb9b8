//===- Types.cpp - Dimensions, domains and value types --------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Frontend/Types.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace gnnc;

Dim Dim::constant(int64_t value) {
  Dim d;
  if (value != 0)
    d.terms[{}] = value;
  return d;
}

Dim Dim::symbol(llvm::StringRef name) {
  Dim d;
  d.terms[{name.str()}] = 1;
  return d;
}

static bool checkedAdd(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_add_overflow(a, b, &out);
}
static bool checkedMul(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_mul_overflow(a, b, &out);
}

std::optional<Dim> Dim::add(const Dim &other) const {
  Dim result = *this;
  for (const auto &[mono, coeff] : other.terms) {
    int64_t sum;
    if (!checkedAdd(result.terms[mono], coeff, sum))
      return std::nullopt;
    if (sum == 0)
      result.terms.erase(mono);
    else
      result.terms[mono] = sum;
  }
  if (result.terms.size() > maxTerms)
    return std::nullopt;
  return result;
}

std::optional<Dim> Dim::sub(const Dim &other) const {
  Dim negated;
  for (const auto &[mono, coeff] : other.terms) {
    int64_t neg;
    if (!checkedMul(coeff, -1, neg))
      return std::nullopt;
    negated.terms[mono] = neg;
  }
  return add(negated);
}

std::optional<Dim> Dim::mul(const Dim &other) const {
  Dim result;
  for (const auto &[ma, ca] : terms) {
    for (const auto &[mb, cb] : other.terms) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      if (m.size() > maxDegree)
        return std::nullopt;
      std::sort(m.begin(), m.end());
      int64_t prod, sum;
      if (!checkedMul(ca, cb, prod) || !checkedAdd(result.terms[m], prod, sum))
        return std::nullopt;
      if (sum == 0)
        result.terms.erase(m);
      else
        result.terms[m] = sum;
      if (result.terms.size() > maxTerms)
        return std::nullopt;
    }
  }
  return result;
}

std::optional<Dim> Dim::divExact(const Dim &other) const {
  if (other.terms.size() != 1)
    return std::nullopt;
  const auto &[divMono, divCoeff] = *other.terms.begin();
  Dim result;
  for (const auto &[mono, coeff] : terms) {
    if ((coeff == INT64_MIN && divCoeff == -1) || coeff % divCoeff != 0)
      return std::nullopt;
    Monomial rest = mono;
    for (const std::string &s : divMono) {
      auto it = std::find(rest.begin(), rest.end(), s);
      if (it == rest.end())
        return std::nullopt;
      rest.erase(it);
    }
    result.terms[rest] = coeff / divCoeff;
  }
  return result;
}

std::optional<Dim>
Dim::substitute(const std::map<std::string, Dim> &map) const {
  Dim result;
  for (const auto &[mono, coeff] : terms) {
    Dim term = Dim::constant(coeff);
    for (const std::string &s : mono) {
      auto it = map.find(s);
      std::optional<Dim> next =
          term.mul(it == map.end() ? Dim::symbol(s) : it->second);
      if (!next)
        return std::nullopt;
      term = *next;
    }
    std::optional<Dim> sum = result.add(term);
    if (!sum)
      return std::nullopt;
    result = *sum;
  }
  return result;
}

bool Dim::isConstant() const {
  return terms.empty() || (terms.size() == 1 && terms.begin()->first.empty());
}

std::optional<int64_t> Dim::getConstant() const {
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms.begin()->first.empty())
    return terms.begin()->second;
  return std::nullopt;
}

bool Dim::isNegativeDefinite() const {
  if (terms.empty())
    return false;
  for (const auto &term : terms)
    if (term.second >= 0)
      return false;
  return true;
}

bool Dim::mentions(llvm::StringRef symbol) const {
  for (const auto &term : terms)
    for (const std::string &s : term.first)
      if (s == symbol)
        return true;
  return false;
}

std::string Dim::str() const {
  if (terms.empty())
    return "0";
  std::string out;
  llvm::raw_string_ostream os(out);
  // Highest degree first, so `2*N + 1` reads naturally.
  std::vector<std::pair<Monomial, int64_t>> ordered(terms.begin(), terms.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto &a, const auto &b) {
                     return a.first.size() > b.first.size();
                   });
  bool first = true;
  for (const auto &[mono, coeff] : ordered) {
    int64_t c = coeff;
    if (!first)
      os << (c < 0 ? " - " : " + ");
    else if (c < 0)
      os << "-";
    uint64_t mag = c < 0 ? 0 - static_cast<uint64_t>(c) : c;
    bool needStar = false;
    if (mag != 1 || mono.empty()) {
      os << mag;
      needStar = true;
    }
    for (const std::string &s : mono) {
      if (needStar)
        os << "*";
      os << s;
      needStar = true;
    }
    first = false;
  }
  return out;
}

bool gnnc::mentionsGraphSize(const Dim &dim,
                             llvm::ArrayRef<std::string> named) {
  for (const char *s : {sym::N, sym::NSrc, sym::NDst, sym::E, sym::B})
    if (dim.mentions(s))
      return true;
  for (const std::string &s : named)
    if (dim.mentions(s))
      return true;
  return false;
}

GraphSizeNames gnnc::graphSizeNames(const ValueType &graph) {
  GraphSizeNames out;
  if (graph.graphKind == GraphKind::Block) {
    out.src = sym::NSrc;
    out.dst = sym::NDst;
  } else {
    out.src = out.dst = sym::N;
  }
  out.edge = sym::E;
  if (!graph.srcSize.empty())
    out.src = graph.srcSize;
  if (!graph.dstSize.empty())
    out.dst = graph.dstSize;
  if (!graph.edgeSize.empty())
    out.edge = graph.edgeSize;
  return out;
}

void gnnc::copyGraphIdentity(ValueType &to, const ValueType &from) {
  to.graphKind = from.graphKind;
  to.name = from.name;
  to.srcSize = from.srcSize;
  to.dstSize = from.dstSize;
  to.edgeSize = from.edgeSize;
}

llvm::StringRef gnnc::getElemTypeName(ElemType t) {
  switch (t) {
  case ElemType::F32:
    return "f32";
  case ElemType::F64:
    return "f64";
  case ElemType::I32:
    return "i32";
  case ElemType::I64:
    return "i64";
  case ElemType::Bool:
    return "bool";
  case ElemType::WeakFloat:
    return "float";
  case ElemType::WeakInt:
    return "int";
  }
  return "?";
}

llvm::StringRef gnnc::getDomainName(Domain d) {
  switch (d) {
  case Domain::Dense:
    return "dense";
  case Domain::Src:
    return "per-source";
  case Domain::Dst:
    return "per-destination";
  case Domain::Edge:
    return "per-edge";
  }
  return "?";
}

llvm::StringRef gnnc::getGraphKindName(GraphKind k) {
  switch (k) {
  case GraphKind::Graph:
    return "Graph";
  case GraphKind::Block:
    return "Block";
  case GraphKind::BatchedGraph:
    return "BatchedGraph";
  case GraphKind::HeteroGraph:
    return "HeteroGraph";
  }
  return "?";
}

ValueType ValueType::tensor(ElemType elem, std::vector<Dim> shape,
                            Domain domain) {
  ValueType t;
  t.kind = Kind::Tensor;
  t.elem = elem;
  t.shape = std::move(shape);
  t.domain = domain;
  return t;
}

ValueType ValueType::intConstant(Dim value) {
  ValueType t = tensor(ElemType::WeakInt, {});
  t.intValue = std::move(value);
  return t;
}

ValueType ValueType::floatConstant(std::optional<double> value) {
  ValueType t = tensor(ElemType::WeakFloat, {});
  t.floatValue = value;
  t.isConstant = true;
  return t;
}

ValueType ValueType::ofKind(Kind kind) {
  ValueType t;
  t.kind = kind;
  return t;
}

std::string gnnc::formatNumber(double value) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value)
      break;
  }
  return buf;
}

std::string ValueType::shapeStr() const {
  std::string out = getElemTypeName(elem).str();
  if (shape.empty())
    return out;
  out += "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += shape[i].str();
  }
  out += "]";
  return out;
}

std::string ValueType::str() const {
  switch (kind) {
  case Kind::Error:
    return "<error>";
  case Kind::Tensor: {
    std::string out = shapeStr();
    if (intValue)
      out += " = " + intValue->str();
    else if (floatValue)
      out += " = " + formatNumber(*floatValue);
    if (domain == Domain::Edge)
      out += direction == Direction::In ? " per-edge(in)" : " per-edge(out)";
    else if (domain != Domain::Dense)
      out += " " + getDomainName(domain).str();
    return out;
  }
  case Kind::Graph: {
    std::string out = getGraphKindName(graphKind).str();
    if (srcSize.empty())
      return out;
    out += "[" + srcSize + ", " + dstSize;
    // An edge count the type does not name has a symbol no source can
    // spell (`g.n_edges`).
    if (!edgeSize.empty() && edgeSize.find('.') == std::string::npos)
      out += ", " + edgeSize;
    return out + "]";
  }
  case Kind::VertexSet:
    return side == Domain::Src ? "vertex-set(src)" : "vertex-set(dst)";
  case Kind::Vertex:
    return side == Domain::Src ? "vertex(src)" : "vertex(dst)";
  case Kind::EdgeVar:
    return "edge";
  case Kind::Neighbours:
    return std::string(direction == Direction::In ? "in" : "out") +
           (withEdges ? "-edges" : "-neighbours");
  case Kind::Layer:
    return "layer " + name;
  case Kind::String:
    return "str";
  case Kind::List:
    return "list";
  case Kind::Dict:
    return "dict";
  case Kind::Function:
    return "function " + name;
  }
  return "?";
}
