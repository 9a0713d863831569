// `ipilab gic its` scripts (src/gic/its_script.h, docs/gic-its.md): the strict parser's errors (FILE:LINE
// and the word), and the shipped examples run with their expect lines and exact values.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/error.h"
#include "common/file.h"
#include "gic/its_script.h"

namespace ipilab::gic {
namespace {

std::string parse_error(std::string_view text) {
  try {
    parse_its_script(text, "t.its");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GicItsScriptParse, Errors_NameFileLineAndWord) {
  EXPECT_EQ(parse_error("write its0 GITS_CTLR 1\n"),
            "t.its:1: 'write' before the system line (a script starts with: system sockets=N cpus_per_socket=M)");
  EXPECT_EQ(parse_error("# nothing\n"), "t.its:1: no system line (a script starts with: system sockets=N cpus_per_socket=M)");
  EXPECT_EQ(parse_error("system sockets=1\n"), "t.its:1: system: missing cpus_per_socket=");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2 colour=3\n"),
            "t.its:1: system: unknown key 'colour' (keys: sockets, cpus_per_socket, socket_aff, cluster, common_lpi_aff, "
            "svpet, vmovp, pta, vpeid_bits, vpe_entry_bytes, processing, on_error, boot, linux)");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\n\nwrite its1 GITS_CTLR 1\n"),
            "t.its:3: write: its1 does not exist (the system has 1 ITSs)");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nwrite its0 GITS_CTRL 1\n"),
            "t.its:2: write: unknown register 'GITS_CTRL' (GITS_CTLR, GITS_CBASER, GITS_CWRITER, GITS_BASER0..7, "
            "GITS_SGIR, GICR_VPROPBASER, GICR_VPENDBASER)");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nwrite its0 GITS_CBASER Valid=1 Size=256\n"),
            "t.its:2: GITS_CBASER.Size: 256 does not fit in [7:0]");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nwrite its0 GITS_CBASER Valid=1 PA=0x1234\n"),
            "t.its:2: GITS_CBASER.PA: 0x1234 is not a 4 KiB aligned address below 2^52");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nwrite its0 GITS_CTLR Quiescent=1\n"),
            "t.its:2: GITS_CTLR.Quiescent is read-only");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nwrite its0 GITS_CWRITER 0x2g\n"),
            "t.its:2: write GITS_CWRITER: '0x2g' is not a number (decimal, or hex with 0x; '_' between digits)");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\npush its0 VSGI vPEID=1 vINTID=16\n"),
            "t.its:2: push: VSGI.vINTID: 0x10 does not fit in DW0[35:32]");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\npush its0 MAPD DeviceID=1\n"),
            "t.its:2: push: MAPD is a real ITS command this model does not implement");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nlinux move vpe=1 cpu=2\n"),
            "t.its:2: linux move cpu: 2 is not in 0..1");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nlinux wait A\n"),
            "t.its:2: linux wait: no batch was posted as 'A' before this line");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nlinux move vpe=1 cpu=1 as=A\nlinux move vpe=1 cpu=0 as=A\n"),
            "t.its:3: linux move: as=A is already used");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2 boot=none\nlinux map vpe=1 cpu=0\n"),
            "t.its:2: linux: the system was not brought up by Linux (system boot=none)");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nexpect its0 creadr=0x40 speed=3\n"),
            "t.its:2: expect its0: unknown key 'speed' (keys: creadr, cwriter, cbaser, ctlr, baser2, enabled, stalled, "
            "pending, executed, errors, vpes, cmd_write)");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nrun its0\nits 0 svpet=0\n"),
            "t.its:3: its: ITS configuration must come before the first step");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nlinux vsgi vpe=1 vintid=1 sender=0 priority=0xa8\n"),
            "t.its:2: linux vsgi priority: 0xa8 has a low nibble; VSGI encodes priority >> 4");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nlinux traffic its=0 count=2048\n"),
            "t.its:2: linux traffic count (a batch must fit the 64 KiB queue): 2048 is not in 1..2047");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nsystem sockets=1 cpus_per_socket=2\n"),
            "t.its:2: system: given twice (one system per script)");
  EXPECT_EQ(parse_error("system sockets=1 cpus_per_socket=2\nfrobnicate\n"),
            "t.its:2: unknown statement 'frobnicate' (system, its, driver, write, mem, push, run, mode, linux, expect)");
  EXPECT_EQ(parse_error(std::string("system sockets=1 cpus_per_socket=2\nrun its0\0\n", 44)),
            "t.its:2: a NUL byte: this is not a text file");
}

