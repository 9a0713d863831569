#include "cli/completion.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

namespace ipilab::cli {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool has_name(const OptionDoc& o, std::initializer_list<const char*> names) {
  return std::any_of(o.names.begin(), o.names.end(),
                     [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); });
}

std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The key a script matches on: "<command path>:<word>", the path joined with spaces.
std::string key(const CommandDoc& c, const std::string& word) { return join(c.path) + ":" + word; }

// The double-quoted keys of an option's names.
std::vector<std::string> quoted_keys(const CommandDoc& c, const OptionDoc& o) {
  std::vector<std::string> ks;
  for (const auto& n : o.names) ks.push_back("\"" + key(c, n) + "\"");
  return ks;
}

// Both shells' scripts write a case pattern as `open PATTERN)`: bash "PAT)" (open = ""), zsh
// "(PAT)" (open = "(").

// The arms of the loop that walks the command path (case "$cmd:$w"): a subcommand name extends
// $cmd, an option that takes a value makes the loop skip that value.
void path_case_arms(std::ostream& s, const std::vector<const CommandDoc*>& all, const char* open) {
  std::vector<std::string> subs, valued;
  for (const auto* c : all) {
    for (const auto& sc : c->subcommands) subs.push_back("\"" + key(*c, sc.name) + "\"");
    for (const auto& o : c->options)
      if (o.takes_value)
        for (const auto& n : quoted_keys(*c, o)) valued.push_back(n);
  }
  if (!subs.empty()) s << "      " << open << join(subs, "|") << ") cmd=${cmd:+$cmd }$w ;;\n";
  if (!valued.empty()) s << "      " << open << join(valued, "|") << ") skip=1 ;;\n";
}

// The arms of case "$cmd:$prev", one per option that takes a value: `value(option, kind)` (the
// shell's commands that complete it), then `ret`.
void value_case_arms(std::ostream& s, const std::vector<const CommandDoc*>& all, const char* open,
                     std::string (*value)(const OptionDoc&, ValueKind), const char* ret) {
  for (const auto* c : all)
    for (const auto& o : c->options)
      if (o.takes_value)
        s << "    " << open << join(quoted_keys(*c, o), "|") << ") " << value(o, value_kind(o)) << "; " << ret << " ;;\n";
}

// Single-quoted for sh/zsh.
std::string squote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string one_line(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '\n' || c == '\t') ? ' ' : c;
  return out;
}

std::vector<std::string> option_words(const CommandDoc& c) {
  std::vector<std::string> out;
  for (const auto& o : c.options)
    for (const auto& n : o.names) out.push_back(n);
  return out;
}

std::vector<std::string> sub_names(const CommandDoc& c) {
  std::vector<std::string> out;
  for (const auto& s : c.subcommands) out.push_back(s.name);
  return out;
}

const char* names_kind(ValueKind k) {
  switch (k) {
    case ValueKind::Scenario: return "scenarios";
    case ValueKind::Preset: return "presets";
    case ValueKind::Profile: return "profiles";
    default: return nullptr;
  }
}

// ---- bash -------------------------------------------------------------------------------------

// The bash commands that complete a value of kind `k` (COMPREPLY is empty before).
std::string bash_value(const OptionDoc& o, ValueKind k) {
  switch (k) {
    case ValueKind::Choices: return "_ipilab_add -W " + squote(join(o.choices)) + " -- \"$cur\"";
    case ValueKind::Scenario:
    case ValueKind::Profile:
      return std::string("_ipilab_add -W \"$(_ipilab_names ") + names_kind(k) +
             ")\" -- \"$cur\"; _ipilab_add -d -- \"$cur\"; _ipilab_add -f -X '!*.toml' -- \"$cur\"; _ipilab_files";
    case ValueKind::Preset: return "_ipilab_add -W \"$(_ipilab_names presets)\" -- \"$cur\"";
    case ValueKind::File: return "_ipilab_add -f -- \"$cur\"; _ipilab_files";
    case ValueKind::Number:
    case ValueKind::None: return ":";
  }
  return ":";
}

}  // namespace

