// Status names, last-error behaviour and version queries.
#include "core/error.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

TEST(Status, EveryCodeHasItsName) {
  EXPECT_STREQ(gdap_status_string(GDAP_SUCCESS), "GDAP_SUCCESS");
  EXPECT_STREQ(gdap_status_string(GDAP_ERR_PROTOCOL), "GDAP_ERR_PROTOCOL");
  EXPECT_STREQ(gdap_status_string(GDAP_ERR_INTERNAL), "GDAP_ERR_INTERNAL");
  EXPECT_STREQ(gdap_status_string(GDAP_ERR_INTERRUPTED), "GDAP_ERR_INTERRUPTED");
  EXPECT_STREQ(gdap_status_string(static_cast<gdap_status>(999)), "GDAP_ERR_UNKNOWN_STATUS");
}

TEST(Status, GuardTurnsExceptionsIntoStatusAndMessage) {
  gdap_status s = gdap::guard([] { gdap::fail(GDAP_ERR_PROTOCOL, "dimension {}: bad", 3); });
  EXPECT_EQ(s, GDAP_ERR_PROTOCOL);
  EXPECT_STREQ(gdap_last_error(), "dimension 3: bad");
  EXPECT_EQ(gdap::guard([] {}), GDAP_SUCCESS);
  EXPECT_STREQ(gdap_last_error(), "dimension 3: bad") << "success does not clear the last error";
  EXPECT_EQ(gdap::guard([] { throw std::bad_alloc(); }), GDAP_ERR_NO_MEMORY);
}

TEST(Status, LastErrorIsPerThread) {
  (void)gdap::guard([] { gdap::fail(GDAP_ERR_IO, "main thread"); });
  std::string other;
  std::thread t([&] {
    other = gdap_last_error();
    (void)gdap::guard([] { gdap::fail(GDAP_ERR_IO, "other thread"); });
  });
  t.join();
  EXPECT_EQ(other, "");
  EXPECT_STREQ(gdap_last_error(), "main thread");
}

TEST(Version, RuntimeMatchesHeader) {
  EXPECT_EQ(gdap_version(), GDAP_VERSION_NUMBER);
  EXPECT_EQ(std::string(gdap_version_string()), std::to_string(GDAP_VERSION_MAJOR) + "." +
                                                    std::to_string(GDAP_VERSION_MINOR) + "." +
                                                    std::to_string(GDAP_VERSION_PATCH));
}
