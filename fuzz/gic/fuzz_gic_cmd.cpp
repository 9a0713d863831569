// libFuzzer target: arbitrary bytes into the ITS command decoder and into an ITS command queue.
// Seed corpus: fuzz/corpus/gic_cmd/ (encodings from tests/gic/codec_test.cpp, one or more commands each).
//
// Checks (trap on failure): a decoded command re-encodes to the same bytes; the queue never runs
// past CWRITER; every refused command is recorded; GITS_SGIR writes of any value never crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "gic/its_command.h"
#include "gic/linux_its.h"
#include "gic/sgir.h"
#include "gic/topology_builder.h"

using namespace ipilab::gic;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);

  // 1. The decoder on the whole input (usually the wrong length) and on every 32-byte slot.
  (void)decode_its_command(in);
  for (std::size_t off = 0; off + kItsCommandSize <= size; off += kItsCommandSize) {
    const auto slot = in.subspan(off, kItsCommandSize);
    const CommandDecode d = decode_its_command(slot);
    if (d.ok() == d.error.has_value()) __builtin_trap();
    if (d.ok()) {
      const CommandBytes again = encode_its_command(*d.command);
      if (std::memcmp(again.data(), slot.data(), kItsCommandSize) != 0) __builtin_trap();
    }
  }

  // 2. The same bytes as queue contents of ITS (size % 2) in a 2-socket host brought up by Linux.
  GicSystem sys(build_socket_topology(SocketTopology{2, 2}));
  LinuxItsDriver drv(sys);
  drv.map_vpe(1, 3);
  const int its = static_cast<int>(size % 2);
  ItsCommandQueue& q = sys.queue(its);
  q.write_cbaser(q.read_cbaser());  // CREADR back to 0 (the driver already used the queue)
  const std::size_t room = q.size_bytes() - kItsCommandSize;  // one slot always unused
  const std::size_t n = std::min(size / kItsCommandSize * kItsCommandSize, room);
  if (!q.write_memory(0, in.first(n))) __builtin_trap();
  const std::size_t errors_before = sys.command_errors().size();
  if (!q.write_cwriter(n)) __builtin_trap();
  const std::size_t done = sys.process_commands(its);
  if (done != n / kItsCommandSize || !q.empty()) __builtin_trap();
  if (sys.command_errors().size() < errors_before) __builtin_trap();

  // 3. Every 8 bytes as a GITS_SGIR value on both ITSs, and a vSGI through the driver.
  for (std::size_t off = 0; off + 8 <= size && off < 256; off += 8) {
    std::uint64_t v = 0;
    std::memcpy(&v, data + off, 8);
    for (int i = 0; i < 2; ++i) {
      const SgirWriteResult r = sys.write_sgir(i, v);
      if (r.sgir != decode_sgir(v).sgir) __builtin_trap();
      if (r.accepted() && (r.target_cpu < 0 || r.target_cpu >= 4)) __builtin_trap();
    }
  }
  if (size > 0) (void)drv.send_vsgi(size % 3 ? Find41Policy::PostSeed : Find41Policy::PreSeed, data[0] % 4, 1, data[0] % 16);
  return 0;
}
