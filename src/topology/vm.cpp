#include "topology/vm.h"

#include <charconv>

#include <fmt/format.h>

#include "common/error.h"
#include "topology/toml_read.h"

namespace ipilab::topology {

using toml_read::TableReader;

std::string_view vcpu_state_name(VcpuState s) {
  switch (s) {
    case VcpuState::Running: return "running";
    case VcpuState::Halted: return "halted";
    case VcpuState::Polling: return "polling";
    case VcpuState::Preempted: return "preempted";
  }
  return "?";
}

int Vm::cpu_of_vp_index(std::uint32_t vp) const noexcept {
  if (vp == kVpInval) return -1;
  for (const Vcpu& v : vcpus)
    if (v.vp_index == vp) return v.cpu;
  return -1;
}

std::vector<int> Vm::cpus_of_vp_index(std::uint32_t vp) const {
  std::vector<int> out;
  if (vp == kVpInval) return out;
  for (const Vcpu& v : vcpus)
    if (v.vp_index == vp) out.push_back(v.cpu);
  return out;
}

std::string Vm::vp_index_place(int cpu, std::string_view fallback) const {
  if (auto it = vp_index_places.find(cpu); it != vp_index_places.end()) return it->second;
  return fmt::format("{}: vm.vp_index.{}", fallback, cpu);
}

std::string vp_index_text(std::uint32_t vp) { return vp == kVpInval ? std::string("inval") : std::to_string(vp); }

Vm Vm::make(const Host& host, int n, const std::vector<int>& pcpus, int nr_cpus) {
  if (n < 1 || static_cast<std::size_t>(n) != pcpus.size())
    throw InputError("vm", fmt::format("{} vCPUs but {} pinned CPUs", n, pcpus.size()));
  if (nr_cpus < n) throw InputError("vm.nr_cpus", fmt::format("NR_CPUS {} is below the {} vCPUs", nr_cpus, n));
  Vm vm;
  vm.nr_cpus = nr_cpus;
  for (int i = 0; i < n; ++i) {
    const int p = pcpus[static_cast<std::size_t>(i)];
    if (!host.find_cpu(p))
      throw InputError(fmt::format("vm.pin[{}]", i), fmt::format("host CPU {} does not exist on host '{}' (CPUs {})", p, host.name,
                                                               Host::format_cpu_list([&] {
                                                                 std::vector<int> ids;
                                                                 for (const Cpu& c : host.cpus) ids.push_back(c.id);
                                                                 return ids;
                                                               }())));
    vm.vcpus.push_back(Vcpu{i, p, static_cast<std::uint32_t>(i), VcpuState::Running});
  }
  return vm;
}

namespace {

std::string all_cpus(const Host& host) {
  std::vector<int> ids;
  for (const Cpu& c : host.cpus) ids.push_back(c.id);
  return Host::format_cpu_list(ids);
}

VcpuState parse_state(TableReader& r, std::string_view key, const std::string& s) {
  if (s == "running") return VcpuState::Running;
  if (s == "halted") return VcpuState::Halted;
  if (s == "polling") return VcpuState::Polling;
  if (s == "preempted") return VcpuState::Preempted;
  r.fail(key, fmt::format("'{}' is not a vCPU state; use \"running\", \"halted\", \"polling\" or \"preempted\"", s));
}


// vm.pin: "first" (default), "socket:N", "node:N" or a list of host CPUs, one per vCPU.
std::vector<int> read_pins(TableReader& r, const Host& host, int n, std::string_view file) {
  std::vector<int> pins;
  const toml::node* pin = r.node("pin");
  auto take_first = [&](const std::vector<int>& ids, std::string_view what) {
    if (ids.size() < static_cast<std::size_t>(n))
      r.fail("pin", fmt::format("{} has {} CPUs, the VM needs {}", what, ids.size(), n));
    pins.assign(ids.begin(), ids.begin() + n);
  };
  if (!pin || (pin->as_string() && pin->as_string()->get() == "first")) {
    std::vector<int> ids;
    for (const Cpu& c : host.cpus) ids.push_back(c.id);
    take_first(ids, fmt::format("host '{}'", host.name));
  } else if (const auto* s = pin->as_string()) {
    const std::string& v = s->get();
    const auto colon = v.find(':');
    const std::string kind = v.substr(0, colon);
    int idx = -1;
    if (colon != std::string::npos) {
      const char* b = v.data() + colon + 1;
      const char* e = v.data() + v.size();
      auto [p, ec] = std::from_chars(b, e, idx);
      if (ec != std::errc() || p != e) idx = -1;
    }
    if ((kind != "socket" && kind != "node") || idx < 0)
      r.fail("pin", fmt::format("'{}' is not a placement; use a list of host CPUs, \"socket:N\", \"node:N\" or \"first\"", v));
    if (kind == "socket") {
      if (idx >= host.sockets) r.fail("pin", fmt::format("socket {} does not exist (host '{}' has {})", idx, host.name, host.sockets));
      take_first(host.cpus_of_socket(idx), fmt::format("socket {}", idx));
    } else {
      if (idx >= host.nodes) r.fail("pin", fmt::format("NUMA node {} does not exist (host '{}' has {})", idx, host.name, host.nodes));
      take_first(host.cpus_of_node(idx), fmt::format("NUMA node {}", idx));
    }
  } else if (const auto* a = pin->as_array()) {
    if (a->size() != static_cast<std::size_t>(n))
      r.fail("pin", fmt::format("lists {} host CPUs for {} vCPUs", a->size(), n));
    for (std::size_t i = 0; i < a->size(); ++i) {
      const std::string k = fmt::format("{}[{}]", r.key_path("pin"), i);
      const auto p = static_cast<int>(toml_read::node_int(*a->get(i), file, k, 0, 1 << 24));
      if (!host.find_cpu(p))
        throw InputError(toml_read::place(file, a->get(i)->source(), k),
                         fmt::format("host CPU {} does not exist on host '{}' (CPUs {})", p, host.name, all_cpus(host)));
      pins.push_back(p);
    }
  } else {
    r.fail("pin", fmt::format("expected a list of host CPUs or a string, got {}", toml_read::type_name(*pin)));
  }

  return pins;
}

// vm.halted and vm.polling: the vCPUs that start in that state (each vCPU in one list at most).
void read_state_lists(TableReader& r, Vm& vm, int n, std::string_view file) {
  std::vector<bool> listed(static_cast<std::size_t>(n), false);
  for (const auto& [list_key, state] : {std::pair<const char*, VcpuState>{"halted", VcpuState::Halted},
                                        std::pair<const char*, VcpuState>{"polling", VcpuState::Polling},
                                        std::pair<const char*, VcpuState>{"preempted", VcpuState::Preempted}}) {
    const toml::array* arr = r.opt_array(list_key);
    if (!arr) continue;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const std::string k = fmt::format("{}[{}]", r.key_path(list_key), i);
      const auto c = toml_read::node_int(*arr->get(i), file, k, 0, n - 1);
      if (listed[static_cast<std::size_t>(c)])
        throw InputError(toml_read::place(file, arr->get(i)->source(), k),
                         fmt::format("vCPU {} is listed twice in vm.halted, vm.polling and vm.preempted", c));
      listed[static_cast<std::size_t>(c)] = true;
      vm.vcpus[static_cast<std::size_t>(c)].initial_state = state;
    }
  }
}

// vm.vp_index: per guest CPU, the VP index Hyper-V gave it (a number or "inval").
void read_vp_indexes(TableReader& r, Vm& vm, int n, std::string_view file) {
  if (const toml::table* vp = r.opt_table("vp_index")) {
    for (const auto& [k, v] : *vp) {
      const std::string kp = fmt::format("{}.{}", r.key_path("vp_index"), k.str());
      int c = -1;
      const std::string_view ks = k.str();
      auto [p, ec] = std::from_chars(ks.data(), ks.data() + ks.size(), c);
      if (ec != std::errc() || p != ks.data() + ks.size() || c < 0 || c >= n)
        throw InputError(toml_read::place(file, k.source(), kp),
                         fmt::format("key must be a guest CPU number in 0..{}", n - 1));
      const std::string where = toml_read::place(file, v.source(), kp);
      std::uint32_t value = 0;
      if (const auto* s = v.as_string()) {
        if (s->get() != "inval")
          throw InputError(where, fmt::format("'{}' is not a VP index; give a number (0..2147483647) or \"inval\" "
                                              "(VP_INVAL: the guest has not read HV_X64_MSR_VP_INDEX yet)",
                                              s->get()));
        value = kVpInval;
      } else if (!v.as_integer()) {
        throw InputError(where, fmt::format("expected an integer or \"inval\", got {}", toml_read::type_name(v)));
      } else {
        const std::int64_t x = v.as_integer()->get();
        if (x < 0 || x > 0xFFFFFFFFll)
          throw InputError(where, fmt::format("VP index {} is outside 0..2147483647", x));
        if (x == 0xFFFFFFFFll)
          throw InputError(where, "4294967295 is VP_INVAL: write \"inval\" to say so");
        if (x > 0x7FFFFFFFll)
          throw InputError(where, fmt::format("VP index {} reads as a negative int in Linux (hv_cpu_number_to_vp_number "
                                              "returns int), which indexes bitmaps out of bounds: undefined, not "
                                              "modelled; use 0..2147483647 or \"inval\"",
                                              x));
        value = static_cast<std::uint32_t>(x);
      }
      vm.vcpus[static_cast<std::size_t>(c)].vp_index = value;
      vm.vp_index_places[c] = where;
    }
  }
}

}  // namespace

Vm parse_vm(const toml::table& t, const Host& host, std::string_view file, std::string_view key) {
  TableReader r(t, std::string(file), std::string(key));
  Vm vm;
  vm.name = r.opt_string("name").value_or("");
  const auto n = static_cast<int>(r.req_int("vcpus", 1, 65536));
  vm.nr_cpus = static_cast<int>(r.opt_int("nr_cpus", 1, 1 << 20).value_or(8192));
  if (vm.nr_cpus < n) r.fail("nr_cpus", fmt::format("NR_CPUS {} is below vcpus = {}", vm.nr_cpus, n));
  const std::vector<int> pins = read_pins(r, host, n, file);

  VcpuState initial = VcpuState::Running;
  if (auto s = r.opt_string("state")) initial = parse_state(r, "state", *s);
  for (int i = 0; i < n; ++i)
    vm.vcpus.push_back(Vcpu{i, pins[static_cast<std::size_t>(i)], static_cast<std::uint32_t>(i), initial});
  read_state_lists(r, vm, n, file);
  read_vp_indexes(r, vm, n, file);
  r.finish();
  return vm;
}

}  // namespace ipilab::topology
