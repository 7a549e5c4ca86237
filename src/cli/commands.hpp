// The gdap tool's subcommands; each returns the process exit code.
#pragma once

#include <cstdint>
#include <string>

namespace gdap::cli {

// 0 valid, 1 invalid (message on stderr naming rank, dimension and key), 2 unreadable input.
int validate(const std::string& path, bool as_json);

// As validate, then the ownership picture; `svg_path` non-empty also writes it as SVG.
int describe(const std::string& path, const std::string& svg_path);

struct DemoOptions {
  int64_t rows = 12;
  int64_t cols = 16;
  int64_t grid_rows = 2;
  int64_t grid_cols = 2;
};

// The README's main job: ranks as threads of one process share a block x block array.
int demo(const DemoOptions& options);

}  // namespace gdap::cli
