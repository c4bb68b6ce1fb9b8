//===- NpyTest.cpp - Unit tests for the .npy reader and writer ------------===//
//
// Part of gnnc. Corrupt files are written byte by byte here, so every check
// of the reader is exercised with the exact error text it must produce. The
// Cora files in shared/datasets were written by numpy.save and serve as the
// reference for the writer's byte layout.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include "gnnc/runtime/Npy.h"

#include "gtest/gtest.h"

#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace gnnc::rt;
using gnnc::rt::testing::fileExists;
using gnnc::rt::testing::readFile;
using gnnc::rt::testing::TempDir;
using gnnc::rt::testing::writeFile;

namespace {

/// A complete .npy file: magic, version, header length, `dict` padded with
/// spaces to a 64-byte boundary and a newline, then `data`.
std::string npyFile(const std::string &dict, const std::string &data,
                    unsigned major = 1, unsigned minor = 0) {
  size_t lengthSize = major == 1 ? 2 : 4;
  std::string header = dict;
  size_t total = 8 + lengthSize + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += static_cast<char>(minor);
  for (size_t i = 0; i < lengthSize; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string dictFor(const std::string &descr, const std::string &shape,
                    const std::string &fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran +
         ", 'shape': " + shape + ", }";
}

template <class T> std::string rawBytes(const std::vector<T> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(T));
}

template <class T>
NpyArray makeArray(std::vector<int64_t> shape, const std::vector<T> &values) {
  NpyArray a;
  a.dtype = DTypeOf<T>::value;
  a.shape = std::move(shape);
  a.bytes.resize(values.size() * sizeof(T));
  // Element by element: std::vector<bool> has no data().
  for (size_t i = 0; i < values.size(); ++i) {
    T value = values[i];
    std::memcpy(a.bytes.data() + i * sizeof(T), &value, sizeof(T));
  }
  return a;
}

class NpyTest : public ::testing::Test {
protected:
  TempDir Dir;

  /// Writes `contents` to a file and reads it back with readNpy.
  Status readBytes(const std::string &contents, NpyArray &out,
                   const std::string &name = "x.npy") {
    std::string path = Dir.path(name);
    writeFile(path, contents);
    return readNpy(path, out);
  }

  /// Expects readNpy to fail on `contents` with `fragment` in the message.
  void expectError(const std::string &contents, const std::string &fragment) {
    NpyArray out;
    Status s = readBytes(contents, out);
    ASSERT_FALSE(s.ok()) << "expected an error containing: " << fragment;
    EXPECT_NE(s.message().find(fragment), std::string::npos)
        << "message: " << s.message() << "\nexpected fragment: " << fragment;
    // The message always starts with the file name.
    EXPECT_EQ(s.message().rfind(Dir.path("x.npy") + ": ", 0), 0u)
        << s.message();
  }
};

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

template <class T>
void roundTrip(const TempDir &dir, std::vector<int64_t> shape,
               const std::vector<T> &values) {
  SCOPED_TRACE(dtypeName(DTypeOf<T>::value));
  NpyArray a = makeArray<T>(shape, values);
  std::string path = dir.path(std::string(dtypeName(a.dtype)) + ".npy");
  Status w = writeNpy(path, a);
  ASSERT_TRUE(w.ok()) << w.message();

  // NumPy's layout: the data starts on a 64-byte boundary after a header
  // that ends in a newline.
  std::string file = readFile(path);
  ASSERT_GE(file.size(), 10u);
  size_t headerLen = static_cast<unsigned char>(file[8]) |
                     static_cast<unsigned char>(file[9]) << 8;
  EXPECT_EQ((10 + headerLen) % 64, 0u);
  EXPECT_EQ(file[9 + headerLen], '\n');
  EXPECT_EQ(file.size(), 10 + headerLen + values.size() * sizeof(T));

  NpyArray b;
  Status r = readNpy(path, b);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(b.dtype, a.dtype);
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(b.bytes, a.bytes);
  EXPECT_EQ(b.numElements(), static_cast<int64_t>(values.size()));
  if (values.empty())
    return;
  const T *data = b.data<T>();
  ASSERT_NE(data, nullptr);
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(data[i], values[i]) << "element " << i;
}

TEST_F(NpyTest, RoundTripEveryDType) {
  roundTrip<bool>(Dir, {2, 3}, {true, false, false, true, true, false});
  roundTrip<int32_t>(Dir, {4}, {0, -1, 2147483647, -2147483647 - 1});
  roundTrip<int64_t>(
      Dir, {2, 2},
      {INT64_C(-9223372036854775807) - 1, 0, 42, INT64_C(9223372036854775807)});
  roundTrip<float>(Dir, {3, 1, 2}, {0.f, -1.5f, 3.25f, 1e-30f, 1e30f, -0.f});
  roundTrip<double>(Dir, {}, {3.141592653589793});
}

TEST_F(NpyTest, RoundTripEmptyArrays) {
  roundTrip<float>(Dir, {0, 3}, {});
  roundTrip<int64_t>(Dir, {2, 0}, {});
  roundTrip<bool>(Dir, {0}, {});
}

TEST_F(NpyTest, WriterHeaderMatchesNumPy) {
  // numpy.save(np.zeros((2, 3), np.float32)): the dict, 21 - len("2") spare
  // spaces for in-place growth, padding to 128 bytes and a newline.
  ASSERT_TRUE(writeNpy(Dir.path("a.npy"),
                       makeArray<float>({2, 3}, std::vector<float>(6)))
                  .ok());
  std::string file = readFile(Dir.path("a.npy"));
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, "
                     "3), }";
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                         std::string(118 - dict.size() - 1, ' ') + "\n" +
                         std::string(24, '\0');
  EXPECT_EQ(file, expected);

  // A 1-d shape is written (n,); a scalar () with no spare spaces.
  ASSERT_TRUE(writeNpy(Dir.path("b.npy"), makeArray<bool>({}, {true})).ok());
  file = readFile(Dir.path("b.npy"));
  dict = "{'descr': '|b1', 'fortran_order': False, 'shape': (), }";
  expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
             std::string(118 - dict.size() - 1, ' ') + "\n\x01";
  EXPECT_EQ(file, expected);

  ASSERT_TRUE(
      writeNpy(Dir.path("c.npy"), makeArray<int32_t>({3}, {1, 2, 3})).ok());
  file = readFile(Dir.path("c.npy"));
  EXPECT_NE(file.find("'shape': (3,), }"), std::string::npos) << file;
}

TEST_F(NpyTest, TypedViewsCheckTheDType) {
  NpyArray a = makeArray<float>({2}, {1.f, 2.f});
  EXPECT_NE(a.data<float>(), nullptr);
  EXPECT_EQ(a.data<double>(), nullptr);
  EXPECT_EQ(a.data<int32_t>(), nullptr);
  EXPECT_EQ(a.data<bool>(), nullptr);
  EXPECT_NE(a.mutableData<float>(), nullptr);
  EXPECT_EQ(a.mutableData<int64_t>(), nullptr);
  a.mutableData<float>()[1] = 5.f;
  EXPECT_EQ(a.data<float>()[1], 5.f);
}

TEST_F(NpyTest, OverwritesAnExistingFile) {
  std::string path = Dir.path("a.npy");
  writeFile(path, "old contents");
  ASSERT_TRUE(writeNpy(path, makeArray<int64_t>({1}, {7})).ok());
  NpyArray a;
  ASSERT_TRUE(readNpy(path, a).ok());
  EXPECT_EQ(a.data<int64_t>()[0], 7);
}

//===----------------------------------------------------------------------===//
// Header syntax the reader accepts
//===----------------------------------------------------------------------===//

TEST_F(NpyTest, AcceptsVersions2And3) {
  std::string data = rawBytes(std::vector<int32_t>{5, 6});
  for (unsigned major : {2u, 3u}) {
    NpyArray a;
    Status s = readBytes(npyFile(dictFor("<i4", "(2,)"), data, major), a);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(a.shape, std::vector<int64_t>{2});
    EXPECT_EQ(a.data<int32_t>()[1], 6);
  }
}

TEST_F(NpyTest, AcceptsHeaderVariants) {
  std::string data = rawBytes(std::vector<double>(6, 1.0));
  const char *dicts[] = {
      // Other key order, double quotes, no trailing comma, odd spacing.
      "{\"shape\": (2, 3), \"fortran_order\": False, \"descr\": \"<f8\"}",
      "{ 'descr' : '<f8' ,\t'fortran_order':False,'shape':(2,3,) , }",
      // Python 2 long suffix, as in files written by NumPy under Python 2.
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }",
  };
  for (const char *dict : dicts) {
    NpyArray a;
    Status s = readBytes(npyFile(dict, data), a);
    ASSERT_TRUE(s.ok()) << dict << ": " << s.message();
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  }
  // A header that is not padded to 64 bytes (old NumPy used 16).
  std::string dict = dictFor("<f8", "(2, 3)");
  std::string file = "\x93NUMPY\x01";
  file += '\0';
  file += static_cast<char>(dict.size() + 1);
  file += '\0';
  file += dict + "\n" + data;
  NpyArray a;
  Status s = readBytes(file, a);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_F(NpyTest, ZeroDimensionMakesAnyShapeEmpty) {
  NpyArray a;
  Status s =
      readBytes(npyFile(dictFor("<f4", "(0, 9223372036854775807)"), ""), a);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(a.numElements(), 0);
  EXPECT_TRUE(a.bytes.empty());
}

//===----------------------------------------------------------------------===//
// Corrupt files: each check with its exact message
//===----------------------------------------------------------------------===//

TEST_F(NpyTest, MissingFile) {
  NpyArray a;
  Status s = readNpy(Dir.path("none.npy"), a);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), Dir.path("none.npy") +
                             ": cannot open file: no such file or directory");
}

