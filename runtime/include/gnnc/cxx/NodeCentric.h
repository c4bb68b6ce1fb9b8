//===- NodeCentric.h - GNN layers written from one vertex, in C++ -*- C++
//-*-===//
//
// Part of gnnc. A small node-centric API for writing a GNN layer inside a C++
// source, as a .gnn file writes it:
//
//   GNNC_LAYER void gcn(nc::Graph &g, nc::Rows<16> x, nc::Weight<16, 7> W,
//                       nc::Rows<7> &out) {
//     g.set_vertex_attr("h", nc::matmul(x, W));
//     for (nc::Vertex v : g.dst_vertices())
//       v.set("h", g.sum(v.in_neighbors(),
//                        [](nc::Vertex u) { return u.get("h"); }));
//     out = g.dst_attr("h");
//   }
//
// Compiled as it is, a layer runs here, one vertex at a time: slowly, and
// exactly as written; that run is the reference. `gnnc-cxx` (docs/cxx.md)
// rewrites the body of every GNNC_LAYER function into a call of the fused
// kernels gnnc compiles from it. The subset it accepts is the .gnn
// language's (docs/language.md); docs/cxx.md maps one onto the other.
//
// Every value is a float32 tensor. `Rows<F...>` is a `[rows, F...]` tensor
// (one row per vertex: an input or the output), `EdgeRows<F...>` one row per
// edge, `Weight<D...>` a parameter of shape `[D...]`; inside a vertex loop a
// vertex's attribute is one row, and a map over a neighbourhood gives one
// row per edge (`EdgeValues`). Misuse (an unknown attribute, shapes that do
// not broadcast) throws std::invalid_argument naming the problem.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_CXX_NODECENTRIC_H
#define GNNC_CXX_NODECENTRIC_H

#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Status.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

/// Marks a function as a node-centric layer: gnnc-cxx (a Clang tool) compiles
/// its body. Other compilers see a plain function.
#if defined(__clang__)
#define GNNC_LAYER [[clang::annotate("gnnc.layer")]]
#else
#define GNNC_LAYER
#endif

namespace gnnc::cxx {

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

/// A float32 tensor: a shape and row-major data.
class Tensor {
public:
  Tensor() = default;
  Tensor(std::vector<int64_t> shape, std::vector<float> data)
      : Shape(std::move(shape)), Data(std::move(data)) {
    if (static_cast<int64_t>(Data.size()) != count(Shape))
      throw std::invalid_argument(
          "gnnc::cxx::Tensor: " + std::to_string(Data.size()) +
          " values for the shape " + str(Shape));
  }
  /// A scalar.
  Tensor(float value) : Data{value} {}

  const std::vector<int64_t> &shape() const { return Shape; }
  int64_t rank() const { return static_cast<int64_t>(Shape.size()); }
  int64_t numElements() const { return static_cast<int64_t>(Data.size()); }
  const float *data() const { return Data.data(); }
  float *data() { return Data.data(); }
  const std::vector<float> &values() const { return Data; }
  float operator[](int64_t i) const { return Data[i]; }

  /// Row `i` of a tensor of rank >= 1, as a tensor of the remaining shape.
  Tensor row(int64_t i) const {
    std::vector<int64_t> rest(Shape.begin() + 1, Shape.end());
    int64_t n = count(rest);
    return Tensor(rest, std::vector<float>(Data.begin() + i * n,
                                           Data.begin() + (i + 1) * n));
  }
  /// Stacks equally shaped rows into a `[rows.size(), ...]` tensor; `shape`
  /// is the row shape when there are none.
  static Tensor stack(const std::vector<Tensor> &rows,
                      std::vector<int64_t> shape) {
    if (!rows.empty())
      shape = rows.front().shape();
    std::vector<float> data;
    for (const Tensor &r : rows) {
      if (r.shape() != shape)
        throw std::invalid_argument("gnnc::cxx: rows of shapes " + str(shape) +
                                    " and " + str(r.shape()));
      data.insert(data.end(), r.Data.begin(), r.Data.end());
    }
    shape.insert(shape.begin(), static_cast<int64_t>(rows.size()));
    return Tensor(std::move(shape), std::move(data));
  }

  static int64_t count(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  static std::string str(const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i)
      s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  }

