#include "core/backend.h"

namespace trepro {

std::vector<OpDirection> every_op_direction() {
  std::vector<OpDirection> all;
  for (Op op : {Op::linear, Op::activation, Op::swiglu, Op::attention, Op::norm, Op::dropout, Op::add_dropout,
                Op::add_dropout_norm, Op::embedding, Op::rope, Op::cross_entropy, Op::log_softmax, Op::adam,
                Op::concat_time, Op::select_batch}) {
    all.push_back({op, Direction::forward});
    const bool one_call = op == Op::add_dropout || op == Op::log_softmax || op == Op::adam || op == Op::concat_time ||
                          op == Op::select_batch;
    if (!one_call) all.push_back({op, Direction::backward});
  }
  return all;
}

const char* op_name(Op op) {
  switch (op) {
    case Op::linear: return "linear";
    case Op::activation: return "activation";
    case Op::swiglu: return "swiglu";
    case Op::attention: return "attention";
    case Op::norm: return "norm";
    case Op::dropout: return "dropout";
    case Op::add_dropout: return "add_dropout";
    case Op::add_dropout_norm: return "add_dropout_norm";
    case Op::embedding: return "embedding";
    case Op::rope: return "rope";
    case Op::cross_entropy: return "cross_entropy";
    case Op::log_softmax: return "log_softmax";
    case Op::adam: return "adam";
    case Op::concat_time: return "concat_time";
    case Op::select_batch: return "select_batch";
  }
  throw std::invalid_argument("op_name: unknown op");
}

const char* direction_name(Direction direction) { return direction == Direction::forward ? "forward" : "backward"; }

std::string describe(OpDirection op) { return std::string(op_name(op.op)) + " " + direction_name(op.direction); }

NotProvided::NotProvided(OpDirection op, const std::string& backend)
    : std::logic_error("not provided: " + describe(op) + " by backend " + backend) {}

}  // namespace trepro
