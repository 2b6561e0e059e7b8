#include "nvmesim/platform/report/pcie_figures.h"

#include <cstdio>
#include <ostream>

#include <nlohmann/json.hpp>

namespace nvmesim::platform {

using fw::pcie::kTlpKinds;
using fw::pcie::TlpKind;

PcieFigures pcie_figures(const stats::GroupValues& stats, std::string link) {
  PcieFigures p;
  const stats::GroupValues* g = stats.group(stats.group("virtio_blk") ? "virtio_blk.pcie" : "nvme.pcie");
  if (!g) return p;
  p.present = true;
  p.link = std::move(link);
  const stats::GroupValues* tally = g->group("tlp");
  const stats::StatValue* tlps = tally ? tally->stat("tlps") : nullptr;
  const stats::StatValue* wire = tally ? tally->stat("wire_bytes") : nullptr;
  if (tlps && wire) {
    // Subnames "<purpose>_<kind>", the kinds of a purpose in TlpKind order.
    const std::string first_suffix = std::string("_") + fw::pcie::tlp_kind_name(TlpKind(0));
    for (size_t i = 0; i + kTlpKinds <= tlps->entries.size(); i += kTlpKinds) {
      PcieFigures::Purpose u;
      const std::string& sub = tlps->entries[i].first;
      u.name = sub.substr(0, sub.size() - first_suffix.size());
      for (unsigned k = 0; k < kTlpKinds; ++k) {
        u.tlps[k] = tlps->entries[i + k].second;
        u.wire_bytes[k] = wire->entries[i + k].second;
      }
      p.purposes.push_back(u);
    }
  }
  auto ns = [&](const char* name) { return double(g->at(name)) / 1000.0; };
  p.upstream_busy_ns = ns("upstream_busy");
  p.downstream_busy_ns = ns("downstream_busy");
  p.upstream_queueing_ns = ns("upstream_queueing");
  p.downstream_queueing_ns = ns("downstream_queueing");
  p.read_round_trips = g->at("read_round_trips");
  p.read_time_ns = ns("read_time");
  return p;
}

namespace {

double per(uint64_t n, uint64_t ios) { return ios ? double(n) / double(ios) : 0; }
double per(double v, uint64_t ios) { return ios ? v / double(ios) : 0; }

}  // namespace

report::Json pcie_json(const PcieFigures& p, uint64_t ios, double span_ns) {
  using report::fixed;
  using report::Json;
  Json by_purpose = Json::object();
  uint64_t tlps = 0, wire = 0;
  std::array<uint64_t, kTlpKinds> kind_tlps{};
  for (const auto& u : p.purposes) {
    Json e = Json::object();
    e["tlps"] = fixed(per(u.total_tlps(), ios), 6);
    e["wire_bytes"] = fixed(per(u.total_wire_bytes(), ios), 3);
    for (unsigned k = 0; k < kTlpKinds; ++k) {
      e[fw::pcie::tlp_kind_name(TlpKind(k))] = fixed(per(u.tlps[k], ios), 6);
      kind_tlps[k] += u.tlps[k];
    }
    by_purpose[u.name] = e;
    tlps += u.total_tlps();
    wire += u.total_wire_bytes();
  }
  Json per_io = Json::object();
  per_io["tlps"] = fixed(per(tlps, ios), 6);
  per_io["wire_bytes"] = fixed(per(wire, ios), 3);
  for (unsigned k = 0; k < kTlpKinds; ++k)
    per_io[fw::pcie::tlp_kind_name(TlpKind(k))] = fixed(per(kind_tlps[k], ios), 6);
  per_io["read_round_trips"] = fixed(per(p.read_round_trips, ios), 6);
  per_io["upstream_queueing_ns"] = fixed(per(p.upstream_queueing_ns, ios), 3);
  per_io["downstream_queueing_ns"] = fixed(per(p.downstream_queueing_ns, ios), 3);
  per_io["by_purpose"] = by_purpose;
  return Json{{"link", p.link},
              {"per_io", per_io},
              {"utilization", {{"upstream", fixed(span_ns > 0 ? p.upstream_busy_ns / span_ns : 0, 6)},
                               {"downstream", fixed(span_ns > 0 ? p.downstream_busy_ns / span_ns : 0, 6)}}},
              {"read_time_ns_mean", fixed(p.read_round_trips ? p.read_time_ns / double(p.read_round_trips) : 0, 3)}};
}

void write_pcie_text(const PcieFigures& p, uint64_t ios, double span_ns, std::ostream& o) {
  o << "PCIe link (measured phase): " << p.link << "\n";
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-16s %9s %9s %9s %9s %11s\n", "per I/O", "TLPs", "MRd", "CplD", "MWr",
                "wire bytes");
  o << buf;
  PcieFigures::Purpose total;
  total.name = "total";
  auto row = [&](const PcieFigures::Purpose& u) {
    std::snprintf(buf, sizeof buf, "  %-16s %9.3f %9.3f %9.3f %9.3f %11.1f\n", u.name.c_str(),
                  per(u.total_tlps(), ios), per(u.tlps[0], ios), per(u.tlps[1], ios), per(u.tlps[2], ios),
                  per(u.total_wire_bytes(), ios));
    o << buf;
  };
  for (const auto& u : p.purposes) {
    for (unsigned k = 0; k < kTlpKinds; ++k) {
      total.tlps[k] += u.tlps[k];
      total.wire_bytes[k] += u.wire_bytes[k];
    }
    if (u.total_tlps()) row(u);  // purposes with no traffic: in the JSON only
  }
  row(total);
  std::snprintf(buf, sizeof buf,
                "  utilisation: upstream %.1f%%, downstream %.1f%%; queueing per I/O: upstream %.1f ns, "
                "downstream %.1f ns; %.3f device reads per I/O, %.1f ns each\n",
                span_ns > 0 ? 100 * p.upstream_busy_ns / span_ns : 0.0,
                span_ns > 0 ? 100 * p.downstream_busy_ns / span_ns : 0.0, per(p.upstream_queueing_ns, ios),
                per(p.downstream_queueing_ns, ios), per(p.read_round_trips, ios),
                p.read_round_trips ? p.read_time_ns / double(p.read_round_trips) : 0.0);
  o << buf;
}

}  // namespace nvmesim::platform