  /// Elementwise `f(a, b)` with NumPy broadcasting.
  template <typename F>
  static Tensor zip(const Tensor &a, const Tensor &b, F f) {
    size_t rank = std::max(a.Shape.size(), b.Shape.size());
    auto padded = [&](const std::vector<int64_t> &s) {
      std::vector<int64_t> p(rank - s.size(), 1);
      p.insert(p.end(), s.begin(), s.end());
      return p;
    };
    std::vector<int64_t> sa = padded(a.Shape), sb = padded(b.Shape), out(rank);
    for (size_t i = 0; i < rank; ++i) {
      if (sa[i] != sb[i] && sa[i] != 1 && sb[i] != 1)
        throw std::invalid_argument("gnnc::cxx: shapes " + str(a.Shape) +
                                    " and " + str(b.Shape) +
                                    " do not broadcast");
      out[i] = sa[i] == 1 ? sb[i] : sa[i];
    }
    std::vector<float> data(count(out));
    std::vector<int64_t> index(rank, 0);
    for (size_t k = 0; k < data.size(); ++k) {
      int64_t ia = 0, ib = 0;
      for (size_t d = 0; d < rank; ++d) {
        ia = ia * sa[d] + (sa[d] == 1 ? 0 : index[d]);
        ib = ib * sb[d] + (sb[d] == 1 ? 0 : index[d]);
      }
      data[k] = f(a.Data[ia], b.Data[ib]);
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < out[d])
          break;
        index[d] = 0;
      }
    }
    return Tensor(std::move(out), std::move(data));
  }
  /// Elementwise `f(x)`.
  template <typename F> Tensor map(F f) const {
    Tensor t = *this;
    for (float &x : t.Data)
      x = f(x);
    return t;
  }

private:
  std::vector<int64_t> Shape;
  std::vector<float> Data;
};

inline Tensor operator+(const Tensor &a, const Tensor &b) {
  return Tensor::zip(a, b, [](float x, float y) { return x + y; });
}
inline Tensor operator-(const Tensor &a, const Tensor &b) {
  return Tensor::zip(a, b, [](float x, float y) { return x - y; });
}
inline Tensor operator*(const Tensor &a, const Tensor &b) {
  return Tensor::zip(a, b, [](float x, float y) { return x * y; });
}
inline Tensor operator/(const Tensor &a, const Tensor &b) {
  return Tensor::zip(a, b, [](float x, float y) { return x / y; });
}
inline Tensor operator-(const Tensor &a) {
  return a.map([](float x) { return -x; });
}

/// `a @ W`: `[..., k] x [k, n] -> [..., n]`.
inline Tensor matmul(const Tensor &a, const Tensor &w) {
  if (a.rank() < 1 || w.rank() != 2 || a.shape().back() != w.shape()[0])
    throw std::invalid_argument("gnnc::cxx::matmul: " + Tensor::str(a.shape()) +
                                " @ " + Tensor::str(w.shape()));
  int64_t k = w.shape()[0], n = w.shape()[1], rows = a.numElements() / k;
  std::vector<int64_t> shape = a.shape();
  shape.back() = n;
  std::vector<float> out(rows * n, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t i = 0; i < k; ++i)
        s += static_cast<double>(a[r * k + i]) * w[i * n + j];
      out[r * n + j] = static_cast<float>(s);
    }
  return Tensor(std::move(shape), std::move(out));
}

#define GNNC_CXX_UNARY(name, expr)                                             \
  inline Tensor name(const Tensor &t) {                                        \
    return t.map([](float x) { return static_cast<float>(expr); });            \
  }
GNNC_CXX_UNARY(exp, std::exp(x))
GNNC_CXX_UNARY(log, std::log(x))
GNNC_CXX_UNARY(sqrt, std::sqrt(x))
GNNC_CXX_UNARY(rsqrt, 1.0 / std::sqrt(static_cast<double>(x)))
GNNC_CXX_UNARY(abs, std::fabs(x))
GNNC_CXX_UNARY(relu, x > 0 ? x : (x == x ? 0.0f : x))
GNNC_CXX_UNARY(sigmoid, 1.0 / (1.0 + std::exp(-static_cast<double>(x))))
GNNC_CXX_UNARY(tanh, std::tanh(x))
GNNC_CXX_UNARY(sin, std::sin(x))
GNNC_CXX_UNARY(cos, std::cos(x))
GNNC_CXX_UNARY(gelu, 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))))
#undef GNNC_CXX_UNARY

/// Comparisons, elementwise: 1 where they hold, 0 where not (a NaN
/// compares false, except under !=).
#define GNNC_CXX_COMPARE(op)                                                   \
  inline Tensor operator op(const Tensor &a, const Tensor &b) {                \
    return Tensor::zip(a, b,                                                   \
                       [](float x, float y) { return x op y ? 1.0f : 0.0f; }); \
  }
GNNC_CXX_COMPARE(<)
GNNC_CXX_COMPARE(<=)
GNNC_CXX_COMPARE(>)
GNNC_CXX_COMPARE(>=)
GNNC_CXX_COMPARE(==)
GNNC_CXX_COMPARE(!=)
#undef GNNC_CXX_COMPARE

