// ipilab/x86/apic_icr.h — the local APIC Interrupt Command Register (ICR), bit-exact, both forms:
// the x2APIC 64-bit MSR 0x830 write and the xAPIC MMIO pair ICR (0x300) / ICR2 (0x310).
//
// Layout of the low 32 bits (Intel SDM Vol. 3A §11.6.1 "Interrupt Command Register", §11.12.9 for
// x2APIC; bit names as in Linux arch/x86/include/asm/apicdef.h):
//   [7:0]   vector                      APIC_VECTOR_MASK 0xFF
//   [10:8]  delivery mode               APIC_DM_FIXED 0x000 ... APIC_DM_EXTINT 0x700 (APIC_MODE_MASK)
//   [11]    destination mode            APIC_DEST_LOGICAL 0x800 (0 = physical)
//   [12]    delivery status             APIC_ICR_BUSY 0x1000 (xAPIC: send pending; x2APIC: reserved)
//   [14]    level                       APIC_INT_ASSERT 0x4000
//   [15]    trigger mode                APIC_INT_LEVELTRIG 0x8000
//   [19:18] destination shorthand       APIC_DEST_SELF 0x40000, _ALLINC 0x80000, _ALLBUT 0xC0000
//   13, 17:16, 31:20 reserved (17:16 was the xAPIC "remote read status")
// Destination: x2APIC bits [63:32] of the one 64-bit WRMSR (Linux native_x2apic_icr_write(low, id)
// writes ((u64)id << 32) | low); xAPIC ICR2 bits [31:24] (SET_XAPIC_DEST_FIELD), ICR2 [23:0] reserved.
//
// The codec is total and lossless: decode() keeps reserved bits in Icr::reserved_low/high so that
// encode(decode(x)) == x for every input; encode() never drops a field silently.
#pragma once

#include <cstdint>
#include <string>

namespace ipilab::x86 {

/// MSR address of the x2APIC ICR: 0x800 + (APIC_ICR 0x300 >> 4). One 64-bit WRMSR sends one IPI.
inline constexpr std::uint32_t kMsrX2apicIcr = 0x830;
/// MSR address of the x2APIC SELF IPI register (0x800 + (APIC_SELF_IPI 0x3F0 >> 4)): vector in [7:0].
inline constexpr std::uint32_t kMsrX2apicSelfIpi = 0x83F;
/// xAPIC MMIO offsets of ICR (low word, the write that sends) and ICR2 (destination, written first).
inline constexpr std::uint32_t kXapicIcrOffset = 0x300;
inline constexpr std::uint32_t kXapicIcr2Offset = 0x310;
/// Physical-destination broadcast IDs: x2APIC 0xFFFFFFFF (KVM X2APIC_BROADCAST), xAPIC 0xFF.
inline constexpr std::uint32_t kX2apicBroadcast = 0xFFFFFFFFu;
inline constexpr std::uint32_t kXapicBroadcast = 0xFFu;
/// Linux NMI_VECTOR (arch/x86/include/asm/irq_vectors.h): an IPI "vector" 2 is sent as APIC_DM_NMI.
inline constexpr std::uint8_t kNmiVector = 2;

/// Raw ICR bit masks, named after Linux apicdef.h.
namespace icr_bits {
inline constexpr std::uint32_t kVectorMask = 0xFFu;          // APIC_VECTOR_MASK
inline constexpr std::uint32_t kModeMask = 0x700u;           // APIC_MODE_MASK
inline constexpr std::uint32_t kDmFixed = 0x000u;            // APIC_DM_FIXED
inline constexpr std::uint32_t kDmLowest = 0x100u;           // APIC_DM_LOWEST
inline constexpr std::uint32_t kDmSmi = 0x200u;              // APIC_DM_SMI
inline constexpr std::uint32_t kDmRemoteRead = 0x300u;       // APIC_DM_REMRD (KVM: PV unhalt kick)
inline constexpr std::uint32_t kDmNmi = 0x400u;              // APIC_DM_NMI
inline constexpr std::uint32_t kDmInit = 0x500u;             // APIC_DM_INIT
inline constexpr std::uint32_t kDmStartup = 0x600u;          // APIC_DM_STARTUP (SIPI)
inline constexpr std::uint32_t kDmExtInt = 0x700u;           // APIC_DM_EXTINT
inline constexpr std::uint32_t kDestLogical = 0x800u;        // APIC_DEST_LOGICAL (KVM: APIC_DEST_MASK)
inline constexpr std::uint32_t kBusy = 0x1000u;              // APIC_ICR_BUSY (delivery status)
inline constexpr std::uint32_t kLevelAssert = 0x4000u;       // APIC_INT_ASSERT
inline constexpr std::uint32_t kLevelTrig = 0x8000u;         // APIC_INT_LEVELTRIG
inline constexpr std::uint32_t kShortSelf = 0x40000u;        // APIC_DEST_SELF
inline constexpr std::uint32_t kShortAllInc = 0x80000u;      // APIC_DEST_ALLINC
inline constexpr std::uint32_t kShortAllBut = 0xC0000u;      // APIC_DEST_ALLBUT
inline constexpr std::uint32_t kShortMask = 0xC0000u;        // APIC_SHORT_MASK
/// Low-word bits no field covers: 13, 17:16, 31:20.
inline constexpr std::uint32_t kReservedLow = 0xFFF32000u;
/// xAPIC ICR2 bits below the 8-bit destination field.
inline constexpr std::uint32_t kReservedIcr2 = 0x00FFFFFFu;
}  // namespace icr_bits

/// ICR[10:8]. All eight encodings exist; RemoteRead (3) is reserved on modern CPUs and used by KVM
/// internally for the PV-unhalt kick, ExtInt (7) is not a valid IPI.
enum class DeliveryMode : std::uint8_t {
  Fixed = 0, LowestPriority = 1, Smi = 2, RemoteRead = 3, Nmi = 4, Init = 5, StartUp = 6, ExtInt = 7,
};
/// ICR[11].
enum class DestMode : std::uint8_t { Physical = 0, Logical = 1 };
/// ICR[15].
enum class TriggerMode : std::uint8_t { Edge = 0, Level = 1 };
/// ICR[19:18]: none, self, all including self, all excluding self.
enum class Shorthand : std::uint8_t { None = 0, Self = 1, AllIncludingSelf = 2, AllExcludingSelf = 3 };

/// Every field of an ICR value. `destination` is the full 32-bit x2APIC destination; for the xAPIC
/// form only values <= 0xFF can be encoded. `reserved_low` holds the low-word bits of
/// icr_bits::kReservedLow exactly where they were; `reserved_high` the ICR2 bits 23:0 (xAPIC only).
struct Icr {
  std::uint8_t vector = 0;
  DeliveryMode delivery_mode = DeliveryMode::Fixed;
  DestMode dest_mode = DestMode::Physical;
  bool delivery_status = false;   ///< ICR[12]
  bool level_assert = false;      ///< ICR[14]
  TriggerMode trigger = TriggerMode::Edge;
  Shorthand shorthand = Shorthand::None;
  std::uint32_t destination = 0;
  std::uint32_t reserved_low = 0;
  std::uint32_t reserved_high = 0;

