#include "cli/command_tree.h"

namespace ipilab::cli {

namespace {

std::vector<std::string> choices_of(const std::string& type) {
  std::vector<std::string> out;
  const auto open = type.find('{');
  const auto close = type.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return out;
  std::string item;
  for (char c : type.substr(open + 1, close - open - 1)) {
    if (c == ',') {
      out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  out.push_back(item);
  return out;
}

OptionDoc option_doc(const CLI::Option& o) {
  OptionDoc d;
  d.positional = !o.nonpositional();
  if (d.positional) {
    d.names.push_back(o.get_name(true));
  } else {
    for (const auto& s : o.get_snames()) d.names.push_back("-" + s);
    for (const auto& l : o.get_lnames()) d.names.push_back("--" + l);
  }
  d.takes_value = o.get_items_expected_max() > 0;
  if (d.takes_value) d.type = o.get_type_name();
  d.default_value = o.get_default_str();
  d.description = o.get_description();
  d.repeatable = d.takes_value && o.get_expected_max() > 1;
  d.required = o.get_required();
  d.choices = choices_of(d.type);
  return d;
}

CommandDoc describe_at(const CLI::App& app, std::vector<std::string> path) {
  CommandDoc c;
  c.path = path;
  c.name = app.get_name();
  c.description = app.get_description();
  c.footer = app.get_footer();
  c.subcommand_required = app.get_require_subcommand_min() > 0;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    (o->nonpositional() ? c.options : c.positionals).push_back(option_doc(*o));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
    std::vector<std::string> p = path;
    p.push_back(sub->get_name());
    c.subcommands.push_back(describe_at(*sub, std::move(p)));
  }
  return c;
}

void flatten_into(const CommandDoc& c, std::vector<const CommandDoc*>& out) {
  out.push_back(&c);
  for (const auto& s : c.subcommands) flatten_into(s, out);
}

}  // namespace

std::string CommandDoc::full_name() const {
  std::string s = "ipilab";
  for (const auto& p : path) s += " " + p;
  return s;
}

std::string CommandDoc::usage() const {
  std::string s = full_name();
  if (!options.empty()) s += " [OPTIONS]";
  for (const auto& p : positionals) {
    const std::string n = p.names.front() + (p.repeatable ? "..." : "");
    s += p.required ? " " + n : " [" + n + "]";
  }
  if (!subcommands.empty()) s += subcommand_required ? " SUBCOMMAND" : " [SUBCOMMAND]";
  return s;
}

CommandDoc describe(const CLI::App& app) { return describe_at(app, {}); }

std::vector<const CommandDoc*> flatten(const CommandDoc& root) {
  std::vector<const CommandDoc*> out;
  flatten_into(root, out);
  return out;
}

}  // namespace ipilab::cli