TEST_F(NpyTest, Directory) {
  NpyArray a;
  Status s = readNpy(Dir.path(""), a);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(": not a regular file"), std::string::npos)
      << s.message();
}

TEST_F(NpyTest, BadMagic) {
  std::string good = npyFile(dictFor("<f4", "(1,)"), std::string(4, '\0'));
  std::string bad = good;
  bad[5] = 'Z';
  expectError(bad, "not a .npy file (bad magic string)");
  expectError("PK\x03\x04 a zip file", "not a .npy file (bad magic string)");
  expectError("\x93NUM", "file is too short to be a .npy file (4 bytes)");
  expectError("", "file is too short to be a .npy file (0 bytes)");
}

TEST_F(NpyTest, BadVersion) {
  std::string dict = dictFor("<f4", "(1,)");
  std::string data(4, '\0');
  expectError(npyFile(dict, data, 4, 0),
              "unsupported .npy format version 4.0 (expected 1.0, 2.0 or "
              "3.0)");
  expectError(npyFile(dict, data, 1, 1), "unsupported .npy format version 1.1");
  expectError(npyFile(dict, data, 0, 0), "unsupported .npy format version 0.0");
}

TEST_F(NpyTest, HeaderLengthPastEndOfFile) {
  std::string file = npyFile(dictFor("<f4", "(1,)"), "");
  file[8] = '\xe8'; // 1000
  file[9] = '\x03';
  expectError(file,
              "file is truncated: header length is 1000 bytes but only 118 "
              "bytes follow");
  expectError(std::string("\x93NUMPY\x02\x00\x01\x00", 10),
              "file is truncated: no room for the header length (10 bytes)");
  expectError(std::string("\x93NUMPY\x01\x00\x05", 9),
              "file is truncated: no room for the header length (9 bytes)");
}

