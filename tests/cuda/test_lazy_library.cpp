// LazyLibrary (src/cuda/lazy_library.hpp), which loads cuBLAS and NCCL on first use: a library that
// loads gives its functions, one that does not is refused with GDAP_ERR_UNSUPPORTED naming it, the
// reason and the user, every time, and a missing function is nullptr. Each case names its rule.
#include "cuda/lazy_library.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gdap::cuda {
namespace {

TEST(LazyLibrary, ALibraryThatLoadsGivesItsFunctions) {
  LazyLibrary libm("libm.so.6");
  EXPECT_NO_THROW(libm.require("the test"));
  void* cos_address = libm.symbol("cos");
  ASSERT_NE(cos_address, nullptr);
  EXPECT_DOUBLE_EQ(call(cos_address, -1.0, 0.0), 1.0);  // cos(0) through the looked-up address
}

TEST(LazyLibrary, AMissingSonameFallsBackToTheBuildsPath) {
  LazyLibrary libm("libgdap_no_such_library.so.9", "libm.so.6");
  EXPECT_NO_THROW(libm.require("the test"));
  EXPECT_DOUBLE_EQ(call(libm.symbol("cos"), -1.0, 0.0), 1.0);
}

TEST(LazyLibrary, AMissingFunctionIsNullAndItsCallTheFallback) {
  LazyLibrary libm("libm.so.6");
  void* missing = libm.symbol("gdap_no_such_function");
  EXPECT_EQ(missing, nullptr);
  EXPECT_EQ(call(missing, -7, 1, 2), -7);
}

TEST(LazyLibrary, ALibraryThatDoesNotLoadIsRefusedNamingItTheReasonAndTheUser) {
  LazyLibrary none("libgdap_no_such_library.so.9", "/nonexistent/libgdap_no_such_library.so.9");
  for (int attempt = 0; attempt < 2; ++attempt) {  // the same answer every time, not only the first
    try {
      none.require("gdap_comm_from_nccl");
      FAIL() << "a library that does not exist was loaded";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(e.status(), GDAP_ERR_UNSUPPORTED);
      EXPECT_NE(message.find("libgdap_no_such_library.so.9 could not be loaded: "), std::string::npos) << message;
      EXPECT_NE(message.find("cannot open shared object file"), std::string::npos) << message;  // dlerror's reason
      EXPECT_NE(message.find("gdap_comm_from_nccl needs it"), std::string::npos) << message;
      EXPECT_NE(message.find("nor from the build's path (/nonexistent/libgdap_no_such_library.so.9"), std::string::npos)
          << "rule: the fallback path's own reason is named too: " << message;
    }
  }
  EXPECT_EQ(none.symbol("anything"), nullptr);
}

}  // namespace
}  // namespace gdap::cuda
