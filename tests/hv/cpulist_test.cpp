// The list parsers of `ipilab hv send` (src/hv/cpulist.h): Linux cpulists (bitmap_parselist's
// "0-3,8" notation, Documentation/admin-guide/kernel-parameters.rst "cpu lists") and --cpu-vp.
#include "hv/cpulist.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "hv/abi.h"

namespace ipilab::hv {
namespace {

using U = std::vector<unsigned>;

std::string error_of(std::string_view text, unsigned limit = 16) {
  try {
    parse_cpulist(text, limit, "--present");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Cpulist, RangesSinglesOverlapsAndEmpty) {
  EXPECT_EQ(parse_cpulist("0-3,8", 16, "x"), (U{0, 1, 2, 3, 8}));
  EXPECT_EQ(parse_cpulist("8,0-3", 16, "x"), (U{0, 1, 2, 3, 8}));
  EXPECT_EQ(parse_cpulist("2-4,3-5,5", 16, "x"), (U{2, 3, 4, 5}));
  EXPECT_EQ(parse_cpulist("7", 8, "x"), U{7});
  EXPECT_EQ(parse_cpulist("4-4", 8, "x"), U{4});
  EXPECT_EQ(parse_cpulist("", 8, "x"), U{});
}

TEST(Cpulist, ErrorsNameTheItemAndTheReason) {
  EXPECT_EQ(error_of("0-3,16"), "--present item 2 '16': CPU 16 does not exist: nr_cpu_ids is 16 (the length of --cpu-vp)");
  EXPECT_EQ(error_of("5-2"), "--present item 1 '5-2': range 5-2 runs backwards");
  EXPECT_EQ(error_of("0,,1"), "--present item 2 '': empty item (two commas, or a comma at an end)");
  EXPECT_EQ(error_of("0,"), "--present item 2 '': empty item (two commas, or a comma at an end)");
  EXPECT_EQ(error_of("3-"), "--present item 1 '3-': a range needs a first and a last CPU (\"2-5\")");
  EXPECT_EQ(error_of("0-7:2/4"), "--present item 1 '0-7:2/4': the ':used/group' stride form is not supported; list the CPUs");
  EXPECT_EQ(error_of("N"), "--present item 1 'N': the 'N' / 'all' shorthands are not supported; give CPU numbers");
  EXPECT_EQ(error_of(" 1"), "--present item 1 ' 1': not a decimal CPU number");
  EXPECT_EQ(error_of("+1"), "--present item 1 '+1': not a decimal CPU number");
  EXPECT_EQ(error_of("99999999999999999999999"), "--present item 1 '99999999999999999999999': not a decimal CPU number");
}

TEST(Cpulist, FormatIsTheInverse) {
  EXPECT_EQ(format_cpulist({0, 1, 2, 3, 8}), "0-3,8");
  EXPECT_EQ(format_cpulist({1, 3, 5}), "1,3,5");
  EXPECT_EQ(format_cpulist({}), "");
  EXPECT_EQ(parse_cpulist(format_cpulist({0, 2, 3, 4, 9, 10}), 16, "x"), (U{0, 2, 3, 4, 9, 10}));
}

TEST(VpList, DecimalAndInval) {
  EXPECT_EQ(parse_vp_list("0,70,inval,4096", "--cpu-vp"),
            (std::vector<std::uint32_t>{0, 70, VP_INVAL, 4096}));
  EXPECT_EQ(parse_vp_list("INVAL,VP_INVAL,4294967295", "--cpu-vp"),
            (std::vector<std::uint32_t>{VP_INVAL, VP_INVAL, VP_INVAL}));
  auto err = [](std::string_view t) -> std::string {
    try {
      parse_vp_list(t, "--cpu-vp");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(err(""), "--cpu-vp: give one VP index per CPU (e.g. 0,1,70,inval)");
  EXPECT_EQ(err("0,x"), "--cpu-vp item 2 'x': not a decimal VP index (0..4294967295) or 'inval'");
  EXPECT_EQ(err("4294967296"), "--cpu-vp item 1 '4294967296': not a decimal VP index (0..4294967295) or 'inval'");
  EXPECT_EQ(err("0,"), "--cpu-vp item 2 '': empty item (two commas, or a comma at an end)");
  std::string many = "0";
  for (int i = 0; i < 8192; ++i) many += ",0";
  EXPECT_EQ(err(many), "--cpu-vp: 8193 CPUs: more than NR_CPUS can be (8192)");
}

}  // namespace
}  // namespace ipilab::hv
