#include "scenario/sample_hypercall.h"

#include <fmt/format.h>

namespace ipilab::scenario {
namespace {

constexpr std::size_t kWidth = 110;

// `line` (with its own leading spaces) after `prefix`, broken at spaces into lines of at most kWidth
// columns; continuation lines start under the text after the label (`hv send` labels are 10 columns
// and a space), or two columns right of an indented line's start.
std::string wrap_line(const std::string& prefix, const std::string& line) {
  const std::size_t lead = line.find_first_not_of(' ');
  const std::size_t indent = lead == 0 ? 11 : (lead == std::string::npos ? 0 : lead) + 2;
  const std::string cont = prefix + std::string(indent, ' ');
  std::string out, cur = prefix + line.substr(0, lead == std::string::npos ? line.size() : lead);
  bool first_word = true;
  std::size_t pos = lead == std::string::npos ? line.size() : lead;
  while (pos < line.size()) {
    std::size_t end = line.find(' ', pos);
    if (end == std::string::npos) end = line.size();
    const std::string word = line.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) {
      if (!first_word) cur += ' ';
      continue;
    }
    if (!first_word && cur.size() + 1 + word.size() > kWidth && cur.size() > cont.size()) {
      while (!cur.empty() && cur.back() == ' ') cur.pop_back();
      out += cur + "\n";
      cur = cont + word;
    } else {
      cur += (first_word ? "" : " ") + word;
    }
    first_word = false;
  }
  while (!cur.empty() && cur.back() == ' ') cur.pop_back();
  return out + cur + "\n";
}

}  // namespace

std::string format_sample_hypercall(const workload::RunResult& r, const std::string& indent) {
  if (!r.sample_hypercall) return {};
  const workload::SampleHypercall& s = *r.sample_hypercall;
  const std::string cont = indent + std::string(10, ' ');
  std::string out = fmt::format("{}{:<9} the run's first send, exactly: {}\n", indent, "sample", s.call);
  if (!s.command.empty()) out += fmt::format("{}same as: {}\n", cont, s.command);
  else if (!s.no_command_reason.empty()) out += fmt::format("{}no `ipilab hv send` equivalent: {}\n", cont, s.no_command_reason);
  // `hv send`'s lines from "call" on: the guest and its VP map are the variant's settings and VM.
  bool on = false;
  std::size_t pos = 0;
  while (pos < s.text.size()) {
    std::size_t end = s.text.find('\n', pos);
    if (end == std::string::npos) end = s.text.size();
    const std::string line = s.text.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("call ", 0) == 0) on = true;
    if (on && !line.empty()) out += wrap_line(cont, line);
  }
  return out;
}

nlohmann::ordered_json sample_hypercall_json(const workload::RunResult& r) {
  if (!r.sample_hypercall) return nullptr;
  return r.sample_hypercall->json;
}

}  // namespace ipilab::scenario
