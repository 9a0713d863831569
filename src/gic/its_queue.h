// ipilab/gic/its_queue.h — one ITS command queue: GITS_CBASER / GITS_CWRITER / GITS_CREADR semantics.
//
// Architecture (Arm IHI 0069H.b §5.2, and its GITS_CBASER / GITS_CWRITER / GITS_CREADR register
// descriptions, also published as Arm's register XML, DDI 0595):
//  * The queue is (CBASER.Size + 1) x 4 KiB of guest memory at CBASER.Physical_Address, split into
//    32-byte slots. Software writes commands at CWRITER and advances it; the ITS executes from
//    CREADR. Empty when CREADR == CWRITER; Linux (its_queue_full) never fills the last slot, so one is
//    always unused. Both offsets wrap at the end of the queue.
//  * Writing GITS_CBASER clears GITS_CREADR to 0 (and Stalled); it does not touch GITS_CWRITER, and it
//    does not touch memory: the queue contents are guest memory (guest_memory.h), not the register's.
//    Linux its_restore_enable() writes CWRITER = 0 itself after restoring CBASER for that reason.
//  * GITS_CWRITER is a plain read/write register: it can be written before CBASER is valid. A value
//    outside the queue that CBASER.Size describes is CONSTRAINED UNPREDICTABLE; this model takes the
//    first permitted choice: the queue is invalid and no command is processed until CWRITER is
//    written with an in-range value (cwriter_in_range() says which).
//  * CWRITER.Retry = 1 restarts a queue stalled on a command error; it reads as 0.
// Whether commands run at all (GITS_CTLR.Enabled) is the ITS's business: GicSystem (gic_system.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "gic/guest_memory.h"
#include "gic/its_command.h"
#include "gic/registers.h"

namespace ipilab::gic {

class ItsCommandQueue {
 public:
  /// A queue over its own private memory (standalone use); GicSystem attaches the system's memory.
  ItsCommandQueue() : memory_(std::make_shared<GuestMemory>()) {}
  explicit ItsCommandQueue(std::shared_ptr<GuestMemory> memory) : memory_(std::move(memory)) {}

  /// GITS_CBASER write: takes the new value; CREADR = 0 and Stalled = 0. CWRITER and memory unchanged.
  void write_cbaser(std::uint64_t value);
  std::uint64_t read_cbaser() const { return cbaser_; }

  /// GITS_CWRITER write (any time, even with CBASER.Valid = 0): Offset [19:5] is stored; Retry = 1 clears
  /// Stalled. Returns cwriter_in_range() after the write.
  bool write_cwriter(std::uint64_t value);
  std::uint64_t read_cwriter() const;
  /// GITS_CREADR read: [19:5] offset of the next command the ITS will execute, [0] Stalled.
  std::uint64_t read_creadr() const;

  /// CBASER.Valid: memory is allocated to the queue.
  bool valid() const;
  /// CBASER.Valid (the name earlier versions of this class used).
  bool enabled() const { return valid(); }
  /// Queue size that CBASER.Size describes (whether or not Valid is set).
  std::size_t size_bytes() const;
  std::size_t slots() const { return size_bytes() / kItsCommandSize; }
  /// CBASER.Physical_Address.
  std::uint64_t base_pa() const;
  std::uint32_t write_offset() const { return cwriter_; }
  std::uint32_t read_offset() const { return creadr_; }
  /// CWRITER.Offset is inside the queue (else: queue invalid, nothing processed; see file comment).
  bool cwriter_in_range() const { return cwriter_ < size_bytes(); }
  bool empty() const { return cwriter_ == creadr_; }
  /// True when the slot after CWRITER is CREADR (a queue that is not valid is also full).
  bool full() const;
  /// Commands written but not yet consumed (0 when not valid or CWRITER out of range).
  std::size_t pending_slots() const;
  bool stalled() const { return stalled_; }
  /// The ITS may fetch a command: valid, CWRITER in range, not stalled, not empty.
  bool can_fetch() const { return valid() && cwriter_in_range() && !stalled_ && !empty(); }

  /// Software's view of the queue pages: copies `bytes` to the guest memory at base_pa() + offset.
  /// Returns false, writing nothing, when [offset, offset + size) is not inside the queue.
  bool write_memory(std::size_t offset, std::span<const std::uint8_t> bytes);
  /// Reads `size` bytes of the queue at `offset` (zeros outside the queue).
  std::vector<std::uint8_t> read_memory(std::size_t offset, std::size_t size) const;
  GuestMemory& memory() { return *memory_; }
  const GuestMemory& memory() const { return *memory_; }
  const std::shared_ptr<GuestMemory>& memory_ptr() const { return memory_; }

  /// ITS side: the 32 bytes at CREADR, or nullopt when !can_fetch().
  std::optional<CommandBytes> next_command() const;
  /// ITS side: CREADR moves one slot (wrapping). No effect when empty or not valid.
  void consume();
  /// ITS side: stop on a command error (CREADR.Stalled = 1) until CWRITER is written with Retry = 1.
  void stall() { stalled_ = true; }

  /// Software helper (Linux its_allocate_entry + its_post_commands without the wait): writes the command
  /// in the slot at CWRITER and advances CWRITER. Returns false, changing nothing, when the queue is full.
  bool push(const CommandBytes& command);

 private:
  std::shared_ptr<GuestMemory> memory_;
  std::uint64_t cbaser_ = 0;
  std::uint32_t cwriter_ = 0;  // byte offsets, 32-byte aligned; cwriter_ may be >= size (queue invalid)
  std::uint32_t creadr_ = 0;
  bool stalled_ = false;
};

}  // namespace ipilab::gic
