// The gdap command-line tool: validate and describe distributions (JSON dim_data), plan a
// redistribution between two of them, check the library against the conformance vectors, and the demo.
// Exit codes: 0 success, 1 invalid input or a failed check, 2 unreadable input or bad usage.
#include "cli/demo_options.hpp"

#include <gdap/gdap.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  CLI::App app{"gdap: the Distributed Array Protocol (DAP " GDAP_PROTOCOL_VERSION ") for host and GPU arrays"};
  app.set_version_flag("--version", std::string("gdap ") + gdap_version_string() + ", protocol " GDAP_PROTOCOL_VERSION);
  app.require_subcommand(1);

  std::string file;
  bool as_json = false;
  auto* validate = app.add_subcommand("validate", "Check one rank's or every rank's dim_data and print owned counts");
  validate->add_option("file", file, "JSON: a dim_data list, {\"dim_data\": ..., \"shape\": ...}, or every rank's "
                                     "({\"ranks\": [...]} or a list of dim_data lists)")
      ->required();
  validate->add_flag("--json", as_json, "Print the result as JSON");

  std::string svg_path;
  auto* describe = app.add_subcommand("describe", "Show which rank owns which part of the array");
  describe->add_option("file", file, "JSON with every rank's dim_data")->required();
  describe->add_option("--svg", svg_path, "Also write the ownership picture as SVG to this file");

  gdap::cli::PlanOptions plan_options;
  auto* plan = app.add_subcommand("plan", "Count what redistributing an array from one distribution to another moves");
  plan->add_option("from", plan_options.from, "JSON with every rank's dim_data of the source distribution")->required();
  plan->add_option("to", plan_options.to, "JSON with every rank's dim_data of the destination distribution")
      ->required();
  plan->add_option("--dtype", plan_options.dtype, "Element type (NumPy name: float64, int32, complex128, ...)")
      ->capture_default_str();
  plan->add_flag("--per-rank", plan_options.per_rank, "One line per rank even for more than 16 ranks");
  plan->add_flag("--keep-roles", plan_options.keep_roles,
                 "Also count the move with the destination ranks relabeled to keep the most in place");
  plan->add_option("--max-runs", plan_options.max_runs,
                   "Refuse, before allocating, a plan that would list more runs than this (default: "
                   "GDAP_PLAN_MAX_RUNS, else 67108864, about 2.5 GiB)")
      ->check(CLI::PositiveNumber);

  gdap::cli::DemoOptions demo_options;
  auto* demo = app.add_subcommand("demo", "Ranks as threads of one process share a block x block array, zero-copy");
  gdap::cli::add_demo_options(*demo, demo_options);

  gdap::cli::ConformanceOptions conformance_options;
  auto* conformance = app.add_subcommand("conformance", "Check this library against the protocol's conformance vectors");
  conformance->add_option("dir", conformance_options.dir,
                          "Directory of vector files (or one file); default: the installed vectors");
  conformance->add_flag("--json", conformance_options.as_json, "Print the result as JSON");
  conformance->add_option("--rule", conformance_options.rule,
                          "Only vectors exercising a matching rule (shell pattern, or a prefix such as dim.b)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help, the version, or what was wrong
    return rc == 0 ? 0 : 2;
  }
  if (*validate) return gdap::cli::validate(file, as_json);
  if (*describe) return gdap::cli::describe(file, svg_path);
  if (*plan) return gdap::cli::plan(plan_options);
  if (*conformance) return gdap::cli::conformance(conformance_options);
  return gdap::cli::demo(demo_options);
}
