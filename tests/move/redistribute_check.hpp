// End-to-end checks of gdap_redistribute, shared by the in-process group suite
// (test_redistribute_group.cpp) and the MPI program (redistribute_mpi.cpp).
//
// A rank fills the owned elements of its source with a value encoding the global index, its source
// padding and halos with a poison and its whole destination with a sentinel; after the move every
// destination element must hold exactly what an oracle written from the protocol text (not from
// the library) says: the encoded value where the rank owns the element, the sentinel elsewhere.
// Bytes between strided elements and the whole source must be unchanged.
//
// Nothing here uses gtest assertions: a rank records what went wrong in a Report and goes on making
// the same collective calls as its peers, so one wrong element never leaves the others waiting.
#pragma once

#include "move_layouts.hpp"

#include <gdap/gdap.h>

#include <dlpack/dlpack.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace redist_test {

namespace mt = move_test;
using mt::Axis;
using mt::Layout;

template <typename... T>
std::string cat(const T&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

inline std::string tuple_text(const std::vector<int64_t>& v) {
  std::string text = "(";
  for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + std::to_string(v[i]);
  return text + ")";
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// What one rank found wrong. Only the first few failures are kept: one broken case can produce
// thousands of wrong elements, and the first ones say what is needed.
struct Report {
  std::string context;  // prefixed to every failure (e.g. the MPI exchange mode)
  std::vector<std::string> failures;
  int64_t dropped = 0;
  int64_t moves = 0;     // successful gdap_redistribute calls
  int64_t elements = 0;  // destination elements checked

  void fail(const std::string& what) {
    if (failures.size() < 12) failures.push_back(context.empty() ? what : context + ": " + what);
    else ++dropped;
  }
  bool ok() const { return failures.empty(); }
  std::string text() const {
    std::string out;
    for (const std::string& f : failures) out += f + "\n";
    if (dropped > 0) out += cat("... and ", dropped, " more\n");
    return out;
  }
};

// ---- layouts ----

// The axis types every pair of which must redistribute.
enum class Kind { block, irregular, padded, periodic, cyclic, block_cyclic, unstructured, replicated };
constexpr std::array kKinds = {Kind::block,  Kind::irregular,    Kind::padded,       Kind::periodic,
                               Kind::cyclic, Kind::block_cyclic, Kind::unstructured, Kind::replicated};

inline const char* kind_name(Kind k) {
  switch (k) {
    case Kind::block: return "b";
    case Kind::irregular: return "irregular";
    case Kind::padded: return "padded";
    case Kind::periodic: return "periodic";
    case Kind::cyclic: return "c";
    case Kind::block_cyclic: return "bc3";
    case Kind::unstructured: return "u";
    case Kind::replicated: return "replicas";
  }
  return "?";
}

// Owned counts that differ by at most one: every coordinate owns something when size >= P, so
// padding of width 1 always has a neighbour element to mirror.
inline std::vector<int64_t> balanced(int64_t size, int64_t P) {
  std::vector<int64_t> counts;
  for (int64_t g = 0; g < P; ++g) counts.push_back(size / P + (g < size % P ? 1 : 0));
  return counts;
}

// Deliberately uneven counts: with 3 or more coordinates, coordinate 1 owns nothing.
inline std::vector<int64_t> uneven(int64_t size, int64_t P) {
  if (P == 1) return {size};
  if (P == 2) return {size - size / 3, size / 3};
  std::vector<int64_t> counts(static_cast<size_t>(P), 0);
  counts[0] = std::min<int64_t>(1, size);
  const int64_t rest = size - counts[0];
  int64_t given = 0;
  for (int64_t g = 2; g < P - 1; ++g) given += counts[static_cast<size_t>(g)] = rest / (P - 1);
  counts.back() = rest - given;
  return counts;
}

inline Axis make_axis(Kind k, int64_t size, int64_t P, uint64_t seed) {
  switch (k) {
    case Kind::block: return mt::block(size, P);
    case Kind::irregular: return mt::irregular(size, uneven(size, P));
    case Kind::padded: return mt::padded(size, balanced(size, P), 1, false, 1, 2);  // halos and boundary padding
    case Kind::periodic: {  // boundary padding 1 at both ends (where the end ranks own that much), halos of 2
      const auto counts = balanced(size, P);
      const int64_t lo = std::min<int64_t>(1, counts.front());
      const int64_t hi = std::min<int64_t>(1, counts.back() - (P == 1 ? lo : 0));
      return mt::padded(size, counts, std::min<int64_t>(2, size / P), true, lo, hi);
    }
    case Kind::cyclic: return mt::cyclic(size, P, 1);
    case Kind::block_cyclic: return mt::cyclic(size, P, 3);  // sizes here are not multiples of 3: a partial block
    case Kind::unstructured: return mt::shuffled(size, P, seed, false);
    case Kind::replicated: return mt::shuffled(size, P, seed, true);
  }
  return {};
}

struct Case {
  std::string name;  // letters, digits and '_' only (a gtest parameter name)
  Layout src, dst;
};

// Two factors of N, the first the larger: a 2-d grid of N ranks (2x2 for 4, 2x1 for 2).
inline std::pair<int64_t, int64_t> grid2(int64_t N) {
  int64_t b = 1;
  for (int64_t d = 1; d * d <= N; ++d) {
    if (N % d == 0) b = d;
  }
  return {N / b, b};
}

// Every case redistributes within a group of N ranks: the larger side has N ranks, the other N
// or fewer, so ranks outside the smaller map take part holding nothing on that side.
inline std::vector<Case> cases(int64_t N) {
  const int64_t M = std::max<int64_t>(1, N - 1);
  const auto [a, b] = grid2(N);
  std::vector<Case> out;
  // Every ordered pair of axis types in 1-d, on the same rank count or one rank fewer either way.
  for (size_t i = 0; i < kKinds.size(); ++i) {
    for (size_t j = 0; j < kKinds.size(); ++j) {
      const size_t k = i * kKinds.size() + j;
      const int64_t P = k % 3 == 2 ? M : N, Q = k % 3 == 1 ? M : N;
      out.push_back({cat("1d_", kind_name(kKinds[i]), P, "_to_", kind_name(kKinds[j]), Q),
                     {{make_axis(kKinds[i], 23, P, 100 + k)}}, {{make_axis(kKinds[j], 23, Q, 200 + k)}}});
    }
  }
  auto ax = [](Kind k, int64_t size, int64_t P) { return make_axis(k, size, P, static_cast<uint64_t>(size * 31 + P)); };
  using K = Kind;
  auto add = [&](std::string name, std::vector<Axis> src, std::vector<Axis> dst) {
    out.push_back({std::move(name), {std::move(src)}, {std::move(dst)}});
  };
  add("1d_fewer_elements_than_ranks", {ax(K::block, 3, N)}, {ax(K::block_cyclic, 3, M)});
  add("1d_empty", {ax(K::block, 0, N)}, {mt::cyclic(0, M, 2)});
  add(cat("2d_b_", a, "x", b, "_to_b_1x", N), {ax(K::block, 10, a), ax(K::block, 9, b)},
      {ax(K::block, 10, 1), ax(K::block, 9, N)});
  add(cat("2d_b_1x", N, "_to_c_", N, "x1"), {ax(K::block, 10, 1), ax(K::block, 9, N)},
      {ax(K::cyclic, 10, N), ax(K::block, 9, 1)});
  add(cat("2d_periodic_", a, "x", b, "_to_bc3_", b, "x", a), {ax(K::periodic, 10, a), ax(K::periodic, 9, b)},
      {ax(K::block_cyclic, 10, b), ax(K::block_cyclic, 9, a)});
  add(cat("2d_irregular_u_", a, "x", b, "_to_replicas_padded_", M, "x1"),
      {ax(K::irregular, 10, a), ax(K::unstructured, 9, b)}, {ax(K::replicated, 10, M), ax(K::padded, 9, 1)});
  add(cat("2d_c_1x", M, "_to_b_", a, "x", b), {ax(K::block, 10, 1), ax(K::cyclic, 9, M)},
      {ax(K::block, 10, a), ax(K::block, 9, b)});
  add(cat("2d_padded_rows_to_padded_columns_", N), {ax(K::padded, 10, N), ax(K::block, 9, 1)},
      {ax(K::block, 10, 1), ax(K::padded, 9, N)});
  add(cat("2d_one_rank_to_bc3_irregular_", a, "x", b), {ax(K::block, 10, 1), ax(K::block, 9, 1)},
      {ax(K::block_cyclic, 10, a), ax(K::irregular, 9, b)});
  add(cat("2d_u_periodic_", a, "x", b, "_to_one_rank"), {ax(K::unstructured, 10, a), ax(K::periodic, 9, b)},
      {ax(K::block, 10, 1), ax(K::block, 9, 1)});
  add(cat("3d_b_", a, "x1x", b, "_to_c_1x", a, "x", b), {ax(K::block, 6, a), ax(K::block, 5, 1), ax(K::block, 4, b)},
      {ax(K::block, 6, 1), ax(K::cyclic, 5, a), ax(K::cyclic, 4, b)});
  add(cat("3d_periodic_bc3_u_to_b_1x1x", M),
      {ax(K::periodic, 6, a), ax(K::block_cyclic, 5, b), ax(K::unstructured, 4, 1)},
      {ax(K::block, 6, 1), ax(K::block, 5, 1), ax(K::block, 4, M)});
  add(cat("3d_irregular_replicas_padded_to_c_1x1x", N),
      {ax(K::irregular, 6, b), ax(K::replicated, 5, a), ax(K::padded, 4, 1)},
      {ax(K::cyclic, 6, 1), ax(K::cyclic, 5, 1), ax(K::cyclic, 4, N)});
  return out;
}

// Rank `rank`'s dictionaries of a layout, contiguous as gdap_map_create_collective reads them.
inline std::vector<gdap_dim> rank_dims(const Layout& layout, int64_t rank) {
  std::vector<gdap_dim> dims;
  for (int64_t i = 0; i < layout.ndim(); ++i) dims.push_back(layout.dim(rank, i));
  return dims;
}

// ---- element types and the values that identify elements ----

enum class Scalar { f64, i32, u8, c128 };

struct Dtype {
  const char* name;
  gdap_dtype type;
  Scalar scalar;
  int64_t bytes;
};

inline const std::vector<Dtype>& dtypes() {
  static const std::vector<Dtype> all = {
      {"float64", {GDAP_DTYPE_FLOAT, 64, 1}, Scalar::f64, 8},
      {"int32", {GDAP_DTYPE_INT, 32, 1}, Scalar::i32, 4},
      {"uint8", {GDAP_DTYPE_UINT, 8, 1}, Scalar::u8, 1},
      {"complex128", {GDAP_DTYPE_COMPLEX, 128, 1}, Scalar::c128, 16},
  };
  return all;
}

constexpr int64_t kSentinel = -1;  // destination cells that must not be written
constexpr int64_t kPoison = -7;    // source padding and halos: must never arrive anywhere
constexpr unsigned char kGapByte = 0xA5;  // bytes between strided elements

// The value identifying the element of linear global index `linear`: linear + 1, except that
// uint8 wraps (unique for the < 240 elements of every case here, and never 255 or 249, which are
// the sentinel and the poison).
inline int64_t value_of(const Dtype& dt, int64_t linear) {
  return dt.scalar == Scalar::u8 ? linear % 240 + 1 : linear + 1;
}

inline void store(const Dtype& dt, int64_t v, unsigned char* at) {
  switch (dt.scalar) {
    case Scalar::f64: {
      const auto x = static_cast<double>(v);
      std::memcpy(at, &x, sizeof x);
      return;
    }
    case Scalar::i32: {
      const auto x = static_cast<int32_t>(v);
      std::memcpy(at, &x, sizeof x);
      return;
    }
    case Scalar::u8: *at = static_cast<unsigned char>(v); return;
    case Scalar::c128: {
      const double x[2] = {static_cast<double>(v), -0.5 - static_cast<double>(v)};  // both halves differ
      std::memcpy(at, x, sizeof x);
      return;
    }
  }
}

inline std::string show(const Dtype& dt, const unsigned char* at) {
  switch (dt.scalar) {
    case Scalar::f64: {
      double x;
      std::memcpy(&x, at, sizeof x);
      return cat(x);
    }
    case Scalar::i32: {
      int32_t x;
      std::memcpy(&x, at, sizeof x);
      return cat(x);
    }
    case Scalar::u8: return cat(static_cast<int>(*at));
    case Scalar::c128: {
      double x[2];
      std::memcpy(x, at, sizeof x);
      return cat("(", x[0], ", ", x[1], ")");
    }
  }
  return "?";
}

// ---- local sections ----

// How a section's memory is laid out: allocated by gdap, or the caller's memory wrapped in C
// order, Fortran order (a transposed view), with gaps between elements, or with every stride
// negative (element 0 at the highest address).
// `shm`: made by gdap_array_create_shm (compact C order in a POSIX shared-memory segment); not in
// kStorages, a test asks for it (the MPI cma exchange maps such sections instead of reading them).
enum class Storage { created, c_order, f_order, gapped, reversed, shm };
constexpr std::array kStorages = {Storage::created, Storage::c_order, Storage::f_order, Storage::gapped,
                                  Storage::reversed};

inline const char* storage_name(Storage s) {
  switch (s) {
    case Storage::created: return "created";
    case Storage::c_order: return "wrapped C-order";
    case Storage::f_order: return "wrapped F-order";
    case Storage::gapped: return "wrapped with gaps";
    case Storage::reversed: return "wrapped with negative strides";
    case Storage::shm: return "shared memory";
  }
  return "?";
}

inline std::vector<int64_t> strides_for(Storage s, const std::vector<int64_t>& shape) {
  const size_t n = shape.size();
  std::vector<int64_t> strides(n, 1);
  if (s == Storage::f_order) {
    for (size_t i = 1; i < n; ++i) strides[i] = strides[i - 1] * std::max<int64_t>(shape[i - 1], 1);
    return strides;
  }
  // C order; with gaps, every element is followed by an unused one and every row by one more.
  const int64_t inner = s == Storage::gapped ? 2 : 1, skip = s == Storage::gapped ? 1 : 0;
  int64_t stride = inner;
  for (size_t i = n; i-- > 0;) {
    strides[i] = stride;
    stride = stride * std::max<int64_t>(shape[i], 1) + skip;
  }
  if (s == Storage::reversed) {
    for (int64_t& x : strides) x = -x;
  }
  return strides;
}

// Calls f(tuple) for every index tuple of `shape` in C order (none if an extent is 0; one for 0-d).
template <typename F>
void for_each_tuple(const std::vector<int64_t>& shape, F&& f) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return;
  std::vector<int64_t> idx(shape.size(), 0);
  for (;;) {
    f(idx);
    size_t i = shape.size();
    while (i > 0 && ++idx[i - 1] == shape[i - 1]) idx[--i] = 0;
    if (i == 0) return;
  }
}

// A DLPack tensor marked read-only over memory the test keeps (gdap_array_wrap cannot say
// read-only; a read-only consumer such as a NumPy view can only come in through DLPack).
struct ReadOnlyTensor {
  DLManagedTensorVersioned tensor{};
  std::vector<int64_t> shape, strides;
  static void release(DLManagedTensorVersioned* self) { delete static_cast<ReadOnlyTensor*>(self->manager_ctx); }
};

// One rank's local section and every byte it spans (gaps between strided elements included).
class Section {
 public:
  Section() = default;
  Section(const Section&) = delete;
  Section& operator=(const Section&) = delete;
  ~Section() { gdap_array_destroy(array_); }

  // Makes the section; returns what failed, or "". A shm section's segment is named `shm_name`
  // (NULL: a fresh name).
  std::string make(Storage storage, const Dtype& dt, const std::vector<gdap_dim>& dims, bool readonly = false,
                   const char* shm_name = nullptr) {
    es_ = dt.bytes;
    const auto ndim = static_cast<int64_t>(dims.size());
    if (storage == Storage::shm && !readonly) {
      if (gdap_array_create_shm(&array_, shm_name, dt.type, dims.data(), ndim) != GDAP_SUCCESS) {
        return cat("gdap_array_create_shm: ", gdap_last_error());
      }
      return adopt_created();
    }
    if (storage == Storage::created && !readonly) {
      if (gdap_array_create(&array_, dt.type, {GDAP_DEVICE_CPU, 0}, dims.data(), ndim) != GDAP_SUCCESS) {
        return cat("gdap_array_create: ", gdap_last_error());
      }
      return adopt_created();
    }
    for (const gdap_dim& d : dims) {
      int64_t extent = 0;
      if (gdap_dim_local_extent(&extent, &d) != GDAP_SUCCESS) return cat("gdap_dim_local_extent: ", gdap_last_error());
      shape_.push_back(extent);
    }
    strides_ = strides_for(storage, shape_);
    const int64_t low = measure();
    memory_.assign(static_cast<size_t>(std::max<int64_t>(span_, es_)), kGapByte);  // never empty: data != NULL
    lo_ = memory_.data();
    origin_ = lo_ - low * es_;
    if (readonly) return import_readonly(dt, dims);
    const int64_t* strides = storage == Storage::c_order ? nullptr : strides_.data();  // NULL: C-contiguous
    if (gdap_array_wrap(&array_, origin_, dt.type, {GDAP_DEVICE_CPU, 0}, strides, dims.data(), ndim) != GDAP_SUCCESS) {
      return cat("gdap_array_wrap: ", gdap_last_error());
    }
    return "";
  }

  gdap_array* array() const { return array_; }
  const std::vector<int64_t>& shape() const { return shape_; }

  // Calls f(local tuple, address of the element) for every element (none if never made).
  template <typename F>
  void for_each(F&& f) const {
    if (array_ == nullptr) return;
    for_each_tuple(shape_, [&](const std::vector<int64_t>& local) {
      int64_t offset = 0;
      for (size_t i = 0; i < local.size(); ++i) offset += local[i] * strides_[i];
      f(local, origin_ + offset * es_);
    });
  }

  // Destroys the section (a shm section's segment is unlinked); array() is NULL after.
  void destroy() {
    gdap_array_destroy(array_);
    array_ = nullptr;
  }

  // Every byte the section spans, and putting such a copy back.
  std::vector<unsigned char> image() const { return {lo_, lo_ + span_}; }
  void restore(const std::vector<unsigned char>& image) {
    if (!image.empty()) std::memcpy(lo_, image.data(), image.size());
  }
  // Where an element's bytes sit in an image.
  size_t at(const unsigned char* element) const { return static_cast<size_t>(element - lo_); }

 private:
  // Reads back the layout of an array gdap allocated (compact C order).
  std::string adopt_created() {
    void* data = nullptr;
    int64_t ndim = 0;
    gdap_array_ndim(&ndim, array_);
    shape_.resize(static_cast<size_t>(ndim));
    strides_.resize(static_cast<size_t>(ndim));
    gdap_array_data(&data, array_);
    gdap_array_shape(shape_.data(), array_);
    gdap_array_strides(strides_.data(), array_);
    origin_ = static_cast<unsigned char*>(data);
    lo_ = origin_ + measure() * es_;
    return "";
  }

  // Sets span_ to the bytes from the lowest to the highest element; returns the lowest element's
  // offset from element 0 (negative with negative strides).
  int64_t measure() {
    int64_t low = 0, high = 0, count = 1;
    for (size_t i = 0; i < shape_.size(); ++i) {
      count *= shape_[i];
      const int64_t reach = std::max<int64_t>(shape_[i] - 1, 0) * strides_[i];
      (reach < 0 ? low : high) += reach;
    }
    span_ = count == 0 ? 0 : (high - low + 1) * es_;
    return low;
  }

  std::string import_readonly(const Dtype& dt, const std::vector<gdap_dim>& dims) {
    auto* holder = new ReadOnlyTensor;
    holder->shape = shape_;
    holder->strides = strides_;
    DLManagedTensorVersioned& t = holder->tensor;
    t.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    t.manager_ctx = holder;
    t.deleter = &ReadOnlyTensor::release;
    t.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    t.dl_tensor.data = origin_;
    t.dl_tensor.device = {kDLCPU, 0};
    t.dl_tensor.ndim = static_cast<int32_t>(shape_.size());
    t.dl_tensor.dtype = {dt.type.code, dt.type.bits, dt.type.lanes};
    t.dl_tensor.shape = holder->shape.data();
    t.dl_tensor.strides = holder->strides.data();
    if (gdap_array_from_dlpack(&array_, &t, dims.data(), static_cast<int64_t>(dims.size()), nullptr) != GDAP_SUCCESS) {
      const std::string error = gdap_last_error();
      t.deleter(&t);  // refused: still ours
      return cat("gdap_array_from_dlpack: ", error);
    }
    return "";
  }

  std::vector<unsigned char> memory_;  // wrapped sections: the caller's memory (outlives array_)
  gdap_array* array_ = nullptr;
  std::vector<int64_t> shape_, strides_;
  int64_t es_ = 1, span_ = 0;
  unsigned char *origin_ = nullptr, *lo_ = nullptr;
};

// The oracle: the linear global index a rank's local element holds, or nullopt for padding and
// halo cells, from the dictionaries alone (move_layouts.hpp's owned_globals).
class Oracle {
 public:
  Oracle(const Layout& layout, int64_t rank) {
    for (int64_t i = 0; i < layout.ndim(); ++i) {
      const gdap_dim& d = layout.dim(rank, i);
      per_dim_.push_back(mt::owned_globals(d));
      sizes_.push_back(d.size);
    }
  }
  std::optional<int64_t> linear(const std::vector<int64_t>& local) const {
    int64_t linear = 0;
    for (size_t i = 0; i < local.size(); ++i) {
      const auto& g = per_dim_[i][static_cast<size_t>(local[i])];
      if (!g) return std::nullopt;
      linear = linear * sizes_[i] + *g;
    }
    return linear;
  }

 private:
  std::vector<std::vector<std::optional<int64_t>>> per_dim_;
  std::vector<int64_t> sizes_;
};

// Owned elements get their value (or `other` when `owned_values` is false), the rest `other`.
inline void paint(Section& s, const Dtype& dt, const Oracle& oracle, bool owned_values, int64_t other) {
  s.for_each([&](const std::vector<int64_t>& local, unsigned char* element) {
    const auto linear = oracle.linear(local);
    store(dt, owned_values && linear ? value_of(dt, *linear) : other, element);
  });
}

// Makes rank `rank`'s section of `layout` and paints it; false (reported) if it cannot be made.
inline bool make_painted(Section& s, Storage storage, const Dtype& dt, const Layout& layout, int64_t rank,
                         bool owned_values, int64_t other, const std::string& what, Report& report,
                         bool readonly = false) {
  const std::string error = s.make(storage, dt, rank_dims(layout, rank), readonly);
  if (!error.empty()) {
    report.fail(cat(what, ": ", error));
    return false;
  }
  paint(s, dt, Oracle(layout, rank), owned_values, other);
  return true;
}

// Compares a section with the image it must have, element by element and then byte by byte.
inline void expect_image(const Section& s, const std::vector<unsigned char>& want, const Dtype& dt,
                         const std::string& what, Report& report) {
  int64_t wrong = 0;
  s.for_each([&](const std::vector<int64_t>& local, const unsigned char* element) {
    ++report.elements;
    const unsigned char* expected = want.data() + s.at(element);
    if (std::memcmp(element, expected, static_cast<size_t>(dt.bytes)) == 0) return;
    if (++wrong <= 3) {
      report.fail(
          cat(what, ": local ", tuple_text(local), " holds ", show(dt, element), ", want ", show(dt, expected)));
    }
  });
  if (wrong > 3) report.fail(cat(what, ": ", wrong, " wrong elements in all"));
  if (wrong == 0 && s.image() != want) report.fail(cat(what, ": a byte between strided elements was written"));
}

// ---- maps ----

struct MapHandle {
  gdap_map* map = nullptr;
  MapHandle() = default;
  MapHandle(const MapHandle&) = delete;
  MapHandle& operator=(const MapHandle&) = delete;
  ~MapHandle() { gdap_map_destroy(map); }
};

struct PlanHandle {
  gdap_plan* plan = nullptr;
  PlanHandle() = default;
  PlanHandle(const PlanHandle&) = delete;
  PlanHandle& operator=(const PlanHandle&) = delete;
  ~PlanHandle() { gdap_plan_destroy(plan); }
};

inline bool same_dim(const gdap_dim& x, const gdap_dim& y) {
  const bool same_keys = x.dist_type == y.dist_type && x.given == y.given && x.size == y.size &&
                         x.proc_grid_size == y.proc_grid_size && x.proc_grid_rank == y.proc_grid_rank &&
                         x.start == y.start && x.stop == y.stop && x.padding[0] == y.padding[0] &&
                         x.padding[1] == y.padding[1] && x.periodic == y.periodic && x.block_size == y.block_size &&
                         x.one_to_one == y.one_to_one && x.num_indices == y.num_indices;
  return same_keys && std::equal(x.indices, x.indices + x.num_indices, y.indices);
}

// "" if two maps describe the same distribution, else the first difference.
inline std::string compare_maps(const gdap_map* got, const gdap_map* want) {
  int64_t nranks[2] = {}, ndim[2] = {};
  gdap_map_nranks(&nranks[0], got);
  gdap_map_nranks(&nranks[1], want);
  gdap_map_ndim(&ndim[0], got);
  gdap_map_ndim(&ndim[1], want);
  if (nranks[0] != nranks[1] || ndim[0] != ndim[1]) {
    return cat(nranks[0], " ranks, ", ndim[0], " dimensions; want ", nranks[1], " and ", ndim[1]);
  }
  for (int64_t r = 0; r < nranks[0]; ++r) {
    for (int64_t i = 0; i < ndim[0]; ++i) {
      gdap_dim x = GDAP_DIM_INIT, y = GDAP_DIM_INIT;
      gdap_map_dim(&x, got, r, i);
      gdap_map_dim(&y, want, r, i);
      if (!same_dim(x, y)) return cat("rank ", r, ", dimension ", i, " differs");
    }
  }
  return "";
}

// One side's map: built collectively by the ranks it spans (`comm`; NULL on the ranks outside
// it, which build it from every rank's dictionaries as an outside observer would) and checked
// against gdap_map_create. NULL map if anything failed (reported).
inline void build_map(MapHandle& out, const Layout& layout, int64_t rank, gdap_comm* comm, const std::string& what,
                      Report& report) {
  const std::vector<gdap_dim> all = layout.all_dims();
  MapHandle reference;
  if (gdap_map_create(&reference.map, layout.nranks(), layout.ndim(), all.data()) != GDAP_SUCCESS) {
    report.fail(cat(what, ": gdap_map_create: ", gdap_last_error()));
    return;
  }
  if (comm == nullptr) {
    std::swap(out.map, reference.map);
    return;
  }
  const std::vector<gdap_dim> mine = rank_dims(layout, rank);
  if (gdap_map_create_collective(&out.map, comm, layout.ndim(), mine.data()) != GDAP_SUCCESS) {
    report.fail(cat(what, ": gdap_map_create_collective: ", gdap_last_error()));
    return;
  }
  const std::string difference = compare_maps(out.map, reference.map);
  if (!difference.empty()) report.fail(cat(what, ": the collective map differs from gdap_map_create's: ", difference));
}

// ---- one case on one rank ----

// The communicators of one rank: the whole group, and the groups of the ranks each map spans
// (the whole group again when a map spans it, NULL on ranks outside a smaller map).
struct RankComms {
  gdap_comm* all = nullptr;
  gdap_comm* src = nullptr;
  gdap_comm* dst = nullptr;
};

// The plan's counts agree with the destination map: what arrives and what is kept is exactly what
// the rank owns there.
inline void check_stats(const gdap_plan* plan, const gdap_map* dst, int64_t rank, int64_t nranks, const Dtype& dt,
                        const std::string& what, Report& report) {
  gdap_plan_stats s{};
  s.struct_size = sizeof s;
  if (gdap_plan_stats_get(&s, plan) != GDAP_SUCCESS) {
    return report.fail(cat(what, ": gdap_plan_stats_get: ", gdap_last_error()));
  }
  int64_t dst_ranks = 0, owned = 0;
  gdap_map_nranks(&dst_ranks, dst);
  if (rank < dst_ranks) gdap_map_owned_count(&owned, dst, rank);
  if (s.rank != rank || s.nranks != nranks || s.recv_bytes + s.local_bytes != owned * dt.bytes) {
    report.fail(cat(what, ": plan stats: rank ", s.rank, ", ", s.nranks, " ranks, ", s.recv_bytes, " + ", s.local_bytes,
                    " bytes arrive; want rank ", rank, ", ", nranks, " ranks, ", owned * dt.bytes, " bytes"));
  }
}

// Plans and runs one redistribution of `dt` twice with the same plan (the second time reusing
// whatever the executor kept), checking every destination element and the unchanged source each
// time. A failed gdap_redistribute is agreed by all ranks, so every rank makes both calls.
inline void move_and_check(const Case& c, int64_t rank, const RankComms& comms, const Dtype& dt, Storage src_storage,
                           Storage dst_storage, Report& report) {
  const std::string what = cat(c.name, ", rank ", rank, ", ", dt.name, ", ", storage_name(src_storage), " -> ",
                               storage_name(dst_storage));
  int64_t nranks = 0;
  gdap_comm_size(&nranks, comms.all);
  PlanHandle plan;
  {
    // The maps die before the plan runs: the plan must keep what it needs.
    MapHandle src_map, dst_map;
    build_map(src_map, c.src, rank, comms.src, what + ", source map", report);
    build_map(dst_map, c.dst, rank, comms.dst, what + ", destination map", report);
    if (src_map.map && dst_map.map) {
      if (gdap_plan_create(&plan.plan, src_map.map, dst_map.map, dt.type, rank) != GDAP_SUCCESS) {
        report.fail(cat(what, ": gdap_plan_create: ", gdap_last_error()));
      } else {
        check_stats(plan.plan, dst_map.map, rank, nranks, dt, what, report);
      }
    }
  }
  const bool has_src = rank < c.src.nranks(), has_dst = rank < c.dst.nranks();
  Section src, dst;
  std::vector<unsigned char> src_image, dst_before, dst_after;
  if (has_src && make_painted(src, src_storage, dt, c.src, rank, true, kPoison, what + ", source", report)) {
    src_image = src.image();
  }
  if (has_dst && make_painted(dst, dst_storage, dt, c.dst, rank, true, kSentinel, what + ", destination", report)) {
    dst_after = dst.image();
    paint(dst, dt, Oracle(c.dst, rank), false, kSentinel);
    dst_before = dst.image();
  }
  for (int pass = 1; pass <= 2; ++pass) {
    dst.restore(dst_before);
    // Ranks outside a map pass NULL for that side: they hold nothing there.
    if (gdap_redistribute(comms.all, plan.plan, src.array(), dst.array()) != GDAP_SUCCESS) {
      report.fail(cat(what, ", call ", pass, ": gdap_redistribute: ", gdap_last_error()));
      continue;
    }
    ++report.moves;
    if (has_dst) expect_image(dst, dst_after, dt, cat(what, ", call ", pass, ", destination"), report);
    if (has_src) expect_image(src, src_image, dt, cat(what, ", call ", pass, ", source changed"), report);
  }
}

// The storages of the source and destination of case `index`, dtype `d`: rotated so that the
// table as a whole meets every pair of storages (the same one on both sides included).
inline std::pair<Storage, Storage> storages(size_t index, size_t d) {
  const size_t n = kStorages.size(), src = (index + d) % n;
  return {kStorages[src], kStorages[(src + d + index / n) % n]};
}

// One rank's part of a whole case: every dtype, each with its own pair of storages.
// With `src_storage`, this rank's sources are made so instead, every dtype (the MPI cma exchange's
// sections in shared memory).
inline void run_case(const Case& c, size_t index, int64_t rank, const RankComms& comms, Report& report,
                     std::optional<Storage> src_storage = std::nullopt) {
  const auto& all = dtypes();
  for (size_t d = 0; d < all.size(); ++d) {
    const auto [src, dst] = storages(index, d);
    move_and_check(c, rank, comms, all[d], src_storage.value_or(src), dst, report);
  }
}

// ---- refusals ----

// How one rank spoils an otherwise valid call.
// other_redistribution: the rank's plan and sections are fine on their own, but its plan moves
// another redistribution (source to source) than the others'.
enum class Spoil { src_dtype, dst_dtype, wrong_shape, readonly_dst, null_dst, other_ranks_plan, other_redistribution };
constexpr std::array kSpoils = {Spoil::src_dtype,    Spoil::dst_dtype, Spoil::wrong_shape,         Spoil::readonly_dst,
                                Spoil::null_dst,     Spoil::other_ranks_plan, Spoil::other_redistribution};

inline const char* spoil_name(Spoil s) {
  switch (s) {
    case Spoil::src_dtype: return "source_dtype";
    case Spoil::dst_dtype: return "destination_dtype";
    case Spoil::wrong_shape: return "wrong_local_shape";
    case Spoil::readonly_dst: return "readonly_destination";
    case Spoil::null_dst: return "null_destination";
    case Spoil::other_ranks_plan: return "another_ranks_plan";
    case Spoil::other_redistribution: return "another_redistributions_plan";
  }
  return "?";
}

// What the spoiling rank's own error must say.
inline const char* spoil_text(Spoil s) {
  switch (s) {
    case Spoil::src_dtype: return "src has dtype int32 but the plan was made for float64";
    case Spoil::dst_dtype: return "dst has dtype int32 but the plan was made for float64";
    case Spoil::wrong_shape: return "local shape";
    case Spoil::readonly_dst: return "read-only";
    case Spoil::null_dst: return "dst is NULL";
    case Spoil::other_ranks_plan: return "the plan is rank";
    case Spoil::other_redistribution: return "plans are of different redistributions";
  }
  return "?";
}

// Rank `bad` spoils the call; every rank must fail (`bad` with GDAP_ERR_INVALID_ARGUMENT and its
// own text, the others with GDAP_ERR_REMOTE naming it; for other_redistribution, which no rank
// can see alone, every rank with GDAP_ERR_INVALID_ARGUMENT naming it) and no destination may change.
inline void run_refused(gdap_comm* comm, int64_t rank, int64_t nranks, Spoil spoil, int64_t bad, Report& report) {
  const std::string what = cat(spoil_name(spoil), " on rank ", bad, ", seen by rank ", rank);
  const Layout src_layout{{mt::padded(23, balanced(23, nranks), 1, true)}}, dst_layout{{mt::cyclic(23, nranks, 2)}};
  const Dtype& f64 = dtypes()[0];
  const bool spoiled = rank == bad;
  MapHandle src_map, dst_map;
  PlanHandle plan;
  build_map(src_map, src_layout, rank, comm, what, report);
  build_map(dst_map, dst_layout, rank, comm, what, report);
  const int64_t plan_rank = spoiled && spoil == Spoil::other_ranks_plan ? (rank + 1) % nranks : rank;
  const bool elsewhere = spoiled && spoil == Spoil::other_redistribution;
  if (gdap_plan_create(&plan.plan, src_map.map, elsewhere ? src_map.map : dst_map.map, f64.type, plan_rank) !=
      GDAP_SUCCESS) {
    report.fail(cat(what, ": gdap_plan_create: ", gdap_last_error()));
  }
  Section src, dst;
  const Dtype& int32 = dtypes()[1];
  const Dtype& src_dt = spoiled && spoil == Spoil::src_dtype ? int32 : f64;
  make_painted(src, Storage::created, src_dt, src_layout, rank, true, kPoison, what + ", source", report);
  const Dtype& dst_dt = spoiled && spoil == Spoil::dst_dtype ? int32 : f64;
  const Layout other{{mt::block(23 * 3, nranks)}};  // a larger array: another local extent
  const Layout& dst_dims = spoiled && spoil == Spoil::wrong_shape ? other : elsewhere ? src_layout : dst_layout;
  make_painted(dst, Storage::c_order, dst_dt, dst_dims, rank, false, kSentinel, what + ", destination", report,
               spoiled && spoil == Spoil::readonly_dst);
  const std::vector<unsigned char> src_before = src.image(), before = dst.image();
  gdap_array* dst_array = spoiled && spoil == Spoil::null_dst ? nullptr : dst.array();
  const gdap_status status = gdap_redistribute(comm, plan.plan, src.array(), dst_array);
  const std::string text = gdap_last_error();
  const gdap_status want =
      spoiled || spoil == Spoil::other_redistribution ? GDAP_ERR_INVALID_ARGUMENT : GDAP_ERR_REMOTE;
  if (status != want) {
    report.fail(cat(what, ": got ", gdap_status_string(status), " (", text, "), want ", gdap_status_string(want)));
  }
  if (!contains(text, spoil_text(spoil)) || (!spoiled && !contains(text, cat("rank ", bad)))) {
    report.fail(cat(what, ": the error does not say what and who: ", text));
  }
  expect_image(dst, before, dst_dt, what + ": the destination changed", report);
  expect_image(src, src_before, src_dt, what + ": the source changed", report);
}

// A global view no rank may accept: rank `bad`'s block overlaps its left neighbour's, or `bad`
// has one dimension more than the others. Every rank must get GDAP_ERR_PROTOCOL and the same text
// naming `bad`, and `*out` must stay untouched. Returns the text, for the caller to compare
// across ranks.
inline std::string run_bad_view(gdap_comm* comm, int64_t rank, int64_t nranks, bool overlap, int64_t bad,
                                Report& report) {
  const std::string what = cat(overlap ? "overlapping blocks" : "dimension counts differ", " on rank ", bad,
                               ", seen by rank ", rank);
  const Layout layout{{mt::block(23, nranks), mt::block(4, 1)}};
  std::vector<gdap_dim> dims = rank_dims(layout, rank);
  if (rank == bad && overlap) --dims[0].start;
  const int64_t ndim = rank == bad && !overlap ? 2 : 1;
  gdap_map* const untouched = reinterpret_cast<gdap_map*>(&report);
  gdap_map* out = untouched;
  const gdap_status status = gdap_map_create_collective(&out, comm, ndim, dims.data());
  const std::string text = gdap_last_error();
  if (status != GDAP_ERR_PROTOCOL) report.fail(cat(what, ": got ", gdap_status_string(status), " (", text, ")"));
  const std::string names = overlap ? cat("rank ", bad, ", dimension 0") : cat("rank ", bad, " has 2 dimensions");
  if (!contains(text, names)) report.fail(cat(what, ": the error does not name '", names, "': ", text));
  if (out != untouched) {
    report.fail(what + ": *out was written");
    if (status == GDAP_SUCCESS) gdap_map_destroy(out);
  }
  return text;
}

// Rank `bad` passes arguments it cannot even send (ndim -1): it gets its own
// GDAP_ERR_INVALID_ARGUMENT, the others GDAP_ERR_REMOTE naming it.
inline void run_unusable_view(gdap_comm* comm, int64_t rank, int64_t nranks, int64_t bad, Report& report) {
  const std::string what = cat("ndim -1 on rank ", bad, ", seen by rank ", rank);
  const std::vector<gdap_dim> dims = rank_dims(Layout{{mt::block(23, nranks)}}, rank);
  gdap_map* out = nullptr;
  const gdap_status status = gdap_map_create_collective(&out, comm, rank == bad ? -1 : 1, dims.data());
  const std::string text = gdap_last_error();
  const gdap_status want = rank == bad ? GDAP_ERR_INVALID_ARGUMENT : GDAP_ERR_REMOTE;
  if (status != want) report.fail(cat(what, ": got ", gdap_status_string(status), " (", text, ")"));
  if (!contains(text, "ndim") || (rank != bad && !contains(text, cat("rank ", bad)))) {
    report.fail(cat(what, ": the error does not say what and who: ", text));
  }
  if (out != nullptr) report.fail(what + ": *out was written");
  if (status == GDAP_SUCCESS) gdap_map_destroy(out);
}

}  // namespace redist_test
