// gdap plan FROM TO [--dtype NAME] [--per-rank] [--keep-roles]: what redistributing an array from one
// distribution to another would move, per rank and in all, as the planner counts it; with
// --keep-roles also what it moves once the destination ranks are relabeled to keep the most in
// place (plan::Planner::keeping_roles). Nothing is moved: the counts come from the per-dimension
// overlaps (plan::Planner::stats), so a plan for thousands of ranks costs milliseconds; a plan
// whose overlaps would list more runs than --max-runs (GDAP_PLAN_MAX_RUNS) is refused before any is
// listed.
#include "cli/commands.hpp"
#include "cli/input.hpp"
#include "cli/report.hpp"
#include "plan/planner.hpp"

#include <fmt/format.h>

#include <array>
#include <string>
#include <utility>

namespace gdap::cli {
namespace {

// Above this many ranks the table shows the totals and the busiest rank unless --per-rank.
constexpr int64_t kMaxRankLines = 16;

// Element types by their NumPy names; only the size matters to the counts.
constexpr std::array<std::pair<const char*, int64_t>, 15> kDtypes{{{"bool", 1},
                                                                   {"int8", 1},
                                                                   {"uint8", 1},
                                                                   {"int16", 2},
                                                                   {"uint16", 2},
                                                                   {"float16", 2},
                                                                   {"bfloat16", 2},
                                                                   {"int32", 4},
                                                                   {"uint32", 4},
                                                                   {"float32", 4},
                                                                   {"int64", 8},
                                                                   {"uint64", 8},
                                                                   {"float64", 8},
                                                                   {"complex64", 8},
                                                                   {"complex128", 16}}};

// The element size of a dtype name; 0 for a name it does not know.
int64_t element_size(const std::string& name) {
  for (const auto& [known, bytes] : kDtypes) {
    if (name == known) return bytes;
  }
  return 0;
}

std::string dtype_names() {
  std::string out;
  for (const auto& entry : kDtypes) out += (out.empty() ? "" : ", ") + std::string(entry.first);
  return out;
}

// The source or destination map; its invalid input is prefixed with the role and the file, since
// two files are read.
MapPtr read_side(const char* role, const std::string& path) {
  try {
    return read_whole_map(path, "plan");
  } catch (const Invalid& e) {
    throw Invalid(e.status(), fmt::format("{} '{}': {}", role, path, e.what()));
  }
}

std::string layout(const gdap_map* map) {
  const MapShape s = map_shape(map);
  return fmt::format("grid {} ({} rank{})", tuple(s.grid, " x "), s.nranks, s.nranks == 1 ? "" : "s");
}

// One line of the table: a label and the eight counts, or the column names.
template <typename... Cells>
std::string line(const Cells&... cells) {
  return fmt::format("{:>6}  {:>9}  {:>9}  {:>12}  {:>12}  {:>12}  {:>9}  {:>9}  {:>10}\n", cells...);
}

std::string row(const std::string& label, const plan::RankStats& s) {
  return line(label, s.send_messages, s.recv_messages, s.send_bytes, s.recv_bytes, s.local_bytes, s.send_runs,
              s.recv_runs, s.local_runs);
}

std::string table(const plan::PlanStats& stats, bool per_rank) {
  std::string out = line("rank", "send msgs", "recv msgs", "send bytes", "recv bytes", "local bytes", "send runs",
                         "recv runs", "local runs");
  if (per_rank) {
    for (size_t r = 0; r < stats.ranks.size(); ++r) out += row(std::to_string(r), stats.ranks[r]);
  }
  return out + row("total", stats.total) + row("max", stats.max);
}

// One sentence on the whole move: what crosses between ranks and what stays on its rank.
std::string summary(const plan::RankStats& total) {
  // Each owned element once; each term fits int64 but their sum may not (2^62 int16 elements), so
  // the share is taken in long double.
  const long double all = static_cast<long double>(total.send_bytes) + static_cast<long double>(total.local_bytes);
  const double kept = all == 0 ? 100.0 : static_cast<double>(100.0L * static_cast<long double>(total.local_bytes) / all);
  return fmt::format("between ranks: {} bytes in {} messages; within ranks: {} bytes ({:.1f}% of the array stays "
                     "on its rank)\n",
                     total.send_bytes, total.send_messages, total.local_bytes, kept);
}

// The planner of the two maps; maps that do not describe the same array are invalid input.
plan::Planner planner(const gdap_map& from, const gdap_map& to, const PlanOptions& options) {
  try {
    return plan::Planner(from, to);
  } catch (const Error& e) {
    throw Invalid(e.status(), fmt::format("cannot redistribute from '{}' to '{}': {}", options.from, options.to,
                                          e.what()));
  }
}

// What relabeling the destination ranks saves: the keeping roles and the bytes that still cross.
std::string roles_summary(const gdap_map& from, const gdap_map& to, const plan::RankStats& plain, int64_t size) {
  const std::vector<int64_t> roles = plan::Planner(from, to).keeping_roles();
  const plan::RankStats relabeled = plan::Planner(from, to, roles).stats(size).total;
  const double saved = plain.send_bytes == 0 ? 0.0
                                             : 100.0 * static_cast<double>(plain.send_bytes - relabeled.send_bytes) /
                                                   static_cast<double>(plain.send_bytes);
  return fmt::format("with the keeping roles (rank r holds destination rank roles[r]'s section; roles = {}): between "
                     "ranks {} bytes in {} messages, {:.1f}% less than without\n",
                     tuple(roles), relabeled.send_bytes, relabeled.send_messages, saved);
}

}  // namespace

int plan(const PlanOptions& options) {
  const int64_t size = element_size(options.dtype);
  if (size == 0) {
    fmt::print(stderr, "gdap plan: unknown --dtype '{}' (one of: {})\n", options.dtype, dtype_names());
    return 2;
  }
  return run_command("plan", [&] {
    // --max-runs goes ahead of GDAP_PLAN_MAX_RUNS, and a refusal names it.
    if (options.max_runs > 0) plan::set_max_plan_runs(options.max_runs, "--max-runs");
    const MapPtr from = read_side("source", options.from);
    const MapPtr to = read_side("destination", options.to);
    const plan::PlanStats stats = planner(*from, *to, options).stats(size);
    const MapShape shape = map_shape(from.get());
    const bool per_rank = options.per_rank || stats.nranks <= kMaxRankLines;
    fmt::print("plan: {} array of shape {} ({} bytes per element), from {} to {}; a group of {} rank{}\n\n",
               options.dtype, tuple(shape.global), size, layout(from.get()), layout(to.get()), stats.nranks,
               stats.nranks == 1 ? "" : "s");
    if (!per_rank) {
      fmt::print("{} ranks: the totals and each count's largest value over the ranks (--per-rank lists them all)\n",
                 stats.nranks);
    }
    fmt::print("{}\n{}", table(stats, per_rank), summary(stats.total));
    if (options.keep_roles) fmt::print("{}", roles_summary(*from, *to, stats.total, size));
    return 0;
  });
}

}  // namespace gdap::cli
