// The fixed summation tree of the W shard partial sums: leaves pushed in shard order are merged
// like a binary counter (two subtrees of equal size as soon as both exist), and finish() folds
// what is left from the right. The tree's shape depends on W alone, so the sum's rounding is the
// same whichever ranks computed which leaves; at most log2(W) + 1 partial sums are held.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace trepro {

// `merge(a, b)` makes a the sum a + b (in that order).
template <class Value, class Merge>
class FixedTreeSum {
 public:
  explicit FixedTreeSum(Merge merge) : merge_(std::move(merge)) {}

  void push(Value leaf) {
    stack_.push_back({std::move(leaf), 1});
    while (stack_.size() >= 2 && stack_[stack_.size() - 2].leaves == stack_.back().leaves) merge_top();
  }

  Value finish() {
    if (stack_.empty()) throw std::logic_error("FixedTreeSum: no leaves");
    while (stack_.size() >= 2) merge_top();
    Value sum = std::move(stack_.back().value);
    stack_.clear();
    return sum;
  }

 private:
  struct Node {
    Value value;
    std::int64_t leaves;
  };
  void merge_top() {
    Node right = std::move(stack_.back());
    stack_.pop_back();
    merge_(stack_.back().value, right.value);
    stack_.back().leaves += right.leaves;
  }

  Merge merge_;
  std::vector<Node> stack_;
};

}  // namespace trepro
