// ipilab/gic/its_queue.h — one ITS command queue: GITS_CBASER / GITS_CWRITER / GITS_CREADR semantics.
//
// Fact sheet gicv41-vsgi.md §1.5: the queue is (CBASER.Size + 1) x 4 KiB of memory split into 32-byte
// slots; software writes commands at CWRITER and advances it, the ITS consumes at CREADR. Empty when
// CREADR == CWRITER; full when the slot after CWRITER is CREADR, so one slot is always unused. Both
// offsets wrap at the end of the queue. Writing CBASER resets CREADR to 0 (and clears Stalled).
// This class holds the queue state only; the ITS that executes commands is GicSystem (gic_system.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "gic/its_command.h"
#include "gic/registers.h"

namespace ipilab::gic {

class ItsCommandQueue {
 public:
  /// GITS_CBASER write: takes the new base, sizes (and zeroes) the queue memory, resets CREADR to 0.
  /// With Valid = 0 the queue is disabled (no memory, nothing is processed).
  void write_cbaser(std::uint64_t value);
  std::uint64_t read_cbaser() const { return cbaser_; }

  /// GITS_CWRITER write. Returns false, and changes nothing, when the offset is not inside the queue
  /// (architecturally UNPREDICTABLE; the model refuses it). Retry = 1 clears CREADR.Stalled.
  bool write_cwriter(std::uint64_t value);
  std::uint64_t read_cwriter() const;
  /// GITS_CREADR read: [19:5] offset of the next command the ITS will execute, [0] Stalled.
  std::uint64_t read_creadr() const;

  bool enabled() const { return !memory_.empty(); }
  std::size_t size_bytes() const { return memory_.size(); }
  std::size_t slots() const { return memory_.size() / kItsCommandSize; }
  std::uint32_t write_offset() const { return cwriter_; }
  std::uint32_t read_offset() const { return creadr_; }
  bool empty() const { return cwriter_ == creadr_; }
  /// True when the slot after CWRITER is CREADR (a disabled queue is also full: nothing can be written).
  bool full() const;
  /// Commands written but not yet consumed.
  std::size_t pending_slots() const;
  bool stalled() const { return stalled_; }

  /// Software's view of the queue pages: copies `bytes` at byte `offset`. Returns false, writing
  /// nothing, when [offset, offset + size) is not inside the queue.
  bool write_memory(std::size_t offset, std::span<const std::uint8_t> bytes);
  std::span<const std::uint8_t> memory() const { return memory_; }

  /// ITS side: the 32 bytes at CREADR, or nullopt when empty, stalled or disabled.
  std::optional<std::span<const std::uint8_t, kItsCommandSize>> next_command() const;
  /// ITS side: CREADR moves one slot (wrapping). No effect when empty.
  void consume();
  /// ITS side: stop on a command error (CREADR.Stalled = 1) until CWRITER is written with Retry = 1.
  void stall() { stalled_ = true; }

  /// Driver side (Linux its_allocate_entry + its_post_commands without the wait): writes the command in
  /// the slot at CWRITER and advances CWRITER. Returns false, changing nothing, when the queue is full.
  bool push(const CommandBytes& command);

 private:
  std::uint64_t cbaser_ = 0;
  std::vector<std::uint8_t> memory_;
  std::uint32_t cwriter_ = 0;  // byte offsets, 32-byte aligned, < size
  std::uint32_t creadr_ = 0;
  bool stalled_ = false;
};

}  // namespace ipilab::gic
