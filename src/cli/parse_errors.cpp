// The messages for refused command lines (see parse_errors.h).
#include "cli/parse_errors.h"

#include <charconv>
#include <regex>
#include <vector>

#include <fmt/format.h>

#include "common/number.h"
#include "common/suggest.h"

namespace ipilab::cli {

namespace {

bool visible(const CLI::App* s) { return !s->get_group().empty(); }

/// "run", "measure kvm"; "" for the root.
std::string path_of(const CLI::App& cmd) {
  std::string name;
  for (const CLI::App* a = &cmd; a->get_parent(); a = a->get_parent())
    name = name.empty() ? a->get_name() : a->get_name() + " " + name;
  return name;
}

std::string full_name(const CLI::App& cmd) {
  const std::string p = path_of(cmd);
  return p.empty() ? "ipilab" : "ipilab " + p;
}

/// The deepest command the failed parse reached.
const CLI::App& deepest(const CLI::App& root) {
  const CLI::App* cmd = &root;
  while (!cmd->get_subcommands().empty()) cmd = cmd->get_subcommands().front();
  return *cmd;
}

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd.get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

bool has_option(const CLI::App& cmd, const std::string& typed) {
  for (const std::string& n : option_names(cmd))
    if (n == typed) return true;
  return false;
}

bool is_ancestor(const CLI::App* a, const CLI::App& of) {
  for (const CLI::App* p = of.get_parent(); p; p = p->get_parent())
    if (p == a) return true;
  return false;
}

/// The commands other than `cmd` and its parents (depth first) that have the option `typed`; a
/// command whose own subcommands have it too is left out for them ('measure c2c', not 'measure').
bool commands_with(const CLI::App& app, const CLI::App& cmd, const std::string& typed, std::vector<std::string>& out) {
  std::vector<std::string> below;
  bool found_below = false;
  for (const CLI::App* s : app.get_subcommands(visible)) found_below |= commands_with(*s, cmd, typed, below);
  const bool here = &app != &cmd && app.get_parent() && !is_ancestor(&app, cmd) && has_option(app, typed);
  if (here && !found_below) out.push_back("'" + path_of(app) + "'");
  out.insert(out.end(), below.begin(), below.end());
  return here || found_below;
}

std::string join_and(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
  return s;
}

std::string subcommand_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::App* s : cmd.get_subcommands(visible)) names.push_back(s->get_name());
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

/// The reason for words left over on the command line (ExtrasError).
std::string extras_reason(const CLI::App& root, const CLI::App& cmd, const std::vector<std::string>& extras) {
  if (extras.empty()) return {};
  const std::string& extra = extras.front();
  const std::string where = full_name(cmd);
  if (extra.size() > 1 && extra[0] == '-') {
    const std::string typed = extra.substr(0, extra.find('='));
    std::vector<std::string> others;
    commands_with(root, cmd, typed, others);
    const std::string dym = did_you_mean(typed, option_names(cmd));
    if (!others.empty() && dym.empty())
      return fmt::format("{} is not an option of '{}': it is an option of {}", typed, where, join_and(others));
    return fmt::format("'{}' is not an option of '{}'{}{}", typed, where, dym,
                       others.empty() ? "" : fmt::format(" ({} is an option of {})", typed, join_and(others)));
  }
  std::vector<std::string> subs;
  for (const CLI::App* s : cmd.get_subcommands(visible)) subs.push_back(s->get_name());
  if (!subs.empty())
    return fmt::format("'{}' is not {}{}", extra,
                       cmd.get_parent() ? fmt::format("a command of '{}'", where) : std::string("an ipilab command"),
                       did_you_mean(extra, subs));
  return fmt::format("'{}' was not expected: '{}' takes no more arguments{}", extra, where,
                     extras.size() > 1 ? fmt::format(" ({} words left over)", extras.size()) : "");
}

/// A range bound as CLI11 prints it ("86400.000000") in its shortest form ("86400"); other text as is.
std::string tidy_bound(const std::string& s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || s.find('.') == std::string::npos) return s;
  return fmt::format("{}", v);
}

