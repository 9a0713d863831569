// ipilab gic decode / gic encode — read and write GICv4.1 ITS commands and GITS_SGIR values by hand;
// ipilab gic its SCRIPT — run a script of ITS register writes, commands and Linux driver calls.
// src/gic/command.h does the work (the codecs are src/gic/its_command.h, src/gic/sgir.h,
// src/gic/table_registers.h; the script runner is src/gic/its_script.h, format: docs/gic-its.md).
// This file only parses arguments and prints.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "gic/command.h"

namespace ipilab::cli {

void add_gic_command(CLI::App& root) {
  auto* gic = root.add_subcommand(
      "gic", "GICv4.1 direct vSGI: decode and encode ITS commands and GITS_SGIR values, run ITS scripts");
  gic->require_subcommand(1);
  gic->footer("Run 'ipilab gic decode --help', 'ipilab gic encode --help' or 'ipilab gic its --help' for examples.");

  auto d = std::make_shared<gic::DecodeOptions>();
  auto* dec = gic->add_subcommand(
      "decode",
      "Decode a 32-byte GICv4.1 ITS command (SYNC, VMAPP, VMOVP, VSGI, VSYNC, VINVALL, INVDB) or a GITS_SGIR value");
  dec->add_option("HEX", d->hex,
                  "the command as 32 bytes in memory order (spaces, ':' or ',' between bytes are fine), or four\n"
                  "64-bit doublewords DW0..DW3 each written 0x..., or one 64-bit GITS_SGIR value")
      ->required();
  dec->add_flag("--sgir", d->sgir, "read HEX as a GITS_SGIR value (automatic for a single value of up to 16 digits)");
  dec->add_flag("--dwords", d->dwords, "read HEX as four 64-bit doublewords DW0 DW1 DW2 DW3");
  dec->add_flag("--json", d->json, "print an object: command, opcode, dwords, bytes, fields {name: value}, layout");
  dec->footer(R"(Every field is listed with its bit range (DWn[hi:lo]). In an ITS command, reserved bits set, unknown
opcodes and wrong lengths are errors (exit 2) that name the byte; in a GITS_SGIR value (a single
number of up to 16 hex digits), RES0 bits set are shown, not rejected: the hardware ignores them.

Examples:
  ipilab gic decode 23 05 a0 00 05 00 00 00 00 00 00 00 34 12 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
      -> VSGI: Enable 1, Group 1, Priority 0xa0, vINTID 5, vPEID 0x1234
  ipilab gic decode 0x0000000500a00523 0x0000123400000000 0x0 0x0        (the same, as DW0..DW3)
  ipilab gic decode 0x0000123400000005                                    (GITS_SGIR: vINTID 5 to vPE 0x1234)
  ipilab gic decode --json 0x0000123400000005
)");
  dec->callback([d] { gic::decode_command(*d, std::cout); });

  auto e = std::make_shared<gic::EncodeOptions>();
  auto* enc = gic->add_subcommand(
      "encode",
      "Encode an ITS command or a GITS_SGIR value from NAME=VALUE fields (names as 'gic decode' prints them)");
  enc->add_option("COMMAND", e->command, "sgir, sync, vsync, vmapp, vmovp, vsgi, invdb or vinvall")->required();
  enc->add_option("FIELDS", e->fields, "NAME=VALUE pairs, e.g. vPEID=0x1234 vINTID=5");
  enc->add_flag("--json", e->json, "print the same object as 'gic decode --json'");
  enc->footer(R"(Field names are matched in any case; missing fields are 0; values are decimal or 0x-hex; addresses
and Priority are given in their full units.

Examples:
  ipilab gic encode vsgi vPEID=0x1234 vINTID=5 Priority=0xa0 Enable=1 Group=1
  ipilab gic encode vmapp vPEID=3 RDbase=33 V=1 Alloc=1 VPT_size=15 VPT_addr=0x80030000 Default_DB=8195
  ipilab gic encode sgir vPEID=0x1234 vINTID=5
)");
  enc->callback([e] { gic::encode_command(*e, std::cout); });

  auto i = std::make_shared<gic::ItsOptions>();
  auto* its = gic->add_subcommand(
      "its",
      "Run an ITS script (register writes, ITS commands, Linux host-driver calls), printing the ITS state per step");
  its->add_option("SCRIPT", i->script,
                  "a script file, or the name of a shipped example (docs/examples/its/NAME.its):\n"
                  "disable-reenable, wrap-wait, vpe-move, vpe-tables, vpe-l1-fixes")
      ->required();
  its->add_option("--linux", i->linux_version,
                  "the host driver's vPE-table bring-up: mainline, or v5.6-rc1 (before e88bd316e597 and 8b718d403c5c); "
                  "overrides the script's system linux=");
  its->add_flag("--json", i->json, "print every step with its full state as JSON (contract: docs/gic-its.md)");
  its->add_flag("--quiet", i->quiet, "text output: print the state only after the bring-up, events after every step");
  its->footer(R"(A script holds register writes (GITS_CTLR, GITS_CBASER, GITS_CWRITER, GITS_BASER<n>, GITS_SGIR,
GICR_VPROPBASER / GICR_VPENDBASER per redistributor), guest-memory writes, ITS commands and Linux host-driver
calls (map / move / unmap a vPE, VSGI, INVDB, GITS_SGIR, completion waits). After each step it prints the ITS
state: CREADR, CWRITER, errors, vPE mappings, pending vSGIs, and the vPE-table registers when they change.

The script format is documented in docs/gic-its.md. A script starts with a system line, e.g.
  system sockets=2 cpus_per_socket=2 common_lpi_aff=2
then one statement per line ('#' comments): write, mem, push, run, mode, driver, linux ..., expect ...
A Linux bring-up (boot=linux, the default) programs GITS_BASER2, GITS_CBASER, GITS_CTLR and every
GICR_VPROPBASER the way drivers/irqchip/irq-gic-v3-its.c does.

Exit status: 0, 1 when an expect line does not hold, 2 for a bad script (FILE:LINE and the reason).

Examples:
  ipilab gic its disable-reenable          # GITS_CTLR.Enabled 1 -> 0 -> 1: resumes at CREADR, no replay
  ipilab gic its wrap-wait                 # CREADR wraps past 64 KiB: a050fa5476d4's predicate vs the old one
  ipilab gic its vpe-move                  # VMOVP of a mapped vPE, of an unmapped one (CVE-2024-50192)
  ipilab gic its vpe-tables --quiet        # GITS_BASER2 / GICR_VPROPBASER for CommonLPIAff 3
  ipilab gic its vpe-l1-fixes --quiet      # v5.6-rc1: VPROPBASER.Size one page too many, vpe_l1_base NULL
  ipilab gic its wrap-wait --json | jq '.steps[] | select(.waits != []) | .waits'
)");
  its->callback([i] { gic::its_script_command(*i, std::cout); });
}

}  // namespace ipilab::cli
