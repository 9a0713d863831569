#include "gic/its_queue.h"

#include <algorithm>

namespace ipilab::gic {

void ItsCommandQueue::write_cbaser(std::uint64_t value) {
  cbaser_ = value;
  creadr_ = 0;
  stalled_ = false;
}

bool ItsCommandQueue::write_cwriter(std::uint64_t value) {
  const Cwriter w = decode_cwriter(value);
  cwriter_ = w.offset;
  if (w.retry) stalled_ = false;
  return cwriter_in_range();
}

std::uint64_t ItsCommandQueue::read_cwriter() const { return encode_cwriter(Cwriter{cwriter_, false, 0}); }
std::uint64_t ItsCommandQueue::read_creadr() const { return encode_creadr(Creadr{creadr_, stalled_, 0}); }

bool ItsCommandQueue::valid() const { return decode_cbaser(cbaser_).valid; }
std::size_t ItsCommandQueue::size_bytes() const { return static_cast<std::size_t>(decode_cbaser(cbaser_).size_bytes()); }
std::uint64_t ItsCommandQueue::base_pa() const { return decode_cbaser(cbaser_).pa; }

bool ItsCommandQueue::full() const {
  if (!valid() || !cwriter_in_range()) return true;
  return (cwriter_ + kItsCommandSize) % size_bytes() == creadr_;
}

std::size_t ItsCommandQueue::pending_slots() const {
  if (!valid() || !cwriter_in_range()) return 0;
  const std::size_t size = size_bytes();
  return ((cwriter_ + size - creadr_ % size) % size) / kItsCommandSize;
}

bool ItsCommandQueue::write_memory(std::size_t offset, std::span<const std::uint8_t> bytes) {
  const std::size_t size = size_bytes();
  if (offset > size || bytes.size() > size - offset) return false;
  return memory_->write(base_pa() + offset, bytes);
}

std::vector<std::uint8_t> ItsCommandQueue::read_memory(std::size_t offset, std::size_t size) const {
  std::vector<std::uint8_t> out(size, 0);
  const std::size_t qsize = size_bytes();
  if (offset > qsize || size > qsize - offset) return out;
  memory_->read(base_pa() + offset, out);
  return out;
}

std::optional<CommandBytes> ItsCommandQueue::next_command() const {
  if (!can_fetch()) return std::nullopt;
  CommandBytes bytes{};
  memory_->read(base_pa() + creadr_, bytes);
  return bytes;
}

void ItsCommandQueue::consume() {
  if (!valid() || !cwriter_in_range() || empty()) return;
  creadr_ = static_cast<std::uint32_t>((creadr_ + kItsCommandSize) % size_bytes());
}

bool ItsCommandQueue::push(const CommandBytes& command) {
  if (full()) return false;
  if (!memory_->write(base_pa() + cwriter_, command)) return false;
  cwriter_ = static_cast<std::uint32_t>((cwriter_ + kItsCommandSize) % size_bytes());
  return true;
}

}  // namespace ipilab::gic
