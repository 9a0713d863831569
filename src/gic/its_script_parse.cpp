// Parser of `ipilab gic its` scripts (its_script.h; format: docs/gic-its.md). Strict: every unknown word,
// duplicate key, missing key, value out of range or statement out of place is an InputError naming
// FILE:LINE and the word.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "common/hex.h"
#include "gic/bits.h"
#include "gic/its_script.h"
#include "gic/registers.h"
#include "gic/sgir.h"
#include "gic/table_registers.h"

namespace ipilab::gic {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

struct Ctx {
  std::string_view file;
  int line = 0;
  [[noreturn]] void fail(const std::string& reason) const {
    throw InputError(fmt::format("{}:{}", file, line), reason);
  }
};

/// Decimal, or hex with 0x; '_' allowed between digits.
std::uint64_t number(const Ctx& c, std::string_view what, std::string_view text) {
  if (text.empty()) c.fail(fmt::format("{}: a number is missing", what));
  std::string digits;
  for (char ch : text)
    if (ch != '_') digits.push_back(ch);
  const bool hex = digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  const char* b = digits.data() + (hex ? 2 : 0);
  const char* e = digits.data() + digits.size();
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(b, e, v, hex ? 16 : 10);
  if (digits.empty() || b == e || ec != std::errc{} || ptr != e || text.front() == '_' || text.back() == '_')
    c.fail(fmt::format("{}: '{}' is not a number (decimal, or hex with 0x; '_' between digits)", what, text));
  return v;
}

std::uint64_t number_in(const Ctx& c, std::string_view what, std::string_view text, std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t v = number(c, what, text);
  if (v < lo || v > hi) c.fail(fmt::format("{}: {} is not in {}..{}", what, text, lo, hi));
  return v;
}

bool boolean(const Ctx& c, std::string_view what, std::string_view text) {
  if (text == "0") return false;
  if (text == "1") return true;
  c.fail(fmt::format("{}: '{}' is not 0 or 1", what, text));
}

template <typename T>
T choice(const Ctx& c, std::string_view what, std::string_view text, std::initializer_list<std::pair<const char*, T>> options) {
  const std::string t = lower(text);
  std::string names;
  for (const auto& [name, value] : options) {
    if (t == name) return value;
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  c.fail(fmt::format("{}: '{}' is not one of {}", what, text, names));
}
/// The same over the model's own table of names (aliases accepted).
template <typename T, std::size_t N>
T choice(const Ctx& c, std::string_view what, std::string_view text, const EnumName<T> (&table)[N]) {
  if (const auto v = value_named(table, lower(text))) return *v;
  std::string names;
  for (const auto& n : table)
    if (!n.alias) names += (names.empty() ? "" : ", ") + std::string(n.name);
  c.fail(fmt::format("{}: '{}' is not one of {}", what, text, names));
}

struct Keys {
  std::vector<std::pair<std::string, std::string>> kv;  // lower-case key, value as written
  std::set<std::string> used;
  const std::string* get(const std::string& key) {
    for (const auto& [k, v] : kv)
      if (k == key) {
        used.insert(key);
        return &v;
      }
    return nullptr;
  }
  const std::string& need(const Ctx& c, std::string_view stmt, const std::string& key) {
    const std::string* v = get(key);
    if (!v) c.fail(fmt::format("{}: missing {}=", stmt, key));
    return *v;
  }
  void done(const Ctx& c, std::string_view stmt, std::string_view allowed) const {
    for (const auto& [k, v] : kv)
      if (!used.contains(k)) c.fail(fmt::format("{}: unknown key '{}' (keys: {})", stmt, k, allowed));
  }
};

Keys key_values(const Ctx& c, std::string_view stmt, const std::vector<std::string>& tokens, std::size_t from) {
  Keys keys;
  std::set<std::string> seen;
  for (std::size_t i = from; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const auto eq = t.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == t.size())
      c.fail(fmt::format("{}: '{}' is not KEY=VALUE", stmt, t));
    std::string key = lower(t.substr(0, eq));
    if (!seen.insert(key).second) c.fail(fmt::format("{}: {}= given twice", stmt, key));
    keys.kv.emplace_back(std::move(key), t.substr(eq + 1));
  }
  return keys;
}

/// "its3" / "rd12" -> index (checked against the count).
int target_index(const Ctx& c, std::string_view stmt, std::string_view token, std::string_view prefix, int count) {
  const std::string t = lower(token);
  if (t.rfind(prefix, 0) != 0 || t.size() == prefix.size())
    c.fail(fmt::format("{}: '{}' is not {}N", stmt, token, prefix));
  const std::string_view digits = std::string_view(t).substr(prefix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) || digits.size() > 6)
    c.fail(fmt::format("{}: '{}' is not {}N", stmt, token, prefix));
  const int n = std::stoi(std::string(digits));
  if (n >= count)
    c.fail(fmt::format("{}: {} does not exist (the system has {} {})", stmt, token, count,
                       prefix == "its" ? "ITSs" : "redistributors"));
  return n;
}

