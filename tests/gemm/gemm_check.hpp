// The GEMM tests' cases and serial reference, shared by the group, MPI and GPU tests. A case names
// the global shapes, one layout per matrix (grid and, per dimension, even blocks, uneven blocks,
// blocks with empty sections, block-cyclic or unstructured), the dtype and the scalars. Matrices
// hold small multiples of 1/4 so that products and sums are exact in float32 and float64; the
// reference multiplies in double on the host, element by element.
#pragma once

#include <gdap/gdap.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace gemm_test {

struct Axis {
  char kind = 'b';     // 'b' even blocks, 'B' uneven, 'E' all in the last block, 'c' block-cyclic, 'u' unstructured
  int64_t block = 1;   // 'c': block_size
};

struct Layout {
  int64_t rows = 1, cols = 1;  // the process grid
  Axis d0, d1;
};

struct Case {
  std::string name;
  int64_t m, n, k;
  Layout a, b, c;
  int bits = 64;
  double alpha = 1, beta = 0;
  bool strided = false;  // A column-major, C with padded rows
  int64_t nranks() const { return c.rows * c.cols; }
};

inline gdap_dtype dtype_of(int bits) { return gdap_dtype{GDAP_DTYPE_FLOAT, static_cast<uint8_t>(bits), 1}; }

inline gdap_dim axis_dim(const Axis& x, int64_t size, int64_t parts, int64_t q) {
  gdap_dim d = GDAP_DIM_INIT;
  if (x.kind == 'c') {
    gdap_dim_set_cyclic(&d, size, parts, q, q * x.block, x.block);
  } else if (x.kind == 'u') {
    static thread_local std::vector<std::vector<int64_t>> keep;  // indices must outlive the map's creation
    std::vector<int64_t> idx;
    for (int64_t i = size - 1; i >= 0; --i) {
      if (i % parts == q) idx.push_back(i);
    }
    keep.push_back(idx);
    gdap_dim_set_unstructured(&d, size, parts, q, keep.back().data(), static_cast<int64_t>(keep.back().size()), 1);
  } else {
    int64_t start = 0, stop = 0;
    if (x.kind == 'b') {
      const int64_t step = (size + parts - 1) / parts;
      start = std::min(size, q * step);
      stop = std::min(size, start + step);
    } else if (x.kind == 'B') {  // blocks growing with q: 1, 2, 3, ... parts
      const int64_t total = parts * (parts + 1) / 2;
      start = size * (q * (q + 1) / 2) / total;
      stop = size * ((q + 1) * (q + 2) / 2) / total;
    } else {  // 'E'
      start = q + 1 == parts ? 0 : 0;
      stop = q + 1 == parts ? size : 0;
    }
    gdap_dim_set_block(&d, size, parts, q, start, stop);
  }
  return d;
}

// Every rank's two dictionaries of a layout, rank-major.
inline std::vector<gdap_dim> all_dims(const Layout& l, int64_t rows, int64_t cols) {
  std::vector<gdap_dim> out;
  for (int64_t r = 0; r < l.rows * l.cols; ++r) {
    out.push_back(axis_dim(l.d0, rows, l.rows, r / l.cols));
    out.push_back(axis_dim(l.d1, cols, l.cols, r % l.cols));
  }
  return out;
}

inline double a_value(int64_t i, int64_t k) { return static_cast<double>((i * 7 + k * 3) % 11 - 5) * 0.25; }
inline double b_value(int64_t k, int64_t j) { return static_cast<double>((k * 5 + j * 2) % 9 - 4) * 0.25; }
inline double c_value(int64_t i, int64_t j) { return static_cast<double>((i * 3 + j) % 7 - 3) * 0.5; }

// One rank's section of one matrix, in double (converted to the case's dtype by `bytes`).
struct Section {
  gdap_dim dims[2];
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> strides;
  std::vector<int64_t> g0, g1;  // global index of each local row and column
  std::vector<double> values;   // storage order per strides
  int64_t storage = 0;

  int64_t at(int64_t i, int64_t j) const { return i * strides[0] + j * strides[1]; }
};

