// Reading and checking the CLI's JSON input: one rank's dim_data, or every rank's. Accepted forms:
//   [ {dim dict}, ... ]                                              one rank's dim_data
//   {"__version__": "0.10.0", "dim_data": [...], "shape": [...]}     one rank, optional keys
//   {"ranks": [ <one-rank form>, ... ]}  or  [ [ ... ], [ ... ] ]    every rank, in rank order
// Checking goes through the public C API only (gdap_protocol_version_check, gdap_dims_validate,
// gdap_map_create), so the tool says exactly what a C caller would be told.
#pragma once

#include "core/error.hpp"
#include "protocol/dim_data.hpp"

#include <gdap/gdap.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gdap::cli {

struct RankInput {
  std::string version = GDAP_PROTOCOL_VERSION;
  DimData dims;
  std::optional<std::vector<int64_t>> shape;  // the buffer's shape, when the file gives it
};

struct Input {
  std::vector<RankInput> ranks;
  bool all_ranks = false;  // the file lists every rank (else: one rank's dim_data)
};

// Input that breaks a rule (exit code 1, "invalid: ..."); other gdap::Error values are trouble
// running the command (GDAP_ERR_IO: exit code 2).
class Invalid : public Error {
 public:
  using Error::Error;
};

using MapPtr = std::unique_ptr<gdap_map, gdap_status (*)(gdap_map*)>;

// The most bytes of JSON the tool reads from one file (a million 'u' indices take about 8 MB).
inline constexpr int64_t kMaxInputBytes = int64_t{1} << 28;  // 256 MiB

// The text of a JSON file (a regular file, a pipe, a FIFO) of at most kMaxInputBytes and without a
// NUL byte; Error(GDAP_ERR_IO) naming the file otherwise.
std::string read_json_text(const std::string& path);

// Throws Error(GDAP_ERR_IO) for an unreadable file, one longer than kMaxInputBytes, or bad JSON (with
// the parser's position; a NUL byte anywhere is bad JSON) and Invalid for JSON that is no dim_data
// (naming the rank and what is wrong). parse_input reads `text` as the contents of file `name`.
Input read_input(const std::string& path);
Input parse_input(std::string_view text, const std::string& name);

// Throws gdap::Error with gdap_last_error() when a C call fails.
void check(gdap_status status);

// Per-process checks of rank `r` (version, dim_data against its shape); throws Invalid "rank r: ...".
void check_rank(const RankInput& rank, size_t r);

// Replaces every {} by what it stands for, from the rank's shape; throws Invalid if it has none.
void resolve_aliases(Input& input);

// True when the input stands for a whole grid: every rank listed, or one rank on a grid of 1.
bool whole_grid(const Input& input);

// Every rank checked per process, aliases resolved, then the global map (the collective check).
MapPtr checked_map(Input& input);

// The global map of every rank's dim_data in `path` (read_input, then checked_map). A file with
// one rank's dim_data of a larger grid is refused: `command` needs every rank's.
MapPtr read_whole_map(const std::string& path, const char* command);

// Runs a subcommand's body and turns what it throws into the exit code: Invalid -> 1 with
// "invalid: ..." on stderr, GDAP_ERR_IO -> 2, any other failure -> 1 with "gdap COMMAND: ...".
// `on_invalid` (may be empty) also sees the message of invalid input (for --json output).
int run_command(const char* command, const std::function<int()>& body,
                const std::function<void(const std::string&)>& on_invalid = {});

}  // namespace gdap::cli