/// `x` where `condition` is not 0, else `y`, all three broadcast together.
inline Tensor where(const Tensor &condition, const Tensor &x, const Tensor &y) {
  Tensor picked = Tensor::zip(
      condition, x, [](float c, float v) { return c != 0 ? v : 0.0f; });
  Tensor other = Tensor::zip(
      condition, y, [](float c, float v) { return c != 0 ? 0.0f : v; });
  return picked + other;
}

inline Tensor elu(const Tensor &t, float alpha = 1.0f) {
  return t.map([alpha](float x) {
    return x > 0 ? x : static_cast<float>(alpha * std::expm1(x));
  });
}
inline Tensor leaky_relu(const Tensor &t, float slope = 0.01f) {
  return t.map([slope](float x) { return x > 0 ? x : slope * x; });
}
/// Elementwise maximum and minimum (the first operand on a tie).
inline Tensor max(const Tensor &a, const Tensor &b) {
  return Tensor::zip(a, b, [](float x, float y) {
    return x != x || y != y ? std::numeric_limits<float>::quiet_NaN()
                            : (y > x ? y : x);
  });
}
inline Tensor min(const Tensor &a, const Tensor &b) {
  return Tensor::zip(a, b, [](float x, float y) {
    return x != x || y != y ? std::numeric_limits<float>::quiet_NaN()
                            : (y < x ? y : x);
  });
}

/// The same elements in a new shape; one dimension may be -1 (inferred).
inline Tensor reshape(const Tensor &t, std::vector<int64_t> shape) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && infer < 0)
      infer = static_cast<int64_t>(i);
    else
      known *= shape[i];
  }
  if (infer >= 0 && known > 0 && t.numElements() % known == 0)
    shape[infer] = t.numElements() / known;
  if (Tensor::count(shape) != t.numElements())
    throw std::invalid_argument(
        "gnnc::cxx::reshape: " + Tensor::str(t.shape()) + " to " +
        Tensor::str(shape));
  return Tensor(std::move(shape), t.values());
}

namespace detail {
/// Sum (or mean) along `axis` (negative: from the end).
inline Tensor reduceAxis(const Tensor &t, int64_t axis, bool keepdims,
                         bool mean) {
  int64_t rank = t.rank();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    throw std::invalid_argument("gnnc::cxx: axis out of range for " +
                                Tensor::str(t.shape()));
  int64_t outer = 1, len = t.shape()[axis], inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= t.shape()[i];
  for (int64_t i = axis + 1; i < rank; ++i)
    inner *= t.shape()[i];
  std::vector<float> out(outer * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double s = 0;
      for (int64_t k = 0; k < len; ++k)
        s += t[(o * len + k) * inner + i];
      out[o * inner + i] = static_cast<float>(mean ? s / len : s);
    }
  std::vector<int64_t> shape = t.shape();
  if (keepdims)
    shape[axis] = 1;
  else
    shape.erase(shape.begin() + axis);
  return Tensor(std::move(shape), std::move(out));
}
} // namespace detail

namespace detail {
/// (outer, len, inner) of `t` around `axis` (negative: from the end).
inline void split(const Tensor &t, int64_t &axis, int64_t &outer, int64_t &len,
                  int64_t &inner) {
  if (axis < 0)
    axis += t.rank();
  if (axis < 0 || axis >= t.rank())
    throw std::invalid_argument("gnnc::cxx: axis out of range for " +
                                Tensor::str(t.shape()));
  outer = inner = 1;
  len = t.shape()[axis];
  for (int64_t i = 0; i < axis; ++i)
    outer *= t.shape()[i];
  for (int64_t i = axis + 1; i < t.rank(); ++i)
    inner *= t.shape()[i];
}
} // namespace detail

namespace detail {
/// Softmax (or its logarithm) along one axis, computed stably.
inline Tensor softmax(const Tensor &t, int64_t axis, bool log) {
  int64_t outer, len, inner;
  detail::split(t, axis, outer, len, inner);
  std::vector<float> out(t.numElements());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double m = -std::numeric_limits<double>::infinity(), s = 0;
      for (int64_t k = 0; k < len; ++k)
        m = std::max(m, static_cast<double>(t[(o * len + k) * inner + i]));
      for (int64_t k = 0; k < len; ++k)
        s += std::exp(t[(o * len + k) * inner + i] - m);
      for (int64_t k = 0; k < len; ++k) {
        double z = t[(o * len + k) * inner + i] - m;
        out[(o * len + k) * inner + i] =
            static_cast<float>(log ? z - std::log(s) : std::exp(z) / s);
      }
    }
  return Tensor(t.shape(), std::move(out));
}
} // namespace detail

