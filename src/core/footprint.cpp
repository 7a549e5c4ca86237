// Exact byte sharing of strided footprints (see footprint.hpp). A byte lies in both a and b iff
//   a.base + sum_k i_k a.strides[k] + u = b.base + sum_k j_k b.strides[k] + v
// for indices in their shapes and 0 <= u < a.itemsize, 0 <= v < b.itemsize; that is, a sum of
// terms c * x (c > 0, x an integer in a range) falls in [d - (a.itemsize - 1), d + (b.itemsize - 1)]
// with d = b.base - a.base. Terms of one stride merge (their ranges add), so a layout against
// itself shifted collapses to one term per dimension; a depth-first search over the terms, largest
// first, visits only the values of each term that leave the target reachable by the rest.
#include "core/footprint.hpp"

#include <algorithm>
#include <map>

namespace gdap {
namespace {

using Wide = __int128;

struct Term {
  Wide coefficient, low, high;  // coefficient * x for low <= x <= high
};

Wide floor_div(Wide a, Wide b) { return a / b - ((a % b != 0) && (a < 0)); }  // b > 0
Wide ceil_div(Wide a, Wide b) { return -floor_div(-a, b); }

// The search's steps before it gives up and answers "may share".
constexpr int64_t kBudget = 1 << 16;

class Search {
 public:
  explicit Search(std::vector<Term> terms) : terms_(std::move(terms)), low_(terms_.size() + 1, 0), high_(low_) {
    for (size_t k = terms_.size(); k-- > 0;) {
      low_[k] = low_[k + 1] + terms_[k].coefficient * terms_[k].low;
      high_[k] = high_[k + 1] + terms_[k].coefficient * terms_[k].high;
    }
  }
  // Whether terms k.. can sum into [lo, hi]; true also once the budget is spent.
  bool reaches(size_t k, Wide lo, Wide hi) {
    if (lo > high_[k] || hi < low_[k]) return false;
    if (k == terms_.size()) return true;  // 0 is within [lo, hi]
    const Term& t = terms_[k];
    const Wide first = std::max(t.low, ceil_div(lo - high_[k + 1], t.coefficient));
    const Wide last = std::min(t.high, floor_div(hi - low_[k + 1], t.coefficient));
    for (Wide x = first; x <= last; ++x) {
      if (++steps_ > kBudget) return true;
      if (reaches(k + 1, lo - t.coefficient * x, hi - t.coefficient * x)) return true;
    }
    return false;
  }

 private:
  std::vector<Term> terms_;
  std::vector<Wide> low_, high_;  // the least and most terms k.. can sum to
  int64_t steps_ = 0;
};

// Adds `f`'s dimensions as terms, negated for the right-hand side (`sign` -1), merged by stride.
void add_terms(const Footprint& f, int sign, std::map<Wide, Term>& by_stride) {
  for (size_t k = 0; k < f.shape.size(); ++k) {
    const Wide s = static_cast<Wide>(f.strides[k]) * sign, top = f.shape[k] - 1;
    if (s == 0 || top == 0) continue;
    Term& t = by_stride.try_emplace(s < 0 ? -s : s, Term{s < 0 ? -s : s, 0, 0}).first->second;
    if (s > 0) t.high += top;
    else t.low -= top;
  }
}

}  // namespace

ByteSpan span_of(const Footprint& f) {
  Wide low = 0, high = 0;
  for (size_t k = 0; k < f.shape.size(); ++k) {
    if (f.shape[k] == 0) return {};
    const Wide reach = static_cast<Wide>(f.shape[k] - 1) * f.strides[k];
    (reach < 0 ? low : high) += reach;
  }
  return {static_cast<uint64_t>(f.base + low), static_cast<uint64_t>(f.base + high + f.itemsize - 1)};
}

bool may_share_bytes(const Footprint& a, const Footprint& b) {
  const ByteSpan x = span_of(a), y = span_of(b);
  if (x.empty() || y.empty() || x.last < y.first || y.last < x.first) return false;
  std::map<Wide, Term> by_stride;
  add_terms(a, 1, by_stride);
  add_terms(b, -1, by_stride);
  std::vector<Term> terms;
  for (auto it = by_stride.rbegin(); it != by_stride.rend(); ++it) terms.push_back(it->second);  // largest first
  const Wide d = static_cast<Wide>(b.base) - static_cast<Wide>(a.base);
  return Search(std::move(terms)).reaches(0, d - (a.itemsize - 1), d + (b.itemsize - 1));
}

}  // namespace gdap
