// gdap_comm_destroy of a communicator whose collective call is still running on another thread
// (hunt 15a #7: valgrind saw the waiting call read the freed communicator). Rule: the destroy is
// refused (GDAP_ERR_INVALID_ARGUMENT naming the rank), nothing is freed, the waiting call ends as
// it would have, and the communicator can be destroyed once it has.
#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace {

TEST(DestroyBusy, ACommInACallOnAnotherThreadIsNotFreed) {
  std::vector<gdap_comm*> comms(2, nullptr);
  ASSERT_EQ(gdap_comm_create_group(comms.data(), 2), GDAP_SUCCESS) << gdap_last_error();
  gdap_comm_set_timeout(comms[0], 1.0);  // rank 1 never comes: rank 0's barrier times out
  gdap_status waited = GDAP_SUCCESS;
  std::thread waiter([&] { waited = gdap_comm_barrier(comms[0]); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(gdap_comm_destroy(comms[0]), GDAP_ERR_INVALID_ARGUMENT) << "rule: a busy communicator is not freed";
  const std::string error = gdap_last_error();
  EXPECT_NE(error.find("comm (rank 0) is in a call on another thread"), std::string::npos) << error;
  waiter.join();
  EXPECT_EQ(waited, GDAP_ERR_TIMEOUT) << "the waiting call ends as it would have";
  EXPECT_EQ(gdap_comm_destroy(comms[0]), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(gdap_comm_destroy(comms[1]), GDAP_SUCCESS) << gdap_last_error();
}

}  // namespace