/// Softmax along a feature axis (not over neighbours: that is g.softmax),
/// and its logarithm.
inline Tensor softmax(const Tensor &t, int64_t axis = -1) {
  return detail::softmax(t, axis, /*log=*/false);
}
inline Tensor log_softmax(const Tensor &t, int64_t axis = -1) {
  return detail::softmax(t, axis, /*log=*/true);
}

/// (x - mean) / sqrt(var + eps) over the last axis, var the biased variance.
inline Tensor layer_norm(const Tensor &t, float eps = 1e-5f) {
  int64_t axis = -1, outer, len, inner;
  detail::split(t, axis, outer, len, inner);
  std::vector<float> out(t.numElements());
  for (int64_t o = 0; o < outer; ++o) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < len; ++k)
      mean += t[o * len + k];
    mean /= static_cast<double>(len);
    for (int64_t k = 0; k < len; ++k)
      var += (t[o * len + k] - mean) * (t[o * len + k] - mean);
    var /= static_cast<double>(len);
    for (int64_t k = 0; k < len; ++k)
      out[o * len + k] =
          static_cast<float>((t[o * len + k] - mean) / std::sqrt(var + eps));
  }
  return Tensor(t.shape(), std::move(out));
}

/// Concatenation along `axis`; the other dimensions are equal.
inline Tensor concat(const std::vector<Tensor> &parts, int64_t axis) {
  if (parts.empty())
    throw std::invalid_argument("gnnc::cxx::concat: no tensors");
  std::vector<int64_t> shape = parts.front().shape();
  int64_t a = axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis;
  if (a < 0 || a >= static_cast<int64_t>(shape.size()))
    throw std::invalid_argument("gnnc::cxx::concat: axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < a; ++i)
    outer *= shape[i];
  for (size_t i = a + 1; i < shape.size(); ++i)
    inner *= shape[i];
  shape[a] = 0;
  for (const Tensor &p : parts) {
    std::vector<int64_t> s = p.shape();
    if (s.size() != shape.size())
      throw std::invalid_argument("gnnc::cxx::concat: ranks differ");
    shape[a] += s[a];
  }
  std::vector<float> out;
  out.reserve(Tensor::count(shape));
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor &p : parts) {
      int64_t n = p.shape()[a] * inner;
      out.insert(out.end(), p.values().begin() + o * n,
                 p.values().begin() + (o + 1) * n);
    }
  return Tensor(std::move(shape), std::move(out));
}

/// The transpose of a matrix.
inline Tensor transpose(const Tensor &t) {
  if (t.rank() != 2)
    throw std::invalid_argument(
        "gnnc::cxx::transpose: " + Tensor::str(t.shape()) + " is not a matrix");
  int64_t m = t.shape()[0], n = t.shape()[1];
  std::vector<float> out(t.numElements());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      out[j * m + i] = t[i * n + j];
  return Tensor({n, m}, std::move(out));
}

/// Sum and mean along one axis.
inline Tensor sum(const Tensor &t, int64_t axis, bool keepdims = false) {
  return detail::reduceAxis(t, axis, keepdims, false);
}
inline Tensor mean(const Tensor &t, int64_t axis, bool keepdims = false) {
  return detail::reduceAxis(t, axis, keepdims, true);
}

/// A `[rows, F...]` tensor: one row per vertex (an input of a layer, or its
/// output). The rows are known at run time, the row shape `F...` when the
/// layer is compiled.
template <int64_t... F> class Rows : public Tensor {
public:
  Rows() = default;
  Rows(int64_t rows, std::vector<float> data)
      : Tensor(withRows(rows), std::move(data)) {}
  /// The layer's result: a tensor of `[rows, F...]`.
  Rows &operator=(const Tensor &t) {
    if (t.rank() != 1 + static_cast<int64_t>(sizeof...(F)) ||
        std::vector<int64_t>(t.shape().begin() + 1, t.shape().end()) !=
            std::vector<int64_t>{F...})
      throw std::invalid_argument("gnnc::cxx::Rows: a result of shape " +
                                  Tensor::str(t.shape()) + " for rows " +
                                  Tensor::str({F...}));
    Tensor::operator=(t);
    return *this;
  }
  /// `rows` rows of zeros, for a kernel to write (gnnc-cxx's rewrite).
  float *prepare(int64_t rows) {
    Tensor::operator=(Tensor(
        withRows(rows), std::vector<float>(Tensor::count(withRows(rows)))));
    return data();
  }

private:
  static std::vector<int64_t> withRows(int64_t rows) { return {rows, F...}; }
};

