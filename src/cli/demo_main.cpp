// gdap-demo: the demo alone (`gdap demo` without the rest of the tool). It links only the library's
// base objects (descriptors, maps, arrays, communicators, redistribution), so tools/demo.sh's first
// build compiles what the demo runs and nothing else. Exit codes as `gdap demo`.
#include "cli/demo_options.hpp"

#include <gdap/gdap.h>

#include <CLI/CLI.hpp>

#include <string>

int main(int argc, char** argv) {
  CLI::App app{"gdap-demo: ranks as threads of one process share a block x block array, zero-copy "
               "(the same as `gdap demo`)"};
  app.set_version_flag("--version", std::string("gdap ") + gdap_version_string() + ", protocol " GDAP_PROTOCOL_VERSION);
  gdap::cli::DemoOptions options;
  gdap::cli::add_demo_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return gdap::cli::demo(options);
}
