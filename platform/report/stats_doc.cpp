#include "nvmesim/platform/report/stats_doc.h"

#include <cctype>
#include <set>

namespace nvmesim::platform::report {

namespace {

// "vcpu12" -> "vcpu<N>", "sq0" -> "sq<N>": one row per kind of group.
std::string generic(const std::string& name) {
  size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  return end < name.size() && end > 0 ? name.substr(0, end) + "<N>" : name;
}

void rows(const stats::GroupValues& g, const std::string& prefix, std::set<std::string>& seen,
          std::string& out) {
  for (const stats::StatValue& s : g.stats) {
    const std::string name = prefix + s.name;
    if (!seen.insert(name).second) continue;
    std::string what = s.description;
    if (s.entries.size() > 1 || !s.entries.front().first.empty()) {
      what += "; by ";
      for (size_t i = 0; i < s.entries.size(); ++i) what += (i ? ", " : "") + s.entries[i].first;
    }
    out += "| `" + name + "` | " + stats::unit_name(s.unit) + " | " + what + " |\n";
  }
  for (const stats::GroupValues& c : g.groups) rows(c, prefix + generic(c.name) + ".", seen, out);
}

}  // namespace

std::string stats_table(const stats::GroupValues& tree) {
  std::string out = "| statistic | unit | description |\n|---|---|---|\n";
  std::set<std::string> seen;
  rows(tree, "", seen, out);
  return out;
}

}  // namespace nvmesim::platform::report
