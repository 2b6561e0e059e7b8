// A --timeline file as a self-contained HTML page (see timeline_html.h).
#include "nvmesim/platform/timeline/timeline_html.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/config/input_file.h"
#include "nvmesim/platform/report/pending_file.h"

namespace nvmesim::platform {

namespace {
void throw_if_interrupted() {
  if (interrupt::received()) throw TimelineInterrupted{};
}
}  // namespace

namespace {

using Json = nlohmann::json;

// What an event is, from its category (the name alone is ambiguous: a VM
// exit and the interrupt taken are both "interrupt").
enum class Cat : uint8_t { Other, Exit, Io, Doorbell, EventIdx, Irq };

Cat cat_of(const std::string& cat) {
  if (cat == "exit") return Cat::Exit;
  if (cat == "io") return Cat::Io;
  if (cat == "doorbell") return Cat::Doorbell;
  if (cat == "eventidx") return Cat::EventIdx;
  if (cat == "irq") return Cat::Irq;
  return Cat::Other;
}

// The args a bar shows and links by (traces/timeline_writer.h), -1 when
// absent. Doorbell: value, old, eventidx, n. EventIdx write: value, old.
// MSI-X: vector, n. Interrupt: n, msix. I/O: sq_doorbell, cq_doorbell,
// interrupt, msix.
constexpr int kArgs = 4;

struct Bar {
  double start_us, end_us;
  std::string name;
  bool instant;
  Cat cat = Cat::Other;
  int64_t a[kArgs] = {-1, -1, -1, -1};
};

struct Row {
  std::string label;
  std::vector<Bar> bars;
};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&') o += "&amp;";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

std::string num(double v, const char* f = "%.3f") {
  char b[48];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// One colour per kind of event, the same in every page (a fixed table, not
// the order names appear in, so two files compare at a glance): idle a light
// grey, spans in full colours, the doorbell family in reds and pinks.
struct KindColour {
  const char* kind;
  const char* colour;
};
constexpr KindColour kKindColours[] = {
    {"idle", "#dcdcdc"},
    {"working", "#59a14f"},
    {"polling", "#8cd17d"},
    {"burst", "#4e79a7"},
    {"read", "#76b7b2"},
    {"write", "#f28e2b"},
    {"sq_doorbell_mmio", "#e15759"},
    {"cq_doorbell_mmio", "#b07aa1"},
    {"sq_suppressed", "#ff9da7"},
    {"cq_suppressed", "#d4a6c8"},
    {"sq_eventidx", "#9c755f"},
    {"cq_eventidx", "#b6992d"},
    {"msix", "#edc948"},
    {"interrupt", "#1f3b73"},
    {"exit: mmio_doorbell", "#c251a7"},
    {"exit: mmio_other", "#a0cbe8"},
    {"exit: ioeventfd", "#499894"},
    {"exit: pio", "#86bcb6"},
    {"exit: interrupt", "#ffbe7d"},
    {"exit: eoi", "#79706e"},
    {"exit: hlt", "#fabfd2"},
};

// An event's kind: an I/O by its direction, a VM exit by "exit: " and its
// kind, anything else by its name.
std::string kind_of(const Bar& b) {
  if (b.cat == Cat::Io) {
    const size_t sp = b.name.rfind(' ');
    return sp == std::string::npos ? b.name : b.name.substr(sp + 1);
  }
  if (b.cat == Cat::Exit) return "exit: " + b.name;
  return b.name;
}

// A kind outside the table (a trace from elsewhere) gets a colour from its
// name's hash: still the same in every file.
std::string colour(const std::string& kind) {
  for (const KindColour& k : kKindColours)
    if (kind == k.kind) return k.colour;
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char ch : kind) h = (h ^ ch) * 16777619u;
  char b[8];
  std::snprintf(b, sizeof b, "#%02x%02x%02x", 64 + (h & 0x7f), 64 + ((h >> 8) & 0x7f), 64 + ((h >> 16) & 0x7f));
  return b;
}

// Fields of one event, read defensively: the file is the user's, so a field
// may be missing, of another type or out of range. A missing field takes its
// default; a field of the wrong type is an error naming the event and field
// (never an unchecked access: operator[] of a const json on a missing key
// reads past the object).
struct EventReader {
  const Json& e;
  size_t index;

