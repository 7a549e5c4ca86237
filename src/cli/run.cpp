// Running a subcommand: a failed C call becomes an exception (check), and run_command turns the
// exceptions into the tool's exit codes and messages (see input.hpp). The demo needs only this, not
// the JSON input.
#include "cli/input.hpp"

#include <fmt/format.h>

#include <exception>
#include <new>

namespace gdap::cli {

void check(gdap_status status) {
  if (status != GDAP_SUCCESS) throw Error(status, gdap_last_error());
}

int run_command(const char* command, const std::function<int()>& body,
                const std::function<void(const std::string&)>& on_invalid) {
  try {
    return body();
  } catch (const Invalid& e) {
    fmt::print(stderr, "invalid: {}\n", e.what());
    if (on_invalid) on_invalid(e.what());
    return 1;
  } catch (const Error& e) {
    fmt::print(stderr, "gdap {}: {}\n", command, e.what());
    return e.status() == GDAP_ERR_IO ? 2 : 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "gdap {}: out of memory\n", command);
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gdap {}: unexpected failure: {}\n", command, e.what());
    return 1;
  }
}

}  // namespace gdap::cli
