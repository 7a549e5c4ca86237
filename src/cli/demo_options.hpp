// The demo's options, for the tool's `demo` subcommand and for gdap-demo's whole command line.
#pragma once

#include "cli/commands.hpp"

#include <CLI/CLI.hpp>

namespace gdap::cli {

inline void add_demo_options(CLI::App& command, DemoOptions& options) {
  command.add_option("--rows", options.rows, "Global rows")->capture_default_str();
  command.add_option("--cols", options.cols, "Global columns")->capture_default_str();
  command.add_option("--grid", options.grid, "Process grid, ROWSxCOLS")->capture_default_str();
}

}  // namespace gdap::cli
