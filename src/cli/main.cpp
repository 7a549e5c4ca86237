// The gdap command-line tool: validate and describe distributions, and the demo.
#include "cli/commands.hpp"

#include <gdap/gdap.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  CLI::App app{"gdap: the Distributed Array Protocol for host and GPU arrays"};
  app.set_version_flag("--version", std::string("gdap ") + gdap_version_string() + ", protocol " GDAP_PROTOCOL_VERSION);
  app.require_subcommand(1);

  std::string file;
  bool as_json = false;
  auto* validate = app.add_subcommand("validate", "Check dim_data (one rank's or every rank's) and print owned counts");
  validate->add_option("file", file, "JSON file: a dim_data list, {\"dim_data\": ...}, or {\"ranks\": [...]}")->required();
  validate->add_flag("--json", as_json, "Print the result as JSON");

  std::string svg_path;
  auto* describe = app.add_subcommand("describe", "Show which rank owns which part of the array");
  describe->add_option("file", file, "JSON file with every rank's dim_data")->required();
  describe->add_option("--svg", svg_path, "Also write the ownership picture as SVG to this file");

  gdap::cli::DemoOptions options;
  std::string grid = "2x2";
  auto* demo = app.add_subcommand("demo", "Ranks in one process share a block x block array, zero-copy");
  demo->add_option("--rows", options.rows, "Global rows")->capture_default_str();
  demo->add_option("--cols", options.cols, "Global columns")->capture_default_str();
  demo->add_option("--grid", grid, "Process grid, rows x columns")->capture_default_str();

  CLI11_PARSE(app, argc, argv);
  try {
    if (*validate) return gdap::cli::validate(file, as_json);
    if (*describe) return gdap::cli::describe(file, svg_path);
    if (std::sscanf(grid.c_str(), "%ldx%ld", &options.grid_rows, &options.grid_cols) != 2) {
      std::fprintf(stderr, "gdap demo: --grid must look like 2x2\n");
      return 2;
    }
    return gdap::cli::demo(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gdap: %s\n", e.what());
    return 1;
  }
}