/// A `[edges, F...]` tensor: one row per edge, in the graph's edge order.
template <int64_t... F> class EdgeRows : public Rows<F...> {
public:
  using Rows<F...>::Rows;
};

/// A parameter of shape `[D...]`, trained by whoever owns it.
template <int64_t... D> class Weight : public Tensor {
public:
  Weight() : Tensor({D...}, std::vector<float>(Tensor::count({D...}))) {}
  explicit Weight(std::vector<float> data) : Tensor({D...}, std::move(data)) {}
};

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

class Graph;
class Vertex;

/// One value per edge of a vertex's neighbourhood, in the order of its
/// edges: what a map over a neighbourhood gives, and what the aggregations
/// take.
class EdgeValues {
public:
  EdgeValues() = default;
  EdgeValues(std::vector<Tensor> values, std::vector<int64_t> rowShape)
      : Values(std::move(values)), RowShape(std::move(rowShape)) {}
  const std::vector<Tensor> &values() const { return Values; }
  size_t size() const { return Values.size(); }
  const std::vector<int64_t> &rowShape() const { return RowShape; }

  template <typename F>
  static EdgeValues zip(const EdgeValues &a, const EdgeValues &b, F f) {
    if (a.size() != b.size())
      throw std::invalid_argument("gnnc::cxx: per-edge values of two "
                                  "neighbourhoods");
    std::vector<Tensor> out;
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(f(a.Values[i], b.Values[i]));
    return EdgeValues(
        std::move(out),
        f(Tensor(a.RowShape, std::vector<float>(Tensor::count(a.RowShape))),
          Tensor(b.RowShape, std::vector<float>(Tensor::count(b.RowShape))))
            .shape());
  }
  template <typename F> EdgeValues map(F f) const {
    std::vector<Tensor> out;
    for (const Tensor &t : Values)
      out.push_back(f(t));
    Tensor empty(RowShape, std::vector<float>(Tensor::count(RowShape)));
    return EdgeValues(std::move(out), f(empty).shape());
  }

private:
  std::vector<Tensor> Values;
  std::vector<int64_t> RowShape;
};

#define GNNC_CXX_EDGE_BINARY(op)                                               \
  inline EdgeValues operator op(const EdgeValues &a, const EdgeValues &b) {    \
    return EdgeValues::zip(                                                    \
        a, b, [](const Tensor &x, const Tensor &y) { return x op y; });        \
  }                                                                            \
  inline EdgeValues operator op(const EdgeValues &a, const Tensor &b) {        \
    return a.map([&b](const Tensor &x) { return x op b; });                    \
  }                                                                            \
  inline EdgeValues operator op(const Tensor &a, const EdgeValues &b) {        \
    return b.map([&a](const Tensor &y) { return a op y; });                    \
  }
GNNC_CXX_EDGE_BINARY(+)
GNNC_CXX_EDGE_BINARY(-)
GNNC_CXX_EDGE_BINARY(*)
GNNC_CXX_EDGE_BINARY(/)
#undef GNNC_CXX_EDGE_BINARY

namespace detail {
/// Which edges of a vertex: in-edges (neighbours are sources) or out-edges.
enum class Side { In, Out };
} // namespace detail

/// A vertex: the loop vertex of `for (Vertex v : g.dst_vertices())`, or a
/// neighbour of it.
class Vertex {
public:
  Vertex(Graph &g, int64_t id, bool loop = false) : G(&g), Id(id), Loop(loop) {}
  int64_t id() const { return Id; }
  /// This vertex's row of attribute `name`.
  Tensor get(const std::string &name) const;
  /// Sets this vertex's row of attribute `name` (the loop vertex only).
  void set(const std::string &name, const Tensor &value);

  class Neighbours;
  class Edges;
  Neighbours in_neighbors() const;
  Neighbours out_neighbors() const;
  Edges in_edges() const;
  Edges out_edges() const;

private:
  Graph *G;
  int64_t Id;
  /// The loop vertex, which sees its own writes of the loop.
  bool Loop;
};

/// An edge of a vertex's neighbourhood.
class Edge {
public:
  Edge(Graph &g, int64_t id, int64_t src, int64_t dst)
      : G(&g), Id(id), Src(src), Dst(dst) {}
  int64_t id() const { return Id; }
  Tensor get(const std::string &name) const;
  Vertex src() const { return Vertex(*G, Src); }
  Vertex dst() const { return Vertex(*G, Dst); }

private:
  Graph *G;
  int64_t Id, Src, Dst;
};