  [[noreturn]] void bad(const char* key, const char* expected) const {
    throw std::runtime_error("traceEvents[" + std::to_string(index) + "]: \"" + key + "\" is not " + expected);
  }
  const Json* member(const char* key) const {
    if (!e.is_object()) return nullptr;
    const auto it = e.find(key);
    return it == e.end() || it->is_null() ? nullptr : &*it;
  }
  // An object member (args): nullptr when missing; an error when not an object.
  const Json* object(const char* key) const {
    const Json* m = member(key);
    if (m && !m->is_object()) bad(key, "an object");
    return m;
  }
  std::string text(const char* key, const std::string& def = "") const {
    const Json* m = member(key);
    if (!m) return def;
    if (!m->is_string()) bad(key, "a string");
    return m->get<std::string>();
  }
  // An id: fio and Perfetto write strings or numbers; both name the same kind.
  std::string id(const char* key) const {
    const Json* m = member(key);
    if (!m) return "";
    if (m->is_string()) return m->get<std::string>();
    if (m->is_number()) return m->dump();
    bad(key, "a string or a number");
  }
  double number(const char* key, double def = 0) const {
    const Json* m = member(key);
    if (!m) return def;
    if (!m->is_number()) bad(key, "a number");
    const double v = m->get<double>();
    if (!(v >= -1e15 && v <= 1e15)) bad(key, "a number in [-1e15, 1e15] us");
    return v;
  }
  // A count or an index in args (0 to 2^31 - 1), or -1 when missing.
  int64_t count(const char* key) const {
    if (!member(key)) return -1;
    const int v = integer(key);
    if (v < 0) bad(key, "an integer in [0, 2147483647]");
    return v;
  }
  int integer(const char* key, int def = 0) const {
    const Json* m = member(key);
    if (!m) return def;
    if (m->is_number_integer() && !m->is_number_unsigned()) {
      const auto v = m->get<std::int64_t>();
      if (v >= INT32_MIN && v <= INT32_MAX) return int(v);
    } else if (m->is_number_unsigned()) {
      const auto v = m->get<std::uint64_t>();
      if (v <= std::uint64_t(INT32_MAX)) return int(v);
    } else if (m->is_number_float()) {
      const double v = m->get<double>();
      if (v >= INT32_MIN && v <= INT32_MAX && v == double(std::int64_t(v))) return int(v);
    }
    bad(key, "an integer in [-2147483648, 2147483647]");
  }
};

// What a page is made of, event by event as the trace is parsed: each event
// is read and dropped at once, so memory follows the page (its bars), not
// the trace's parsed document (nlohmann's DOM takes about 15 bytes per byte
// of input: over 1 GB for a 74 MB trace).
struct PageBuilder {
  std::map<int, std::string> names;             // tracks: names and sort order from the metadata
  std::map<int, int> sort;
  std::map<int, Row> track;                     // by tid: spans and instants
  std::map<std::pair<int, int>, Row> io_rows;   // by (tid, tag): I/Os
  struct OpenIo {  // an I/O begun ("b") and not yet ended ("e")
    double start;
    std::pair<int, int> row;  // (tid, tag)
    std::string name;
    int64_t sq_doorbell;
  };
  std::map<std::string, OpenIo> open_io;  // by async id
  std::map<int, std::vector<std::pair<double, std::string>>> open_span;  // B/E stacks per tid
  double t_end = 0;
  double t_start = 0;  // the trace's window (otherData.trace_start_us): the axis starts there
  size_t ios = 0;