template <typename F>
Section make_section(const std::vector<gdap_dim>& all, int64_t rank, bool column_major, int64_t pad, F value,
                     bool nan_fill = false) {
  Section s;
  s.dims[0] = all[static_cast<size_t>(rank * 2)];
  s.dims[1] = all[static_cast<size_t>(rank * 2 + 1)];
  gdap_dim_local_extent(&s.rows, &s.dims[0]);
  gdap_dim_local_extent(&s.cols, &s.dims[1]);
  if (column_major) {
    s.strides = {1, std::max<int64_t>(s.rows, 1)};
  } else {
    s.strides = {s.cols + pad, 1};
  }
  s.storage = std::max<int64_t>(1, column_major ? s.strides[1] * s.cols : s.strides[0] * s.rows);
  s.values.assign(static_cast<size_t>(s.storage), -99.0);
  for (int64_t i = 0; i < s.rows; ++i) {
    int64_t g = 0;
    gdap_dim_local_to_global(&g, &s.dims[0], i);
    s.g0.push_back(g);
  }
  for (int64_t j = 0; j < s.cols; ++j) {
    int64_t g = 0;
    gdap_dim_local_to_global(&g, &s.dims[1], j);
    s.g1.push_back(g);
  }
  for (int64_t i = 0; i < s.rows; ++i) {
    for (int64_t j = 0; j < s.cols; ++j) {
      s.values[static_cast<size_t>(s.at(i, j))] = nan_fill ? std::numeric_limits<double>::quiet_NaN() : value(s.g0[i], s.g1[j]);
    }
  }
  return s;
}

// The section's values as the bytes of a float32 or float64 buffer.
inline std::vector<unsigned char> to_bytes(const Section& s, int bits) {
  std::vector<unsigned char> out(static_cast<size_t>(s.storage) * static_cast<size_t>(bits / 8));
  for (size_t i = 0; i < s.values.size(); ++i) {
    if (bits == 32) {
      const float f = static_cast<float>(s.values[i]);
      std::memcpy(out.data() + i * 4, &f, 4);
    } else {
      std::memcpy(out.data() + i * 8, &s.values[i], 8);
    }
  }
  return out;
}

inline double read(const std::vector<unsigned char>& bytes, int bits, int64_t index) {
  if (bits == 32) {
    float f;
    std::memcpy(&f, bytes.data() + index * 4, 4);
    return f;
  }
  double d;
  std::memcpy(&d, bytes.data() + index * 8, 8);
  return d;
}

inline double reference(const Case& c, int64_t i, int64_t j, bool nan_c) {
  double sum = 0;
  for (int64_t p = 0; p < c.k; ++p) sum += a_value(i, p) * b_value(p, j);
  double out = c.alpha * sum;
  if (c.beta != 0) out += c.beta * (nan_c ? std::numeric_limits<double>::quiet_NaN() : c_value(i, j));
  return out;
}

// Failures of one rank's C (against the reference) and of its A or B (against their old values).
inline std::vector<std::string> check_c(const Case& c, const Section& s, const std::vector<unsigned char>& bytes,
                                        bool nan_c, bool changed) {
  std::vector<std::string> out;
  const double tol = c.bits == 32 ? 1e-5 : 1e-12;
  for (int64_t i = 0; i < s.rows && out.size() < 5; ++i) {
    for (int64_t j = 0; j < s.cols && out.size() < 5; ++j) {
      const double got = read(bytes, c.bits, s.at(i, j));
      const double want = changed ? reference(c, s.g0[i], s.g1[j], nan_c) : s.values[static_cast<size_t>(s.at(i, j))];
      const bool ok = (std::isnan(want) && std::isnan(got)) || std::fabs(got - want) <= tol * (1 + std::fabs(want));
      if (!ok) {
        out.push_back(c.name + ": C(" + std::to_string(s.g0[i]) + ", " + std::to_string(s.g1[j]) + ") = " +
                      std::to_string(got) + ", expected " + std::to_string(want));
      }
    }
  }
  return out;
}

inline std::vector<std::string> check_same(const std::string& what, const Section& s, const std::vector<unsigned char>& bytes,
                                           int bits) {
  if (to_bytes(s, bits) == bytes) return {};
  return {what + " changed"};
}

}  // namespace gemm_test
