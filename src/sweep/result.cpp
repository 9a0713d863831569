#include "sweep/result.h"

#include <cmath>
#include <mutex>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace ipilab::sweep {

namespace {
// nlohmann::json's serializer and parser call localeconv(), which glibc implements by filling one
// static struct on every call (POSIX: not thread-safe; valgrind's drd reports the race when workers
// serialise results at once). The wire form is made and read under this lock; it costs microseconds
// against milliseconds per point.
std::mutex g_localeconv_mu;

// JSON has no NaN or infinity: they travel as null and come back as NaN.
nlohmann::json num(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }
double num(const nlohmann::json& j) { return j.is_null() ? std::nan("") : j.get<double>(); }
}  // namespace

const char* status_name(PointResult::Status s) noexcept {
  switch (s) {
    case PointResult::Status::Ok: return "ok";
    case PointResult::Status::Failed: return "failed";
    case PointResult::Status::Skipped: return "skipped";
    case PointResult::Status::NotRun: return "not-run";
  }
  return "?";
}

std::string to_wire(const PointResult& r) {
  nlohmann::json j;
  j["s"] = static_cast<int>(r.status);
  j["e"] = r.error;
  auto& ms = j["m"] = nlohmann::json::array();
  for (const auto& m : r.metrics) {
    const auto& s = m.summary;
    ms.push_back({m.name, m.unit, m.description, s.count, num(s.mean), num(s.stddev), num(s.min), num(s.max), num(s.p50), num(s.p90), num(s.p99), num(s.p999)});
  }
  j["c"] = r.counters;
  j["t"] = r.settings;
  j["n"] = r.notes;
  j["ev"] = r.events;
  j["h"] = {r.host, r.vm, r.profile};
  std::lock_guard<std::mutex> lock(g_localeconv_mu);
  return j.dump();
}

PointResult from_wire(const std::string& text) {
  try {
    nlohmann::json j;
    {
      std::lock_guard<std::mutex> lock(g_localeconv_mu);
      j = nlohmann::json::parse(text);
    }
    PointResult r;
    const int s = j.at("s").get<int>();
    if (s < 0 || s > 3) throw std::runtime_error("bad status");
    r.status = static_cast<PointResult::Status>(s);
    r.error = j.at("e").get<std::string>();
    for (const auto& m : j.at("m")) {
      MetricSummary ms;
      ms.name = m.at(0).get<std::string>();
      ms.unit = m.at(1).get<std::string>();
      ms.description = m.at(2).get<std::string>();
      auto& su = ms.summary;
      su.count = m.at(3).get<std::uint64_t>();
      su.mean = num(m.at(4));
      su.stddev = num(m.at(5));
      su.min = num(m.at(6));
      su.max = num(m.at(7));
      su.p50 = num(m.at(8));
      su.p90 = num(m.at(9));
      su.p99 = num(m.at(10));
      su.p999 = num(m.at(11));
      r.metrics.push_back(std::move(ms));
    }
    r.counters = j.at("c").get<std::map<std::string, std::uint64_t>>();
    r.settings = j.at("t").get<std::vector<std::pair<std::string, std::string>>>();
    r.notes = j.at("n").get<std::vector<std::string>>();
    r.events = j.at("ev").get<std::uint64_t>();
    r.host = j.at("h").at(0).get<std::string>();
    r.vm = j.at("h").at(1).get<std::string>();
    r.profile = j.at("h").at(2).get<std::string>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("sweep: a point result that does not read back: ") + e.what());
  }
}

}  // namespace ipilab::sweep
