#include "nvmesim/traces/gtkwave_save.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace nvmesim::traces {

namespace {

// GTKWave trace flags (gtkwave's analyzer.h): TR_DEC 0x4 | TR_RJUSTIFY 0x20
// = decimal, TR_BIN 0x8 | TR_RJUSTIFY = binary; group begin/end markers.
constexpr const char* kDecimal = "@24";
constexpr const char* kBinary = "@28";
constexpr const char* kGroupBegin = "@800200";
constexpr const char* kGroupEnd = "@1000200";

std::string line_name(const VcdSignal& s) {
  std::string n = "nvmesim." + s.scope + "." + s.name;
  if (s.width > 1) n += "[" + std::to_string(s.width - 1) + ":0]";
  return n;
}

}  // namespace

double gtkwave_zoom(uint64_t span_ps) {
  if (span_ps == 0) return 0;
  return -std::log2(double(span_ps) / kGtkwaveZoomSpan);
}

std::string gtkwave_save_path(const std::string& vcd_path) {
  const std::string ext = ".vcd";
  if (vcd_path.size() > ext.size() && vcd_path.compare(vcd_path.size() - ext.size(), ext.size(), ext) == 0)
    return vcd_path.substr(0, vcd_path.size() - ext.size()) + ".gtkw";
  return vcd_path + ".gtkw";
}

std::string gtkwave_save_file(const std::vector<VcdSignal>& signals, const std::string& dump_file,
                              const GtkwaveView& view) {
  std::string o;
  o += "[*] GTKWave save file written by nvmesim beside " + dump_file + "\n";
  o += "[*] Open with: gtkwave " + dump_file + " <this file>   (see traces/README.md)\n";
  o += "[dumpfile] \"" + dump_file + "\"\n";
  o += "[timestart] " + std::to_string(view.start_ps) + "\n";
  o += "[size] 1400 900\n[pos] -1 -1\n";
  char zoom[64];  // zoom level, then the primary marker (-1: none)
  std::snprintf(zoom, sizeof zoom, "*%.6f -1", view.span_ps ? gtkwave_zoom(view.span_ps) : -24.0);
  o += zoom;
  for (int k = 0; k < 26; ++k) o += " -1";  // no named markers
  o += "\n[treeopen] nvmesim.\n[sst_width] 220\n[signals_width] 260\n[sst_expanded] 1\n"
       "[sst_vpaned_height] 250\n";

  // The signals by scope, in the writer's order; each I/O queue's group
  // also holds its MSI-X vector.
  std::vector<std::string> scopes;
  std::map<std::string, std::vector<const VcdSignal*>> by_scope;
  std::map<std::string, const VcdSignal*> msix;  // "vector1" -> signal
  for (const VcdSignal& s : signals) {
    if (s.scope == "msix") {
      msix[s.name] = &s;
      continue;
    }
    if (!by_scope.count(s.scope)) scopes.push_back(s.scope);
    by_scope[s.scope].push_back(&s);
  }
  auto put_signal = [&](const VcdSignal& s, const char*& format) {
    const char* f = s.width == 1 ? kBinary : kDecimal;
    if (f != format) o += std::string(f) + "\n";
    format = f;
    o += line_name(s) + "\n";
  };
  auto group = [&](const std::string& title, const std::vector<const VcdSignal*>& members) {
    if (members.empty()) return;
    o += std::string(kGroupBegin) + "\n-" + title + "\n";
    const char* format = nullptr;
    for (const VcdSignal* s : members) put_signal(*s, format);
    o += std::string(kGroupEnd) + "\n-" + title + "\n";
  };
  for (const std::string& scope : scopes) {
    std::vector<const VcdSignal*> members = by_scope[scope];
    if (scope.size() > 1 && scope[0] == 'q') {
      const auto it = msix.find("vector" + scope.substr(1));
      if (it != msix.end()) {
        members.push_back(it->second);
        msix.erase(it);
      }
    }
    group(scope, members);
  }
  if (const auto it = msix.find("vector0"); it != msix.end()) {
    group("admin queue", {it->second});
    msix.erase(it);
  }
  std::vector<const VcdSignal*> rest;
  for (const auto& [name, s] : msix) rest.push_back(s);
  group("msix", rest);
  return o;
}

}  // namespace nvmesim::traces
