#include "measure/host_info.h"

#include <cpuid.h>
#include <hwloc.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace ipilab::measure {

namespace {
std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}
}  // namespace

HostInfo probe_host() {
  HostInfo h;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) h.hostname = name;
  {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("model name", 0) == 0) {
        const auto colon = line.find(':');
        if (colon != std::string::npos) h.cpu_model = line.substr(colon + 2);
        break;
      }
    }
  }
  utsname u{};
  if (::uname(&u) == 0) {
    h.kernel = u.release;
    h.kernel_version = u.version;
  }
  {
    hwloc_topology_t t;
    hwloc_topology_init(&t);
    hwloc_topology_load(t);
    h.cpus = static_cast<unsigned>(std::max(0, hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU)));
    hwloc_topology_destroy(t);
  }
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d)) h.nested = (c >> 31) & 1;
  if (h.nested) {
    __cpuid(0x40000000, a, b, c, d);
    char sig[13] = {};
    std::memcpy(sig, &b, 4);
    std::memcpy(sig + 4, &c, 4);
    std::memcpy(sig + 8, &d, 4);
    h.hypervisor_vendor = sig;
  }
  for (const char* m : {"kvm_intel", "kvm_amd", "kvm_pvm"})
    if (std::filesystem::exists(std::string("/sys/module/") + m)) {
      h.kvm_backend = m;
      break;
    }
  const std::string hp = first_line("/sys/module/kvm/parameters/halt_poll_ns");
  if (!hp.empty()) h.halt_poll_ns = std::strtol(hp.c_str(), nullptr, 10);
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  h.date_utc = buf;
  return h;
}

nlohmann::json to_json(const HostInfo& h) {
  return {{"hostname", h.hostname},
          {"cpu_model", h.cpu_model},
          {"kernel", h.kernel},
          {"kernel_version", h.kernel_version},
          {"cpus", h.cpus},
          {"nested", h.nested},
          {"hypervisor_vendor", h.hypervisor_vendor},
          {"kvm_backend", h.kvm_backend},
          {"halt_poll_ns", h.halt_poll_ns},
          {"date_utc", h.date_utc}};
}

}  // namespace ipilab::measure
