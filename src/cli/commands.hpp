// The gdap tool's subcommands; each returns the process exit code (0 success, 1 invalid input or a
// failed check, 2 unreadable input or bad options) and never throws.
#pragma once

#include <cstdint>
#include <string>

namespace gdap::cli {

// Checks one rank's or every rank's dim_data; prints owned counts (as JSON with `as_json`).
int validate(const std::string& path, bool as_json);

// As validate for every rank's dim_data, then the ownership picture; `svg_path` non-empty also
// writes it as SVG.
int describe(const std::string& path, const std::string& svg_path);

struct PlanOptions {
  std::string from, to;  // JSON files with every rank's dim_data
  std::string dtype = "float64";
  bool per_rank = false;  // one line per rank even for many ranks
  bool keep_roles = false;  // also what relabeling the destination ranks saves
  int64_t max_runs = 0;  // the most runs the planner may list (0: GDAP_PLAN_MAX_RUNS or its default)
};

// What redistributing an array from one distribution to another moves: messages, bytes and runs
// sent, received and copied within each rank, their totals and maxima. Computes, moves nothing.
int plan(const PlanOptions& options);

struct DemoOptions {
  int64_t rows = 12;
  int64_t cols = 16;
  std::string grid = "2x2";  // the process grid, ROWSxCOLS
};

struct ConformanceOptions {
  std::string dir;   // a directory of vector files, or one file; empty: the installed ones
  std::string rule;                         // only vectors with a rule matching this (glob or prefix)
  bool as_json = false;
};

// Checks the library against the protocol vectors (conformance/README.md): a pass/fail table per
// rule, exit code 1 if any vector fails.
int conformance(const ConformanceOptions& options);

// The README's main job: ranks as threads of one process share a block x block array.
int demo(const DemoOptions& options);

}  // namespace gdap::cli