TEST(GicItsScriptParse, Fields_ComposeExactRegisterValues) {
  const ItsScript s = parse_its_script(
      "system sockets=1 cpus_per_socket=1   # comment\n"
      "write its0 GITS_CBASER Valid=1 PA=0x4000_0000 Size=15 InnerCache=7 Shareability=1\n"
      "write its0 GITS_BASER2 Valid=1 Indirect=1 Page_Size=64K PA=0x5000000000000\n"
      "write rd0 GICR_VPROPBASER Valid=1 Page_Size=16k Z=1 PA=0x50000000 Size=3\n"
      "write its0 GITS_CTLR 0x3\n",
      "f.its");
  ASSERT_EQ(s.steps.size(), 4U);
  EXPECT_EQ(std::get<ScriptWrite>(s.steps[0].action).value, 0xB800'0000'4000'040FULL);
  // 64K pages: PA[51:48] = 5 goes to [15:12]; Valid | Indirect | Page_Size 2 << 8.
  EXPECT_EQ(std::get<ScriptWrite>(s.steps[1].action).value, 0xC000'0000'0000'5200ULL);
  EXPECT_EQ(std::get<ScriptWrite>(s.steps[1].action).baser_n, 2);
  EXPECT_EQ(std::get<ScriptWrite>(s.steps[2].action).value, 0x8030'0000'5000'0003ULL);
  EXPECT_EQ(s.steps[3].line, 5);
  EXPECT_EQ(s.steps[0].text, "write its0 GITS_CBASER Valid=1 PA=0x4000_0000 Size=15 InnerCache=7 Shareability=1");
}

std::string example(std::string_view name) {
  return read_text_file(std::filesystem::path(IPILAB_SOURCE_DIR) / "docs" / "examples" / "its" / (std::string(name) + ".its"));
}

ItsScriptResult run_example(std::string_view name) {
  return run_its_script(parse_its_script(example(name), name));
}

void expect_all_hold(const ItsScriptResult& r) {
  EXPECT_GT(r.expectations, 10U);
  EXPECT_EQ(r.expectations_failed, 0U);
  for (const StepResult& s : r.steps)
    for (const std::string& f : s.expect_failures) ADD_FAILURE() << "line " << s.line << ": " << f;
}

const StepResult& step_at(const ItsScriptResult& r, int line) {
  for (const StepResult& s : r.steps)
    if (s.line == line) return s;
  throw std::runtime_error("no step at line " + std::to_string(line));
}

TEST(GicItsScriptExamples, DisableReenable_ResumesAtCreadr_CbaserRefusedWhileEnabled) {
  const ItsScriptResult r = run_example("disable-reenable");
  expect_all_hold(r);
  const StepResult& wait = step_at(r, 18);
  ASSERT_EQ(wait.waits.size(), 1U);
  EXPECT_EQ(wait.waits[0].result.linux_message, "ITS queue timeout (192 128); ITS cmd its_build_vmovp_cmd failed");
  const StepResult& refused = step_at(r, 26);
  ASSERT_EQ(refused.register_notes.size(), 1U);
  EXPECT_FALSE(refused.register_notes[0].applied);
  EXPECT_EQ(refused.state.its[0].creadr, 0xC0U);
}

TEST(GicItsScriptExamples, WrapWait_LinearOnePoll_OffsetsTheCommitsMessage) {
  const ItsScriptResult r = run_example("wrap-wait");
  expect_all_hold(r);
  const ItsWaitResult& lin = step_at(r, 23).waits.at(0).result;
  EXPECT_EQ(lin.outcome, WaitOutcome::Completed);
  EXPECT_EQ(lin.snapshot, 65440U);
  EXPECT_EQ(lin.to, 65504U);
  EXPECT_EQ(lin.last_creadr, 480U);
  const ItsWaitResult& off = step_at(r, 28).waits.at(0).result;
  EXPECT_EQ(off.linux_message, "ITS queue timeout (65440 65504 480); ITS cmd its_build_vmovp_cmd failed");
  EXPECT_EQ(off.udelays, 999'999U);
}

TEST(GicItsScriptExamples, VpeMove_RefusalAndErrorsNameCommandAndVpe) {
  const ItsScriptResult r = run_example("vpe-move");
  expect_all_hold(r);
  EXPECT_NE(step_at(r, 35).refused.value_or("").find("CVE-2024-50192"), std::string::npos);
  const StepResult& sent = step_at(r, 39);
  ASSERT_EQ(sent.command_errors.size(), 2U);
  EXPECT_EQ(sent.command_errors[0].message, "ITS 1: VMOVP at 0x00e0: vPE 0x1 is not mapped on this ITS");
  EXPECT_EQ(sent.command_errors[1].message, "ITS 1: VSYNC at 0x0100: vPE 0x1 is not mapped on this ITS (the GIC may answer a VSYNC naming a non-existent vPE with an SError, which this model does not raise)");
  const StepResult& unmap = step_at(r, 30);
  ASSERT_EQ(unmap.issued.size(), 2U);
  EXPECT_FALSE(std::get<VmappCmd>(unmap.issued[0].command).alloc);
  EXPECT_TRUE(std::get<VmappCmd>(unmap.issued[1].command).alloc);
}

TEST(GicItsScriptExamples, VpeTables_CommonLpiAff3) {
  const ItsScriptResult r = run_example("vpe-tables");
  expect_all_hold(r);
  ASSERT_EQ(r.cpu_sources.size(), 64U);
  EXPECT_EQ(r.cpu_sources[16], "private");
  EXPECT_EQ(r.cpu_sources[32], "inherited_from_its");
  EXPECT_EQ(r.steps[0].state.rds[63].vpropbaser, 0x98C0'0000'5003'0580ULL);
}

TEST(GicItsScriptExamples, EveryShippedScriptAndFuzzSeed_RunsWithEveryExpectationHolding) {
  const std::filesystem::path root(IPILAB_SOURCE_DIR);
  int n = 0;
  for (const auto& dir : {root / "docs" / "examples" / "its", root / "fuzz" / "corpus" / "its_script"})
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".its") continue;
      const ItsScriptResult r = run_its_script(parse_its_script(read_text_file(entry.path()), entry.path().string()));
      EXPECT_EQ(r.expectations_failed, 0U) << entry.path();
      ++n;
    }
  EXPECT_GE(n, 10);
}

TEST(GicItsScriptRun, FailedExpectation_Counted_WithBothValues) {
  const ItsScriptResult r = run_its_script(parse_its_script(
      "system sockets=1 cpus_per_socket=2\nlinux map vpe=1 cpu=0\nexpect its0 creadr=0x40 executed=4\n", "t.its"));
  EXPECT_EQ(r.expectations, 2U);
  EXPECT_EQ(r.expectations_failed, 1U);
  ASSERT_EQ(r.steps.back().expect_failures.size(), 1U);
  EXPECT_EQ(r.steps.back().expect_failures[0], "its0 creadr: expected 0x40, got 0x80");
}

TEST(GicItsScriptRun, RawQueue_PushRunStall_Retry) {
  const ItsScriptResult r = run_its_script(parse_its_script(
      "system sockets=1 cpus_per_socket=2 boot=none on_error=stall processing=manual\n"
      "write its0 GITS_BASER2 Valid=1 Page_Size=64K PA=0x50000000\n"
      "write its0 GITS_CBASER Valid=1 PA=0x40000000 Size=0\n"
      "write its0 GITS_CTLR Enabled=1\n"
      "push its0 VSYNC vPEID=3 count=2\n"     // vPE 3 unmapped: the first VSYNC stalls the queue
      "run its0\n"
      "expect its0 creadr=0x1 stalled=1 pending=2 errors=1\n"
      "push its0 VMAPP vPEID=3 RDbase=1 V=1 VPT_size=15\n"
      "write its0 GITS_CWRITER Offset=0x60 Retry=1\n"
      "run its0 1\n"
      "expect its0 creadr=0x1 errors=2\n",      // retried: fails again, still stalled
      "t.its"));
  EXPECT_EQ(r.expectations_failed, 0U);
  for (const StepResult& s : r.steps)
    for (const std::string& f : s.expect_failures) ADD_FAILURE() << "line " << s.line << ": " << f;
}

}  // namespace
}  // namespace ipilab::gic

namespace ipilab::gic {
namespace {

// The same bring-up before (linux=v5.6-rc1) and after e88bd316e597 / 8b718d403c5c: the script's
// expectations hold before and fail after, on exactly the two fixed facts.
TEST(GicItsScriptExamples, VpeL1Fixes_BugBeforeTheFixesAndNotAfter) {
  ItsScript s = parse_its_script(example("vpe-l1-fixes"), "vpe-l1-fixes");
  ASSERT_FALSE(s.system.linux_vpe_l1_fixes);
  const ItsScriptResult before = run_its_script(s);
  EXPECT_EQ(before.expectations_failed, 0U);
  const RdView& inherited = before.steps[0].state.rds[15];
  EXPECT_FALSE(inherited.vpe_l1_base.has_value());  // NULL: 8b718d403c5c not applied
  const RdView& priv = before.steps[0].state.rds[16];
  EXPECT_EQ(decode_gicr_vpropbaser41(priv.vpropbaser).pages, 2);  // Size = npg = 1 -> read as 2 pages
  EXPECT_EQ(priv.l1_bytes_allocated, 65536U);
  EXPECT_EQ(priv.vpe_l1_base, 0x5002'0000ULL);

  s.system.linux_vpe_l1_fixes = true;
  const ItsScriptResult after = run_its_script(s);
  EXPECT_EQ(after.expectations_failed, 2U);
  EXPECT_EQ(after.steps[0].state.rds[15].vpe_l1_base, 0x5000'0000ULL);
  EXPECT_EQ(decode_gicr_vpropbaser41(after.steps[0].state.rds[16].vpropbaser).pages, 1);
  EXPECT_EQ(step_at(after, 10).expect_failures.at(0), "rd15 vpe_l1_base: expected none (NULL), got 0x50000000");
  EXPECT_EQ(step_at(after, 12).expect_failures.at(0), "rd16 table_pages: expected 2, got 1");
}

TEST(GicItsScriptParse, LinuxVersionOnTheSystemLine) {
  EXPECT_TRUE(parse_its_script("system sockets=1 cpus_per_socket=2\n", "t.its").system.linux_vpe_l1_fixes);
  EXPECT_FALSE(
      parse_its_script("system sockets=1 cpus_per_socket=2 linux=v5.6-rc1\n", "t.its").system.linux_vpe_l1_fixes);
  EXPECT_THROW(parse_its_script("system sockets=1 cpus_per_socket=2 linux=v5.5\n", "t.its"), InputError);
}

}  // namespace
}  // namespace ipilab::gic