/// The graph a layer runs on, with its vertex and edge attributes.
class Graph {
public:
  explicit Graph(const rt::Graph &g) : G(&g) {}
  const rt::Graph &graph() const { return *G; }
  int64_t num_vertices() const { return G->numDst(); }
  int64_t num_edges() const { return G->numEdges(); }

  /// Attribute `name` of every vertex: the rows of `value` ([N, ...]).
  void set_vertex_attr(const std::string &name, const Tensor &value) {
    setRows(VertexAttrs, name, value, G->numDst(), "vertex");
  }
  /// Attribute `name` of every edge: the rows of `value` ([E, ...]).
  void set_edge_attr(const std::string &name, const Tensor &value) {
    setRows(EdgeAttrs, name, value, G->numEdges(), "edge");
  }
  /// Attribute `name` of every vertex, as a `[N, ...]` tensor.
  Tensor dst_attr(const std::string &name) const {
    const Attr &a = find(VertexAttrs, name, "vertex");
    std::vector<Tensor> rows;
    for (int64_t v = 0; v < G->numDst(); ++v)
      rows.push_back(a.rows.at(v));
    return Tensor::stack(rows, a.rowShape);
  }

  class VertexLoop;
  /// The vertices, one at a time, for a range-for loop. As in the .gnn
  /// language, the loop is one synchronous step: a neighbour's attribute
  /// reads the value from before the loop, the loop vertex its own writes,
  /// and the writes take effect when the loop ends.
  VertexLoop dst_vertices();

  /// In-degree and out-degree of every vertex, `[N]`.
  Tensor in_degree() const { return Tensor({G->numDst()}, G->inDegrees()); }
  Tensor out_degree() const { return Tensor({G->numSrc()}, G->outDegrees()); }

  /// Sum, mean, maximum and minimum of per-edge values; an empty
  /// neighbourhood gives 0 (docs/language.md, section 7.2).
  Tensor sum(const EdgeValues &e) const { return reduce(e, Reduce::Sum); }
  Tensor mean(const EdgeValues &e) const { return reduce(e, Reduce::Mean); }
  Tensor max(const EdgeValues &e) const { return reduce(e, Reduce::Max); }
  Tensor min(const EdgeValues &e) const { return reduce(e, Reduce::Min); }
  /// The same of `f` over a neighbourhood: `g.sum(v.in_neighbors(), f)` is
  /// `g.sum(map(v.in_neighbors(), f))`.
  template <typename R, typename F> Tensor sum(const R &range, F f) const;
  template <typename R, typename F> Tensor mean(const R &range, F f) const;
  template <typename R, typename F> Tensor max(const R &range, F f) const;
  template <typename R, typename F> Tensor min(const R &range, F f) const;
  /// Softmax over the edges of a neighbourhood, elementwise.
  EdgeValues softmax(const EdgeValues &e) const {
    if (e.size() == 0)
      return e;
    std::vector<Tensor> out = e.values();
    int64_t n = Tensor::count(e.rowShape());
    for (int64_t k = 0; k < n; ++k) {
      double m = -std::numeric_limits<double>::infinity(), s = 0;
      for (const Tensor &t : e.values())
        m = std::max(m, static_cast<double>(t[k]));
      for (const Tensor &t : e.values())
        s += std::exp(t[k] - m);
      for (size_t i = 0; i < out.size(); ++i)
        out[i].data()[k] =
            static_cast<float>(std::exp(e.values()[i][k] - m) / s);
    }
    return EdgeValues(std::move(out), e.rowShape());
  }

