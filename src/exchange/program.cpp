// Building exchange programs and turning their messages into copies (see program.hpp).
#include "exchange/program.hpp"

#include "core/checked.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <atomic>
#include <string>

namespace gdap::exchange {

Program::Program(int64_t rank, int64_t nranks, int64_t ndim, int64_t element_size, Style style)
    : rank_(rank), nranks_(nranks), ndim_(ndim), element_size_(element_size), style_(style) {
  static std::atomic<uint64_t> serials{0};
  serial_ = ++serials;
}

void Program::add_message(Part part, int64_t peer) {
  messages_[index(part)].push_back(Message{peer, 0, 0, set_elements_.size(), 0});
  building_ = &messages_[index(part)].back();
}

void Program::add_set(std::span<const std::span<const Segment>> lists, int64_t elements) {
  if (static_cast<int64_t>(lists.size()) != ndim_) {
    fail(GDAP_ERR_INTERNAL, "a block set of {} dimensions in a program of {}", lists.size(), ndim_);
  }
  Message* m = building_;
  if (m == nullptr) fail(GDAP_ERR_INTERNAL, "a block set added before its message");
  lists_.insert(lists_.end(), lists.begin(), lists.end());
  set_elements_.push_back(elements);
  m->elements = checked_add(m->elements, elements, "elements in a message");
  ++m->sets;
}

void Program::finish() {
  building_ = nullptr;
  const std::string what = std::string(style_.name) + " bytes (elements * element size)";
  for (Part part : {Part::send, Part::recv, Part::local}) {
    int64_t at = 0;
    const bool shared = part == Part::local || (part == Part::send && style_.broadcast);  // every message at 0
    for (Message& m : messages_[index(part)]) {
      m.offset = shared ? 0 : at;
      at = shared ? std::max(at, m.elements) : checked_add(at, m.elements, "elements of a packed buffer");
    }
    bytes_[index(part)] = checked_mul(at, element_size_, what.c_str());
    cut(part);
  }
}

// Each set of kOwnMessageBytes or more alone, each run of smaller sets between them together.
void Program::cut(Part part) {
  std::vector<Message>& out = wire_[index(part)];
  out.clear();
  for (const Message& m : messages_[index(part)]) {
    Message piece{m.peer, 0, m.offset, m.first, 0};
    const auto flush = [&] {
      if (piece.sets > 0) out.push_back(piece);
      piece.offset += piece.elements;
      piece.first += piece.sets;
      piece.elements = 0;
      piece.sets = 0;
    };
    for (size_t k = m.first; k < m.first + m.sets; ++k) {
      const bool own = set_elements_[k] * element_size_ >= kOwnMessageBytes;
      if (own) flush();
      piece.elements += set_elements_[k];
      ++piece.sets;
      if (own) flush();
    }
    flush();
  }
}

void Program::copies(const Message& m, const End& from, const End& to, std::vector<Copy2D>& out) const {
  const auto n = static_cast<size_t>(ndim_);
  std::vector<int64_t> compact(n);
  std::vector<Copy2D> block;
  int64_t set_offset = m.offset;  // where the current set starts in the packed buffer
  for (size_t k = m.first; k < m.first + m.sets; ++k) {
    for_each_block(set(k), [&](const Block& b) {
      int64_t stride = 1;
      for (size_t i = n; i-- > 0;) {
        compact[i] = stride;
        stride *= b.extent[i];
      }
      auto place = [&](const End& end, int64_t& offset) -> std::span<const int64_t> {
        if (end.kind == End::packed) {
          offset = set_offset + b.offset;
          return compact;
        }
        const auto local = end.kind == End::sender ? b.src_local : b.dst_local;
        offset = 0;
        for (size_t i = 0; i < n; ++i) offset += local[i] * end.strides[i];
        return end.strides;
      };
      int64_t src = 0, dst = 0;
      const auto ss = place(from, src);
      const auto ds = place(to, dst);
      block.clear();
      box_copies(b.extent, src, ss, dst, ds, element_size_, block);
      for (const Copy2D& c : block) append_merged(out, c);
    });
    set_offset += set_elements_[k];
  }
}

std::vector<Copy2D> Program::part_copies(Part part, const End& from, const End& to) const {
  std::vector<Copy2D> out;
  for (const Message& m : messages(part)) copies(m, from, to, out);
  return out;
}

}  // namespace gdap::exchange
