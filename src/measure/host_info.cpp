#include "measure/host_info.h"

#include <cpuid.h>
#include <hwloc.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
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
    bool have_model = false, have_flags = false;
    while (std::getline(f, line) && !(have_model && have_flags)) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      if (!have_model && line.rfind("model name", 0) == 0) {
        h.cpu_model = line.substr(std::min(line.size(), colon + 2));
        have_model = true;
      } else if (!have_flags && line.rfind("flags", 0) == 0) {
        const std::string flags = " " + line.substr(colon + 1) + " ";
        h.constant_tsc = flags.find(" constant_tsc ") != std::string::npos;
        h.nonstop_tsc = flags.find(" nonstop_tsc ") != std::string::npos;
        have_flags = true;
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
  {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/cpu", ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("cpu", 0) != 0 || name.size() < 4 || !std::isdigit(static_cast<unsigned char>(name[3]))) continue;
      const std::string g = first_line((e.path() / "cpufreq" / "scaling_governor").string());
      if (!g.empty() && std::find(h.cpufreq_governors.begin(), h.cpufreq_governors.end(), g) == h.cpufreq_governors.end())
        h.cpufreq_governors.push_back(g);
    }
    std::sort(h.cpufreq_governors.begin(), h.cpufreq_governors.end());
  }
  const std::string la = first_line("/proc/loadavg");
  if (!la.empty()) h.load_average = std::strtod(la.c_str(), nullptr);
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
          {"cpufreq_governors", h.cpufreq_governors},
          {"load_average_1min", h.load_average},
          {"constant_tsc", h.constant_tsc},
          {"nonstop_tsc", h.nonstop_tsc},
          {"date_utc", h.date_utc}};
}

}  // namespace ipilab::measure