  /// Scratch memory for a compiled layer (gnnc-cxx's rewrite), 64-byte
  /// aligned, kept between calls.
  void *workspace(std::size_t bytes) {
    if (bytes > ScratchBytes) {
      Scratch.reset(
          static_cast<char *>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
      if (!Scratch)
        throw std::bad_alloc();
      ScratchBytes = bytes;
    }
    return Scratch.get();
  }

private:
  friend class Vertex;
  friend class Edge;
  struct Attr {
    std::vector<int64_t> rowShape;
    std::vector<Tensor> rows;
    /// In a loop's pending writes: which rows the loop wrote.
    std::vector<bool> written;
  };
  enum class Reduce { Sum, Mean, Max, Min };

  static const Attr &find(const std::map<std::string, Attr> &attrs,
                          const std::string &name, const char *what) {
    auto it = attrs.find(name);
    if (it == attrs.end())
      throw std::invalid_argument("gnnc::cxx: no " + std::string(what) +
                                  " attribute '" + name + "'");
    return it->second;
  }
  static void setRows(std::map<std::string, Attr> &attrs,
                      const std::string &name, const Tensor &value,
                      int64_t rows, const char *what) {
    if (value.rank() < 1 || value.shape()[0] != rows)
      throw std::invalid_argument("gnnc::cxx: the " + std::string(what) +
                                  " attribute '" + name + "' needs " +
                                  std::to_string(rows) + " rows, got " +
                                  Tensor::str(value.shape()));
    Attr a;
    a.rowShape.assign(value.shape().begin() + 1, value.shape().end());
    for (int64_t i = 0; i < rows; ++i)
      a.rows.push_back(value.row(i));
    attrs[name] = std::move(a);
  }
  Tensor reduce(const EdgeValues &e, Reduce fn) const {
    int64_t n = Tensor::count(e.rowShape());
    std::vector<float> out(n, 0.0f);
    for (int64_t k = 0; k < n && e.size() > 0; ++k) {
      double acc = fn == Reduce::Max ? -std::numeric_limits<double>::infinity()
                   : fn == Reduce::Min ? std::numeric_limits<double>::infinity()
                                       : 0.0;
      for (const Tensor &t : e.values()) {
        double x = t[k];
        acc = fn == Reduce::Max   ? (x > acc || x != x ? x : acc)
              : fn == Reduce::Min ? (x < acc || x != x ? x : acc)
                                  : acc + x;
      }
      out[k] = static_cast<float>(
          fn == Reduce::Mean ? acc / static_cast<double>(e.size()) : acc);
    }
    return Tensor(e.rowShape(), std::move(out));
  }

  void beginLoop() {
    if (InLoop)
      throw std::invalid_argument("gnnc::cxx: vertex loops do not nest");
    InLoop = true;
    Pending.clear();
  }
  void endLoop() {
    for (auto &[name, a] : Pending)
      VertexAttrs[name] = std::move(a);
    Pending.clear();
    InLoop = false;
  }

  const rt::Graph *G;
  std::map<std::string, Attr> VertexAttrs, EdgeAttrs;
  /// The writes of the running vertex loop.
  std::map<std::string, Attr> Pending;
  bool InLoop = false;
  std::unique_ptr<char, decltype(&std::free)> Scratch{nullptr, &std::free};
  std::size_t ScratchBytes = 0;
};

/// The range of `g.dst_vertices()`; its end commits the loop's writes.
class Graph::VertexLoop {
public:
  explicit VertexLoop(Graph &g) : G(&g) { G->beginLoop(); }
  ~VertexLoop() { G->endLoop(); }
  VertexLoop(const VertexLoop &) = delete;
  VertexLoop &operator=(const VertexLoop &) = delete;

  class iterator {
  public:
    iterator(Graph *g, int64_t v) : G(g), V(v) {}
    Vertex operator*() const { return Vertex(*G, V, /*loop=*/true); }
    iterator &operator++() {
      ++V;
      return *this;
    }
    bool operator!=(const iterator &o) const { return V != o.V; }

