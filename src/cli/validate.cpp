// gdap validate FILE and gdap describe FILE: check dim_data per rank and, for every rank's
// dictionaries, collectively; print what each rank holds and owns.
#include "cli/commands.hpp"
#include "cli/input.hpp"
#include "cli/report.hpp"
#include "core/error.hpp"

#include <fmt/format.h>

#include <fstream>
#include <memory>

namespace gdap::cli {
namespace {

using MapPtr = std::unique_ptr<gdap_map, gdap_status (*)(gdap_map*)>;

void check_rank(const RankInput& rank, size_t r) {
  auto label = [&](gdap_status s) {
    if (s != GDAP_SUCCESS) throw Error(s, fmt::format("rank {}: {}", r, gdap_last_error()));
  };
  label(gdap_protocol_version_check(rank.version.c_str()));
  if (rank.shape && static_cast<int64_t>(rank.shape->size()) != rank.dims.ndim()) {
    throw Error(GDAP_ERR_PROTOCOL, fmt::format("rank {}: shape has {} entries but dim_data has {} dimensions", r,
                                               rank.shape->size(), rank.dims.ndim()));
  }
  label(gdap_dims_validate(rank.dims.data(), rank.dims.ndim(), rank.shape ? rank.shape->data() : nullptr));
}

// Every rank checked, then the global map (one rank alone stands for a whole grid of 1).
MapPtr checked_map(Input& input) {
  for (size_t r = 0; r < input.ranks.size(); ++r) check_rank(input.ranks[r], r);
  resolve_aliases(input);
  const int64_t ndim = input.ranks[0].dims.ndim();
  for (size_t r = 1; r < input.ranks.size(); ++r) {
    if (input.ranks[r].dims.ndim() != ndim) {
      throw Error(GDAP_ERR_PROTOCOL, fmt::format("rank {} has {} dimensions but rank 0 has {}", r,
                                                 input.ranks[r].dims.ndim(), ndim));
    }
  }
  const std::vector<gdap_dim> all = rank_major(input);
  gdap_map* map = nullptr;
  check(gdap_map_create(&map, static_cast<int64_t>(input.ranks.size()), ndim, all.empty() ? nullptr : all.data()));
  return MapPtr(map, gdap_map_destroy);
}

// One rank's view without the others: its own counts, no collective check.
nlohmann::json single_rank(const RankInput& rank) {
  nlohmann::json out = {{"grid", nlohmann::json::array()}, {"local_shape", nlohmann::json::array()},
                        {"owned_shape", nlohmann::json::array()}};
  int64_t owned = 1;
  for (int64_t i = 0; i < rank.dims.ndim(); ++i) {
    int64_t extent = 0, count = 0;
    check(gdap_dim_local_extent(&extent, &rank.dims[i]));
    check(gdap_dim_owned_count(&count, &rank.dims[i]));
    out["grid"].push_back(rank.dims[i].proc_grid_rank);
    out["local_shape"].push_back(extent);
    out["owned_shape"].push_back(count);
    owned *= count;
  }
  out["owned"] = owned;
  return out;
}

// Runs `body`; exit code 1 for invalid input, 2 for unreadable input.
template <typename Body>
int reporting_errors(const char* command, Body&& body) {
  try {
    return body();
  } catch (const Error& e) {
    if (e.status() == GDAP_ERR_IO) {
      fmt::print(stderr, "gdap {}: {}\n", command, e.what());
      return 2;
    }
    fmt::print(stderr, "invalid: {}\n", e.what());
    return 1;
  }
}

bool whole_grid(const Input& input) {
  if (input.all_ranks) return true;
  for (int64_t i = 0; i < input.ranks[0].dims.ndim(); ++i) {
    if (input.ranks[0].dims[i].proc_grid_size != 1) return false;
  }
  return true;
}

}  // namespace

int validate(const std::string& path, bool as_json) {
  return reporting_errors("validate", [&] {
    Input input = read_input(path);
    if (!whole_grid(input)) {  // one rank of a larger grid: per-process rules only
      check_rank(input.ranks[0], 0);
      resolve_aliases(input);
      const nlohmann::json r = single_rank(input.ranks[0]);
      if (as_json) {
        fmt::print("{}\n", nlohmann::json{{"valid", true}, {"collective", false}, {"ranks", {r}}}.dump(2));
      } else {
        fmt::print("valid: one rank's dim_data (grid coordinates {}), checked per process\n"
                   "local shape {}, owned shape {}, owned {}\n",
                   tuple(r["grid"].get<std::vector<int64_t>>()), tuple(r["local_shape"].get<std::vector<int64_t>>()),
                   tuple(r["owned_shape"].get<std::vector<int64_t>>()), r["owned"].get<int64_t>());
      }
      return 0;
    }
    MapPtr map = checked_map(input);
    const auto ranks = summarize(map.get());
    if (as_json) {
      fmt::print("{}\n", nlohmann::json{{"valid", true}, {"collective", true}, {"ranks", to_json(ranks)}}.dump(2));
      return 0;
    }
    int64_t total = 0;
    for (const auto& s : ranks) total += s.owned;
    fmt::print("valid: {} rank{}, checked per process and collectively\n{}owned in all: {}\n", ranks.size(),
               ranks.size() == 1 ? "" : "s", table(ranks), total);
    return 0;
  });
}

int describe(const std::string& path, const std::string& svg_path) {
  return reporting_errors("describe", [&] {
    Input input = read_input(path);
    if (!whole_grid(input)) {
      throw Error(GDAP_ERR_PROTOCOL, "describe needs every rank's dim_data (use {\"ranks\": [...]})");
    }
    MapPtr map = checked_map(input);
    int64_t ndim = 0;
    check(gdap_map_ndim(&ndim, map.get()));
    std::vector<int64_t> shape(static_cast<size_t>(ndim)), grid(static_cast<size_t>(ndim));
    check(gdap_map_global_shape(shape.data(), map.get()));
    check(gdap_map_grid_shape(grid.data(), map.get()));
    fmt::print("global shape {}, process grid {} ({} ranks)\n{}\nowner of each element:\n{}", tuple(shape),
               tuple(grid, " x "), input.ranks.size(), table(summarize(map.get())), picture(map.get()));
    if (!svg_path.empty()) {
      std::ofstream out(svg_path);
      out << svg(map.get());
      if (!out) throw Error(GDAP_ERR_IO, fmt::format("cannot write '{}'", svg_path));
      fmt::print("wrote {}\n", svg_path);
    }
    return 0;
  });
}

}  // namespace gdap::cli