TEST_F(NpyTest, MalformedDict) {
  std::string data(4, '\0');
  struct Case {
    const char *dict;
    const char *fragment;
  } cases[] = {
      {"", "malformed header: expected '{' at offset 54"},
      {"'descr': '<f4'", "malformed header: expected '{' at offset 0"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}",
       "malformed header: expected ':' after key 'descr' at offset 9"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
       "malformed header: expected ',' or '}' after the value of 'shape'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",
       "malformed header: expected ',' or '}' after the value of 'descr'"},
      {"{descr: '<f4', 'fortran_order': False, 'shape': (1,)}",
       "malformed header: expected a key in quotes at offset 1"},
      {"{'descr: '<f4', 'fortran_order': False, 'shape': (1,)}",
       "malformed header: expected ':' after key 'descr: '"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}",
       "malformed header: expected ',' or '}' after the value of 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
       "malformed header: unexpected text after '}'"},
      {"{'descr': '<f4', 'fortran_order': False}",
       "malformed header: missing key 'shape'"},
      {"{'fortran_order': False, 'shape': (1,)}",
       "malformed header: missing key 'descr'"},
      {"{'descr': '<f4', 'shape': (1,)}",
       "malformed header: missing key 'fortran_order'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': "
       "(1,)}",
       "malformed header: duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
       "malformed header: unexpected key 'x'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",
       "malformed header: expected True or False for 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (1,)}",
       "malformed header: expected True or False for 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}",
       "malformed header: 'shape' is not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}",
       "malformed header: expected a tuple for 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 1}",
       "malformed header: expected a tuple for 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1.0,)}",
       "malformed header: expected an integer in 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (0x1,)}",
       "malformed header: expected an integer in 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 1)}",
       "malformed header: expected ',' or ')' in 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (,)}",
       "malformed header: expected an integer in 'shape'"},
      {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,)}",
       "malformed header: escape sequences in strings are not supported"},
      {"{'descr': '<f4\n', 'fortran_order': False, 'shape': (1,)}",
       "malformed header: unexpected character in string"},
      {"{'descr", "malformed header: unexpected character in string"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.dict);
    expectError(npyFile(c.dict, data), c.fragment);
  }
  // A string running to the end of an unpadded header.
  std::string file = "\x93NUMPY\x01";
  file += '\0';
  file += '\x07';
  file += '\0';
  file += "{'descr" + data;
  expectError(file, "malformed header: unterminated string at offset 7");
  // A NUL byte inside the header.
  expectError(npyFile(std::string("{'descr': '<f4',\0", 17), data),
              "malformed header: expected a key in quotes at offset 16");
}

TEST_F(NpyTest, UnsupportedDType) {
  std::string data(4, '\0');
  const char *supported = "(supported: '<f4', '<f8', '<i4', '<i8', '|b1')";
  for (const char *descr :
       {"<u1", "<f2", "|i1", "<c8", "<U3", "O", "", "<b1", "=f4", "<i16"}) {
    SCOPED_TRACE(descr);
    expectError(npyFile(dictFor(descr, "(1,)"), data),
                std::string("unsupported dtype '") + descr + "' " + supported);
  }
  expectError(npyFile(dictFor(">f4", "(1,)"), data),
              "big-endian dtype '>f4' is not supported");
  expectError(npyFile(dictFor(">i8", "(1,)"), data),
              "big-endian dtype '>i8' is not supported");
  expectError(
      npyFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': "
              "(1,), }",
              data),
      "structured dtypes are not supported");
}

//===----------------------------------------------------------------------===//
// Fortran order
//===----------------------------------------------------------------------===//

/// The C-order and the Fortran-order file of one array of `shape`, whose
/// element at index (i0, i1, ...) is value(flat C-order position). Each
/// file's data is laid out by its own definition: in C order the last index
/// varies fastest, in Fortran order the first.
template <class T>
void writeBothOrders(const std::string &cPath, const std::string &fPath,
                     const std::vector<int64_t> &shape, T (*value)(int64_t)) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  // (std::vector<bool> has no data(): bools are stored as bytes.)
  using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
  std::vector<Stored> cData(count), fData(count);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t cPos = 0, fPos = 0, cStride = 1, fStride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      cPos += index[d] * cStride;
      cStride *= shape[d];
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      fPos += index[d] * fStride;
      fStride *= shape[d];
    }
    ASSERT_EQ(cPos, flat);
    cData[cPos] = value(flat);
    fData[fPos] = value(flat);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  std::string dims = "(";
  for (size_t d = 0; d < shape.size(); ++d)
    dims += (d ? ", " : "") + std::to_string(shape[d]);
  dims += shape.size() == 1 ? ",)" : ")";
  const char *descr = dtypeDescr(DTypeOf<T>::value);
  writeFile(cPath, npyFile(dictFor(descr, dims, "False"), rawBytes(cData)));
  writeFile(fPath, npyFile(dictFor(descr, dims, "True"), rawBytes(fData)));
}

template <class T>
void expectSameArray(const std::string &cPath, const std::string &fPath,
                     const std::vector<int64_t> &shape) {
  SCOPED_TRACE(std::string(dtypeName(DTypeOf<T>::value)) + " " +
               formatShape(shape));
  NpyArray c, f;
  Status s = readNpy(cPath, c);
  ASSERT_TRUE(s.ok()) << s.message();
  s = readNpy(fPath, f);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(f.dtype, DTypeOf<T>::value);
  EXPECT_EQ(f.shape, shape);
  EXPECT_EQ(f.bytes, c.bytes);
  // readNpyExpect and readNpyHeader see the same array.
  NpyArray e;
  s = readNpyExpect(fPath, DTypeOf<T>::value, shape, e);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(e.bytes, c.bytes);
  DType dtype;
  std::vector<int64_t> headerShape;
  ASSERT_TRUE(readNpyHeader(fPath, dtype, headerShape).ok());
  EXPECT_EQ(headerShape, shape);
}

template <class T> T valueOf(int64_t flat) {
  if constexpr (std::is_same_v<T, bool>)
    return flat % 3 == 1;
  else
    return static_cast<T>(flat * 7 - 11);
}

template <class T> void checkOrders(const TempDir &dir) {
  for (const std::vector<int64_t> &shape : {std::vector<int64_t>{6},
                                            {2, 3},
                                            {3, 2},
                                            {1, 5},
                                            {5, 1},
                                            {2, 3, 4},
                                            {4, 1, 3},
                                            {2, 2, 2, 3},
                                            {0, 3},
                                            {3, 0},
                                            {}}) {
    std::string c = dir.path("c.npy"), f = dir.path("f.npy");
    writeBothOrders<T>(c, f, shape, &valueOf<T>);
    expectSameArray<T>(c, f, shape);
  }
}

