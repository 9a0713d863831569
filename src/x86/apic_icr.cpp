#include "x86/apic_icr.h"

#include <fmt/format.h>

#include <stdexcept>

#include "common/enum_names.h"

namespace ipilab::x86 {

namespace b = icr_bits;

std::uint32_t encode_icr_low(const Icr& f) {
  if ((f.reserved_low & ~b::kReservedLow) != 0) {
    throw std::invalid_argument(
        fmt::format("ICR reserved_low {:#x} has bits outside the reserved mask {:#x}", f.reserved_low,
                    b::kReservedLow));
  }
  const auto mode = static_cast<std::uint32_t>(f.delivery_mode);
  const auto dmode = static_cast<std::uint32_t>(f.dest_mode);
  const auto trig = static_cast<std::uint32_t>(f.trigger);
  const auto sh = static_cast<std::uint32_t>(f.shorthand);
  if (mode > 7 || dmode > 1 || trig > 1 || sh > 3) {
    throw std::invalid_argument("ICR field enum value out of range");
  }
  std::uint32_t low = f.vector;
  low |= mode << 8;
  low |= dmode << 11;
  if (f.delivery_status) low |= b::kBusy;
  if (f.level_assert) low |= b::kLevelAssert;
  low |= trig << 15;
  low |= sh << 18;
  low |= f.reserved_low;
  return low;
}

namespace {

Icr decode_low(std::uint32_t low) {
  Icr f;
  f.vector = static_cast<std::uint8_t>(low & b::kVectorMask);
  f.delivery_mode = static_cast<DeliveryMode>((low >> 8) & 7u);
  f.dest_mode = static_cast<DestMode>((low >> 11) & 1u);
  f.delivery_status = (low & b::kBusy) != 0;
  f.level_assert = (low & b::kLevelAssert) != 0;
  f.trigger = static_cast<TriggerMode>((low >> 15) & 1u);
  f.shorthand = static_cast<Shorthand>((low >> 18) & 3u);
  f.reserved_low = low & b::kReservedLow;
  return f;
}

}  // namespace

std::uint64_t encode_x2apic_icr(const Icr& f) {
  if (f.reserved_high != 0) {
    throw std::invalid_argument("x2APIC ICR has no ICR2: reserved_high must be 0");
  }
  return (static_cast<std::uint64_t>(f.destination) << 32) | encode_icr_low(f);
}

Icr decode_x2apic_icr(std::uint64_t value) {
  Icr f = decode_low(static_cast<std::uint32_t>(value));
  f.destination = static_cast<std::uint32_t>(value >> 32);
  return f;
}

XapicIcr encode_xapic_icr(const Icr& f) {
  if (f.destination > 0xFFu) {
    throw std::invalid_argument(
        fmt::format("xAPIC destination {:#x} does not fit ICR2[31:24]", f.destination));
  }
  if ((f.reserved_high & ~b::kReservedIcr2) != 0) {
    throw std::invalid_argument("xAPIC reserved_high has bits outside ICR2[23:0]");
  }
  return XapicIcr{encode_icr_low(f), (f.destination << 24) | f.reserved_high};
}

Icr decode_xapic_icr(XapicIcr value) {
  Icr f = decode_low(value.icr);
  f.destination = value.icr2 >> 24;
  f.reserved_high = value.icr2 & b::kReservedIcr2;
  return f;
}

std::uint32_t linux_prepare_icr(std::uint32_t shortcut, std::uint8_t vector, bool dest_logical) {
  std::uint32_t icr = shortcut | (dest_logical ? b::kDestLogical : 0u);
  if (vector == kNmiVector) {
    icr |= b::kDmNmi;
  } else {
    icr |= b::kDmFixed | vector;
  }
  return icr;
}

constexpr EnumName<DeliveryMode> kDeliveryModeNames[] = {
    {DeliveryMode::Fixed, "fixed"},
    {DeliveryMode::LowestPriority, "lowest"},
    {DeliveryMode::Smi, "smi"},
    {DeliveryMode::RemoteRead, "remote-read"},
    {DeliveryMode::Nmi, "nmi"},
    {DeliveryMode::Init, "init"},
    {DeliveryMode::StartUp, "startup"},
    {DeliveryMode::ExtInt, "extint"},
};

const char* to_string(DeliveryMode m) { return name_of(kDeliveryModeNames, m).data(); }
constexpr EnumName<Shorthand> kShorthandNames[] = {
    {Shorthand::None, "none"},
    {Shorthand::Self, "self"},
    {Shorthand::AllIncludingSelf, "all"},
    {Shorthand::AllExcludingSelf, "all-but-self"},
};

const char* to_string(Shorthand s) { return name_of(kShorthandNames, s).data(); }
std::string describe_icr(const Icr& f) {
  return fmt::format("vector={:#04x} mode={} dest={}:{:#x} shorthand={} level={} trigger={}{}{}",
                     f.vector, to_string(f.delivery_mode),
                     f.dest_mode == DestMode::Logical ? "logical" : "phys", f.destination,
                     to_string(f.shorthand), f.level_assert ? "assert" : "deassert",
                     f.trigger == TriggerMode::Level ? "level" : "edge",
                     f.delivery_status ? " busy" : "",
                     f.reserved_low != 0 ? fmt::format(" reserved={:#x}", f.reserved_low) : "");
}

}  // namespace ipilab::x86
