// gdap describe FILE [--svg OUT.svg]: every rank's dim_data, checked, then the global and grid
// shapes, each rank's counts, and (1-d, 2-d) a text picture of which rank owns which element; the
// SVG picture (svg.cpp) draws any number of dimensions.
#include "cli/commands.hpp"
#include "cli/input.hpp"
#include "cli/report.hpp"

#include <fmt/format.h>

#include <fstream>

namespace gdap::cli {
namespace {

void write_svg(const gdap_map* map, const std::string& path) {
  const std::string text = svg(map);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw Error(GDAP_ERR_IO, fmt::format("cannot write '{}'", path));
  fmt::print("wrote {}\n", path);
}

std::string axes_note(size_t ndim) {
  if (ndim == 2) return "rows: dimension 0, columns: dimension 1; each character names the owning rank";
  return "dimension 0 from left to right; each character names the owning rank";
}

}  // namespace

int describe(const std::string& path, const std::string& svg_path) {
  return run_command("describe", [&] {
    const MapPtr map = read_whole_map(path, "describe");
    const MapShape shape = map_shape(map.get());
    fmt::print("global shape {}, process grid {} ({} rank{})\n\n{}\n", tuple(shape.global), tuple(shape.grid, " x "),
               shape.nranks, shape.nranks == 1 ? "" : "s", table(summarize(map.get())));
    if (shape.global.size() == 1 || shape.global.size() == 2) {
      fmt::print("owner of each element ({}):\n", axes_note(shape.global.size()));
    }
    fmt::print("{}", picture(map.get()));
    if (!svg_path.empty()) write_svg(map.get(), svg_path);
    return 0;
  });
}

}  // namespace gdap::cli
