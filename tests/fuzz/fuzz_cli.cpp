// libFuzzer target: arbitrary bytes as the command-line tool's JSON input (gdap validate FILE):
// the strict parser (NUL bytes, repeated keys, nesting), every input form (one rank, every rank,
// {"ranks": ...}), the per-process checks and, for every rank, the collective map. Any crash, leak
// or sanitizer report is a bug; errors are the expected outcome for most inputs. In memory.
#include "cli/input.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    gdap::cli::Input input = gdap::cli::parse_input(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    if (input.ranks.size() > 64) return 0;
    if (gdap::cli::whole_grid(input)) {
      (void)gdap::cli::checked_map(input);
    } else {
      gdap::cli::check_rank(input.ranks[0], 0);
      gdap::cli::resolve_aliases(input);
    }
  } catch (const gdap::Error&) {
  }
  return 0;
}