ValueKind value_kind(const OptionDoc& o) {
  if (!o.takes_value) return ValueKind::None;
  if (!o.choices.empty()) return ValueKind::Choices;
  const std::string type = lower(o.type), desc = lower(o.description);
  if (has_name(o, {"--preset"}) || type == "preset") return ValueKind::Preset;
  if (has_name(o, {"--scenario", "scenario"}) || type == "scenario") return ValueKind::Scenario;
  if (has_name(o, {"--profile", "--base"}) || type == "profile") return ValueKind::Profile;
  for (const char* t : {"uint", "int", "float", "number", "double"})
    if (type.rfind(t, 0) == 0) return ValueKind::Number;
  const std::string name = lower(o.names.back());
  if (type.find("file") != std::string::npos || desc.find("file") != std::string::npos ||
      name.find("file") != std::string::npos || name == "trace")
    return ValueKind::File;
  return ValueKind::None;
}

std::string bash_completion(const CommandDoc& root) {
  const auto all = flatten(root);
  std::ostringstream s;
  s << "# bash completion for ipilab                                    -*- shell-script -*-\n"
       "# Generated by 'ipilab help-completion bash' from ipilab's command tree; do not edit.\n\n"
       "# The built-in names, from the ipilab being completed.\n"
       "_ipilab_names() { \"${COMP_WORDS[0]}\" help-names \"$1\" 2>/dev/null; }\n"
       "# compgen into COMPREPLY, one candidate a line (names with spaces stay whole).\n"
       "_ipilab_add() { local w; while IFS= read -r w; do COMPREPLY+=(\"$w\"); done < <(compgen \"$@\"); }\n"
       "_ipilab_files() { compopt -o filenames 2>/dev/null || true; }\n\n"
       "_ipilab() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd= skip= i w\n"
       "  (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
       "  COMPREPLY=()\n"
       "  # The command path so far (subcommand names), skipping the values of options.\n"
       "  for (( i = 1; i < COMP_CWORD; i++ )); do\n"
       "    w=${COMP_WORDS[i]}\n"
       "    if [[ -n $skip ]]; then skip=; continue; fi\n"
       "    if [[ $w == -- ]]; then _ipilab_add -c -- \"$cur\"; return 0; fi\n"
       "    case \"$cmd:$w\" in\n";
  path_case_arms(s, all, "");
  s << "    esac\n"
       "  done\n"
       "  # A value after an option (also --option=value, which bash splits at '=').\n"
       "  if [[ $prev == = ]] && (( COMP_CWORD > 1 )); then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
       "  [[ $cur == = ]] && cur=\n"
       "  case \"$cmd:$prev\" in\n";
  value_case_arms(s, all, "", bash_value, "return 0");
  s << "  esac\n"
       "  if [[ $cur == -* ]]; then\n"
       "    case \"$cmd\" in\n";
  for (const auto* c : all) s << "      \"" << join(c->path) << "\") _ipilab_add -W " << squote(join(option_words(*c))) << " -- \"$cur\" ;;\n";
  s << "    esac\n"
       "    return 0\n"
       "  fi\n"
       "  case \"$cmd\" in\n";
  for (const auto* c : all) {
    std::vector<std::string> parts;
    if (!c->subcommands.empty()) parts.push_back("_ipilab_add -W " + squote(join(sub_names(*c))) + " -- \"$cur\"");
    if (!c->positionals.empty()) {
      const OptionDoc& p = c->positionals.front();
      const ValueKind k = value_kind(p);
      if (k != ValueKind::None && k != ValueKind::Number) parts.push_back(bash_value(p, k));
    }
    if (!parts.empty()) s << "    \"" << join(c->path) << "\") " << join(parts, "; ") << " ;;\n";
  }
  s << "  esac\n"
       "  return 0\n"
       "}\n"
       "complete -F _ipilab ipilab\n";
  return s.str();
}