TEST_F(NpyTest, FortranOrderIsTransposedOnLoad) {
  checkOrders<bool>(Dir);
  checkOrders<int32_t>(Dir);
  checkOrders<int64_t>(Dir);
  checkOrders<float>(Dir);
  checkOrders<double>(Dir);
}

TEST_F(NpyTest, FortranOrderHandMadeMatrix) {
  // [[1, 2, 3], [4, 5, 6]] stored column by column: 1 4 2 5 3 6.
  NpyArray a;
  Status s =
      readBytes(npyFile(dictFor("<i4", "(2, 3)", "True"),
                        rawBytes(std::vector<int32_t>{1, 4, 2, 5, 3, 6})),
                a);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  const int32_t *d = a.data<int32_t>();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(std::vector<int32_t>(d, d + 6),
            (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  // A [2, 2, 2] array: element (i, j, k) at i + 2 j + 4 k in the file.
  s = readBytes(
      npyFile(dictFor("<i8", "(2, 2, 2)", "True"),
              rawBytes(std::vector<int64_t>{0, 100, 10, 110, 1, 101, 11, 111})),
      a);
  ASSERT_TRUE(s.ok()) << s.message();
  const int64_t *e = a.data<int64_t>();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(std::vector<int64_t>(e, e + 8),
            (std::vector<int64_t>{0, 1, 10, 11, 100, 101, 110, 111}));
}

TEST_F(NpyTest, FortranOrderBadBoolNamesTheCOrderElement) {
  // [[0, 1], [7, 0]] column by column is 0 7 1 0: the bad value is element 2
  // in C order.
  expectError(npyFile(dictFor("|b1", "(2, 2)", "True"),
                      std::string("\x00\x07\x01\x00", 4)),
              "invalid bool value 7 at element 2 (expected 0 or 1)");
}

//===----------------------------------------------------------------------===//
// readNpyAsFloat32 / readNpyAsFloat64
//===----------------------------------------------------------------------===//

TEST_F(NpyTest, AsFloat32RoundsFloat64) {
  std::string path = Dir.path("f.npy");
  // 0.1 rounds to 0x1.99999ap-4f; 1 + 2^-30 to 1; FLT_MAX stays; a double
  // just below FLT_MAX + half an ulp rounds down to FLT_MAX.
  const double justBelow = 0x1.fffffefffffffp+127;
  ASSERT_TRUE(writeNpy(path, makeArray<double>({2, 3}, {0.1, 1.0 + 0x1p-30,
                                                        -2.5, double(FLT_MAX),
                                                        justBelow, -0.0}))
                  .ok());
  NpyArray a;
  Status s = readNpyAsFloat32(path, a);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(a.dtype, DType::Float32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  const float *d = a.data<float>();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d[0], 0x1.99999ap-4f);
  EXPECT_EQ(d[1], 1.0f);
  EXPECT_EQ(d[2], -2.5f);
  EXPECT_EQ(d[3], FLT_MAX);
  EXPECT_EQ(d[4], FLT_MAX);
  EXPECT_EQ(d[5], 0.0f);
  EXPECT_TRUE(std::signbit(d[5]));

  // float32 data comes through unchanged, Fortran order transposed.
  writeFile(path, npyFile(dictFor("<f4", "(2, 2)", "True"),
                          rawBytes(std::vector<float>{1, 3, 2, 4})));
  s = readNpyAsFloat32(path, a);
  ASSERT_TRUE(s.ok()) << s.message();
  d = a.data<float>();
  EXPECT_EQ(std::vector<float>(d, d + 4), (std::vector<float>{1, 2, 3, 4}));
  writeFile(path, npyFile(dictFor("<f8", "(2, 2)", "True"),
                          rawBytes(std::vector<double>{1, 3, 2, 4})));
  s = readNpyAsFloat32(path, a);
  ASSERT_TRUE(s.ok()) << s.message();
  d = a.data<float>();
  EXPECT_EQ(std::vector<float>(d, d + 4), (std::vector<float>{1, 2, 3, 4}));
}

TEST_F(NpyTest, AsFloat32Errors) {
  std::string path = Dir.path("f.npy");
  NpyArray a = makeArray<int32_t>({1}, {5});
  auto errorOf = [&](const FloatReadOptions &options = {}) {
    Status s = readNpyAsFloat32(path, a, options);
    return s.ok() ? std::string("(success)") : s.message();
  };
  // Values that would become infinite: FLT_MAX plus half an ulp (a tie,
  // which rounds to the even 2^128), anything above, 1e300, and negative.
  for (double big : {0x1.ffffffp+127, 0x1p+128, 1e300, -3.5e38}) {
    ASSERT_TRUE(writeNpy(path, makeArray<double>({3}, {1.0, big, 2.0})).ok());
    char text[64];
    auto end = std::to_chars(text, text + sizeof(text), big).ptr;
    EXPECT_EQ(errorOf(), path + ": element [1] = " + std::string(text, end) +
                             " is too large for float32");
    // Allowing NaN and infinities does not allow this.
    FloatReadOptions allow;
    allow.AllowNonFinite = true;
    EXPECT_EQ(errorOf(allow), errorOf());
  }
  ASSERT_TRUE(writeNpy(path, makeArray<int64_t>({2}, {1, 2})).ok());
  EXPECT_EQ(errorOf(), path + ": expected dtype float32 or float64, got int64");
  ASSERT_TRUE(writeNpy(path, makeArray<double>({2, 2}, {1, 2, 3, 4})).ok());
  FloatReadOptions shaped;
  shaped.Shape = std::vector<int64_t>{-1, 3};
  EXPECT_EQ(errorOf(shaped), path + ": expected shape *x3, got 2x2");
  shaped.Shape = std::vector<int64_t>{2, -1};
  EXPECT_EQ(errorOf(shaped), "(success)");
  // The output is untouched by a failed read.
  a = makeArray<int32_t>({1}, {5});
  writeFile(path, npyFile(dictFor("<f8", "(2,)"), "short"));
  EXPECT_NE(errorOf().find("file is truncated"), std::string::npos);
  EXPECT_EQ(a.dtype, DType::Int32);
}

TEST_F(NpyTest, NonFiniteValuesAreRejectedUnlessAllowed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::string path = Dir.path("n.npy");
  struct Case {
    std::vector<int64_t> Shape;
    int64_t At;
    double Value;
    std::string Message;
  };
  for (const Case &c : {Case{{2, 3}, 4, nan, "element [1, 1] is nan"},
                        Case{{2, 3}, 0, -nan, "element [0, 0] is nan"},
                        Case{{6}, 5, inf, "element [5] is inf"},
                        Case{{1, 2, 3}, 3, -inf, "element [0, 1, 0] is -inf"},
                        Case{{}, 0, nan, "the value is nan"}}) {
    int64_t count = 1;
    for (int64_t d : c.Shape)
      count *= d;
    for (bool f64 : {false, true}) {
      SCOPED_TRACE(c.Message + (f64 ? " (float64)" : " (float32)"));
      if (f64) {
        std::vector<double> v(count, 0.5);
        v[c.At] = c.Value;
        ASSERT_TRUE(writeNpy(path, makeArray<double>(c.Shape, v)).ok());
      } else {
        std::vector<float> v(count, 0.5f);
        v[c.At] = static_cast<float>(c.Value);
        ASSERT_TRUE(writeNpy(path, makeArray<float>(c.Shape, v)).ok());
      }
      for (bool to64 : {false, true}) {
        NpyArray a;
        Status s = to64 ? readNpyAsFloat64(path, a) : readNpyAsFloat32(path, a);
        ASSERT_FALSE(s.ok());
        EXPECT_EQ(s.message(), path + ": " + c.Message +
                                   " (non-finite values are rejected)");
        FloatReadOptions allow;
        allow.AllowNonFinite = true;
        s = to64 ? readNpyAsFloat64(path, a, allow)
                 : readNpyAsFloat32(path, a, allow);
        ASSERT_TRUE(s.ok()) << s.message();
        double got = to64 ? a.data<double>()[c.At] : a.data<float>()[c.At];
        if (std::isnan(c.Value))
          EXPECT_TRUE(std::isnan(got));
        else
          EXPECT_EQ(got, c.Value);
        if (count > 1) {
          int64_t other = c.At ? 0 : count - 1;
          EXPECT_EQ(to64 ? a.data<double>()[other] : a.data<float>()[other],
                    0.5);
        }
      }
    }
  }
}

TEST_F(NpyTest, AsFloat64WidensFloat32Exactly) {
  std::string path = Dir.path("w.npy");
  ASSERT_TRUE(
      writeNpy(path, makeArray<float>({3}, {0.1f, FLT_MAX, -FLT_TRUE_MIN}))
          .ok());
  NpyArray a;
  Status s = readNpyAsFloat64(path, a);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(a.dtype, DType::Float64);
  const double *d = a.data<double>();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d[0], 0x1.99999ap-4);
  EXPECT_EQ(d[1], 0x1.fffffep+127);
  EXPECT_EQ(d[2], -0x1p-149);
  // float64 stays float64, bit for bit.
  ASSERT_TRUE(writeNpy(path, makeArray<double>({1}, {1e300})).ok());
  ASSERT_TRUE(readNpyAsFloat64(path, a).ok());
  EXPECT_EQ(a.data<double>()[0], 1e300);
}

TEST_F(NpyTest, TruncatedData) {
  std::string data = rawBytes(std::vector<float>(6, 1.f));
  std::string file = npyFile(dictFor("<f4", "(2, 3)"), data);
  expectError(file.substr(0, file.size() - 4),
              "file is truncated: header says 2x3 float32 (24 bytes) but only "
              "20 bytes follow");
  expectError(npyFile(dictFor("<f4", "(2708, 1433)"), std::string(1000, 'a')),
              "file is truncated: header says 2708x1433 float32 (15522256 "
              "bytes) but only 1000 bytes follow");
  // The full message, with the file name in front.
  NpyArray a;
  Status s =
      readBytes(npyFile(dictFor("<i8", "(2, 10556)"), ""), a, "edges.npy");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), Dir.path("edges.npy") +
                             ": file is truncated: header says 2x10556 int64 "
                             "(168896 bytes) but only 0 bytes follow");
}

