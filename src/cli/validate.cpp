// gdap validate FILE [--json]: checks one rank's dim_data (per process) or every rank's (per process,
// then collectively through gdap_map_create) and prints what each rank owns, per dimension and in all.
#include "cli/commands.hpp"
#include "cli/input.hpp"
#include "cli/report.hpp"
#include "core/checked.hpp"

#include <fmt/format.h>

namespace gdap::cli {
namespace {

using nlohmann::json;

// One rank of a larger grid, seen alone: its own counts; the cross-process rules need the others.
RankSummary single_rank(const RankInput& rank) {
  RankSummary s;
  s.owned = 1;
  for (int64_t i = 0; i < rank.dims.ndim(); ++i) {
    int64_t extent = 0, count = 0;
    check(gdap_dim_local_extent(&extent, &rank.dims[i]));
    check(gdap_dim_owned_count(&count, &rank.dims[i]));
    s.grid.push_back(rank.dims[i].proc_grid_rank);
    s.local_shape.push_back(extent);
    s.owned_shape.push_back(count);
    s.owned = checked_mul(s.owned, count, "owned count");
  }
  return s;
}

int print_one_rank(Input& input, bool as_json) {
  check_rank(input.ranks[0], 0);
  resolve_aliases(input);
  const RankSummary s = single_rank(input.ranks[0]);
  if (as_json) {
    fmt::print("{}\n", json{{"valid", true}, {"collective", false}, {"ranks", to_json({s})}}.dump(2));
    return 0;
  }
  fmt::print("valid: one rank's dim_data (grid coordinates {}), checked per process; the rules between ranks "
             "need every rank's dim_data\n{}",
             tuple(s.grid), table({s}));
  return 0;
}

int print_all_ranks(Input& input, bool as_json) {
  const MapPtr map = checked_map(input);
  const auto ranks = summarize(map.get());
  const MapShape shape = map_shape(map.get());
  if (as_json) {
    fmt::print("{}\n", json{{"valid", true},
                            {"collective", true},
                            {"global_shape", shape.global},
                            {"grid_shape", shape.grid},
                            {"ranks", to_json(ranks)}}
                           .dump(2));
    return 0;
  }
  int64_t total = 0;
  for (const auto& s : ranks) total = checked_add(total, s.owned, "owned in all");
  fmt::print("valid: {} rank{}, checked per process and collectively; global shape {}, process grid {}\n{}"
             "owned in all: {}\n",
             ranks.size(), ranks.size() == 1 ? "" : "s", tuple(shape.global), tuple(shape.grid, " x "), table(ranks),
             total);
  return 0;
}

}  // namespace

int validate(const std::string& path, bool as_json) {
  auto on_invalid = [&](const std::string& message) {
    if (as_json) fmt::print("{}\n", json{{"valid", false}, {"error", message}}.dump(2));
  };
  return run_command(
      "validate",
      [&] {
        Input input = read_input(path);
        return whole_grid(input) ? print_all_ranks(input, as_json) : print_one_rank(input, as_json);
      },
      on_invalid);
}

}  // namespace gdap::cli
