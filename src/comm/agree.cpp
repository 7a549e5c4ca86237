// Collective error agreement: a failure on one rank becomes a failure on all, so no rank enters a
// data exchange that a peer has refused (which would hang it), and every rank can name the culprit.
#include "comm/comm.hpp"
#include "core/error.hpp"

#include <cstring>

namespace gdap {

namespace {

// 'S' and the token: success. 'E', the status as 4 bytes, then the message: failure.
std::string encode(gdap_status status, std::string_view message) {
  std::string out(1 + sizeof(int32_t), 'E');
  const auto code = static_cast<int32_t>(status);
  std::memcpy(out.data() + 1, &code, sizeof code);
  out += message;
  return out;
}

Error decode(const std::string& bytes) {
  int32_t code = GDAP_ERR_INTERNAL;
  if (bytes.size() >= 1 + sizeof code) std::memcpy(&code, bytes.data() + 1, sizeof code);
  return Error(static_cast<gdap_status>(code), bytes.size() > 1 + sizeof code ? bytes.substr(1 + sizeof code) : "");
}

bool failed(const std::string& bytes) { return !bytes.empty() && bytes[0] == 'E'; }

}  // namespace

void agree(gdap_comm& comm, const std::function<void()>& local, std::string_view token,
           const std::function<std::string(size_t rank)>& mismatch) {
  std::string mine = "S" + std::string(token);
  try {
    local();
  } catch (const Error& e) {
    mine = encode(e.status(), e.what());
  } catch (const std::bad_alloc&) {
    mine = encode(GDAP_ERR_NO_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    mine = encode(GDAP_ERR_INTERNAL, e.what());
  }
  const std::vector<std::string> all = comm.allgather(mine);
  for (size_t r = 0; r < all.size(); ++r) {
    if (!failed(all[r])) continue;
    if (failed(mine)) throw decode(mine);  // a failing rank reports its own error
    const Error first = decode(all[r]);
    fail(GDAP_ERR_REMOTE, "rank {} failed ({}): {}", r, gdap_status_string(first.status()), first.what());
  }
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0]) fail(GDAP_ERR_INVALID_ARGUMENT, "{}", mismatch(r));
  }
}

void agree(gdap_comm& comm, const std::function<void()>& local) {
  agree(comm, local, {}, [](size_t) { return std::string(); });
}

gdap_comm& comm_ref(gdap_comm* comm, const char* what) {
  require(comm, what);
  return *comm;
}


}  // namespace gdap

void gdap_comm::set_timeout(double seconds) {
  if (!(seconds > 0)) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "timeout {} s is not > 0", seconds);
  // MPI and NCCL have no timeout of gdap's to set: their own settings apply.
}
