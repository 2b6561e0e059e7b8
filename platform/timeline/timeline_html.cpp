// A --timeline file as a self-contained HTML page (see timeline_html.h).
#include "nvmesim/platform/timeline/timeline_html.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
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

struct Bar {
  double start_us, end_us;
  std::string name;
  bool instant;
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

// A colour per event name: idle is a light grey (time nothing happens),
// every other name the next of 19 distinct colours in the order the legend
// lists them (so no two names of one page share a colour up to 19 names).
const char* colour(const std::string& name, const std::vector<std::string>& legend) {
  static const char* const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                                        "#ff9da7", "#9c755f", "#1f3b73", "#a0cbe8", "#ffbe7d", "#8cd17d", "#b6992d",
                                        "#499894", "#86bcb6", "#d37295", "#fabfd2", "#79706e"};
  if (name == "idle") return "#dcdcdc";
  size_t k = 0;
  for (const std::string& n : legend) {
    if (n == name) break;
    if (n != "idle") ++k;
  }
  return palette[k % (sizeof palette / sizeof *palette)];
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
  };
  std::map<std::string, OpenIo> open_io;  // by async id
  std::map<int, std::vector<std::pair<double, std::string>>> open_span;  // B/E stacks per tid
  double t_end = 0;
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
    t_end = std::max(t_end, ts + dur);
    if (ph == "X") {
      track[tid].bars.push_back({ts, ts + dur, name, false});
    } else if (ph == "B") {
      open_span[tid].push_back({ts, name});
    } else if (ph == "E" && !open_span[tid].empty()) {
      track[tid].bars.push_back({open_span[tid].back().first, ts, open_span[tid].back().second, false});
      open_span[tid].pop_back();
    } else if (ph == "i" || ph == "I") {
      track[tid].bars.push_back({ts, ts, name, true});
    } else if (ph == "b") {
      const Json* args = e.object("args");
      const int tag = args ? EventReader{*args, k}.integer("tag") : 0;
      open_io[e.id("id")] = {ts, {tid, tag}, name};
    } else if (ph == "e") {
      const auto it = open_io.find(e.id("id"));
      if (it == open_io.end()) return;
      io_rows[it->second.row].bars.push_back({it->second.start, ts, it->second.name, false});
      open_io.erase(it);
      ++ios;
    }
  }
};

