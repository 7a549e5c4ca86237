// Collective error agreement: a failure on one rank becomes a failure on all, so no rank enters a
// data exchange that a peer has refused (which would hang it), and every rank can name the culprit.
#include "comm/comm.hpp"
#include "core/error.hpp"

#include <cstdint>
#include <cstring>
#include <utility>

namespace gdap {

namespace {

// 'S', the token's length (8 bytes), the token, then this rank's share: success. 'E', the status as
// 4 bytes, then the message: failure.
std::string encode_success(std::string_view token, std::string_view share) {
  const uint64_t length = token.size();
  std::string out(1 + sizeof length, 'S');
  std::memcpy(out.data() + 1, &length, sizeof length);
  out.append(token);
  out.append(share);
  return out;
}

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

// A successful rank's token and share (every rank runs the same build: the length is its own).
std::pair<std::string_view, std::string_view> token_and_share(const std::string& bytes) {
  uint64_t length = 0;
  std::memcpy(&length, bytes.data() + 1, sizeof length);
  const std::string_view rest = std::string_view(bytes).substr(1 + sizeof length);
  return {rest.substr(0, length), rest.substr(length)};
}

}  // namespace

std::vector<std::string> agree_gather(gdap_comm& comm, const std::function<Share()>& local, const Mismatch& mismatch) {
  std::string mine;
  try {
    const Error given = take_call_failure(comm);
    if (given.status() != GDAP_SUCCESS) throw given;
    const Share share = local();
    mine = encode_success(share.token, share.bytes);
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
  std::vector<std::string> shares;
  const std::string_view token0 = token_and_share(all[0]).first;
  for (size_t r = 0; r < all.size(); ++r) {
    const auto [theirs, share] = token_and_share(all[r]);
    if (theirs != token0) fail(GDAP_ERR_INVALID_ARGUMENT, "{}", mismatch(r, theirs, token0));
    shares.emplace_back(share);
  }
  return shares;
}

void agree(gdap_comm& comm, const std::function<void()>& local, std::string_view token,
           const std::function<std::string(size_t rank)>& mismatch) {
  agree_gather(comm, [&] {
    local();
    return Share{std::string(token), {}};
  }, [&](size_t r, std::string_view, std::string_view) { return mismatch(r); });
}

void agree(gdap_comm& comm, const std::function<void()>& local) {
  agree(comm, local, {}, [](size_t) { return std::string(); });
}

Error take_call_failure(gdap_comm& comm) {
  Error given(std::exchange(comm.call_fails, GDAP_SUCCESS), std::move(comm.call_fails_reason));
  comm.call_fails_reason.clear();
  return given;
}

gdap_comm& comm_ref(gdap_comm* comm, const char* what) {
  require(comm, what);
  return *comm;
}


}  // namespace gdap

void gdap_comm::set_timeout(double seconds) {
  if (!(seconds > 0)) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "timeout {} s is not > 0", seconds);
  timeout = seconds;
}