/// CLI11's text with its wording made ours where it is vague; one line.
std::string reworded(const CLI::App& cmd, std::string what) {
  for (char& c : what)
    if (c == '\n') c = ' ';
  std::smatch m;
  // CLI::Range: "--jobs: Value 0 not in range 1 to 4096"
  static const std::regex range(R"(^(\S+): Value (\S+) not in range (\S+) to (\S+)$)");
  if (std::regex_match(what, m, range)) {
    // CLI::Range says "not in range" for a value that is no number at all: say what it is.
    const CLI::Option* o = cmd.get_option_no_throw(m[1].str());
    const std::string type = o ? o->get_type_name() : std::string();
    const number::Kind kind = type.rfind("FLOAT", 0) == 0  ? number::Kind::Real
                              : type.rfind("INT", 0) == 0 ? number::Kind::Signed
                                                          : number::Kind::Unsigned;
    if (const std::string p = number::problem(m[2].str(), kind); !p.empty()) return fmt::format("{}: {}", m[1].str(), p);
    return fmt::format("{}: {} is outside the range {} to {}", m[1].str(), m[2].str(), tidy_bound(m[3].str()), tidy_bound(m[4].str()));
  }
  // "--vcpus excludes --vps"
  static const std::regex excludes(R"(^(\S+) excludes (\S+)$)");
  if (std::regex_match(what, m, excludes))
    return fmt::format("{}: not together with {}: give one of them", m[1].str(), m[2].str());
  // "Could not convert: --seed = abc"
  static const std::regex convert(R"(^Could not convert: (\S+) = (.*)$)");
  if (std::regex_match(what, m, convert)) {
    const CLI::Option* o = cmd.get_option_no_throw(m[1].str());
    const std::string type = o ? o->get_type_name() : std::string();
    // A whole number the one number parser took but the option's narrower type cannot hold.
    if (type.rfind("UINT", 0) == 0 && number::problem(m[2].str(), number::Kind::Unsigned).empty())
      return fmt::format("{}: {} is too large for this option", m[1].str(), m[2].str());
    if (type.rfind("INT", 0) == 0 && number::problem(m[2].str(), number::Kind::Signed).empty())
      return fmt::format("{}: {} is outside the range of this option", m[1].str(), m[2].str());
    return fmt::format("{}: '{}' is not a {}", m[1].str(), m[2].str(),
                       type.rfind("UINT", 0) == 0  ? "whole number (0 or more)"
                       : type.rfind("INT", 0) == 0 ? "whole number"
                       : type == "FLOAT"           ? "number"
                                                   : "valid value" + (type.empty() ? "" : " (" + type + ")"));
  }
  // "--json: At Most 1 required but received 2"
  static const std::regex at_most(R"(^(\S+): At Most (\d+) required but received (\d+)$)");
  if (std::regex_match(what, m, at_most))
    return m[2].str() == "1" ? fmt::format("{} is given {} times: give it once", m[1].str(), m[3].str())
                             : fmt::format("{} is given {} times: at most {}", m[1].str(), m[3].str(), m[2].str());
  // "--seed: 1 required UINT missing"
  static const std::regex missing(R"(^(\S+): \d+ required (\S+) missing$)");
  if (std::regex_match(what, m, missing))
    return fmt::format("{}: a value is missing ({})", m[1].str(), m[2].str());
  return what;
}

}  // namespace

std::string unknown_command_before_help(const CLI::App& root, int argc, char** argv) {
  const CLI::App* cmd = &root;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a.size() > 1 && a[0] == '-') {
      if (a.find('=') != std::string::npos || a.rfind("--", 0) != 0) continue;
      const CLI::Option* o = cmd->get_option_no_throw(a);
      if (o && o->get_type_size() != 0 && o->get_items_expected_min() > 0) ++i;  // its value
      continue;
    }
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : cmd->get_subcommands([](const CLI::App*) { return true; }))
      if (s->check_name(a)) sub = s;
    if (sub) {
      cmd = sub;
      continue;
    }
    bool positionals = false;
    for (const CLI::Option* o : cmd->get_options())
      if (o->get_positional()) positionals = true;
    if (positionals || cmd->get_subcommands(visible).empty()) return {};
    return fmt::format("ipilab: error: {}\nRun '{} --help' for more.\n", extras_reason(root, *cmd, {a}),
                       full_name(*cmd));
  }
  return {};
}

std::string parse_error_message(const CLI::App& root, const CLI::ParseError& e) {
  const CLI::App& cmd = deepest(root);
  std::string reason;
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) reason = extras_reason(root, cmd, root.remaining(true));
  if (reason.empty() && dynamic_cast<const CLI::RequiredError*>(&e) &&
      std::string_view(e.what()).starts_with("A subcommand")) {
    // A misspelt command is left over as a word ("ipilab gic decod 0x0"): say so, with the close ones.
    const std::vector<std::string> left = root.remaining(true);
    if (!left.empty() && !left.front().starts_with("-"))
      reason = extras_reason(root, cmd, left) + fmt::format(" (commands: {})", subcommand_names(cmd));
    else
      reason = fmt::format("'{}' needs a command: {}", full_name(cmd), subcommand_names(cmd));
  }
  if (reason.empty()) reason = reworded(cmd, e.what());
  return fmt::format("ipilab: error: {}\nRun '{} --help' for more.\n", reason, full_name(cmd));
}

}  // namespace ipilab::cli
