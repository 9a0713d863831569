#include "gic/its_queue.h"

#include <algorithm>

namespace ipilab::gic {

void ItsCommandQueue::write_cbaser(std::uint64_t value) {
  cbaser_ = value;
  const Cbaser c = decode_cbaser(value);
  memory_.assign(c.valid ? c.size_bytes() : 0, 0);
  creadr_ = 0;
  stalled_ = false;
  if (cwriter_ >= memory_.size()) cwriter_ = 0;
}

bool ItsCommandQueue::write_cwriter(std::uint64_t value) {
  const Cwriter w = decode_cwriter(value);
  if (w.offset >= memory_.size()) return false;
  cwriter_ = w.offset;
  if (w.retry) stalled_ = false;
  return true;
}

std::uint64_t ItsCommandQueue::read_cwriter() const { return encode_cwriter(Cwriter{cwriter_, false, 0}); }
std::uint64_t ItsCommandQueue::read_creadr() const { return encode_creadr(Creadr{creadr_, stalled_, 0}); }

bool ItsCommandQueue::full() const {
  if (memory_.empty()) return true;
  return (cwriter_ + kItsCommandSize) % memory_.size() == creadr_;
}

std::size_t ItsCommandQueue::pending_slots() const {
  if (memory_.empty()) return 0;
  return ((cwriter_ + memory_.size() - creadr_) % memory_.size()) / kItsCommandSize;
}

bool ItsCommandQueue::write_memory(std::size_t offset, std::span<const std::uint8_t> bytes) {
  if (offset > memory_.size() || bytes.size() > memory_.size() - offset) return false;
  std::copy(bytes.begin(), bytes.end(), memory_.begin() + static_cast<std::ptrdiff_t>(offset));
  return true;
}

std::optional<std::span<const std::uint8_t, kItsCommandSize>> ItsCommandQueue::next_command() const {
  if (memory_.empty() || stalled_ || empty()) return std::nullopt;
  return std::span<const std::uint8_t, kItsCommandSize>(memory_.data() + creadr_, kItsCommandSize);
}

void ItsCommandQueue::consume() {
  if (memory_.empty() || empty()) return;
  creadr_ = static_cast<std::uint32_t>((creadr_ + kItsCommandSize) % memory_.size());
}

bool ItsCommandQueue::push(const CommandBytes& command) {
  if (full()) return false;
  std::copy(command.begin(), command.end(), memory_.begin() + cwriter_);
  cwriter_ = static_cast<std::uint32_t>((cwriter_ + kItsCommandSize) % memory_.size());
  return true;
}

}  // namespace ipilab::gic