std::string name_token(const Ctx& c, std::string_view stmt, std::string_view text) {
  if (text.empty() || text.size() > 64 ||
      !std::all_of(text.begin(), text.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-'; }))
    c.fail(fmt::format("{}: '{}' is not a name (letters, digits, '_', '-')", stmt, text));
  return std::string(text);
}

TablePageSize page_size(const Ctx& c, std::string_view what, std::string_view text) {
  const std::string t = lower(text);
  if (t == "4k") return TablePageSize::K4;
  if (t == "16k") return TablePageSize::K16;
  if (t == "64k") return TablePageSize::K64;
  return static_cast<TablePageSize>(number_in(c, what, text, 0, 3));
}

std::uint8_t page_size_mask(const Ctx& c, std::string_view what, std::string_view text) {
  std::uint8_t mask = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view part = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const TablePageSize s = page_size(c, what, part);
    if (s == TablePageSize::Reserved) c.fail(fmt::format("{}: '{}' is not 4k, 16k or 64k", what, part));
    mask = static_cast<std::uint8_t>(mask | (1u << static_cast<unsigned>(s)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return mask;
}

// --- registers ------------------------------------------------------------------------------------

struct RegisterName {
  const char* name;
  ScriptRegister reg;
  bool rd;
};
constexpr RegisterName kRegisters[] = {
    {"GITS_CTLR", ScriptRegister::GitsCtlr, false},         {"GITS_CBASER", ScriptRegister::GitsCbaser, false},
    {"GITS_CWRITER", ScriptRegister::GitsCwriter, false},   {"GITS_SGIR", ScriptRegister::GitsSgir, false},
    {"GICR_VPROPBASER", ScriptRegister::GicrVpropbaser, true}, {"GICR_VPENDBASER", ScriptRegister::GicrVpendbaser, true},
};

/// Runs a codec encoder, turning its InputError("<REG>.<field>", reason) into one at FILE:LINE.
template <typename F>
std::uint64_t encoded(const Ctx& c, F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    c.fail(fmt::format("{}: {}", e.place(), e.reason()));
  }
}

/// Reads FIELD=VALUE keys of one register write (fields not named are 0).
struct FieldReader {
  const Ctx& c;
  std::string_view regname;
  Keys& k;
  std::string stmt;

  std::uint64_t raw(const char* field, unsigned hi, unsigned lo) const {
    const std::string* v = k.get(lower(field));
    if (!v) return 0;
    const std::uint64_t x = number(c, fmt::format("{}.{}", regname, field), *v);
    if (!bits::fits(x, hi, lo)) c.fail(fmt::format("{}.{}: {} does not fit in [{}:{}]", regname, field, *v, hi, lo));
    return x;
  }
  std::uint64_t pa() const {
    const std::string* v = k.get("physical_address");
    const std::string* w = k.get("pa");
    if (v && w) c.fail(fmt::format("{}: give Physical_Address= or PA=, not both", stmt));
    const std::string* t = v ? v : w;
    return t ? number(c, fmt::format("{}.Physical_Address", regname), *t) : 0;
  }
  TablePageSize page() const {
    const std::string* v = k.get("page_size");
    return v ? page_size(c, fmt::format("{}.Page_Size", regname), *v) : TablePageSize::K4;
  }
};

std::uint64_t gits_baser_fields(const FieldReader& f) {
  GitsBaser v;
  v.valid = f.raw("Valid", 0, 0);
  v.indirect = f.raw("Indirect", 0, 0);
  v.inner_cache = static_cast<std::uint8_t>(f.raw("InnerCache", 2, 0));
  v.type = static_cast<std::uint8_t>(f.raw("Type", 2, 0));
  v.outer_cache = static_cast<std::uint8_t>(f.raw("OuterCache", 2, 0));
  v.entry_bytes = static_cast<std::uint8_t>(f.raw("Entry_Size", 4, 0) + 1);
  v.page_size = f.page();
  v.pa = f.pa();
  v.shareability = static_cast<std::uint8_t>(f.raw("Shareability", 1, 0));
  v.pages = static_cast<std::uint16_t>(f.raw("Size", 7, 0) + 1);
  f.k.done(f.c, f.stmt,
           "Valid, Indirect, InnerCache, Type, OuterCache, Entry_Size, Physical_Address (PA), Shareability, "
           "Page_Size (4K|16K|64K), Size");
  return encoded(f.c, [&] { return static_cast<std::uint64_t>(encode_gits_baser(v)); });
}

std::uint64_t gicr_vpropbaser_fields(const FieldReader& f) {
  GicrVpropbaser41 v;
  v.valid = f.raw("Valid", 0, 0);
  v.entry_words = static_cast<std::uint8_t>(f.raw("Entry_Size", 2, 0) + 1);
  v.outer_cache = static_cast<std::uint8_t>(f.raw("OuterCache", 2, 0));
  v.indirect = f.raw("Indirect", 0, 0);
  v.page_size = f.page();
  v.z = f.raw("Z", 0, 0);
  v.pa = f.pa();
  v.shareability = static_cast<std::uint8_t>(f.raw("Shareability", 1, 0));
  v.inner_cache = static_cast<std::uint8_t>(f.raw("InnerCache", 2, 0));
  v.pages = static_cast<std::uint8_t>(f.raw("Size", 6, 0) + 1);
  f.k.done(f.c, f.stmt,
           "Valid, Entry_Size, OuterCache, Indirect, Page_Size (4K|16K|64K), Z, Physical_Address (PA), "
           "Shareability, InnerCache, Size");
  return encoded(f.c, [&] { return encode_gicr_vpropbaser41(v); });
}

/// Composes a register value from FIELD=VALUE (fields not named are 0).
std::uint64_t register_fields(const Ctx& c, std::string_view regname, ScriptRegister reg, Keys& k) {
  const FieldReader f{c, regname, k, fmt::format("write {}", regname)};
  const std::string& stmt = f.stmt;
  auto raw = [&](const char* field, unsigned hi, unsigned lo) { return f.raw(field, hi, lo); };
  auto pa = [&] { return f.pa(); };
  switch (reg) {
      case ScriptRegister::GitsCtlr: {
        if (k.get("quiescent")) c.fail("GITS_CTLR.Quiescent is read-only");
        GitsCtlr v;
        v.quiescent = false;
        v.enabled = raw("Enabled", 0, 0);
        v.imde = raw("ImDe", 0, 0);
        v.its_number = static_cast<std::uint8_t>(raw("ITS_Number", 3, 0));
        v.umsi_irq = raw("UMSIirq", 0, 0);
        k.done(c, stmt, "Enabled, ImDe, ITS_Number, UMSIirq");
        return encoded(c, [&] { return static_cast<std::uint64_t>(encode_gits_ctlr(v)); });
      }
      case ScriptRegister::GitsCbaser: {
        Cbaser v;
        v.valid = raw("Valid", 0, 0);
        v.inner_cache = static_cast<std::uint8_t>(raw("InnerCache", 2, 0));
        v.outer_cache = static_cast<std::uint8_t>(raw("OuterCache", 2, 0));
        v.pa = pa();
        v.shareability = static_cast<std::uint8_t>(raw("Shareability", 1, 0));
        v.size = static_cast<std::uint8_t>(raw("Size", 7, 0));
        k.done(c, stmt, "Valid, InnerCache, OuterCache, Physical_Address (PA), Shareability, Size");
        return encoded(c, [&] { return static_cast<std::uint64_t>(encode_cbaser(v)); });
      }
      case ScriptRegister::GitsCwriter: {
        Cwriter v;
        v.offset = static_cast<std::uint32_t>(raw("Offset", 19, 0));
        v.retry = raw("Retry", 0, 0);
        k.done(c, stmt, "Offset (bytes, 32-byte aligned), Retry");
        return encoded(c, [&] { return static_cast<std::uint64_t>(encode_cwriter(v)); });
      }
      case ScriptRegister::GitsBaser:
        return gits_baser_fields(f);
      case ScriptRegister::GitsSgir: {
        Sgir v;
        v.vintid = static_cast<std::uint8_t>(raw("vINTID", 3, 0));
        v.vpeid = static_cast<std::uint16_t>(raw("vPEID", 15, 0));
        k.done(c, stmt, "vINTID, vPEID");
        return encoded(c, [&] { return static_cast<std::uint64_t>(encode_sgir(v)); });
      }
      case ScriptRegister::GicrVpropbaser:
        return gicr_vpropbaser_fields(f);
      case ScriptRegister::GicrVpendbaser: {
        Vpendbaser v;
        v.valid = raw("Valid", 0, 0);
        v.doorbell = raw("DB", 0, 0);
        v.pending_last = raw("PendingLast", 0, 0);
        v.dirty = raw("Dirty", 0, 0);
        v.vgrp0_en = raw("vGrp0En", 0, 0);
        v.vgrp1_en = raw("vGrp1En", 0, 0);
        v.vpeid = static_cast<std::uint16_t>(raw("vPEID", 15, 0));
        k.done(c, stmt, "Valid, DB, PendingLast, Dirty, vGrp0En, vGrp1En, vPEID");
        return encoded(c, [&] { return encode_vpendbaser(v); });
      }
  }
  c.fail("internal: unknown register");
}

// --- commands -------------------------------------------------------------------------------------

CommandBytes command_bytes(const Ctx& c, std::string_view stmt, std::string_view name, Keys& k) {
  const std::string want = upper(name);
  for (int op = 0; op < 0x40; ++op) {
    if (any_opcode_name(static_cast<std::uint8_t>(op)) != want) continue;
    const auto layout = command_layout(static_cast<ItsOpcode>(op));
    if (layout.empty()) c.fail(fmt::format("{}: {} is a real ITS command this model does not implement", stmt, want));
    std::vector<std::pair<std::string, std::uint64_t>> fields;
    for (const auto& [key, value] : k.kv) {
      if (k.used.contains(key)) continue;
      bool known = false;
      for (const CommandField& f : layout) known = known || lower(f.name) == key;
      if (!known) {
        std::string names;
        for (const CommandField& f : layout) names += (names.empty() ? "" : ", ") + std::string(f.name);
        c.fail(fmt::format("{}: {} has no field '{}' (fields: {})", stmt, want, key, names));
      }
      fields.emplace_back(key, number(c, fmt::format("{}.{}", want, key), value));
      k.used.insert(key);
    }
    try {
      return encode_its_command(build_command(static_cast<ItsOpcode>(op), fields));
    } catch (const InputError& e) {
      c.fail(fmt::format("{}: {}: {}", stmt, e.place(), e.reason()));
    }
  }
  c.fail(fmt::format("{}: '{}' is not an ITS command (SYNC, VSYNC, VMAPP, VMOVP, VSGI, INVDB, VINVALL)", stmt, name));
}

// --- expect ---------------------------------------------------------------------------------------

enum class ExpectKind { Number, Bool, Word, List, OptNumber };
struct ExpectKey {
  const char* key;
  ExpectKind kind;
};
constexpr ExpectKey kItsKeys[] = {{"creadr", ExpectKind::Number},  {"cwriter", ExpectKind::Number},
                                  {"cbaser", ExpectKind::Number},  {"ctlr", ExpectKind::Number},
                                  {"baser2", ExpectKind::Number},  {"enabled", ExpectKind::Bool},
                                  {"stalled", ExpectKind::Bool},   {"pending", ExpectKind::Number},
                                  {"executed", ExpectKind::Number}, {"errors", ExpectKind::Number},
                                  {"vpes", ExpectKind::Word},      {"cmd_write", ExpectKind::Number}};
constexpr ExpectKey kRdKeys[] = {{"vpropbaser", ExpectKind::Number}, {"vpendbaser", ExpectKind::Number},
                                 {"local_its", ExpectKind::OptNumber}, {"vpe_l1_base", ExpectKind::OptNumber},
                                 {"table_pa", ExpectKind::Number},     {"table_pages", ExpectKind::Number}};
constexpr ExpectKey kVpeKeys[] = {{"cpu", ExpectKind::OptNumber},  {"vmapp_count", ExpectKind::Number},
                                  {"mapped_on", ExpectKind::List},  {"in_tables_of", ExpectKind::List},
                                  {"pending", ExpectKind::Number},  {"resident_on", ExpectKind::OptNumber}};
constexpr ExpectKey kWaitKeys[] = {{"outcome", ExpectKind::Word},          {"polls", ExpectKind::Number},
                                   {"udelays", ExpectKind::Number},        {"waited_commands", ExpectKind::Number},
                                   {"waited_bytes", ExpectKind::Number},   {"ahead_commands", ExpectKind::Number},
                                   {"batch_commands", ExpectKind::Number}, {"travelled_bytes", ExpectKind::Number},
                                   {"first_creadr", ExpectKind::Number},   {"last_creadr", ExpectKind::Number},
                                   {"batches", ExpectKind::Number}};
constexpr ExpectKey kStepKeys[] = {{"refused", ExpectKind::Bool}, {"errors", ExpectKind::Number},
                                   {"register_notes", ExpectKind::Number}, {"issued", ExpectKind::Number},
                                   {"sgir", ExpectKind::Word}};
constexpr ExpectKey kSystemKeys[] = {{"command_errors", ExpectKind::Number}};

template <std::size_t N>
void check_expect_keys(const Ctx& c, const std::string& what, const ExpectKey (&table)[N],
                       const std::vector<std::pair<std::string, std::string>>& kv) {
  std::string names;
  for (const ExpectKey& e : table) names += (names.empty() ? "" : ", ") + std::string(e.key);
  for (const auto& [key, value] : kv) {
    const ExpectKey* found = nullptr;
    for (const ExpectKey& e : table)
      if (key == e.key) found = &e;
    if (!found) c.fail(fmt::format("expect {}: unknown key '{}' (keys: {})", what, key, names));
    const std::string w = fmt::format("expect {} {}", what, key);
    switch (found->kind) {
      case ExpectKind::Number: number(c, w, value); break;
      case ExpectKind::Bool: boolean(c, w, value); break;
      case ExpectKind::OptNumber:
        if (lower(value) != "none") number(c, w, value);
        break;
      case ExpectKind::List:
        if (value != "-") {
          std::size_t start = 0;
          while (true) {
            const std::size_t comma = value.find(',', start);
            number(c, w, std::string_view(value).substr(start, comma == std::string::npos ? std::string::npos : comma - start));
            if (comma == std::string::npos) break;
            start = comma + 1;
          }
        }
        break;
      case ExpectKind::Word: break;
    }
    if (key == "outcome")
      choice<int>(c, w, value, {{"completed", 0}, {"completed_early", 1}, {"timed_out", 2}, {"timed_out_after_completion", 3}});
  }
}

// --- the statements -------------------------------------------------------------------------------

std::vector<std::string> tokenize(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) out.emplace_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

void parse_system(const Ctx& c, const std::vector<std::string>& t, ItsScript& s) {
  Keys k = key_values(c, "system", t, 1);
  ScriptSystem& y = s.system;
  y.sockets = static_cast<int>(number_in(c, "system sockets", k.need(c, "system", "sockets"), 1, 64));
  y.cpus_per_socket = static_cast<int>(number_in(c, "system cpus_per_socket", k.need(c, "system", "cpus_per_socket"), 1, 256));
  if (const auto* v = k.get("socket_aff")) y.socket_aff = static_cast<int>(number_in(c, "system socket_aff", *v, 2, 3));
  if (const auto* v = k.get("cluster")) y.cluster = static_cast<int>(number_in(c, "system cluster", *v, 1, 256));
  if (const auto* v = k.get("common_lpi_aff")) y.common_lpi_aff = static_cast<int>(number_in(c, "system common_lpi_aff", *v, 0, 3));
  if (const auto* v = k.get("svpet")) y.svpet = static_cast<int>(number_in(c, "system svpet", *v, 0, 3));
  if (const auto* v = k.get("vmovp")) y.vmovp = boolean(c, "system vmovp", *v);
  if (const auto* v = k.get("pta")) y.pta = boolean(c, "system pta", *v);
  if (const auto* v = k.get("vpeid_bits")) y.vpeid_bits = static_cast<unsigned>(number_in(c, "system vpeid_bits", *v, 1, 16));
  if (const auto* v = k.get("vpe_entry_bytes")) {
    y.vpe_entry_bytes = static_cast<int>(number_in(c, "system vpe_entry_bytes", *v, 8, 32));
    if (y.vpe_entry_bytes % 8 != 0) c.fail("system vpe_entry_bytes: must be 8, 16, 24 or 32 (GITS_BASER2 and GICR_VPROPBASER agree)");
  }
  if (const auto* v = k.get("processing"))
    y.processing = choice<ItsProcessing>(c, "system processing", *v, {{"eager", ItsProcessing::Eager}, {"manual", ItsProcessing::Manual}});
  if (const auto* v = k.get("on_error"))
    y.on_error = choice<CommandErrorPolicy>(c, "system on_error", *v, {{"skip", CommandErrorPolicy::Skip}, {"stall", CommandErrorPolicy::Stall}});
  if (const auto* v = k.get("boot")) y.boot_linux = choice<bool>(c, "system boot", *v, {{"linux", true}, {"none", false}});
  if (const auto* v = k.get("linux"))
    y.linux_vpe_l1_fixes = choice<bool>(c, "system linux", *v, {{"mainline", true}, {"v5.6-rc1", false}});
  k.done(c, "system",
         "sockets, cpus_per_socket, socket_aff, cluster, common_lpi_aff, svpet, vmovp, pta, vpeid_bits, "
         "vpe_entry_bytes, processing, on_error, boot, linux");
  if (y.sockets * y.cpus_per_socket > 1024) c.fail("system: at most 1024 CPUs");
  if (y.cpus_per_socket / y.cluster > 256) c.fail("system: more than 256 Aff1 clusters per socket");
}

void parse_its_override(const Ctx& c, const std::vector<std::string>& t, ItsScript& s) {
  if (t.size() < 2) c.fail("its: which ITS? (its N KEY=VALUE...)");
  ScriptItsOverride o;
  o.its = static_cast<int>(number_in(c, "its", t[1], 0, static_cast<std::uint64_t>(s.system.sockets - 1)));
  for (const ScriptItsOverride& prev : s.its_overrides)
    if (prev.its == o.its) c.fail(fmt::format("its {}: given twice", o.its));
  Keys k = key_values(c, "its", t, 2);
  if (const auto* v = k.get("virtual")) o.vlpis = boolean(c, "its virtual", *v);
  if (const auto* v = k.get("vmapp")) o.vmapp = boolean(c, "its vmapp", *v);
  if (const auto* v = k.get("vsgi")) o.vsgi = boolean(c, "its vsgi", *v);
  if (const auto* v = k.get("vmovp")) o.vmovp = boolean(c, "its vmovp", *v);
  if (const auto* v = k.get("indirect")) o.indirect = boolean(c, "its indirect", *v);
  if (const auto* v = k.get("svpet")) o.svpet = static_cast<int>(number_in(c, "its svpet", *v, 0, 3));
  if (const auto* v = k.get("socket"))
    o.socket = static_cast<int>(number_in(c, "its socket", *v, 0, static_cast<std::uint64_t>(s.system.sockets - 1)));
  if (const auto* v = k.get("entry_bytes")) o.entry_bytes = static_cast<int>(number_in(c, "its entry_bytes", *v, 1, 32));
  if (const auto* v = k.get("mpidr")) {
    const std::uint64_t m = number_in(c, "its mpidr", *v, 0, 0xFFFF'FFFF);
    if ((m & 0xFF) != 0) c.fail(fmt::format("its mpidr: {} has bits [7:0] set (GITS_MPIDR[7:0] is RES0)", *v));
    o.mpidr = static_cast<std::uint32_t>(m);
  }
  if (const auto* v = k.get("page_sizes")) o.page_sizes = page_size_mask(c, "its page_sizes", *v);
  k.done(c, "its", "virtual, vmapp, vsgi, vmovp, svpet, mpidr, socket, page_sizes, indirect, entry_bytes");
  s.its_overrides.push_back(o);
}

ScriptDriver parse_driver(const Ctx& c, const std::vector<std::string>& t) {
  Keys k = key_values(c, "driver", t, 1);
  ScriptDriver d;
  if (const auto* v = k.get("wait"))
    d.wait = choice(c, "driver wait", *v, kWaitPredicateNames);
  if (const auto* v = k.get("vmovp_unmapped"))
    d.refuse_vmovp_unmapped = choice<bool>(c, "driver vmovp_unmapped", *v, {{"refuse", true}, {"send", false}});
  if (const auto* v = k.get("unmap_vsync")) d.vsync_after_unmap = boolean(c, "driver unmap_vsync", *v);
  if (const auto* v = k.get("find41"))
    d.find41 = choice(c, "driver find41", *v, kFind41PolicyNames);
  if (const auto* v = k.get("its_rate")) d.its_rate = number_in(c, "driver its_rate", *v, 0, 65536);
  k.done(c, "driver", "wait, vmovp_unmapped, unmap_vsync, find41, its_rate");
  if (k.kv.empty()) c.fail("driver: nothing to change (keys: wait, vmovp_unmapped, unmap_vsync, find41, its_rate)");
  return d;
}

ScriptWrite parse_write(const Ctx& c, const std::vector<std::string>& t, const ItsScript& s, int n_its, int n_cpu) {
  if (t.size() < 4) c.fail("write: write itsN|rdN REGISTER (VALUE | FIELD=VALUE...)");
  ScriptWrite w;
  const std::string reg = upper(t[2]);
  bool found = false;
  for (const RegisterName& r : kRegisters)
    if (reg == r.name) {
      w.reg = r.reg;
      w.rd = r.rd;
      found = true;
    }
  if (!found && reg.rfind("GITS_BASER", 0) == 0 && reg.size() == 11 && reg[10] >= '0' && reg[10] <= '7') {
    w.reg = ScriptRegister::GitsBaser;
    w.baser_n = reg[10] - '0';
    found = true;
  }
  if (!found)
    c.fail(fmt::format("write: unknown register '{}' (GITS_CTLR, GITS_CBASER, GITS_CWRITER, GITS_BASER0..7, GITS_SGIR, "
                       "GICR_VPROPBASER, GICR_VPENDBASER)",
                       t[2]));
  w.index = w.rd ? target_index(c, "write", t[1], "rd", n_cpu) : target_index(c, "write", t[1], "its", n_its);
  (void)s;
  if (t.size() == 4 && t[3].find('=') == std::string::npos) {
    w.value = number(c, fmt::format("write {}", reg), t[3]);
    if (w.reg == ScriptRegister::GitsCtlr && w.value > 0xFFFF'FFFF) c.fail("write GITS_CTLR: a 32-bit register");
    return w;
  }
  Keys k = key_values(c, fmt::format("write {}", reg), t, 3);
  w.value = register_fields(c, reg, w.reg, k);
  return w;
}

ScriptMem parse_mem(const Ctx& c, const std::vector<std::string>& t) {
  if (t.size() < 3) c.fail("mem: mem ADDRESS (COMMAND FIELD=VALUE... | bytes HEX...)");
  ScriptMem m;
  m.pa = number(c, "mem ADDRESS", t[1]);
  if (lower(t[2]) == "bytes") {
    std::string hex;
    for (std::size_t i = 3; i < t.size(); ++i) hex += t[i] + " ";
    try {
      m.bytes = parse_hex_bytes(hex, "mem bytes");
    } catch (const InputError& e) {
      c.fail(fmt::format("{}: {}", e.place(), e.reason()));
    }
    if (m.bytes.empty() || m.bytes.size() > 4096) c.fail("mem bytes: give 1..4096 bytes");
  } else {
    Keys k = key_values(c, "mem", t, 3);
    const CommandBytes b = command_bytes(c, "mem", t[2], k);
    m.bytes.assign(b.begin(), b.end());
  }
  if (m.pa >= GuestMemory::kAddressLimit || m.bytes.size() > GuestMemory::kAddressLimit - m.pa)
    c.fail("mem: the bytes leave the 52-bit physical address space");
  return m;
}

ScriptPush parse_push(const Ctx& c, const std::vector<std::string>& t, int n_its) {
  if (t.size() < 3) c.fail("push: push itsN COMMAND FIELD=VALUE... [count=N]");
  ScriptPush p;
  p.its = target_index(c, "push", t[1], "its", n_its);
  Keys k = key_values(c, "push", t, 3);
  if (const auto* v = k.get("count")) p.count = static_cast<std::uint32_t>(number_in(c, "push count", *v, 1, 32767));
  p.bytes = command_bytes(c, "push", t[2], k);
  return p;
}

// linux wait NAME [predicate=linear|offsets]: the batch must have been posted before.
void parse_linux_wait(const Ctx& c, const std::vector<std::string>& t, const std::string& stmt,
                      const std::set<std::string>& names, ScriptLinux& l) {
  if (t.size() < 3) c.fail("linux wait: which batch? (linux wait NAME [predicate=linear|offsets])");
  l.as = name_token(c, stmt, t[2]);
  if (!names.contains(l.as)) c.fail(fmt::format("linux wait: no batch was posted as '{}' before this line", l.as));
  Keys k = key_values(c, stmt, t, 3);
  if (const auto* v = k.get("predicate"))
    l.predicate = choice(c, "linux wait predicate", *v, kWaitPredicateNames);
  k.done(c, stmt, "predicate");
}

// The vSGI configuration of 'linux vsgi' (enable=, group=, priority=), Linux's defaults otherwise.
VsgiConfig vsgi_config(const Ctx& c, const std::string& stmt, Keys& k) {
  VsgiConfig config{true, 0xA0, true};
  if (const auto* v = k.get("enable")) config.enable = boolean(c, stmt + " enable", *v);
  if (const auto* v = k.get("group")) config.group = boolean(c, stmt + " group", *v);
  if (const auto* v = k.get("priority")) {
    const std::uint64_t p = number_in(c, stmt + " priority", *v, 0, 0xFF);
    if ((p & 0xF) != 0) c.fail(fmt::format("{} priority: {} has a low nibble; VSGI encodes priority >> 4", stmt, *v));
    config.priority = static_cast<std::uint8_t>(p);
  }
  return config;
}

ScriptLinux parse_linux(const Ctx& c, const std::vector<std::string>& t, const ItsScript& s, int n_its, int n_cpu,
                        std::set<std::string>& names) {
  if (!s.system.boot_linux) c.fail("linux: the system was not brought up by Linux (system boot=none)");
  if (t.size() < 2) c.fail("linux: which call? (map, unmap, move, vsgi, clear, invdb, sgi, schedule, deschedule, traffic, wait)");
  ScriptLinux l;
  l.op = choice<LinuxOp>(c, "linux", t[1],
                {{"map", LinuxOp::Map}, {"unmap", LinuxOp::Unmap}, {"move", LinuxOp::Move}, {"vsgi", LinuxOp::Vsgi},
                 {"clear", LinuxOp::Clear}, {"invdb", LinuxOp::Invdb}, {"sgi", LinuxOp::Sgi},
                 {"schedule", LinuxOp::Schedule}, {"deschedule", LinuxOp::Deschedule}, {"traffic", LinuxOp::Traffic},
                 {"wait", LinuxOp::Wait}});
  const std::string stmt = "linux " + lower(t[1]);
  if (l.op == LinuxOp::Wait) {
    parse_linux_wait(c, t, stmt, names, l);
    return l;
  }
  Keys k = key_values(c, stmt, t, 2);
  auto vpe = [&] { l.vpe = static_cast<std::uint16_t>(number_in(c, stmt + " vpe", k.need(c, stmt, "vpe"), 0, 0xFFFF)); };
  auto cpu = [&](const char* key) {
    return static_cast<int>(number_in(c, stmt + " " + key, k.need(c, stmt, key), 0, static_cast<std::uint64_t>(n_cpu - 1)));
  };
  auto vintid = [&] { l.vintid = static_cast<std::uint8_t>(number_in(c, stmt + " vintid", k.need(c, stmt, "vintid"), 0, 15)); };
  auto as = [&] {
    if (const auto* v = k.get("as")) {
      l.as = name_token(c, stmt, *v);
      if (!names.insert(l.as).second) c.fail(fmt::format("{}: as={} is already used", stmt, l.as));
    }
  };
  switch (l.op) {
    case LinuxOp::Map:
      vpe();
      l.cpu = cpu("cpu");
      if (const auto* v = k.get("its")) l.its = static_cast<int>(number_in(c, stmt + " its", *v, 0, static_cast<std::uint64_t>(n_its - 1)));
      as();
      k.done(c, stmt, "vpe, cpu, its, as");
      break;
    case LinuxOp::Unmap:
      vpe();
      as();
      k.done(c, stmt, "vpe, as");
      break;
    case LinuxOp::Move:
      vpe();
      l.cpu = cpu("cpu");
      as();
      k.done(c, stmt, "vpe, cpu, as");
      break;
    case LinuxOp::Vsgi:
      vpe();
      vintid();
      l.sender = cpu("sender");
      l.config = vsgi_config(c, stmt, k);
      as();
      k.done(c, stmt, "vpe, vintid, sender, enable, priority, group, as");
      break;
    case LinuxOp::Clear:
      vpe();
      vintid();
      l.sender = cpu("sender");
      as();
      k.done(c, stmt, "vpe, vintid, sender, as");
      break;
    case LinuxOp::Invdb:
      vpe();
      l.sender = cpu("sender");
      as();
      k.done(c, stmt, "vpe, sender, as");
      break;
    case LinuxOp::Sgi:
      vpe();
      vintid();
      l.sender = cpu("sender");
      k.done(c, stmt, "vpe, vintid, sender");
      break;
    case LinuxOp::Schedule:
      l.cpu = cpu("cpu");
      vpe();
      if (const auto* v = k.get("g0")) l.g0 = boolean(c, stmt + " g0", *v);
      if (const auto* v = k.get("g1")) l.g1 = boolean(c, stmt + " g1", *v);
      k.done(c, stmt, "cpu, vpe, g0, g1");
      break;
    case LinuxOp::Deschedule:
      l.cpu = cpu("cpu");
      if (const auto* v = k.get("db")) l.flag = boolean(c, stmt + " db", *v);
      k.done(c, stmt, "cpu, db");
      break;
    case LinuxOp::Traffic:
      l.its = static_cast<int>(number_in(c, stmt + " its", k.need(c, stmt, "its"), 0, static_cast<std::uint64_t>(n_its - 1)));
      l.cpu = 0;
      if (k.get("cpu")) l.cpu = cpu("cpu");
      l.count = static_cast<std::uint32_t>(
          number_in(c, stmt + " count (a batch must fit the 64 KiB queue)", k.need(c, stmt, "count"), 1, 2047));
      k.done(c, stmt, "its, cpu, count");
      break;
    case LinuxOp::Wait: break;
  }
  return l;
}

ScriptExpect parse_expect(const Ctx& c, const std::vector<std::string>& t, int n_its, int n_cpu,
                          const std::set<std::string>& names) {
  if (t.size() < 3) c.fail("expect: expect (itsN | rdN | vpe N | wait NAME | step | system) KEY=VALUE...");
  ScriptExpect e;
  std::size_t first = 2;
  const std::string target = lower(t[1]);
  if (target == "vpe") {
    e.target = ScriptExpect::Target::Vpe;
    e.index = static_cast<int>(number_in(c, "expect vpe", t[2], 0, 0xFFFF));
    first = 3;
  } else if (target == "wait") {
    e.target = ScriptExpect::Target::Wait;
    e.name = name_token(c, "expect wait", t[2]);
    if (!names.contains(e.name)) c.fail(fmt::format("expect wait: no batch was posted as '{}' before this line", e.name));
    first = 3;
  } else if (target == "step") {
    e.target = ScriptExpect::Target::Step;
  } else if (target == "system") {
    e.target = ScriptExpect::Target::System;
  } else if (target.rfind("its", 0) == 0) {
    e.target = ScriptExpect::Target::Its;
    e.index = target_index(c, "expect", t[1], "its", n_its);
  } else if (target.rfind("rd", 0) == 0) {
    e.target = ScriptExpect::Target::Rd;
    e.index = target_index(c, "expect", t[1], "rd", n_cpu);
  } else {
    c.fail(fmt::format("expect: '{}' is not itsN, rdN, vpe N, wait NAME, step or system", t[1]));
  }
  Keys k = key_values(c, "expect", t, first);
  if (k.kv.empty()) c.fail("expect: nothing to check");
  const std::string what = first == 3 ? t[1] + " " + t[2] : t[1];
  switch (e.target) {
    case ScriptExpect::Target::Its: check_expect_keys(c, what, kItsKeys, k.kv); break;
    case ScriptExpect::Target::Rd: check_expect_keys(c, what, kRdKeys, k.kv); break;
    case ScriptExpect::Target::Vpe: check_expect_keys(c, what, kVpeKeys, k.kv); break;
    case ScriptExpect::Target::Wait: check_expect_keys(c, what, kWaitKeys, k.kv); break;
    case ScriptExpect::Target::Step: check_expect_keys(c, what, kStepKeys, k.kv); break;
    case ScriptExpect::Target::System: check_expect_keys(c, what, kSystemKeys, k.kv); break;
  }
  e.keys = k.kv;
  return e;
}

}  // namespace

ItsScript parse_its_script(std::string_view text, std::string_view file) {
  ItsScript s;
  s.file = std::string(file);
  bool have_system = false;
  bool have_step = false;
  std::set<std::string> names;
  int line_no = 0;
  std::size_t pos = 0;
  if (text.find('\0') != std::string_view::npos) {
    const auto nul = text.find('\0');
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
    throw InputError(fmt::format("{}:{}", file, line), "a NUL byte: this is not a text file");
  }
  while (pos <= text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const Ctx c{file, line_no};
    if (raw.size() > 4096) c.fail("line longer than 4096 characters");
    const std::size_t hash = raw.find('#');
    const std::string_view code = raw.substr(0, hash);
    const std::vector<std::string> t = tokenize(code);
    if (t.empty()) continue;
    std::string trimmed;
    for (const std::string& tok : t) trimmed += (trimmed.empty() ? "" : " ") + tok;
    const std::string word = lower(t[0]);
    if (word == "system") {
      if (have_system) c.fail("system: given twice (one system per script)");
      parse_system(c, t, s);
      s.system_line = line_no;
      have_system = true;
      continue;
    }
    if (!have_system) c.fail(fmt::format("'{}' before the system line (a script starts with: system sockets=N cpus_per_socket=M)", t[0]));
    const int n_its = s.system.sockets;
    const int n_cpu = s.system.sockets * s.system.cpus_per_socket;
    if (word == "its") {
      if (have_step) c.fail("its: ITS configuration must come before the first step");
      parse_its_override(c, t, s);
      continue;
    }
    ScriptStep step;
    step.line = line_no;
    step.text = trimmed;
    if (word == "driver") {
      if (!s.system.boot_linux) c.fail("driver: the system was not brought up by Linux (system boot=none)");
      step.action = parse_driver(c, t);
    } else if (word == "write") {
      step.action = parse_write(c, t, s, n_its, n_cpu);
    } else if (word == "mem") {
      step.action = parse_mem(c, t);
    } else if (word == "push") {
      step.action = parse_push(c, t, n_its);
    } else if (word == "run") {
      if (t.size() < 2 || t.size() > 3) c.fail("run: run itsN [N]");
      ScriptRun r;
      r.its = target_index(c, "run", t[1], "its", n_its);
      if (t.size() == 3) r.max = number_in(c, "run N", t[2], 1, 1'000'000);
      step.action = r;
    } else if (word == "mode") {
      if (t.size() != 3) c.fail("mode: mode itsN eager|manual");
      ScriptMode m;
      m.its = target_index(c, "mode", t[1], "its", n_its);
      m.mode = choice<ItsProcessing>(c, "mode", t[2], {{"eager", ItsProcessing::Eager}, {"manual", ItsProcessing::Manual}});
      step.action = m;
    } else if (word == "linux") {
      step.action = parse_linux(c, t, s, n_its, n_cpu, names);
    } else if (word == "expect") {
      step.action = parse_expect(c, t, n_its, n_cpu, names);
    } else {
      c.fail(fmt::format("unknown statement '{}' (system, its, driver, write, mem, push, run, mode, linux, expect)", t[0]));
    }
    have_step = true;
    s.steps.push_back(std::move(step));
    if (s.steps.size() > 100'000) c.fail("more than 100000 steps");
  }
  if (!have_system) throw InputError(fmt::format("{}:1", file), "no system line (a script starts with: system sockets=N cpus_per_socket=M)");
  return s;
}

}  // namespace ipilab::gic