// ---- zsh --------------------------------------------------------------------------------------

namespace {

std::string zsh_value(const OptionDoc& o, ValueKind k) {
  switch (k) {
    case ValueKind::Choices: return "compadd -- " + join(o.choices);
    case ValueKind::Scenario:
    case ValueKind::Profile:
      return std::string("_ipilab_names ") + names_kind(k) + "; _files -g '*.toml'";
    case ValueKind::Preset: return "_ipilab_names presets";
    case ValueKind::File: return "_files";
    case ValueKind::Number:
    case ValueKind::None: return "_message -e values " + squote(o.type.empty() ? "value" : o.type);
  }
  return ":";
}

std::string described(const std::string& word, const std::string& description) {
  std::string w;
  for (char c : word) w += c == ':' ? std::string("\\:") : std::string(1, c);
  return squote(w + ":" + one_line(description));
}

}  // namespace

std::string zsh_completion(const CommandDoc& root) {
  const auto all = flatten(root);
  std::ostringstream s;
  s << "#compdef ipilab\n"
       "# zsh completion for ipilab.\n"
       "# Generated by 'ipilab help-completion zsh' from ipilab's command tree; do not edit.\n\n"
       "# The built-in names, from the ipilab being completed.\n"
       "_ipilab_names() {\n"
       "  local -a names\n"
       "  names=(${(f)\"$(${words[1]} help-names $1 2>/dev/null)\"})\n"
       "  compadd -a names\n"
       "}\n\n"
       "_ipilab() {\n"
       "  local cmd= skip= i w\n"
       "  # The command path so far (subcommand names), skipping the values of options.\n"
       "  for (( i = 2; i < CURRENT; i++ )); do\n"
       "    w=${words[i]}\n"
       "    if [[ -n $skip ]]; then skip=; continue; fi\n"
       "    [[ $w == -- ]] && return 1\n"
       "    case \"$cmd:$w\" in\n";
  path_case_arms(s, all, "(");
  s << "    esac\n"
       "  done\n"
       "  local cur=${words[CURRENT]} prev=${words[CURRENT-1]}\n"
       "  if [[ $cur == --*=* ]]; then prev=${cur%%=*}; compset -P '*='; cur=${cur#*=}; fi\n"
       "  case \"$cmd:$prev\" in\n";
  value_case_arms(s, all, "(", zsh_value, "return");
  s << "  esac\n"
       "  local -a opts subs\n"
       "  case \"$cmd\" in\n";
  for (const auto* c : all) {
    std::vector<std::string> o, sc;
    for (const auto& op : c->options)
      for (const auto& n : op.names) o.push_back(described(n, op.description));
    for (const auto& sub : c->subcommands) sc.push_back(described(sub.name, sub.description));
    s << "    (\"" << join(c->path) << "\")\n"
      << "      opts=(" << join(o) << ")\n"
      << "      subs=(" << join(sc) << ") ;;\n";
  }
  s << "  esac\n"
       "  if [[ $cur == -* ]]; then\n"
       "    _describe -t options option opts\n"
       "    return\n"
       "  fi\n"
       "  (( ${#subs} )) && _describe -t commands command subs\n"
       "  case \"$cmd\" in\n";
  for (const auto* c : all) {
    if (c->positionals.empty()) continue;
    const OptionDoc& p = c->positionals.front();
    const ValueKind k = value_kind(p);
    if (k == ValueKind::None || k == ValueKind::Number) continue;
    s << "    (\"" << join(c->path) << "\") " << zsh_value(p, k) << " ;;\n";
  }
  s << "  esac\n"
       "}\n\n"
       "# Autoloaded from $fpath: complete now; sourced: register.\n"
       "if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then\n"
       "  _ipilab \"$@\"\n"
       "else\n"
       "  compdef _ipilab ipilab\n"
       "fi\n";
  return s.str();
}

}  // namespace ipilab::cli