TEST_F(NpyTest, TrailingData) {
  std::string data = rawBytes(std::vector<float>(6, 1.f));
  expectError(npyFile(dictFor("<f4", "(2, 3)"), data + "junk"),
              "trailing data: header says 2x3 float32 (24 bytes) but 28 bytes "
              "follow");
  expectError(npyFile(dictFor("<f8", "()"), std::string(9, '\0')),
              "trailing data: header says scalar float64 (8 bytes) but 9 "
              "bytes follow");
}

TEST_F(NpyTest, NegativeShape) {
  expectError(npyFile(dictFor("<f4", "(2, -3)"), ""),
              "negative dimension -3 in shape");
  expectError(npyFile(dictFor("<f4", "(-9223372036854775808,)"), ""),
              "negative dimension -9223372036854775808 in shape");
}

TEST_F(NpyTest, OverflowingShape) {
  // 2^62 * 4 bytes overflows int64 only once multiplied by the item size.
  expectError(npyFile(dictFor("<f4", "(4611686018427387904,)"), ""),
              "shape 4611686018427387904 float32 is too large (its size "
              "overflows 64 bits)");
  expectError(npyFile(dictFor("|b1", "(4294967296, 4294967296)"), ""),
              "shape 4294967296x4294967296 bool is too large");
  expectError(npyFile(dictFor("<f4", "(9223372036854775808,)"), ""),
              "dimension 9223372036854775808 in shape does not fit in 64 "
              "bits");
  expectError(npyFile(dictFor("<f4", "(123456789012345678901234567890,)"), ""),
              "dimension 123456789012345678901234567890 in shape does not fit "
              "in 64 bits");
  // Many dimensions.
  std::string shape = "(";
  for (int i = 0; i < 65; ++i)
    shape += "1,";
  shape += ")";
  expectError(npyFile(dictFor("<f4", shape), std::string(4, '\0')),
              "shape has more than 64 dimensions");
}