  friend bool operator==(const Icr&, const Icr&) = default;
};

/// The xAPIC register pair: `icr` is the ICR low word (offset 0x300), `icr2` is ICR2 (offset 0x310).
struct XapicIcr {
  std::uint32_t icr = 0;
  std::uint32_t icr2 = 0;
  friend bool operator==(const XapicIcr&, const XapicIcr&) = default;
};

/// Low 32 bits of an ICR built from `f` (destination excluded). Throws std::invalid_argument if
/// `f.reserved_low` has bits outside icr_bits::kReservedLow or an enum value is out of range.
std::uint32_t encode_icr_low(const Icr& f);

/// The 64-bit value a guest writes to MSR 0x830: (destination << 32) | low word.
/// `f.reserved_high` must be 0 (x2APIC has no ICR2); throws std::invalid_argument otherwise.
std::uint64_t encode_x2apic_icr(const Icr& f);
/// Inverse of encode_x2apic_icr; total (every 64-bit value decodes). reserved_high is always 0.
Icr decode_x2apic_icr(std::uint64_t value);

/// The xAPIC pair. Throws std::invalid_argument if `f.destination` > 0xFF or `f.reserved_high` has
/// bits outside icr_bits::kReservedIcr2.
XapicIcr encode_xapic_icr(const Icr& f);
/// Inverse of encode_xapic_icr; total.
Icr decode_xapic_icr(XapicIcr value);

/// Linux __prepare_ICR(shortcut, vector, dest) (arch/x86/kernel/apic/local.h): the low word Linux
/// builds for an IPI: shortcut | dest | (vector == NMI_VECTOR ? APIC_DM_NMI : APIC_DM_FIXED | vector).
/// `shortcut` is one of the icr_bits::kShort* values or 0, `dest_logical` selects APIC_DEST_LOGICAL.
/// (The FRED "NMI source" extension, which puts a source number in the vector of an NMI, is not
/// modelled.)
std::uint32_t linux_prepare_icr(std::uint32_t shortcut, std::uint8_t vector, bool dest_logical);

/// x2APIC cluster of an x2APIC ID: bits [19:4] (Intel SDM §11.12.10.2; KVM
/// kvm_apic_calc_x2apic_ldr). This is LDR[31:16].
constexpr std::uint32_t x2apic_cluster_id(std::uint32_t apic_id) { return (apic_id >> 4) & 0xFFFFu; }
/// Logical x2APIC ID (the LDR value the CPU derives): cluster << 16 | 1 << (apic_id & 0xF).
constexpr std::uint32_t x2apic_logical_id(std::uint32_t apic_id) {
  return (x2apic_cluster_id(apic_id) << 16) | (1u << (apic_id & 0xFu));
}

/// Human-readable one-line rendering ("vector=0xfb mode=fixed dest=phys:0x3 ..."), for tests/CLI.
std::string describe_icr(const Icr& f);
const char* to_string(DeliveryMode m);
const char* to_string(Shorthand s);

}  // namespace ipilab::x86
