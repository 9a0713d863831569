// `ipilab gic decode | encode | its` called as functions (src/gic/command.h), without the executable.
#include "gic/command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace {

using namespace ipilab::gic;

constexpr const char* kVsgiText =
    "VSGI (opcode 0x23)\n"
    "  DW0 0x0000000500a00523  DW1 0x0000123400000000\n"
    "  DW2 0x0000000000000000  DW3 0x0000000000000000\n"
    "  bytes 23 05 a0 00 05 00 00 00 00 00 00 00 34 12 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n"
    "  Enable          DW0[8]       1                            vSGI enabled (Clear=0 only)\n"
    "  Clear           DW0[9]       0                            1 = clear the pending bit, leave the configuration\n"
    "  Group           DW0[10]      1                            1 = group 1\n"
    "  Priority        DW0[23:20]   0xa0 (160) [field 0xa << 4]  priority (top 4 bits of the 8-bit priority)\n"
    "  vINTID          DW0[35:32]   5                            virtual SGI number 0..15\n"
    "  vPEID           DW1[47:32]   0x1234 (4660)                target vPE\n";

TEST(GicCommand, DecodeBytes_Vsgi_EveryFieldWithItsBitRange) {
  DecodeOptions o;
  o.hex = {"23", "05", "a0", "00", "05", "00", "00", "00", "00", "00", "00", "00", "34", "12", "00", "00",
           "00", "00", "00", "00", "00", "00", "00", "00", "00", "00", "00", "00", "00", "00", "00", "00"};
  std::ostringstream out;
  decode_command(o, out);
  EXPECT_EQ(out.str(), kVsgiText);
}

TEST(GicCommand, DecodeFourDwords_SameAsTheBytes) {
  DecodeOptions o;
  o.hex = {"0x0000000500a00523", "0x0000123400000000", "0x0", "0x0"};
  std::ostringstream out;
  decode_command(o, out);
  EXPECT_EQ(out.str(), kVsgiText);
}

TEST(GicCommand, EncodeVsgi_GivesTheBytesDecodeReads) {
  EncodeOptions o;
  o.command = "vsgi";
  o.fields = {"vPEID=0x1234", "vINTID=5", "Priority=0xa0", "Enable=1", "Group=1"};
  std::ostringstream out;
  encode_command(o, out);
  EXPECT_EQ(out.str(), kVsgiText);
}

TEST(GicCommand, DecodeSgirJson_FieldsAndOffset) {
  DecodeOptions o;
  o.hex = {"0x0000123400000005"};
  o.json = true;
  std::ostringstream out;
  decode_command(o, out);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["command"], "GITS_SGIR");
  EXPECT_EQ(j["value"], "0x0000123400000005");
  EXPECT_EQ(j["offset_from_its_base"], "0x20020");
  EXPECT_EQ(j["fields"]["vINTID"], 5);
  EXPECT_EQ(j["fields"]["vPEID"], 0x1234);
  EXPECT_EQ(j["res0_set"], "0x0");
}

TEST(GicCommand, EncodeSgir_Text) {
  EncodeOptions o;
  o.command = "SGIR";
  o.fields = {"vpeid=0x1234", "VINTID=5"};
  std::ostringstream out;
  encode_command(o, out);
  EXPECT_EQ(out.str(),
            "GITS_SGIR 0x0000123400000005  (write-only, ITS base + 0x20020; one posted 64-bit write)\n"
            "  vINTID   [3:0]    5\n"
            "  vPEID    [47:32]  0x1234 (4660)\n"
            "  RES0     other    clear\n");
}

TEST(GicCommand, BadInput_InputErrorNamingThePlace_NothingWritten) {
  std::ostringstream out;
  DecodeOptions d;
  d.hex = {"23", "05", "a0"};
  try {
    decode_command(d, out);
    FAIL() << "no error";
  } catch (const ipilab::InputError& e) {
    EXPECT_EQ(e.place(), "HEX");
    EXPECT_EQ(e.reason(), "got 3 bytes; an ITS command is 32 bytes (DW0..DW3, little-endian), a GITS_SGIR value is "
                          "one 64-bit number");
  }
  EncodeOptions e;
  e.command = "sgir";
  e.fields = {"vINTID=16"};
  try {
    encode_command(e, out);
    FAIL() << "no error";
  } catch (const ipilab::InputError& x) {
    EXPECT_EQ(x.place(), "vINTID");
    EXPECT_EQ(x.reason(), "0x10 does not fit");
  }
  EXPECT_EQ(out.str(), "");
}

TEST(GicCommand, ItsShippedExample_ReportEndsWithTheCounts) {
  ItsOptions o;
  o.script = "disable-reenable";  // the shipped docs/examples/its/disable-reenable.its (IPILAB_DATA_DIR)
  std::ostringstream out;
  its_script_command(o, out);
  const std::string s = out.str();
  EXPECT_TRUE(s.starts_with("disable-reenable\n[line 4] system (bring-up)\n")) << s;
  EXPECT_TRUE(s.ends_with("bring-up + 19 steps, 27 expectations checked, 0 failed\n")) << s;
  EXPECT_NE(s.find("[line 37] expect its0 creadr=0 cwriter=0 pending=0 executed=6\n  expect   ok\n"), std::string::npos);
}

TEST(GicCommand, ItsFailedExpectation_ReportWrittenThenCheckFailed) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "gic-command-fail.its";
  {
    std::ofstream f(path);
    f << "system sockets=1 cpus_per_socket=2 boot=none\nexpect its0 enabled=1\n";
  }
  ItsOptions o;
  o.script = path.string();
  o.json = true;
  std::ostringstream out;
  try {
    its_script_command(o, out);
    FAIL() << "no error";
  } catch (const ipilab::CheckFailed& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ": 1 of 1 expectations failed");
  }
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["expectations"]["checked"], 1);
  EXPECT_EQ(j["expectations"]["failed"], 1);
  EXPECT_EQ(j["steps"].size(), 2u);
  std::filesystem::remove(path);
}

TEST(GicCommand, ItsBadLinuxVersion_InputError) {
  ItsOptions o;
  o.script = "disable-reenable";
  o.linux_version = "v6.1";
  std::ostringstream out;
  try {
    its_script_command(o, out);
    FAIL() << "no error";
  } catch (const ipilab::InputError& e) {
    EXPECT_EQ(e.place(), "--linux");
    EXPECT_EQ(e.reason(), "'v6.1': give mainline or v5.6-rc1");
  }
  EXPECT_EQ(out.str(), "");
}

}  // namespace
