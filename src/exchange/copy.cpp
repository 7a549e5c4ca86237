// Copies between sections and packed buffers (see copy.hpp).
#include "exchange/copy.hpp"

#include "core/error.hpp"
#include "core/setting.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace gdap::exchange {

namespace {

struct Dim {
  int64_t extent, src_stride, dst_stride;  // strides in elements
};

// The box's dimensions with extent-1 ones dropped and contiguous neighbours fused.
std::vector<Dim> merged(std::span<const int64_t> extent, std::span<const int64_t> ss, std::span<const int64_t> ds) {
  std::vector<Dim> dims;
  for (size_t i = 0; i < extent.size(); ++i) {
    if (extent[i] == 1) continue;
    const Dim d{extent[i], ss[i], ds[i]};
    if (!dims.empty()) {
      Dim& outer = dims.back();
      if (outer.src_stride == d.src_stride * d.extent && outer.dst_stride == d.dst_stride * d.extent) {
        outer = Dim{outer.extent * d.extent, d.src_stride, d.dst_stride};
        continue;
      }
    }
    dims.push_back(d);
  }
  return dims;
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

}  // namespace

// Appends `c` to `out`, folding it into the last copy when the two are one: a row that continues
// the last single row on both sides lengthens it, and a row one pitch after the last copy's rows on
// both sides adds a row to it. A message of consecutive blocks then becomes one run (sent without
// packing) or one strided copy, not one copy per block.
void append_merged(std::vector<Copy2D>& out, const Copy2D& c) {
  if (!out.empty() && c.rows == 1) {
    Copy2D& last = out.back();
    if (last.rows == 1 && c.src == last.src + last.row_bytes && c.dst == last.dst + last.row_bytes) {
      last.row_bytes += c.row_bytes;
      last.src_pitch = last.dst_pitch = last.row_bytes;
      return;
    }
    if (last.row_bytes == c.row_bytes) {
      const int64_t src_pitch = last.rows == 1 ? c.src - last.src : last.src_pitch;
      const int64_t dst_pitch = last.rows == 1 ? c.dst - last.dst : last.dst_pitch;
      if (c.src == last.src + last.rows * src_pitch && c.dst == last.dst + last.rows * dst_pitch) {
        last.src_pitch = src_pitch;
        last.dst_pitch = dst_pitch;
        ++last.rows;
        return;
      }
    }
  }
  out.push_back(c);
}

void box_copies(std::span<const int64_t> extent, int64_t src, std::span<const int64_t> src_strides, int64_t dst,
                std::span<const int64_t> dst_strides, int64_t element_size, std::vector<Copy2D>& out) {
  for (int64_t e : extent) {
    if (e == 0) return;
  }
  std::vector<Dim> dims = merged(extent, src_strides, dst_strides);
  const int64_t es = element_size;
  // The row: the innermost dimension if contiguous on both sides, else a single element.
  int64_t row_bytes = es;
  if (!dims.empty() && dims.back().src_stride == 1 && dims.back().dst_stride == 1) {
    row_bytes = dims.back().extent * es;
    dims.pop_back();
  }
  Copy2D c{src * es, dst * es, 1, row_bytes, row_bytes, row_bytes};
  if (!dims.empty()) {
    c.rows = dims.back().extent;
    c.src_pitch = dims.back().src_stride * es;
    c.dst_pitch = dims.back().dst_stride * es;
    dims.pop_back();
  }
  // One copy per index of the remaining outer dimensions, in C order.
  std::vector<int64_t> index(dims.size(), 0);
  for (;;) {
    Copy2D at = c;
    for (size_t i = 0; i < dims.size(); ++i) {
      at.src += index[i] * dims[i].src_stride * es;
      at.dst += index[i] * dims[i].dst_stride * es;
    }
    out.push_back(at);
    size_t i = dims.size();
    while (i > 0 && index[i - 1] + 1 == dims[i - 1].extent) index[--i] = 0;
    if (i == 0) return;
    ++index[i - 1];
  }
}

void clip_packed(std::span<const Copy2D> copies, bool packed_source, int64_t lo, int64_t hi, std::vector<Copy2D>& out) {
  for (const Copy2D& c : copies) {
    if (c.rows <= 0 || c.row_bytes <= 0) continue;
    const int64_t base = packed_source ? c.src : c.dst;
    const int64_t pitch = c.rows > 1 ? (packed_source ? c.src_pitch : c.dst_pitch) : c.row_bytes;
    // Row i spans [base + i * pitch, + row_bytes): rows [i, end) are the ones that meet [lo, hi).
    int64_t i = std::max<int64_t>(0, floor_div(lo - base - c.row_bytes, pitch) + 1);
    int64_t end = std::min<int64_t>(c.rows, floor_div(hi - base - 1, pitch) + 1);
    auto part = [&](int64_t row, int64_t rows, int64_t from, int64_t to) {  // bytes [from, to) of each row
      const int64_t sp = rows > 1 ? c.src_pitch : to - from, dp = rows > 1 ? c.dst_pitch : to - from;
      out.push_back({c.src + row * c.src_pitch + from, c.dst + row * c.dst_pitch + from, rows, to - from, sp, dp});
    };
    if (i >= end) continue;
    if (const int64_t start = base + i * pitch; start < lo) {  // the first row, cut by lo (and maybe hi)
      part(i, 1, lo - start, std::min(c.row_bytes, hi - start));
      ++i;
    }
    const int64_t tail = end > i && base + (end - 1) * pitch + c.row_bytes > hi ? --end : -1;  // cut by hi
    if (i < end) part(i, end - i, 0, c.row_bytes);
    if (tail >= 0) part(tail, 1, 0, hi - (base + tail * pitch));
  }
}

void append_device_copies(std::vector<cuda::DeviceCopy>& out, std::span<const Copy2D> copies, const char* src, char* dst,
                          bool remote) {
  for (const Copy2D& c : copies) {
    out.push_back({src + c.src, dst + c.dst, c.rows, c.row_bytes, c.src_pitch, c.dst_pitch, remote});
  }
}

PeerOrder peer_order() {
  constexpr PeerOrder orders[] = {PeerOrder::interleave, PeerOrder::next, PeerOrder::increasing};
  return orders[choice_setting("GDAP_PEER_ORDER", {"interleave", "next", "increasing"}).value_or(0)];
}

namespace {

// `c` cut into pieces of about `piece` bytes, appended to `out`.
void cut(const cuda::DeviceCopy& c, int64_t piece, std::vector<cuda::DeviceCopy>& out) {
  if (c.row_bytes >= piece) {
    const int64_t slice = std::max<int64_t>(16, piece / 16 * 16);
    for (int64_t r = 0; r < c.rows; ++r) {
      for (int64_t at = 0; at < c.row_bytes; at += slice) {
        out.push_back({c.src + r * c.src_pitch + at, c.dst + r * c.dst_pitch + at, 1, std::min(slice, c.row_bytes - at),
                       c.src_pitch, c.dst_pitch, c.remote});
      }
    }
    return;
  }
  const int64_t rows = std::max<int64_t>(1, piece / std::max<int64_t>(c.row_bytes, 1));
  for (int64_t r = 0; r < c.rows; r += rows) {
    out.push_back({c.src + r * c.src_pitch, c.dst + r * c.dst_pitch, std::min(rows, c.rows - r), c.row_bytes, c.src_pitch,
                   c.dst_pitch, c.remote});
  }
}

}  // namespace

std::vector<cuda::DeviceCopy> order_device_copies(std::vector<std::vector<cuda::DeviceCopy>> per_peer, int64_t piece) {
  std::vector<cuda::DeviceCopy> out;
  if (peer_order() != PeerOrder::interleave) {
    for (const auto& copies : per_peer) out.insert(out.end(), copies.begin(), copies.end());
    return out;
  }
  for (auto& copies : per_peer) {
    std::vector<cuda::DeviceCopy> pieces;
    for (const cuda::DeviceCopy& c : copies) cut(c, piece, pieces);
    copies = std::move(pieces);
  }
  for (size_t k = 0;; ++k) {
    bool any = false;
    for (const auto& copies : per_peer) {
      if (k < copies.size()) out.push_back(copies[k]), any = true;
    }
    if (!any) return out;
  }
}

namespace {

// Rows of `Bytes` each: a fixed-size copy the compiler inlines, where a memcpy call per row of a
// strided face's few bytes cost more than the row itself.
template <size_t Bytes>
void copy_rows_of(const Copy2D& c, const char* s, char* d) {
  for (int64_t r = 0; r < c.rows; ++r) std::memcpy(d + r * c.dst_pitch, s + r * c.src_pitch, Bytes);
}

void copy_rows(const Copy2D& c, const char* s, char* d) {
  switch (c.row_bytes) {
    case 4: return copy_rows_of<4>(c, s, d);
    case 8: return copy_rows_of<8>(c, s, d);
    case 16: return copy_rows_of<16>(c, s, d);
    case 32: return copy_rows_of<32>(c, s, d);
    case 64: return copy_rows_of<64>(c, s, d);
    default:
      for (int64_t r = 0; r < c.rows; ++r) {
        std::memcpy(d + r * c.dst_pitch, s + r * c.src_pitch, static_cast<size_t>(c.row_bytes));
      }
  }
}

}  // namespace

void run_host_copies(std::span<const Copy2D> copies, const char* src, char* dst) {
  for (const Copy2D& c : copies) {
    const char* s = src + c.src;
    char* d = dst + c.dst;
    if (c.rows > 1 && c.src_pitch == c.row_bytes && c.dst_pitch == c.row_bytes) {
      std::memcpy(d, s, static_cast<size_t>(c.rows * c.row_bytes));
      continue;
    }
    copy_rows(c, s, d);
  }
}

Sweep sweep_of(std::vector<SourcedCopy> copies, SweepAlong along) {
  std::erase_if(copies, [](const SourcedCopy& s) { return s.copy.rows <= 0 || s.copy.row_bytes <= 0; });
  // The side swept row after row: its offset and pitch.
  const bool by_source = along == SweepAlong::source;
  const auto at = [by_source](const Copy2D& c) { return by_source ? c.src : c.dst; };
  const auto pitch = [by_source](const Copy2D& c) { return by_source ? c.src_pitch : c.dst_pitch; };
  std::sort(copies.begin(), copies.end(), [&](const SourcedCopy& a, const SourcedCopy& b) { return at(a.copy) < at(b.copy); });
  Sweep sweep;
  int64_t bytes = 0;
  for (const SourcedCopy& s : copies) bytes += s.copy.rows * s.copy.row_bytes;
  sweep.stream = bytes > kStreamAbove;
  for (size_t first = 0; first < copies.size();) {
    const Copy2D& f = copies[first].copy;
    size_t end = first + 1;
    if (f.rows > 1 && pitch(f) >= f.row_bytes) {
      while (end < copies.size() && copies[end].copy.rows == f.rows && pitch(copies[end].copy) == pitch(f) &&
             at(copies[end].copy) - at(f) < pitch(f)) {
        ++end;
      }
    }
    sweep.band_ends.push_back(end);
    first = end;
  }
  sweep.copies = std::move(copies);
  return sweep;
}

namespace {

// One row of `n` bytes with non-temporal stores from the first 16-byte boundary of `d` on; the bytes
// before it and the last few are copied plainly. Without SSE2, a plain memcpy.
void stream_row(char* d, const char* s, size_t n) {
#ifdef __SSE2__
  const size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
  if (n < head + 64) {
    std::memcpy(d, s, n);
    return;
  }
  std::memcpy(d, s, head);
  d += head, s += head, n -= head;
  for (; n >= 64; n -= 64, d += 64, s += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
  }
  for (; n >= 16; n -= 16, d += 16, s += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
  }
#endif
  std::memcpy(d, s, n);
}

template <bool Stream>
void run_band(std::span<const SourcedCopy> band, std::span<const char* const> sources, char* dst) {
  for (int64_t r = 0; r < band[0].copy.rows; ++r) {
    for (const SourcedCopy& s : band) {
      const Copy2D& c = s.copy;
      char* d = dst + c.dst + r * c.dst_pitch;
      const char* from = sources[static_cast<size_t>(s.source)] + c.src + r * c.src_pitch;
      if constexpr (Stream) stream_row(d, from, static_cast<size_t>(c.row_bytes));
      else std::memcpy(d, from, static_cast<size_t>(c.row_bytes));
    }
  }
}

}  // namespace

void run_sweep(const Sweep& sweep, std::span<const char* const> sources, char* dst) {
  const bool stream = sweep.stream;
  size_t first = 0;
  for (const size_t end : sweep.band_ends) {
    const std::span<const SourcedCopy> band(sweep.copies.data() + first, end - first);
    first = end;
    if (band.size() == 1) {
      run_host_copies({&band[0].copy, 1}, sources[static_cast<size_t>(band[0].source)], dst);
      continue;
    }
    if (stream) run_band<true>(band, sources, dst);
    else run_band<false>(band, sources, dst);
  }
#ifdef __SSE2__
  if (stream) _mm_sfence();  // the streamed stores are ordered before whatever this thread does next
#endif
}

}  // namespace gdap::exchange
