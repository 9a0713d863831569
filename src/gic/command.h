// ipilab/gic/command.h — `ipilab gic decode | encode | its` as functions: the CLI (src/cli/cmd_gic.cpp)
// only declares the options and calls them; tests call the same functions with an options struct.
//
// decode_command: reads DecodeOptions::hex as one GITS_SGIR value (--sgir, or a single word without
// separators that is not the 64 digits of a whole command), as four doublewords DW0..DW3 (--dwords,
// or four words each written 0x...), else as the 32 bytes of an ITS command in memory order; decodes
// it (sgir.h, its_command.h) and prints every field with its bit range, or the JSON object, on `out`.
// encode_command: builds a GITS_SGIR value or an ITS command from NAME=VALUE fields (names in any
// case, values decimal or 0x-hex, missing fields 0) and prints it as decode_command does.
// its_script_command: resolves the script (a path, or the name of a shipped docs/examples/its/NAME.its),
// parses it completely, applies --linux, runs it (its_script.h), then prints the report (text or
// JSON: gic/its_report.h) on `out`, and only after that throws CheckFailed when an expect line failed.
//
// Nothing is printed before the input is fully read. Errors: InputError (exit 2) for bad hex, a bad
// field, an unknown command, a bad script (FILE:LINE) or a bad --linux; CheckFailed (exit 1) for a
// failed expectation. None of these write to stderr: main() prints the error.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace ipilab::gic {

struct DecodeOptions {
  std::vector<std::string> hex{};  ///< the words of HEX as given on the command line
  bool sgir = false;               ///< --sgir: one GITS_SGIR value
  bool dwords = false;             ///< --dwords: four 64-bit doublewords
  bool json = false;
};

struct EncodeOptions {
  std::string command{};             ///< sgir, sync, vsync, vmapp, vmovp, vsgi, invdb or vinvall (any case)
  std::vector<std::string> fields{}; ///< NAME=VALUE
  bool json = false;
};

struct ItsOptions {
  std::string script{};         ///< a script file, or the name of a shipped example
  bool json = false;
  bool quiet = false;           ///< text: the state only after the bring-up
  std::string linux_version{};  ///< --linux: mainline | v5.6-rc1, overrides the system line's linux= ("" = keep)
};

/// `ipilab gic decode` (see the file comment).
void decode_command(const DecodeOptions& opts, std::ostream& out);
/// `ipilab gic encode` (see the file comment).
void encode_command(const EncodeOptions& opts, std::ostream& out);
/// `ipilab gic its` (see the file comment).
void its_script_command(const ItsOptions& opts, std::ostream& out);

}  // namespace ipilab::gic