  private:
    Graph *G;
    int64_t V;
  };
  iterator begin() const { return iterator(G, 0); }
  iterator end() const { return iterator(G, G->num_vertices()); }

private:
  Graph *G;
};

inline Graph::VertexLoop Graph::dst_vertices() { return VertexLoop(*this); }

/// The neighbours of a vertex, in the order of its edges.
class Vertex::Neighbours {
public:
  Neighbours(Graph &g, int64_t v, detail::Side side) : G(&g), V(v), S(side) {}
  std::vector<Vertex> vertices() const {
    std::vector<Vertex> out;
    const rt::Graph &r = G->graph();
    if (S == detail::Side::In)
      for (int64_t k = r.inPtr()[V]; k < r.inPtr()[V + 1]; ++k)
        out.emplace_back(*G, r.inSrc()[k]);
    else
      for (int64_t k = r.outPtr()[V]; k < r.outPtr()[V + 1]; ++k)
        out.emplace_back(*G, r.outDst()[k]);
    return out;
  }
  Vertex self() const { return Vertex(*G, V); }

private:
  Graph *G;
  int64_t V;
  detail::Side S;
};

/// The edges of a vertex: `e.src()` of an in-edge is the neighbour.
class Vertex::Edges {
public:
  Edges(Graph &g, int64_t v, detail::Side side) : G(&g), V(v), S(side) {}
  std::vector<Edge> edges() const {
    std::vector<Edge> out;
    const rt::Graph &r = G->graph();
    if (S == detail::Side::In)
      for (int64_t k = r.inPtr()[V]; k < r.inPtr()[V + 1]; ++k)
        out.emplace_back(*G, r.inEdge()[k], r.inSrc()[k], V);
    else
      for (int64_t k = r.outPtr()[V]; k < r.outPtr()[V + 1]; ++k)
        out.emplace_back(*G, r.outEdge()[k], V, r.outDst()[k]);
    return out;
  }
  /// An edge from the vertex to itself whose attributes read as zeros: what
  /// a map's function is called on to learn the row shape of an empty
  /// neighbourhood.
  Edge probe() const { return Edge(*G, -1, V, V); }

private:
  Graph *G;
  int64_t V;
  detail::Side S;
};

inline Tensor Vertex::get(const std::string &name) const {
  if (Loop) {
    auto it = G->Pending.find(name);
    if (it != G->Pending.end() && it->second.written.at(Id))
      return it->second.rows.at(Id);
  }
  return Graph::find(G->VertexAttrs, name, "vertex").rows.at(Id);
}
inline void Vertex::set(const std::string &name, const Tensor &value) {
  if (!Loop || !G->InLoop)
    throw std::invalid_argument("gnnc::cxx: only the loop vertex of a vertex "
                                "loop is written (attribute '" +
                                name + "')");
  Graph::Attr &a = G->Pending[name];
  if (a.rows.empty()) {
    a.written.assign(G->num_vertices(), false);
    a.rowShape = value.shape();
    a.rows.assign(
        G->num_vertices(),
        Tensor(value.shape(), std::vector<float>(value.numElements(), 0.0f)));
  }
  if (value.shape() != a.rowShape)
    throw std::invalid_argument("gnnc::cxx: vertex attribute '" + name +
                                "' has rows of " + Tensor::str(a.rowShape) +
                                ", got " + Tensor::str(value.shape()));
  a.rows.at(Id) = value;
  a.written.at(Id) = true;
}
inline Vertex::Neighbours Vertex::in_neighbors() const {
  return Neighbours(*G, Id, detail::Side::In);
}
inline Vertex::Neighbours Vertex::out_neighbors() const {
  return Neighbours(*G, Id, detail::Side::Out);
}
inline Vertex::Edges Vertex::in_edges() const {
  return Edges(*G, Id, detail::Side::In);
}
inline Vertex::Edges Vertex::out_edges() const {
  return Edges(*G, Id, detail::Side::Out);
}
inline Tensor Edge::get(const std::string &name) const {
  const Graph::Attr &a = Graph::find(G->EdgeAttrs, name, "edge");
  if (Id < 0) // a probe (Vertex::Edges::probe)
    return Tensor(a.rowShape,
                  std::vector<float>(Tensor::count(a.rowShape), 0.0f));
  return a.rows.at(Id);
}

/// `f` of every neighbour (`f(Vertex)`) or edge (`f(Edge)`), in edge order.
/// The row shape of an empty neighbourhood's values is that of `f` at the
/// vertex itself (or at an edge from it to itself whose attributes are
/// zeros), whose value is not used.
template <typename F> EdgeValues map(const Vertex::Neighbours &n, F f) {
  std::vector<Tensor> out;
  for (const Vertex &u : n.vertices())
    out.push_back(f(u));
  std::vector<int64_t> shape =
      out.empty() ? f(n.self()).shape() : out.front().shape();
  return EdgeValues(std::move(out), std::move(shape));
}
template <typename F> EdgeValues map(const Vertex::Edges &n, F f) {
  std::vector<Tensor> out;
  for (const Edge &e : n.edges())
    out.push_back(f(e));
  std::vector<int64_t> shape =
      out.empty() ? f(n.probe()).shape() : out.front().shape();
  return EdgeValues(std::move(out), std::move(shape));
}

template <typename R, typename F> Tensor Graph::sum(const R &r, F f) const {
  return sum(map(r, f));
}
template <typename R, typename F> Tensor Graph::mean(const R &r, F f) const {
  return mean(map(r, f));
}
template <typename R, typename F> Tensor Graph::max(const R &r, F f) const {
  return max(map(r, f));
}
template <typename R, typename F> Tensor Graph::min(const R &r, F f) const {
  return min(map(r, f));
}

namespace detail {
/// A compiled layer's status, as an exception (gnnc-cxx's rewrite).
inline void check(const rt::Status &s) {
  if (!s.ok())
    throw std::runtime_error(s.message());
}
/// An input of a compiled layer has `rows` rows (gnnc-cxx's rewrite).
inline void expectRows(const Tensor &t, int64_t rows, const char *name) {
  if (t.rank() < 1 || t.shape()[0] != rows)
    throw std::invalid_argument(std::string("gnnc::cxx: argument '") + name +
                                "' has the shape " + Tensor::str(t.shape()) +
                                ", not " + std::to_string(rows) + " rows");
}
} // namespace detail

} // namespace gnnc::cxx

#endif // GNNC_CXX_NODECENTRIC_H
