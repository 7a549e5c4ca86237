// The owned-run walk of Zarr save and load (see zarr_pieces.hpp).
#include "io/zarr_pieces.hpp"

#include "maps/axis_side.hpp"

#include <algorithm>
#include <cstring>

namespace gdap::io {

std::vector<AxisPieces> pieces_of(const gdap_map& map, int64_t rank, const std::vector<int64_t>& unit, bool source) {
  std::vector<AxisPieces> out(static_cast<size_t>(map.ndim()));
  for (int64_t a = 0; a < map.ndim(); ++a) {
    const auto i = static_cast<size_t>(a);
    const AxisSide side(map.axes[i], source);
    side.for_each_run(map.coord(rank, a), [&](int64_t g, int64_t len, int64_t l) {
      while (len > 0) {
        const int64_t c = g / unit[i], off = g % unit[i], n = std::min(len, unit[i] - off);
        out[i][c].push_back({off, l, n});
        g += n;
        l += n;
        len -= n;
      }
    });
  }
  return out;
}

std::vector<int64_t> c_strides(const std::vector<int64_t>& shape, int64_t itemsize) {
  std::vector<int64_t> s(shape.size());
  int64_t step = itemsize;
  for (size_t a = s.size(); a-- > 0;) {
    s[a] = step;
    step *= shape[a];
  }
  return s;
}

namespace {

// Calls run(byte offset in the unit, byte offset in the section, elements) for every run of the
// unit's pieces that is contiguous on both sides: a whole piece of the last dimension when the
// section's last stride is one element, else one element.
void for_each_run(const UnitPieces& pieces, const std::vector<int64_t>& unit_strides, const HostView& view, int64_t itemsize,
                  const std::function<void(int64_t, int64_t, int64_t)>& run) {
  const size_t nd = pieces.size();
  std::function<void(size_t, int64_t, int64_t)> walk = [&](size_t a, int64_t c_off, int64_t l_off) {
    if (a == nd) {
      run(c_off, l_off, 1);
      return;
    }
    const bool last = a + 1 == nd;
    for (const Piece& p : *pieces[a]) {
      if (last && view.strides[a] == itemsize) {
        run(c_off + p.in_chunk * itemsize, l_off + p.local * itemsize, p.length);
        continue;
      }
      for (int64_t j = 0; j < p.length; ++j) {
        walk(a + 1, c_off + (p.in_chunk + j) * unit_strides[a], l_off + (p.local + j) * view.strides[a]);
      }
    }
  };
  walk(0, 0, 0);
}

}  // namespace

void copy_to_unit(const UnitPieces& pieces, const std::vector<int64_t>& unit_strides, const HostView& view, int64_t itemsize,
                  char* unit) {
  for_each_run(pieces, unit_strides, view, itemsize, [&](int64_t c, int64_t l, int64_t n) {
    std::memcpy(unit + c, view.origin + l, static_cast<size_t>(n * itemsize));
  });
}

void copy_from_unit(const UnitPieces& pieces, const std::vector<int64_t>& unit_strides, const HostView& view, int64_t itemsize,
                    const char* unit) {
  for_each_run(pieces, unit_strides, view, itemsize, [&](int64_t c, int64_t l, int64_t n) {
    std::memcpy(view.origin + l, unit + c, static_cast<size_t>(n * itemsize));
  });
}

void fill_pieces(const UnitPieces& pieces, const std::vector<int64_t>& unit_strides, const HostView& view,
                 const std::vector<unsigned char>& fill) {
  const auto item = static_cast<int64_t>(fill.size());
  for_each_run(pieces, unit_strides, view, item, [&](int64_t, int64_t l, int64_t n) {
    for (int64_t k = 0; k < n; ++k) std::memcpy(view.origin + l + k * item, fill.data(), fill.size());
  });
}

namespace {

// Calls f(key per dimension, value per dimension) for every combination of one entry of each map.
template <typename Map, typename F>
void for_each_combination(const std::vector<Map>& axes, F&& f) {
  const size_t nd = axes.size();
  for (const Map& a : axes) {
    if (a.empty()) return;  // nothing owned along a dimension: nothing at all
  }
  std::vector<typename Map::const_iterator> it(nd);
  for (size_t a = 0; a < nd; ++a) it[a] = axes[a].begin();
  std::vector<int64_t> index(nd);
  std::vector<const typename Map::mapped_type*> values(nd);
  for (;;) {
    for (size_t a = 0; a < nd; ++a) {
      index[a] = it[a]->first;
      values[a] = &it[a]->second;
    }
    f(index, values);
    size_t a = nd;
    while (a > 0 && std::next(it[a - 1]) == axes[a - 1].end()) {
      it[a - 1] = axes[a - 1].begin();
      --a;
    }
    if (a == 0) return;
    ++it[a - 1];
  }
}

}  // namespace

void for_each_unit(const std::vector<AxisPieces>& axes,
                   const std::function<void(const std::vector<int64_t>&, const UnitPieces&)>& f) {
  for_each_combination(axes, f);
}

void for_each_group(const std::vector<AxisPieces>& axes, const std::vector<int64_t>& ratio,
                    const std::function<void(const std::vector<int64_t>&, const std::vector<AxisPieces>&)>& f) {
  std::vector<std::map<int64_t, AxisPieces>> groups(axes.size());
  for (size_t a = 0; a < axes.size(); ++a) {
    for (const auto& [unit, pieces] : axes[a]) groups[a][unit / ratio[a]].emplace(unit, pieces);
  }
  std::vector<AxisPieces> units(axes.size());
  for_each_combination(groups, [&](const std::vector<int64_t>& outer, const std::vector<const AxisPieces*>& per_axis) {
    for (size_t a = 0; a < units.size(); ++a) units[a] = *per_axis[a];
    f(outer, units);
  });
}

}  // namespace gdap::io
