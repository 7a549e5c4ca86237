// Collective error agreement: a failure on one rank becomes a failure on all, so no rank enters a
// data exchange that a peer has refused (which would hang it), and every rank can name the culprit.
#include "comm/comm.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace gdap {

namespace {

// 'S', the token's length (8 bytes), the token, the length and bytes of the rank's sections that
// lie in shared-memory segments (collective.hpp), then this rank's share: success. 'E', the status
// as 4 bytes, then the message: failure.
void append_sized(std::string& out, std::string_view bytes) {
  const uint64_t length = bytes.size();
  out.append(reinterpret_cast<const char*>(&length), sizeof length);
  out.append(bytes);
}

std::string encode_success(std::string_view token, std::string_view segments, std::string_view share) {
  std::string out(1, 'S');
  append_sized(out, token);
  append_sized(out, segments);
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

// A record that is not a success record, or too short for its own length fields: the peer's
// collective calls are out of step with this rank's (one rank in a barrier, another here).
[[noreturn]] void malformed(size_t rank, size_t size) {
  fail(GDAP_ERR_INTERNAL, "rank {} sent a malformed agreement record ({} bytes): its collective calls on this "
       "communicator are out of step with this rank's (every rank must make the same collective gdap calls in the "
       "same order)", rank, size);
}

// The next length-prefixed field of `rest`, rank `rank`'s record of `size` bytes.
std::string_view take_sized(std::string_view& rest, size_t rank, size_t size) {
  uint64_t length = 0;
  if (rest.size() < sizeof length) malformed(rank, size);
  std::memcpy(&length, rest.data(), sizeof length);
  rest.remove_prefix(sizeof length);
  if (length > rest.size()) malformed(rank, size);
  const std::string_view bytes = rest.substr(0, length);
  rest.remove_prefix(length);
  return bytes;
}

// A successful rank's token, segment regions and share (every rank runs the same build).
struct Success {
  std::string_view token, segments, share;
};
Success parse_success(const std::string& bytes, size_t rank) {
  if (bytes.empty() || bytes[0] != 'S') malformed(rank, bytes.size());
  std::string_view rest = std::string_view(bytes).substr(1);
  Success s;
  s.token = take_sized(rest, rank, bytes.size());
  s.segments = take_sized(rest, rank, bytes.size());
  s.share = rest;
  return s;
}

// Only ranks in other processes compare segments: the in-process group compares addresses at
// every meeting (Group::verdict).
std::string my_segment_regions(const gdap_comm& comm) {
  return comm.kind() == GDAP_COMM_GROUP ? std::string() : packed_segment_regions(comm.touched);
}

}  // namespace

std::vector<std::string> agree_gather(gdap_comm& comm, const std::function<Share()>& local, const Mismatch& mismatch) {
  std::string mine;
  try {
    const Error given = take_call_failure(comm);
    if (given.status() != GDAP_SUCCESS) throw given;
    const Share share = local();
    mine = encode_success(share.token, my_segment_regions(comm), share.bytes);
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
  std::vector<std::vector<Region>> segments;
  bool any_segment = false;
  const std::string_view token0 = parse_success(all[0], 0).token;
  for (size_t r = 0; r < all.size(); ++r) {
    const Success s = parse_success(all[r], r);
    if (s.token != token0) fail(GDAP_ERR_INVALID_ARGUMENT, "{}", mismatch(r, s.token, token0));
    shares.emplace_back(s.share);
    segments.push_back(unpack_segment_regions(s.segments));
    any_segment = any_segment || !s.segments.empty();
  }
  if (any_segment) check_verdict(segments_clash(segments));
  return shares;
}

std::vector<std::string> agree_shares(gdap_comm& comm, const std::function<std::string()>& local) {
  return agree_gather(comm, [&] { return Share{"", local()}; }, [](size_t, std::string_view, std::string_view) { return std::string(); });
}

void agree(gdap_comm& comm, const std::function<void()>& local, std::string_view token, const Mismatch& mismatch) {
  agree_gather(comm, [&] {
    local();
    return Share{std::string(token), {}};
  }, mismatch);
}

void agree(gdap_comm& comm, const std::function<void()>& local) {
  agree(comm, local, {}, [](size_t, std::string_view, std::string_view) { return std::string(); });
}

namespace {

template <typename Fields>
std::string packed(const Fields& fields) {
  std::string token;
  for (const Field& f : fields) token.append(f.name).append(1, '\0').append(f.value).append(1, '\0');
  return token;
}

// The next name or value of a field token (empty at its end).
std::string_view next_part(std::string_view& rest) {
  const size_t end = std::min(rest.find('\0'), rest.size());
  const std::string_view part = rest.substr(0, end);
  rest.remove_prefix(std::min(end + 1, rest.size()));
  return part;
}

}  // namespace

std::string field_token(std::initializer_list<Field> fields) { return packed(fields); }
std::string field_token(const std::vector<Field>& fields) { return packed(fields); }

std::optional<FieldDifference> first_difference(std::string_view theirs, std::string_view first) {
  while (!theirs.empty() || !first.empty()) {
    const std::string_view name = next_part(theirs), value = next_part(theirs);
    const std::string_view name0 = next_part(first), value0 = next_part(first);
    if (name != name0) return std::nullopt;
    if (value != value0) return FieldDifference{name, value, value0};
  }
  return std::nullopt;
}

Mismatch field_mismatch(std::string what, std::string why) {
  return [what = std::move(what), why = std::move(why)](size_t r, std::string_view theirs, std::string_view first) {
    if (const auto d = first_difference(theirs, first)) {
      return fmt::format("rank {} passed {} {} but rank 0 {}: {}; nothing moved", r, d->name, d->theirs, d->first, why);
    }
    return fmt::format("rank {}'s {} differs from rank 0's: {}; nothing moved", r, what, why);
  };
}

Error take_call_failure(gdap_comm& comm) {
  Error given(std::exchange(comm.call_fails, GDAP_SUCCESS), std::move(comm.call_fails_reason));
  comm.call_fails_reason.clear();
  return given;
}

}  // namespace gdap

void gdap_comm::set_timeout(double seconds) {
  if (!(seconds > 0)) gdap::fail(GDAP_ERR_INVALID_ARGUMENT, "timeout {} s is not > 0", seconds);
  timeout = seconds;
}