// Parses `trace_json` (an object with a "traceEvents" array, or the array
// itself) with nlohmann's parser callback, handing each event to `page` as
// it ends and discarding it. The callback hears SIGINT/SIGTERM/SIGHUP every
// 64k values.
void parse_events(const std::string& trace_json, PageBuilder& page) {
  using Event = Json::parse_event_t;
  int root = -1;            // 0: an object, 1: an array, 2: anything else
  int events_depth = -1;    // the depth of the events while inside their array
  bool saw_events = false;  // the events' array was found
  std::string key;          // the root object's member being parsed
  size_t index = 0, values = 0;
  auto callback = [&](int depth, Event event, Json& parsed) {
    if ((++values & 0xFFFF) == 0) throw_if_interrupted();
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

}  // namespace

std::string timeline_html(const std::string& trace_json, const std::string& title) {
  PageBuilder page;
  parse_events(trace_json, page);
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

  // Geometry: 1 px per `us_per_px` of simulated time; rows 14 px.
  const double width_px = 1600, us_per_px = std::max(t_end, 1.0) / width_px;
  const int label_px = 130, row_px = 14, axis_px = 24;
  // A legend row per 6 event names (every name a bar or tick carries).
  std::vector<std::string> legend;
  for (const Row& r : rows)
    for (const Bar& b : r.bars)
      if (std::find(legend.begin(), legend.end(), b.name) == legend.end()) legend.push_back(b.name);
  const int legend_top = axis_px + int(rows.size()) * row_px + 8;
  const int height = legend_top + int((legend.size() + 5) / 6) * row_px + 4;
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><meta charset=\"utf-8\"/><title>"
       << esc(title) << "</title>\n"
       << "<style>body{font-family:sans-serif;margin:8px}#view{overflow:auto;border:1px solid #ccc}</style></head>\n"
       << "<body><h3>" << esc(title) << ": " << ios << " I/Os, " << num(t_end, "%.3f")
       << " us simulated</h3>\n<p>Zoom: <button onclick=\"zoom(2)\">+</button> <button onclick=\"zoom(0.5)\">-</button> "
          "(hover a bar for its name, start and duration)</p>\n<div id=\"view\">\n";
  // The SVG straight into the page (no second copy of it).
  std::ostream& svg = html;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"tl\" width=\"" << int(label_px + width_px + 10) << "\" height=\""
      << height << "\" font-family=\"sans-serif\" font-size=\"10\">\n";
  // Axis: 10 ticks in us.
  for (int k = 0; k <= 10; ++k) {
    const double x = label_px + width_px * k / 10;
    svg << "<line x1=\"" << num(x, "%.1f") << "\" y1=\"" << axis_px - 6 << "\" x2=\"" << num(x, "%.1f") << "\" y2=\""
        << height << "\" stroke=\"#ddd\"/><text x=\"" << num(k < 10 ? x + 2 : x - 2, "%.1f") << "\" y=\"12\""
        << (k < 10 ? "" : " text-anchor=\"end\"") << ">"
        << num(t_end * k / 10, "%.1f") << " us</text>\n";
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const int y = axis_px + int(i) * row_px;
    svg << "<g class=\"track\" data-name=\"" << esc(rows[i].label) << "\"><text x=\"2\" y=\"" << y + 10 << "\">"
        << esc(rows[i].label) << "</text>\n";
    for (const Bar& b : rows[i].bars) {
      const double x = label_px + b.start_us / us_per_px;
      const bool io = rows[i].label.find(" tag ") != std::string::npos;
      if (b.instant) {
        svg << "<rect class=\"tick\" x=\"" << num(x, "%.2f") << "\" y=\"" << y + 1 << "\" width=\"1\" height=\""
            << row_px - 2 << "\" fill=\"" << colour(b.name, legend) << "\"><title>" << esc(b.name) << " at "
            << num(b.start_us) << " us</title></rect>\n";
      } else {
        svg << "<rect class=\"" << (io ? "io" : "span") << "\" x=\"" << num(x, "%.2f") << "\" y=\"" << y + 2
            << "\" width=\"" << num(std::max(0.5, (b.end_us - b.start_us) / us_per_px), "%.2f") << "\" height=\""
            << row_px - 4 << "\" fill=\"" << colour(b.name, legend) << "\"><title>" << esc(b.name) << ": "
            << num(b.start_us) << " us + " << num(b.end_us - b.start_us) << " us</title></rect>\n";
      }
    }
    svg << "</g>\n";
  }
  for (size_t k = 0; k < legend.size(); ++k) {
    const double x = label_px + double(k % 6) * width_px / 6;
    const int y = legend_top + int(k / 6) * row_px;
    svg << "<rect class=\"legend\" x=\"" << num(x, "%.1f") << "\" y=\"" << y << "\" width=\"10\" height=\"10\" fill=\""
        << colour(legend[k], legend) << "\"/><text x=\"" << num(x + 14, "%.1f") << "\" y=\"" << y + 9 << "\">" << esc(legend[k])
        << "</text>\n";
  }
  svg << "</svg>\n";

  html << "</div>\n"
       << "<script>//<![CDATA[\n"
          "var s=1,g=document.getElementById('tl'),w=g.getAttribute('width');"
          "g.setAttribute('viewBox','0 0 '+w+' '+g.getAttribute('height'));"
          "function zoom(f){s*=f;g.setAttribute('width',w*s);}\n"
          "//]]></script>\n</body></html>\n";
  return html.str();
}

int run_timeline_html_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  const std::string usage =
      "Usage: nvmesim timeline-html IN.json OUT.html\n"
      "Writes the timeline IN.json (from --timeline FILE) as one self-contained HTML\n"
      "page (inline SVG, no network needed): vCPU, host-thread and queue tracks, each\n"
      "queue's I/Os one row per command tag; hover a bar for its name and times.\n";
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
  std::string html;
  try {
    html = timeline_html(text, std::string("nvmesim timeline ") + argv[1]);
  } catch (const TimelineInterrupted&) {
    err << "nvmesim timeline-html: interrupted by " << interrupt::signal_name(interrupt::received())
        << ": no page written\n";
    return interrupt::exit_code();
  } catch (const std::exception& e) {
    err << "nvmesim timeline-html: error: " << argv[1] << ": " << e.what() << "\n";
    return 2;
  }
  PendingFile pending;  // replaced only once written whole
  std::string e = pending.create(argv[2]);
  if (e.empty()) {
    std::ofstream f(pending.temp_path());
    f << html;
    f.close();
    if (!f) e = "write failed";
  }
  if (e.empty()) e = pending.commit();
  if (!e.empty()) {
    err << "nvmesim timeline-html: error: cannot write '" << argv[2] << "' (" << e << ")\n";
    return 5;  // platform/cli/exit_codes.h: results not written
  }
  return 0;
}

}  // namespace nvmesim::platform