TEST_F(NpyTest, BoolBytesMustBeZeroOrOne) {
  expectError(npyFile(dictFor("|b1", "(5,)"), std::string("\0\1\1\2\0", 5)),
              "invalid bool value 2 at element 3 (expected 0 or 1)");
  expectError(npyFile(dictFor("|b1", "(1,)"), "\xff"),
              "invalid bool value 255 at element 0");
}

TEST_F(NpyTest, OutputUntouchedOnError) {
  NpyArray a = makeArray<int32_t>({1}, {99});
  Status s = readBytes(npyFile(dictFor("<f4", "(2,)"), "abc"), a);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(a.dtype, DType::Int32);
  EXPECT_EQ(a.shape, std::vector<int64_t>{1});
  EXPECT_EQ(a.data<int32_t>()[0], 99);
}

//===----------------------------------------------------------------------===//
// readNpyExpect / readNpyHeader
//===----------------------------------------------------------------------===//

TEST_F(NpyTest, ReadExpect) {
  std::string path = Dir.path("e.npy");
  ASSERT_TRUE(
      writeNpy(path, makeArray<int64_t>({2, 3}, {0, 1, 2, 3, 4, 5})).ok());
  NpyArray a;
  Status s = readNpyExpect(path, DType::Int64, {2, -1}, a);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.data<int64_t>()[5], 5);
  EXPECT_TRUE(readNpyExpect(path, DType::Int64, {2, 3}, a).ok());
  EXPECT_TRUE(readNpyExpect(path, DType::Int64, {-1, -1}, a).ok());

  s = readNpyExpect(path, DType::Float32, {2, -1}, a);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), path + ": expected dtype float32, got int64");
  s = readNpyExpect(path, DType::Int64, {3, -1}, a);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), path + ": expected shape 3x*, got 2x3");
  s = readNpyExpect(path, DType::Int64, {-1}, a);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), path + ": expected shape *, got 2x3");
  s = readNpyExpect(path, DType::Int64, {}, a);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), path + ": expected shape scalar, got 2x3");
  // The data of a rejected file is still validated when the header passes.
  writeFile(path, npyFile(dictFor("<i8", "(2, 3)"), "short"));
  s = readNpyExpect(path, DType::Int64, {2, -1}, a);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("file is truncated"), std::string::npos);
}

TEST_F(NpyTest, ReadHeaderOnly) {
  std::string path = Dir.path("h.npy");
  ASSERT_TRUE(
      writeNpy(path, makeArray<float>({3, 2}, std::vector<float>(6))).ok());
  DType dtype = DType::Bool;
  std::vector<int64_t> shape;
  Status s = readNpyHeader(path, dtype, shape);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(dtype, DType::Float32);
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 2}));
  // The size check still applies, the bool check does not (data not read).
  writeFile(path, npyFile(dictFor("<f4", "(3, 2)"), "short"));
  EXPECT_FALSE(readNpyHeader(path, dtype, shape).ok());
  writeFile(path, npyFile(dictFor("|b1", "(2,)"), "\x07\x07"));
  EXPECT_TRUE(readNpyHeader(path, dtype, shape).ok());
  NpyArray a;
  EXPECT_FALSE(readNpy(path, a).ok());
}

//===----------------------------------------------------------------------===//
// Writer errors
//===----------------------------------------------------------------------===//

TEST_F(NpyTest, WriteRejectsInconsistentArrays) {
  std::string path = Dir.path("w.npy");
  NpyArray a = makeArray<float>({2, 3}, std::vector<float>(5));
  Status s = writeNpy(path, a);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), path + ": cannot write: shape 2x3 float32 needs 24 "
                                "bytes but the array holds 20");
  a = makeArray<float>({-2, 3}, {});
  s = writeNpy(path, a);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("negative dimension -2"), std::string::npos);
  NpyArray b;
  b.dtype = DType::Bool;
  b.shape = {2};
  b.bytes = {1, 3};
  s = writeNpy(path, b);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("invalid bool value 3 at element 1"),
            std::string::npos);
  EXPECT_FALSE(fileExists(path));
  EXPECT_TRUE(Dir.listing().empty());
}

TEST_F(NpyTest, FailedWriteLeavesNoFile) {
  NpyArray a = makeArray<int32_t>({2}, {1, 2});
  std::string path = Dir.path("missing-dir/a.npy");
  Status s = writeNpy(path, a);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), path + ": cannot create temporary file: no such file "
                                "or directory");
  EXPECT_TRUE(Dir.listing().empty());

  // The rename fails when the target is a non-empty directory; the
  // temporary file must be cleaned up.
  std::filesystem::create_directories(Dir.path("target.npy/sub"));
  s = writeNpy(Dir.path("target.npy"), a);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot rename temporary file into place"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(Dir.listing(), std::vector<std::string>{"target.npy"});
}

//===----------------------------------------------------------------------===//
// Robustness
//===----------------------------------------------------------------------===//

TEST_F(NpyTest, EveryTruncationIsAnError) {
  for (const std::string &file :
       {npyFile(dictFor("<f4", "(2, 3)"), rawBytes(std::vector<float>(6))),
        npyFile(dictFor("|b1", "(3,)"), std::string("\1\0\1", 3), 2),
        npyFile(dictFor("<i8", "()"), rawBytes(std::vector<int64_t>{1}), 3)}) {
    NpyArray full;
    ASSERT_TRUE(readBytes(file, full).ok());
    for (size_t len = 0; len < file.size(); ++len) {
      NpyArray a;
      Status s = readBytes(file.substr(0, len), a);
      EXPECT_FALSE(s.ok()) << "prefix of " << len << " bytes was accepted";
      EXPECT_FALSE(s.message().empty());
    }
  }
}