  void add(const EventReader& e) {
    const size_t k = e.index;
    if (!e.e.is_object()) throw std::runtime_error("traceEvents[" + std::to_string(k) + "] is not an object");
    const std::string ph = e.text("ph");
    if (ph == "M") {
      const int tid = e.integer("tid");
      const std::string what = e.text("name");
      const Json* args = e.object("args");
      if (what == "thread_name") {
        // Without args (or a name in them) the track keeps its thread id as label.
        std::string label = "tid " + std::to_string(tid);
        if (args) label = EventReader{*args, k}.text("name", label);
        names[tid] = label;
      }
      if (what == "thread_sort_index") sort[tid] = args ? EventReader{*args, k}.integer("sort_index", tid) : tid;
      return;
    }
    const int tid = e.integer("tid");
    const double ts = e.number("ts");
    const double dur = e.number("dur");
    const std::string name = e.text("name");
    const Cat cat = cat_of(e.text("cat"));
    t_end = std::max(t_end, ts + dur);
    if (ph == "X") {
      track[tid].bars.push_back({ts, ts + dur, name, false, cat});
    } else if (ph == "B") {
      open_span[tid].push_back({ts, name});
    } else if (ph == "E" && !open_span[tid].empty()) {
      track[tid].bars.push_back({open_span[tid].back().first, ts, open_span[tid].back().second, false});
      open_span[tid].pop_back();
    } else if (ph == "i" || ph == "I") {
      Bar b{ts, ts, name, true, cat};
      if (const Json* args = e.object("args")) {
        const EventReader a{*args, k};
        auto keys = [&](std::initializer_list<const char*> names) {
          int i = 0;
          for (const char* n : names) b.a[i++] = a.count(n);
        };
        if (cat == Cat::Doorbell) keys({"value", "old", "eventidx", "n"});
        else if (cat == Cat::EventIdx) keys({"value", "old"});
        else if (cat == Cat::Irq && name == "msix") keys({"vector", "n"});
        else if (cat == Cat::Irq) keys({"n", "msix"});
      }
      track[tid].bars.push_back(std::move(b));
    } else if (ph == "b") {
      const Json* args = e.object("args");
      const int tag = args ? EventReader{*args, k}.integer("tag") : 0;
      const int64_t sq = args ? EventReader{*args, k}.count("sq_doorbell") : -1;
      open_io[e.id("id")] = {ts, {tid, tag}, name, sq};
    } else if (ph == "e") {
      const Json* args = e.object("args");
      const auto it = open_io.find(e.id("id"));
      if (it == open_io.end()) return;
      Bar b{it->second.start, ts, it->second.name, false, Cat::Io};
      b.a[0] = it->second.sq_doorbell;
      if (args) {
        const EventReader a{*args, k};
        b.a[1] = a.count("cq_doorbell");
        b.a[2] = a.count("interrupt");
        b.a[3] = a.count("msix");
      }
      io_rows[it->second.row].bars.push_back(std::move(b));
      open_io.erase(it);
      ++ios;
    }
  }
};

// Parses `trace_json` (an object with a "traceEvents" array, or the array
// itself) with nlohmann's parser callback, handing each event to `page` as
// it ends and discarding it. The callback hears SIGINT/SIGTERM/SIGHUP every
// 64k values.
void parse_events(const std::string& trace_json, PageBuilder& page, bool hear_signals = true) {
  using Event = Json::parse_event_t;
  int root = -1;            // 0: an object, 1: an array, 2: anything else
  int events_depth = -1;    // the depth of the events while inside their array
  bool saw_events = false;  // the events' array was found
  std::string key;          // the root object's member being parsed
  size_t index = 0, values = 0;
  auto callback = [&](int depth, Event event, Json& parsed) {
    if ((++values & 0xFFFF) == 0 && hear_signals) throw_if_interrupted();
    if (depth == 0 && root < 0) {
      root = event == Event::object_start ? 0 : event == Event::array_start ? 1 : 2;
      if (root == 1) saw_events = true, events_depth = 1;
      return true;
    }
    if (root == 0 && depth == 1) {
      if (event == Event::key) {
        key = parsed.get<std::string>();
      } else if (event == Event::array_start && key == "traceEvents" && !saw_events) {
        saw_events = true, events_depth = 2;
      } else if (event == Event::array_end && events_depth == 2) {
        events_depth = -1;
      } else if (event == Event::object_end && key == "otherData" && parsed.is_object()) {
        // The window the trace was cut to (a string, as otherData's values
        // are in the format's example; a number is taken too).
        const auto it = parsed.find("trace_start_us");
        if (it != parsed.end() && it->is_number()) page.t_start = it->get<double>();
        if (it != parsed.end() && it->is_string()) {
          const std::string v = it->get<std::string>();
          char* end = nullptr;
          const double t = std::strtod(v.c_str(), &end);
          if (!v.empty() && end && !*end) page.t_start = t;
        }
        if (!(page.t_start >= 0 && page.t_start <= 1e15)) page.t_start = 0;
        return false;
      }
      return true;
    }
    if (depth != events_depth) return true;
    if (event == Event::object_end || event == Event::value || event == Event::array_end) {
      page.add(EventReader{parsed, index++});
      return false;  // read: dropped from the document
    }
    return true;
  };
  try {
    const Json skeleton = Json::parse(trace_json, callback);  // the events dropped: what is left
    (void)skeleton;
  } catch (const TimelineInterrupted&) {
    throw;
  } catch (const Json::exception&) {
    throw std::runtime_error("not JSON (a file written by --timeline is expected)");
  }
  if (!saw_events) throw std::runtime_error("no \"traceEvents\" array (a file written by --timeline is expected)");
}


// The page, written to `html` as it is made (no copy of it in memory: a
// page is about 1.3 times its trace).
void render_page(PageBuilder& page, const std::string& title, std::ostream& html) {
  std::map<int, std::string>& names = page.names;
  std::map<int, int>& sort = page.sort;
  std::map<int, Row>& track = page.track;
  std::map<std::pair<int, int>, Row>& io_rows = page.io_rows;
  const double t_end = page.t_end;
  const size_t ios = page.ios;
  // Rows in the trace's order; each queue's tag rows after its own track.
  std::vector<int> tids;
  for (const auto& [tid, n] : names) tids.push_back(tid);
  std::stable_sort(tids.begin(), tids.end(), [&](int a, int b) {
    return (sort.count(a) ? sort[a] : a) < (sort.count(b) ? sort[b] : b);
  });
  std::vector<Row> rows;
  for (int tid : tids) {
    Row r = std::move(track[tid]);  // moved: the bars are not held twice
    r.label = names[tid];
    rows.push_back(std::move(r));
    for (auto& [key, io] : io_rows)
      if (key.first == tid) {
        io.label = names[tid] + " tag " + std::to_string(key.second);
        rows.push_back(std::move(io));
      }
  }

  // Geometry: 1 px per `us_per_px` of simulated time from the window's
  // start (t0: --trace-start, else 0); rows 14 px.
  const double t0 = std::min(page.t_start, t_end);
  const double width_px = 1200, us_per_px = std::max(t_end - t0, 1.0) / width_px;
  const int label_px = 130, row_px = 14, axis_px = 24;
  // The legend: the kinds this page shows, in the colour table's order
  // (others after, by name); a legend row per 6 kinds.
  std::vector<std::string> legend;
  {
    std::vector<std::string> present;
    for (const Row& r : rows)
      for (const Bar& b : r.bars) {
        std::string k = kind_of(b);
        if (std::find(present.begin(), present.end(), k) == present.end()) present.push_back(std::move(k));
      }
    for (const KindColour& k : kKindColours)
      if (std::find(present.begin(), present.end(), k.kind) != present.end()) legend.push_back(k.kind);
    std::sort(present.begin(), present.end());
    for (const std::string& k : present)
      if (std::find(legend.begin(), legend.end(), k) == legend.end()) legend.push_back(k);
  }
  const int legend_top = axis_px + int(rows.size()) * row_px + 8;
  const int height = legend_top + int((legend.size() + 5) / 6) * row_px + 4;
  html << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><meta charset=\"utf-8\"/><title>"
       << esc(title) << "</title>\n"
       << "<style>body{font-family:sans-serif;margin:8px}#view{overflow:auto;border:1px solid #ccc}"
          ".hl{stroke:#000;stroke-width:2px}[data-k],[data-l]{cursor:pointer}</style></head>\n"
       << "<body><h3>" << esc(title) << ": " << ios << " I/Os, " << num(t_end, "%.3f")
       << " us simulated, shown from " << num(t0, "%.3f") << " us</h3>\n"
          "<p>Zoom: <button onclick=\"zoom(2)\">+</button> <button onclick=\"zoom(0.5)\">-</button> "
          "(hover a bar for its name, start and duration, a doorbell update for the values that decided it; "
          "hover or click an I/O for its doorbell updates and interrupt, or one of those for its I/Os)</p>\n"
          "<div id=\"view\">\n";
  // The SVG straight into the page (no second copy of it).
  std::ostream& svg = html;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"tl\" width=\"" << int(label_px + width_px + 10) << "\" height=\""
      << height << "\" font-family=\"sans-serif\" font-size=\"10\" data-axis-start-us=\"" << num(t0, "%.6f") << "\">\n";
  // Axis: 10 ticks in us, from the window's start.
  const char* tick_format = t_end - t0 < 10 ? "%.3f" : "%.1f";
  for (int k = 0; k <= 10; ++k) {
    const double x = label_px + width_px * k / 10;
    svg << "<line x1=\"" << num(x, "%.1f") << "\" y1=\"" << axis_px - 6 << "\" x2=\"" << num(x, "%.1f") << "\" y2=\""
        << height << "\" stroke=\"#ddd\"/><text class=\"axis\" x=\"" << num(k < 10 ? x + 2 : x - 2, "%.1f") << "\" y=\"12\""
        << (k < 10 ? "" : " text-anchor=\"end\"") << ">"
        << num(t0 + (std::max(t_end, t0 + 1e-9) - t0) * k / 10, tick_format) << " us</text>\n";
  }
  // Link keys (data-k, data-l): a doorbell update "q1.sq5" (the 5th update
  // of q1's SQ doorbell), "q1.cq2", an MSI-X "q1.msix3", an interrupt
  // taken "vcpu0.irq3". An I/O's data-l lists its own; an interrupt's the
  // MSI-X it answered. Queue qN is driven by vCPU N-1 (one queue per vCPU).
  auto queue_number = [](const std::string& label) -> int {
    if (label.size() < 2 || label[0] != 'q') return -1;
    for (size_t i = 1; i < label.size(); ++i)
      if (label[i] < '0' || label[i] > '9' || i > 6) return -1;
    return std::stoi(label.substr(1));
  };
  auto vcpu_number = [](const std::string& label) -> int {
    if (label.size() < 5 || label.compare(0, 4, "vcpu") != 0) return -1;
    for (size_t i = 4; i < label.size(); ++i)
      if (label[i] < '0' || label[i] > '9' || i > 9) return -1;
    return std::stoi(label.substr(4));
  };
  auto u = [](int64_t v) { return std::to_string(v); };
  for (size_t i = 0; i < rows.size(); ++i) {
    const int y = axis_px + int(i) * row_px;
    const std::string& label = rows[i].label;
    svg << "<g class=\"track\" data-name=\"" << esc(label) << "\"><text x=\"2\" y=\"" << y + 10 << "\">"
        << esc(label) << "</text>\n";
    const size_t tag_at = label.find(" tag ");
    const bool io = tag_at != std::string::npos;
    const std::string queue = io ? label.substr(0, tag_at) : label;
    for (const Bar& b : rows[i].bars) {
      const double x = label_px + (b.start_us - t0) / us_per_px;
      const std::string kind = kind_of(b);
      std::string key, links, tip;
      if (b.instant) {
        tip = esc(b.name) + " at " + num(b.start_us) + " us";
        const bool sq = b.name.compare(0, 2, "sq") == 0;
        if (b.cat == Cat::Doorbell && b.a[0] >= 0) {
          const bool rang = b.name.find("mmio") != std::string::npos;
          if (b.a[3] >= 0) key = queue + (sq ? ".sq" : ".cq") + u(b.a[3]);
          tip = esc(queue) + (sq ? " SQ tail" : " CQ head") + " doorbell update" +
                (b.a[3] >= 0 ? " #" + u(b.a[3]) : "") + (rang ? ": MMIO write" : ": suppressed (no MMIO write)") +
                "\nnew (published) " + u(b.a[0]) + ", old " + (b.a[1] >= 0 ? u(b.a[1]) : "?");
          if (b.a[2] >= 0) {
            const int64_t lhs = (b.a[0] - b.a[2] - 1) & 0xffff, rhs = b.a[1] >= 0 ? (b.a[0] - b.a[1]) & 0xffff : -1;
            tip += ", EventIdx " + u(b.a[2]) + "\nrings iff (u16)(new - EventIdx - 1) &lt; (u16)(new - old): " +
                   u(lhs) + (rhs >= 0 ? (lhs < rhs ? " &lt; " : " &gt;= ") + u(rhs) : "");
          } else {
            tip += "\nno doorbell buffer: every update is an MMIO write";
          }
          tip += "\nat " + num(b.start_us) + " us";
        } else if (b.cat == Cat::EventIdx && b.a[0] >= 0) {
          tip = esc(queue) + (sq ? " SQ" : " CQ") + " EventIdx written by the device: new " + u(b.a[0]) +
                (b.a[1] >= 0 ? ", old " + u(b.a[1]) : "") + "\nat " + num(b.start_us) + " us";
        } else if (b.cat == Cat::Irq && b.name == "msix" && b.a[1] >= 0) {
          key = queue + ".msix" + u(b.a[1]);
          tip = "MSI-X #" + u(b.a[1]) + (b.a[0] >= 0 ? " (vector " + u(b.a[0]) + ")" : "") + " at " + num(b.start_us) + " us";
        } else if (b.cat == Cat::Irq && b.a[0] >= 0) {
          key = queue + ".irq" + u(b.a[0]);
          const int v = vcpu_number(queue);
          if (b.a[1] >= 0 && v >= 0) links = "q" + u(v + 1) + ".msix" + u(b.a[1]);
          tip = "interrupt #" + u(b.a[0]) + " taken" + (b.a[1] >= 0 ? " (MSI-X #" + u(b.a[1]) + ")" : "") + " at " +
                num(b.start_us) + " us";
        }
        svg << "<rect class=\"tick\" x=\"" << num(x, "%.2f") << "\" y=\"" << y + 1 << "\" width=\"1\" height=\""
            << row_px - 2 << "\" fill=\"" << colour(kind) << "\"";
      } else {
        tip = esc(b.name) + ": " + num(b.start_us) + " us + " + num(b.end_us - b.start_us) + " us";
        if (io) {
          const int q = queue_number(queue);
          auto add = [&links](const std::string& k) { links += (links.empty() ? "" : " ") + k; };
          if (b.a[0] >= 0) add(queue + ".sq" + u(b.a[0])), tip += "\nSQ doorbell update #" + u(b.a[0]);
          if (b.a[2] >= 0 && q >= 1) add("vcpu" + u(q - 1) + ".irq" + u(b.a[2])), tip += "\ninterrupt #" + u(b.a[2]);
          if (b.a[3] >= 0) add(queue + ".msix" + u(b.a[3])), tip += " (MSI-X #" + u(b.a[3]) + ")";
          if (b.a[1] >= 0) add(queue + ".cq" + u(b.a[1])), tip += "\nCQ doorbell update #" + u(b.a[1]);
        }
        svg << "<rect class=\"" << (io ? "io" : "span") << "\" x=\"" << num(x, "%.2f") << "\" y=\"" << y + 2
            << "\" width=\"" << num(std::max(0.5, (b.end_us - b.start_us) / us_per_px), "%.2f") << "\" height=\""
            << row_px - 4 << "\" fill=\"" << colour(kind) << "\"";
      }
      if (!key.empty()) svg << " data-k=\"" << esc(key) << "\"";
      if (!links.empty()) svg << " data-l=\"" << esc(links) << "\"";
      svg << "><title>" << tip << "</title></rect>\n";
    }
    svg << "</g>\n";
  }
  for (size_t k = 0; k < legend.size(); ++k) {
    const double x = label_px + double(k % 6) * width_px / 6;
    const int y = legend_top + int(k / 6) * row_px;
    svg << "<rect class=\"legend\" x=\"" << num(x, "%.1f") << "\" y=\"" << y << "\" width=\"10\" height=\"10\" fill=\""
        << colour(legend[k]) << "\"/><text x=\"" << num(x + 14, "%.1f") << "\" y=\"" << y + 9 << "\">" << esc(legend[k])
        << "</text>\n";
  }
  svg << "</svg>\n";

  // Zoom; links: hovering an element with data-k or data-l lights it, the
  // elements its data-l names and those whose data-l names its data-k; a
  // click pins that (a click elsewhere unpins).
  html << "</div>\n"
       << "<script>//<![CDATA[\n"
          "var s=1,g=document.getElementById('tl'),w=g.getAttribute('width');"
          "g.setAttribute('viewBox','0 0 '+w+' '+g.getAttribute('height'));"
          "function zoom(f){s*=f;g.setAttribute('width',w*s);}\n"
          "var idx={},rev={},lit=[],pin=null;"
          "function each(q,f){var l=g.querySelectorAll(q);for(var i=0;i<l.length;i++)f(l[i]);}"
          "function put(m,k,e){(m[k]=m[k]||[]).push(e);}"
          "each('[data-k]',function(e){put(idx,e.getAttribute('data-k'),e);});"
          "each('[data-l]',function(e){e.getAttribute('data-l').split(' ').forEach(function(k){put(rev,k,e);});});"
          "function related(e){var r=[e],k=e.getAttribute('data-k'),l=e.getAttribute('data-l');"
          "if(l)l.split(' ').forEach(function(x){r=r.concat(idx[x]||[]);});"
          "if(k)r=r.concat(rev[k]||[]);return r;}"
          "function light(a){lit.forEach(function(x){x.classList.remove('hl');});lit=a;"
          "lit.forEach(function(x){x.classList.add('hl');});}"
          "function linked(t){return t.closest?t.closest('[data-k],[data-l]'):null;}"
          "g.addEventListener('mouseover',function(v){var e=linked(v.target);if(e&&!pin)light(related(e));});"
          "g.addEventListener('mouseout',function(){if(!pin)light([]);});"
          "g.addEventListener('click',function(v){pin=linked(v.target);light(pin?related(pin):[]);});\n"
          "//]]></script>\n</body></html>\n";
}

}  // namespace

std::string timeline_html(const std::string& trace_json, const std::string& title) {
  PageBuilder page;
  parse_events(trace_json, page);
  std::ostringstream html;
  render_page(page, title, html);
  return html.str();
}

void timeline_html_of_run(const std::string& trace_json, const std::string& title, std::ostream& out) {
  PageBuilder page;
  parse_events(trace_json, page, false);
  render_page(page, title, out);
}

int run_timeline_html_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  const std::string usage =
      "Usage: nvmesim timeline-html IN.json OUT.html\n"
      "Writes the timeline IN.json (from --timeline FILE) as one self-contained HTML\n"
      "page (inline SVG, no network needed): vCPU, host-thread and queue tracks, each\n"
      "queue's I/Os one row per command tag; hover a bar for its name and times, a\n"
      "doorbell update for its new, old and EventIdx values, an I/O for its doorbell\n"
      "updates and interrupt (a click pins them). The axis starts at --trace-start.\n";
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    out << usage;
    return 0;
  }
  if (argc != 3) {
    err << "nvmesim timeline-html: error: needs IN.json and OUT.html (see 'nvmesim timeline-html --help')\n";
    return 2;
  }
  if (const std::string e = clashing_files({{"IN.json", argv[1]}}, {{"OUT.html", argv[2]}}); !e.empty()) {
    err << "nvmesim timeline-html: error: " << e << "\n";
    return 2;
  }
  if (const std::string e = output_path_problem(argv[2]); !e.empty()) {
    err << "nvmesim timeline-html: error: cannot write '" << argv[2] << "' (" << e << ")\n";
    return 2;
  }
  // A regular file of at most kTimelineInputMax bytes (a FIFO would block,
  // /dev/zero would grow without end).
  std::string text;
  try {
    InputLimits limits;
    limits.max_bytes = kTimelineInputMax;
    limits.check_lines = false;  // JSON may be one line
    text = read_input_file(argv[1], argv[1], limits);
  } catch (const InputFileError& e) {
    err << "nvmesim timeline-html: error: " << e.what()
        << (std::string(e.what()).find("longer than") != std::string::npos
                ? " (cut the trace with --trace-start/--trace-stop)"
                : "")
        << "\n";
    return 2;
  }
  PageBuilder page;
  try {
    parse_events(text, page);
  } catch (const TimelineInterrupted&) {
    err << "nvmesim timeline-html: interrupted by " << interrupt::signal_name(interrupt::received())
        << ": no page written\n";
    return interrupt::exit_code();
  } catch (const std::exception& e) {
    err << "nvmesim timeline-html: error: " << argv[1] << ": " << e.what() << "\n";
    return 2;
  }
  std::string().swap(text);  // the trace read: its memory for the page
  PendingFile pending;  // replaced only once written whole
  std::string e = pending.create(argv[2]);
  if (e.empty()) {
    std::ofstream f(pending.temp_path());
    try {
      render_page(page, std::string("nvmesim timeline ") + argv[1], f);
    } catch (const std::bad_alloc&) {
      e = "out of memory";
    }
    f.close();
    if (!f && e.empty()) e = "write failed";
  }
  if (e.empty()) e = pending.commit();
  if (!e.empty()) {
    err << "nvmesim timeline-html: error: cannot write '" << argv[2] << "' (" << e << ")\n";
    return 5;  // platform/cli/exit_codes.h: results not written
  }
  return 0;
}

}  // namespace nvmesim::platform