TEST_F(NpyTest, MutatedFilesNeverCrash) {
  std::string valid =
      npyFile(dictFor("|b1", "(2, 3)"), std::string("\1\0\1\0\1\0", 6));
  std::mt19937 rng(12345);
  const char interesting[] = {'\0', '\x01', '\x02', '\xff', '(', ')', ',',
                              '\'', '-',    '9',    '{',    '}', ' ', 'T'};
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string file = valid;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < edits; ++i) {
      size_t pos = rng() % file.size();
      switch (rng() % 4) {
      case 0:
        file[pos] = static_cast<char>(rng() & 0xff);
        break;
      case 1:
        file[pos] = interesting[rng() % sizeof(interesting)];
        break;
      case 2:
        file.erase(pos, 1 + rng() % 8);
        break;
      default:
        file.insert(pos, 1 + rng() % 8,
                    interesting[rng() % sizeof(interesting)]);
        break;
      }
      if (file.empty())
        file = "x";
    }
    NpyArray a;
    Status s = readBytes(file, a);
    if (s.ok()) {
      ++accepted;
      // Whatever is accepted is self-consistent.
      EXPECT_EQ(a.bytes.size(),
                static_cast<size_t>(a.numElements()) * dtypeSize(a.dtype));
    } else {
      EXPECT_FALSE(s.message().empty());
    }
  }
  // Most mutations (e.g. in the padding) are harmless; many are not.
  EXPECT_LT(accepted, 3000);
}

//===----------------------------------------------------------------------===//
// The Cora dataset
//===----------------------------------------------------------------------===//

class CoraNpyTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!fileExists(kCora + "/edge_index.npy"))
      GTEST_SKIP() << kCora << " not present";
  }
  const std::string kCora = gnnc::rt::testing::coraDir();
};

TEST_F(CoraNpyTest, DocumentedShapes) {
  NpyArray edges, x, y;
  Status s =
      readNpyExpect(kCora + "/edge_index.npy", DType::Int64, {2, -1}, edges);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(edges.shape, (std::vector<int64_t>{2, 10556}));
  const int64_t *e = edges.data<int64_t>();
  for (int64_t i = 0; i < 2 * 10556; ++i) {
    ASSERT_GE(e[i], 0);
    ASSERT_LT(e[i], 2708);
  }

  s = readNpy(kCora + "/x.npy", x);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(x.dtype, DType::Float32);
  EXPECT_EQ(x.shape, (std::vector<int64_t>{2708, 1433}));
  const float *xs = x.data<float>();
  for (int64_t i = 0; i < x.numElements(); ++i)
    ASSERT_TRUE(xs[i] == 0.f || xs[i] == 1.f) << "x[" << i << "] = " << xs[i];

  DType dtype;
  std::vector<int64_t> shape;
  ASSERT_TRUE(readNpyHeader(kCora + "/x.npy", dtype, shape).ok());
  EXPECT_EQ(shape, (std::vector<int64_t>{2708, 1433}));

  s = readNpyExpect(kCora + "/y.npy", DType::Int64, {2708}, y);
  ASSERT_TRUE(s.ok()) << s.message();
  for (int64_t i = 0; i < 2708; ++i) {
    ASSERT_GE(y.data<int64_t>()[i], 0);
    ASSERT_LT(y.data<int64_t>()[i], 7);
  }

  // The Planetoid split: 140 / 500 / 1000.
  std::pair<const char *, int> masks[] = {
      {"train_mask.npy", 140}, {"val_mask.npy", 500}, {"test_mask.npy", 1000}};
  for (auto [name, expected] : masks) {
    NpyArray m;
    s = readNpyExpect(kCora + "/" + name, DType::Bool, {2708}, m);
    ASSERT_TRUE(s.ok()) << s.message();
    int count = 0;
    for (int64_t i = 0; i < 2708; ++i)
      count += m.data<bool>()[i];
    EXPECT_EQ(count, expected) << name;
  }

  s = readNpyExpect(kCora + "/x.npy", DType::Int64, {2708, -1}, x);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), kCora + "/x.npy: expected dtype int64, got float32");
}

TEST_F(CoraNpyTest, WriterReproducesNumPyFiles) {
  TempDir dir;
  for (const char *name : {"edge_index.npy", "y.npy", "train_mask.npy"}) {
    NpyArray a;
    ASSERT_TRUE(readNpy(kCora + "/" + name, a).ok());
    ASSERT_TRUE(writeNpy(dir.path(name), a).ok());
    EXPECT_EQ(readFile(dir.path(name)), readFile(kCora + "/" + name)) << name;
  }
}

//===----------------------------------------------------------------------===//
// Row slices (readNpyRows) and headers (npyHeader)
//===----------------------------------------------------------------------===//

/// Every slice [b, e) of `path` read with readNpyRows equals the same rows
/// of readNpy's whole array.
void expectSlicesMatch(const std::string &path, DType dtype,
                       const std::vector<int64_t> &shape) {
  NpyArray whole;
  Status s = readNpy(path, whole);
  ASSERT_TRUE(s.ok()) << s.message();
  int64_t rows = shape[0];
  size_t rowBytes = whole.bytes.size() / static_cast<size_t>(rows);
  for (int64_t b = 0; b <= rows; ++b) {
    for (int64_t e = b; e <= rows; ++e) {
      std::vector<unsigned char> out(static_cast<size_t>(e - b) * rowBytes,
                                     0xcd);
      std::vector<int64_t> fileShape;
      s = readNpyRows(path, dtype, shape, b, e - b, out.data(), &fileShape);
      ASSERT_TRUE(s.ok()) << s.message();
      EXPECT_EQ(fileShape, shape);
      std::vector<unsigned char> expected(
          whole.bytes.begin() + static_cast<std::ptrdiff_t>(b * rowBytes),
          whole.bytes.begin() + static_cast<std::ptrdiff_t>(e * rowBytes));
      EXPECT_EQ(out, expected) << path << " rows [" << b << ", " << e << ")";
    }
  }
}

TEST_F(NpyTest, RowSlicesMatchTheWholeArray) {
  std::vector<float> f(7 * 3);
  for (size_t i = 0; i < f.size(); ++i)
    f[i] = static_cast<float>(i) * 1.5f - 4.0f;
  ASSERT_TRUE(writeNpy(Dir.path("f.npy"), makeArray<float>({7, 3}, f)).ok());
  expectSlicesMatch(Dir.path("f.npy"), DType::Float32, {7, 3});

  std::vector<int64_t> l = {5, -3, 1ll << 40, 0, 9};
  ASSERT_TRUE(writeNpy(Dir.path("l.npy"), makeArray<int64_t>({5}, l)).ok());
  expectSlicesMatch(Dir.path("l.npy"), DType::Int64, {5});

  std::vector<bool> m = {true, false, false, true};
  ASSERT_TRUE(writeNpy(Dir.path("m.npy"), makeArray<bool>({4}, m)).ok());
  expectSlicesMatch(Dir.path("m.npy"), DType::Bool, {4});

  // A version 2.0 file and an array without columns.
  writeFile(Dir.path("v2.npy"),
            npyFile(dictFor("<i4", "(3, 2)"),
                    rawBytes(std::vector<int32_t>{1, 2, 3, 4, 5, 6}), 2));
  expectSlicesMatch(Dir.path("v2.npy"), DType::Int32, {3, 2});
  ASSERT_TRUE(writeNpy(Dir.path("e.npy"), makeArray<double>({3, 0}, {})).ok());
  expectSlicesMatch(Dir.path("e.npy"), DType::Float64, {3, 0});
}

TEST_F(NpyTest, RowSlicesOfFortranOrderMatrices) {
  // [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]] stored column by column.
  writeFile(Dir.path("f.npy"),
            npyFile(dictFor("<i8", "(4, 3)", "True"),
                    rawBytes(std::vector<int64_t>{1, 4, 7, 10, 2, 5, 8, 11, 3,
                                                  6, 9, 12})));
  expectSlicesMatch(Dir.path("f.npy"), DType::Int64, {4, 3});
  std::vector<int64_t> out(6);
  Status s =
      readNpyRows(Dir.path("f.npy"), DType::Int64, {-1, 3}, 1, 2, out.data());
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(out, (std::vector<int64_t>{4, 5, 6, 7, 8, 9}));

  // More than two dimensions in Fortran order: refused, with a reason.
  writeFile(Dir.path("g.npy"), npyFile(dictFor("<i4", "(2, 2, 2)", "True"),
                                       rawBytes(std::vector<int32_t>(8, 1))));
  s = readNpyRows(Dir.path("g.npy"), DType::Int32, {2, 2, 2}, 0, 1, out.data());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), Dir.path("g.npy") +
                             ": reading rows of a Fortran-order array of 3 "
                             "dimensions is not supported (at most 2; save "
                             "it in C order)");
}

TEST_F(NpyTest, RowSliceErrors) {
  std::string path = Dir.path("x.npy");
  ASSERT_TRUE(
      writeNpy(path, makeArray<float>({4, 2}, std::vector<float>(8, 1))).ok());
  std::vector<float> out(16);
  auto errorOf = [&](DType dtype, std::vector<int64_t> shape, int64_t b,
                     int64_t n) {
    Status s = readNpyRows(path, dtype, shape, b, n, out.data());
    return s.ok() ? std::string("(success)") : s.message();
  };
  EXPECT_EQ(errorOf(DType::Int64, {4, 2}, 0, 1),
            path + ": expected dtype int64, got float32");
  EXPECT_EQ(errorOf(DType::Float32, {4, 3}, 0, 1),
            path + ": expected shape 4x3, got 4x2");
  EXPECT_EQ(errorOf(DType::Float32, {4}, 0, 1),
            path + ": expected shape 4, got 4x2");
  EXPECT_EQ(errorOf(DType::Float32, {-1, 2}, 3, 2),
            path + ": rows [3, 5) are outside the 4 rows of shape 4x2");
  EXPECT_EQ(errorOf(DType::Float32, {-1, 2}, -1, 1),
            path + ": rows [-1, 0) are outside the 4 rows of shape 4x2");
  EXPECT_EQ(errorOf(DType::Float32, {-1, 2}, 5, 0),
            path + ": rows [5, 5) are outside the 4 rows of shape 4x2");
  EXPECT_EQ(errorOf(DType::Float32, {-1, 2}, 4, 0), "(success)");

  // The header is validated as readNpyHeader does, the file size included.
  std::string full = readFile(path);
  writeFile(path, full.substr(0, full.size() - 4));
  DType dtype;
  std::vector<int64_t> shape;
  Status header = readNpyHeader(path, dtype, shape);
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(errorOf(DType::Float32, {4, 2}, 0, 1), header.message());
  EXPECT_NE(header.message().find("file is truncated"), std::string::npos);

  writeFile(path,
            npyFile(dictFor("<f4", "()"), rawBytes(std::vector<float>{1})));
  EXPECT_EQ(errorOf(DType::Float32, {}, 0, 1),
            path + ": a scalar has no rows to read");

  // Bool values other than 0 and 1 are reported in the slice read.
  writeFile(path, npyFile(dictFor("|b1", "(4,)"), std::string("\0\1\0\7", 4)));
  EXPECT_EQ(errorOf(DType::Bool, {4}, 0, 3), "(success)");
  EXPECT_EQ(errorOf(DType::Bool, {4}, 2, 2),
            path + ": invalid bool value 7 at element 3 (expected 0 or 1)");
}

TEST_F(NpyTest, HeaderIsWhatWriteNpyWrites) {
  for (auto shape : {std::vector<int64_t>{}, std::vector<int64_t>{0},
                     std::vector<int64_t>{7}, std::vector<int64_t>{3, 5},
                     std::vector<int64_t>{123456789, 0}}) {
    for (DType dtype : {DType::Bool, DType::Int32, DType::Float64}) {
      NpyArray a;
      a.dtype = dtype;
      a.shape = shape;
      a.bytes.assign(static_cast<size_t>(a.numElements()) * dtypeSize(dtype),
                     0);
      ASSERT_TRUE(writeNpy(Dir.path("h.npy"), a).ok());
      std::string file = readFile(Dir.path("h.npy"));
      std::string header = npyHeader(dtype, shape);
      EXPECT_EQ(header.size() % 64, 0u);
      EXPECT_EQ(file.substr(0, header.size()), header) << formatShape(shape);
      EXPECT_EQ(file.size(), header.size() + a.bytes.size());
    }
  }
}

} // namespace
