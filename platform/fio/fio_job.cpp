// fio job files in (see fio_job.h).
#include "nvmesim/platform/fio/fio_job.h"
#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/config/device_backend.h"
#include "nvmesim/platform/config/input_file.h"
#include "nvmesim/platform/config/user_text.h"
#include "nvmesim/models/guest/fio_options.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <istream>
#include <set>
#include <sstream>
#include <unistd.h>

namespace nvmesim::platform {

namespace {

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string lower(std::string s) {
  for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// fio names nvmesim maps onto its own parameter of the same meaning.
struct Alias { const char* fio; const char* param; };
const Alias kMapped[] = {
    {"rw", "rw"},         {"readwrite", "rw"},     {"bs", "bs"},
    {"blocksize", "bs"},  {"iodepth", "iodepth"},  {"iodepth_batch_submit", "iodepth_batch_submit"},
    {"iodepth_batch", "iodepth_batch_submit"},     {"numjobs", "numjobs"},
    {"iodepth_batch_complete_min", "iodepth_batch_complete_min"},
    {"iodepth_batch_complete", "iodepth_batch_complete_min"},
    {"iodepth_batch_complete_max", "iodepth_batch_complete_max"},
    {"iodepth_low", "iodepth_low"},
    {"runtime", "runtime"}, {"timeout", "runtime"}, {"number_ios", "number_ios"},
    {"size", "size"},     {"rwmixread", "rwmixread"}, {"rwmixwrite", "rwmixread"},
    {"randseed", "seed"}, {"verify", "verify"},    {"time_based", ""},
    {"bssplit", "bssplit"}, {"bsrange", "bsrange"}, {"blocksize_range", "bsrange"},
    {"random_distribution", "random_distribution"}, {"blockalign", "blockalign"}, {"ba", "blockalign"}, {"rate", "rate"}, {"rate_iops", "rate_iops"},
    {"thinktime", "thinktime"}, {"thinktime_spin", "thinktime_spin"},
    {"thinktime_blocks", "thinktime_blocks"}, {"latency_target", "latency_target"},
    {"latency_window", "latency_window"}, {"latency_percentile", "latency_percentile"},
    {"latency_run", "latency_run"}, {"verify_interval", "verify_interval"},
    {"verify_pattern", "verify_pattern"}, {"verify_fatal", "verify_fatal"}, {"do_verify", "do_verify"},
    {"io_size", ""}, {"io_limit", ""}, {"ioengine", ""}, {"fill_device", ""}, {"fill_fs", ""},
    {"sqthread_poll", "sqthread_poll"},
};

// fio 3.33's defaults (options.c .def, init.c fixup_options) for the
// options nvmesim maps, where they differ from nvmesim's own (which serve
// the bare command line's experiment): rw=read, iodepth=1, randseed=0x89.
// The others are fio's already: bs=4k, numjobs=1, runtime=0, rwmixread=50,
// iodepth_batch_submit=1, iodepth_batch_complete_min=1, _max=0 (= min),
// iodepth_low=0 (= iodepth), verify=0, thinktime=0, thinktime_blocks=1.
const std::pair<const char*, const char*> kFioDefaults[] = {
    {"rw", "read"}, {"iodepth", "1"}, {"seed", "137"},
};

// fio's engines that nvmesim's job runs: the asynchronous ones queue up to
// iodepth; the synchronous ones (FIO_SYNCIO in their ioengine_ops) complete
// each I/O in the call, so their depth is 1 whatever iodepth says
// (backend.c: "queue depth will be capped at 1").
// io_uring_cmd (cmd_type=nvme) is NVMe passthrough on the generic char
// device: nvmesim's uring_cmd (models/guest/fio_job.cpp FioJob::submit_work).
const char* const kAsyncEngines[] = {"libaio", "io_uring", "io_uring_cmd", "posixaio"};
const char* const kSyncEngines[] = {"psync", "sync", "vsync", "pvsync", "pvsync2"};

// Options that change the workload and are not modelled, with the value
// that is fio's default (accepted: it changes nothing). Any other value is
// refused by file and line.
const std::pair<const char*, const char*> kDefaultOnly[] = {
    {"loops", "1"}, {"startdelay", "0"}, {"ramp_time", "0"}, {"offset", "0"}, {"thinktime_iotime", "0"},
    {"thinktime_blocks_type", "issue"}, {"rate_process", "linear"}, {"rate_ign_think", "0"},
    {"ratemin", "0"}, {"rate_min", "0"}, {"rate_iops_min", "0"}, {"fsync", "0"}, {"fdatasync", "0"},
    {"end_fsync", "0"}, {"fsync_on_close", "0"}, {"verify_backlog", "0"},
    {"zonemode", "none"}, {"flow", "0"}, {"io_submit_mode", "inline"},
    {"bs_unaligned", "0"}, {"offset_increment", "0"},
};

// Options that cannot change what is simulated: host files, engines' details,
// buffer contents, reporting and logging, CPU placement.
const char* const kIgnored[] = {
    "direct", "buffered", "filename", "filename_format", "directory", "nrfiles",
    "norandommap", "randrepeat", "random_generator", "group_reporting", "gtod_reduce",
    "invalidate", "refill_buffers", "zero_buffers", "scramble_buffers", "name", "description", "thread", "clat_percentiles", "lat_percentiles",
    "slat_percentiles", "percentile_list", "disable_lat", "disable_clat", "disable_slat",
    "disable_bw_measurement", "write_hist_log", "per_job_logs", "cpus_allowed", "cpus_allowed_policy",
    "cpumask", "numa_cpu_nodes", "numa_mem_policy", "nice", "prio", "prioclass", "clocksource",
    "exitall", "allow_mounted_write", "overwrite", "unlink", "create_on_open", "fallocate",
    "iomem", "mem", "iomem_align", "lockmem", "exec_prerun", "exec_postrun", "disk_util",
    "stats", "log_hist_msec", "log_max_value", "log_compression", "log_store_compressed",
    "kb_base", "unit_base", "significant_figures", "continue_on_error", "ioscheduler", "pre_read",
    "allow_file_create", "create_serialize", "verify_dump", "error_dump",
    // fio's io_uring engines' options (engines/io_uring.c) that change no
    // modelled cost: sqthread_poll_cpu pins the SQPOLL thread
    // (IORING_SETUP_SQ_AFF), whose CPU the model does not simulate;
    // nonvectored picks READ/WRITE over READV/WRITEV (one buffer either way);
    // registerfiles and fixedbufs save the per-I/O file lookup and page
    // pinning, which guest.submit_cost does not separate.
    "sqthread_poll_cpu", "nonvectored", "registerfiles", "fixedbufs",
};

const char* mapped_param(const std::string& name) {
  for (const Alias& a : kMapped)
    if (name == a.fio) return a.param;
  return nullptr;
}

// fio options that are no nvmesim parameter but are accepted on the
// command line as in a file.
bool is_fio_only_option(const std::string& name) {
  for (const char* n : {"time_based", "write_lat_log", "write_bw_log", "write_iops_log", "log_avg_msec",
                        "log_offset", "ioengine", "io_size", "verify_sort", "fill_device", "fill_fs", "cmd_type"})
    if (name == n) return true;
  return false;
}

bool is_ignored(const std::string& name) {
  for (const char* n : kIgnored)
    if (name == n) return true;
  return false;
}

// fio booleans: 1/0 (and the usual words).
bool parse_bool(const std::string& v, bool& out) {
  const std::string s = lower(v);
  if (s == "1" || s == "true" || s == "on" || s == "yes") return out = true, true;
  if (s == "0" || s == "false" || s == "off" || s == "no") return out = false, true;
  return false;
}

// The run's device size in bytes as the job's configuration gives it (the
// device's own capacity or its old spelling), and whether the user set it.
bool device_capacity(const Config& c, uint64_t& bytes) {
  if (!c.registry().find("nvme.capacity")) return false;
  const std::string cap = backend_value_param(c, "capacity");
  bytes = c.size_bytes(cap);
  return c.is_set(cap);
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// "--bs: detail" -> "detail" (the caller names the option itself).
std::string strip_param(const std::string& msg, const std::string& param) {
  const std::string prefix = "--" + param + ": ";
  return msg.rfind(prefix, 0) == 0 ? msg.substr(prefix.size()) : msg;
}

}  // namespace

std::string fio_time_to_param(const std::string& value, const char* bare_unit) {
  const std::string v = lower(trim(value));
  size_t i = 0;
  while (i < v.size() && (std::isdigit(static_cast<unsigned char>(v[i])) || v[i] == '.')) ++i;
  if (i == 0) return "";
  const std::string number = v.substr(0, i), unit = v.substr(i);
  char* end = nullptr;
  const double x = std::strtod(number.c_str(), &end);
  if (!end || *end || !std::isfinite(x)) return "";
  auto seconds = [&](double factor) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.15gs", x * factor);
    return std::string(buf);
  };
  if (unit.empty()) return number + bare_unit;  // fio's default unit (seconds for runtime)
  if (unit == "s" || unit == "sec") return number + "s";
  if (unit == "ns" || unit == "nsec") return number + "ns";
  if (unit == "us" || unit == "usec") return number + "us";
  if (unit == "ms" || unit == "msec") return number + "ms";
  if (unit == "m" || unit == "min") return seconds(60);
  if (unit == "h" || unit == "hour") return seconds(3600);
  if (unit == "d" || unit == "day") return seconds(86400);
  return "";
}

std::string fio_command_line_value(const std::string& name, const std::string& value) {
  const bool seconds = name == "runtime", micro = name == "thinktime" || name == "thinktime_spin" ||
                                               name == "latency_target" || name == "latency_window";
  if (!seconds && !micro) return value;
  const std::string v = trim(value);
  if (v.empty() || v.find_first_not_of("0123456789.") != std::string::npos) return value;  // has a unit
  return fio_time_to_param(v, seconds ? "s" : "us");
}

namespace {

constexpr int kMaxIncludeDepth = 16;  // an include cycle ends here with an error
// A fan-out (each file including many, each of those many more) is bounded in
// the whole: includes read at most kMaxIncludes times, kInputFileMax bytes in
// all (4 levels of 60 includes were 13 million reads).
constexpr int kMaxIncludes = 256;

// fio's strip_blank_end (parse.c): an option line ends at its first ';' or
// '#', then trailing blanks go ("numjobs=4 ; four threads" is numjobs=4).
std::string strip_inline_comment(const std::string& line) {
  return trim(line.substr(0, line.find_first_of(";#")));
}

struct ParseState {
  FioJobFile& file;
  bool in_global = false, in_section = false;
  std::vector<FioOption> globals_so_far;
  int includes = 0;           // include lines followed so far, at every depth
  size_t included_bytes = 0;  // bytes the included files held, in all
};

// `included`: the lines of an include file, which may hold options only
// (fio: "No new sections in included files").
void parse_lines(std::istream& in, const std::string& path, ParseState& st, int depth) {
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string where = "--job " + shown(path) + " line " + std::to_string(lineno) + ": ";
    if (const int sig = interrupt::received())
      throw ConfigError(where + "interrupted by " + interrupt::signal_name(sig));
    if (lineno == 1) line = strip_bom(line);
    if (line.size() > kInputLineMax)
      throw ConfigError(where + "longer than " + std::to_string(kInputLineMax) + " bytes");
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      if (depth > 0) throw ConfigError(where + "no new sections in an included file (fio's rule)");
      line = strip_inline_comment(line);
      if (line.back() != ']') throw ConfigError(where + "bad section header " + quoted(line));
      const std::string name = trim(line.substr(1, line.size() - 2));
      if (name.empty()) throw ConfigError(where + "empty section name");
      st.in_section = true;
      st.in_global = name == "global";
      if (!st.in_global) {
        FioSection s;
        s.name = name;
        s.line = lineno;
        s.global = st.globals_so_far;  // fio: a later [global] does not reach back
        st.file.jobs.push_back(std::move(s));
      }
      continue;
    }
    line = strip_inline_comment(line);
    if (line.empty()) continue;
    if (!st.in_section) throw ConfigError(where + "option " + quoted(line) + " before the first [section]");
    if (line.rfind("include", 0) == 0 && (line.size() == 7 || std::isspace(static_cast<unsigned char>(line[7])))) {
      // fio: the name as given, else relative to the including file's folder.
      std::string name = trim(line.substr(7));
      if (name.empty()) throw ConfigError(where + "include needs a file name");
      if (depth + 1 >= kMaxIncludeDepth)
        throw ConfigError(where + "include " + quoted(name) + ": nested more than " +
                          std::to_string(kMaxIncludeDepth) + " deep (an include cycle?)");
      std::string full = name;
      if (name[0] != '/' && ::access(name.c_str(), F_OK) != 0)
        if (const size_t slash = path.rfind('/'); slash != std::string::npos) full = path.substr(0, slash + 1) + name;
      if (++st.includes > kMaxIncludes)
        throw ConfigError(where + "include " + quoted(name) + ": more than " + std::to_string(kMaxIncludes) +
                          " includes in one job file (counting those of included files)");
      const std::string text = read_input_file_as<ConfigError>(full, where + "include " + shown(full));
      st.included_bytes += text.size();
      st.file.includes.push_back(full);
      if (st.included_bytes > kInputFileMax)
        throw ConfigError(where + "include " + quoted(name) + ": the included files hold more than " +
                          std::to_string(kInputFileMax) + " bytes in all");
      std::istringstream inc(text);
      parse_lines(inc, full, st, depth + 1);
      continue;
    }
    FioOption o;
    o.line = lineno;
    o.source = path;
    const size_t eq = line.find('=');
    o.name = lower(trim(line.substr(0, eq)));
    if (eq != std::string::npos) {
      o.has_value = true;
      o.value = trim(line.substr(eq + 1));
    }
    if (o.name.empty()) throw ConfigError(where + "missing option name before '='");
    if (st.in_global) {
      st.globals_so_far.push_back(o);
      st.file.global.push_back(o);
    } else {
      st.file.jobs.back().options.push_back(o);
    }
  }
  if (in.bad()) throw ConfigError("--job " + shown(path) + ": read error");
}

}  // namespace

FioJobFile parse_fio_job_file(std::istream& in, const std::string& path) {
  FioJobFile f;
  f.path = path;
  ParseState st{f, false, false, {}};
  parse_lines(in, path, st, 0);
  if (f.jobs.empty()) throw ConfigError("--job " + shown(path) + ": no job section (only [global])");
  return f;
}

FioJobFile load_fio_job_file(const std::string& path) {
  const std::string text = read_input_file_as<ConfigError>(path, "--job " + shown(path));
  std::istringstream in(text);
  return parse_fio_job_file(in, path);
}

FioJobs resolve_fio_jobs(const FioJobFile& file, const Config& base,
                         const std::vector<std::pair<std::string, std::string>>& command_line,
                         bool strict, bool fio_defaults) {
  (void)strict;  // unknown options are always refused now
  FioJobs out(base);
  // Per job: 0 its own size; 1 the device's; 2 the device's, and number_ios from it.
  std::vector<int> sized;
  std::set<std::pair<std::string, int>> reported;  // (file, line) already warned about ([global] applies to every job)
  auto note_ignored = [&](const std::string& name) {
    if (std::find(out.ignored.begin(), out.ignored.end(), name) == out.ignored.end())
      out.ignored.push_back(name);
  };
  for (const FioOption& o : file.global)
    if (o.has_value) out.global_options.emplace_back(o.name, o.value);

  for (const FioSection& section : file.jobs) {
    FioJob job(base);
    job.name = section.name;
    Config& c = job.config;
    bool time_based = false;

    // fio's defaults where nvmesim's differ (unless --config or --preset set them).
    if (fio_defaults)
      for (const auto& [name, value] : kFioDefaults)
        if (base.registry().find(name) && !base.is_set(name)) c.set(name, value);
    std::string engine = fio_defaults ? "psync" : "libaio";  // fio's FIO_PREFERRED_ENGINE on Linux
    bool engine_given = false;    // ioengine= seen
    std::string cmd_type_where;   // "where + option" of a cmd_type= line (io_uring_cmd's option)
    bool batch_submit_iodepth = false;  // iodepth_batch_submit=0: iodepth (init.c)
    bool verify_set = false, verify_pattern_set = false;
    uint64_t io_size = 0;          // io_size / io_limit: bytes of I/O instead of size
    bool fill_device = false;      // fill_device / fill_fs

    auto apply = [&](const FioOption& o, bool from_cli) {
      const std::string& source = o.source.empty() ? file.path : o.source;
      const std::string where =
          from_cli ? std::string() : "--job " + shown(source) + " line " + std::to_string(o.line) + ": ";
      const std::string option =
          platform::shown((from_cli ? "--" : "") + o.name + (o.has_value ? "=" + o.value : ""));
      if (o.name == "group_reporting") out.group_reporting = true;
      if (o.name == "name" && o.has_value && !o.value.empty()) job.name = o.value;
      // Job order (fio 3.33 HOWTO, stonewall and wait_for; init.c
      // add_job): stonewall (alias wait_for_previous) waits for every job
      // above, wait_for=NAME for that one; stonewall and new_group start a
      // new reporting group.
      if (o.name == "stonewall" || o.name == "wait_for_previous" || o.name == "new_group") {
        bool on = true;
        if (o.has_value && !parse_bool(o.value, on))
          throw ConfigError(where + option + ": not a boolean (1/0, true/false)");
        if (o.name == "new_group") job.new_group = on;
        else job.stonewall = on;
        return;
      }
      // fio's logs (platform/fio/fio_logs.h): a name, or the job's.
      if (o.name == "write_lat_log" || o.name == "write_bw_log" || o.name == "write_iops_log") {
        std::string& stem = o.name == "write_lat_log" ? job.log_names[0]
                            : o.name == "write_bw_log" ? job.log_names[1] : job.log_names[2];
        stem = o.has_value && !trim(o.value).empty() ? trim(o.value) : std::string("\1");  // \1: the job's name
        return;
      }
      if (o.name == "log_avg_msec") {
        const std::string value = trim(o.value);
        char* end = nullptr;
        const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
        if (value.empty() || *end || value[0] == '-' || v > 3600000ull)
          throw ConfigError(where + option + ": not a number of milliseconds (0..3600000)");
        job.logs.avg_msec = v;
        return;
      }
      if (o.name == "log_offset") {
        bool on = true;
        if (o.has_value && !parse_bool(o.value, on)) throw ConfigError(where + option + ": not a boolean (1/0, true/false)");
        job.logs.offset = on;
        return;
      }
      if (o.name == "wait_for") {
        if (!o.has_value || trim(o.value).empty()) throw ConfigError(where + "wait_for: needs a job name");
        job.wait_for = trim(o.value);
        job.wait_for_where = where;
        return;
      }
      if (o.name == "random_generator" && lower(trim(o.value)) == "lfsr") {
        // Not ignored silently: fio's LFSR visits every block once per pass.
        const std::string w = "random_generator=lfsr: random offsets come from nvmesim's own generator "
                              "(fio's LFSR visits each block exactly once per pass; nvmesim's draws may repeat)";
        if (std::find(out.warnings.begin(), out.warnings.end(), w) == out.warnings.end()) out.warnings.push_back(w);
        return;
      }
      if (is_ignored(o.name)) {
        note_ignored(o.name);
        return;
      }
      // fio's io_uring_cmd engine: cmd_type=nvme (its default) issues
      // nvme-uring-cmd on /dev/ngXnY; bsg (SCSI generic) is not modelled.
      if (o.name == "cmd_type") {
        if (lower(trim(o.value)) != "nvme")
          throw ConfigError(where + option + ": not modelled (nvmesim runs cmd_type=nvme only)");
        cmd_type_where = where + option;
        return;
      }
      // hipri: IORING_SETUP_IOPOLL (fio engines/io_uring.c fio_ioring_queue_init),
      // completions polled by io_uring_enter instead of taken by interrupt.
      if (o.name == "hipri") {
        bool on = true;
        if (o.has_value && !parse_bool(o.value, on)) throw ConfigError(where + option + ": not a boolean (1/0)");
        if (on)
          throw ConfigError(where + option +
                            ": not modelled (io_uring's polled completions; nvmesim runs hipri=0, and polls the "
                            "driver's CQ with guest.completion=poll)");
        return;
      }
      // verify_sort (fio's default 1): the verify phase reads in offset
      // order either way (fio sorts with its rb-tree; a list keeps write order).
      if (o.name == "verify_sort") {
        bool on = true;
        if (o.has_value && !parse_bool(o.value, on)) throw ConfigError(where + option + ": not a boolean (1/0)");
        return;
      }
      // fill_device (alias fill_fs): a boolean, bare = 1; the job's size below.
      if (o.name == "fill_device" || o.name == "fill_fs") {
        fill_device = true;
        if (o.has_value && !parse_bool(o.value, fill_device))
          throw ConfigError(where + option + ": not a boolean (1/0, true/false)");
        return;
      }
      for (const auto& [name, def] : kDefaultOnly)
        if (o.name == name) {
          std::string v = lower(trim(o.value));
          if (v == "false" || v == "off" || v == "no") v = "0";
          if (v == "true" || v == "on" || v == "yes" || (!o.has_value && std::string(def) == "1")) v = "1";
          if (v != def && !(std::string(def) == "0" && fio_time_to_param(v) != "" && std::strtod(v.c_str(), nullptr) == 0))
            throw ConfigError(where + option + ": not modelled (nvmesim runs only fio's default, " + name + "=" +
                              def + ")");
          return;
        }
      const char* param = mapped_param(o.name);
      if (!param)
        throw ConfigError(where + "fio option " + quoted(o.name) + " is not modelled" +
                          (o.name == "seed" ? " (fio's name is randseed)" : "") +
                          " (nvmesim refuses what it cannot run as fio would)");
      if (o.name == "time_based") {
        if (o.has_value && !parse_bool(o.value, time_based))
          throw ConfigError(where + option + ": not a boolean (1/0, true/false)");
        if (!o.has_value) time_based = true;
        return;
      }
      if (!o.has_value && o.name != "sqthread_poll") throw ConfigError(where + o.name + ": missing value");
      std::string value = o.has_value ? o.value : "1";  // a bare sqthread_poll sets it (fio's FIO_OPT_STR_SET)
      const std::string p = param;
      if (o.name == "ioengine") {
        const std::string v = lower(trim(value));
        const bool known = std::find(std::begin(kAsyncEngines), std::end(kAsyncEngines), v) != std::end(kAsyncEngines) ||
                           std::find(std::begin(kSyncEngines), std::end(kSyncEngines), v) != std::end(kSyncEngines);
        if (!known)
          throw ConfigError(where + option +
                            ": not modelled (nvmesim's job runs libaio, io_uring, io_uring_cmd, posixaio, and the "
                            "synchronous psync, sync, vsync, pvsync, pvsync2 at depth 1)");
        engine = v;
        engine_given = true;
        return;
      }
      if (o.name == "io_size" || o.name == "io_limit") {
        const std::string v = trim(value);
        if (v.find('%') != std::string::npos || !models::fio_opt::parse_bytes(v, io_size) || io_size == 0)
          throw ConfigError(where + option + ": not a size (bytes, k, m, g)");
        return;
      }
      if (p == "rw") {
        const std::string v = lower(value);
        if (v.find(':') != std::string::npos)
          throw ConfigError(where + option + ": the ':' offset modifier is not supported");
        if (v == "rw" || v == "readwrite" || v == "trim" || v == "randtrim" || v == "trimwrite" ||
            v == "randtrimwrite")
          throw ConfigError(where + option +
                            ": not supported (nvmesim runs read, write, randread, randwrite, randrw)");
        value = v;
      } else if (p == "bs" && value.find_first_of(",:-") != std::string::npos) {
        // fio: "bs=R,W" per direction, "bs=min-max" a range (bsrange's).
        if (value.find(':') != std::string::npos)
          throw ConfigError(where + option + ": not a block size (bs, bs=read,write or bs=min-max)");
        const std::string target = value.find('-') != std::string::npos ? "bsrange" : "bssplit";
        std::string text = value;
        if (target == "bssplit") {
          std::vector<std::string> parts = models::fio_opt::split(value, ',');
          for (std::string& part : parts)
            if (trim(part).empty()) part = c.text("bs");
          text = join(parts, ",");
        }
        try {
          c.set(target, text);
        } catch (const ConfigError& e) {
          throw ConfigError(where + o.name + ": " + strip_param(e.what(), target));
        }
        return;
      } else if (p == "size" && value.find('%') != std::string::npos) {
        throw ConfigError(where + option + ": a percentage of the device is not supported (give bytes)");
      } else if (p == "runtime") {
        value = fio_time_to_param(o.value);
        if (value.empty())
          throw ConfigError(where + option +
                            ": not a time (seconds, or with us, ms, s, m, h, d as fio)");
      } else if (p == "thinktime" || p == "thinktime_spin" || p == "latency_target" || p == "latency_window") {
        // fio: a bare thinktime, latency_target, latency_window is microseconds (options.c is_time)
        value = fio_time_to_param(o.value, "us");
        if (value.empty())
          throw ConfigError(where + option + ": not a time (microseconds, or with us, ms, s as fio)");
      } else if (p == "latency_run" || p == "sqthread_poll") {
        bool on = true;
        if (!parse_bool(value, on)) throw ConfigError(where + option + ": not a boolean (1/0, true/false)");
        value = on ? "on" : "off";
      } else if (p == "verify") {
        const std::string v = lower(trim(value));
        if (v == "0" || v == "none") value = "off";
        else if (v == "crc32c-intel") value = "crc32c";  // fio's alias (the hardware instruction where there is one)
        else if (v == "pattern" || v == "crc32c" || v == "crc32" || v == "md5" || v == "sha256" || v == "meta")
          value = v;
        else
          throw ConfigError(where + option +
                            ": not supported (nvmesim supports verify=crc32c, crc32c-intel, crc32, md5, sha256, "
                            "meta, pattern or 0)");
      } else if (p == "verify_fatal" || p == "do_verify") {
        bool on = true;
        if (!parse_bool(value, on)) throw ConfigError(where + option + ": not a boolean (1/0)");
        value = on ? "on" : "off";
      } else if (o.name == "rwmixwrite") {
        char* end = nullptr;
        const long w = std::strtol(value.c_str(), &end, 10);
        if (value.empty() || *end || w < 0 || w > 100)
          throw ConfigError(where + option + ": out of range (0..100)");
        value = std::to_string(100 - w);
      } else if (p == "iodepth_batch_submit" && trim(value) == "0") {
        batch_submit_iodepth = true;
        return;
      } else if (p == "iodepth_batch_complete_min" && trim(value) == "0") {
        // fio's loop reaps only with its queue full, and then at least one
        // (backend.c wait_for_completions): 0 runs as 1.
        value = "1";
      }
      if (p == "iodepth_batch_submit") batch_submit_iodepth = false;
      if (p == "verify") verify_set = true;
      if (p == "verify_pattern") verify_pattern_set = true;
      try {
        c.set(p, value);
      } catch (const ConfigError& e) {
        throw ConfigError(where + o.name + ": " + strip_param(e.what(), p));
      }
    };
    for (const FioOption& o : section.global) apply(o, false);
    for (const FioOption& o : section.options) {
      apply(o, false);
      if (o.has_value) job.options.emplace_back(o.name, o.value);
    }
    // The command line: fio's spellings mean what they mean in a file.
    for (const auto& [name, value] : command_line) {
      if (mapped_param(name) || is_fio_only_option(name)) {
        FioOption o;
        o.name = name;
        o.value = value;
        o.has_value = !(value.empty() && (name == "time_based" || name.rfind("write_", 0) == 0));
        apply(o, true);
      } else {
        c.set(name, value);
      }
    }
    // fio's synchronous engines complete each I/O in the call: depth 1.
    if (std::find(std::begin(kSyncEngines), std::end(kSyncEngines), engine) != std::end(kSyncEngines))
      c.set("iodepth", "1");
    if (batch_submit_iodepth) c.set("iodepth_batch_submit", c.text("iodepth"));
    // fio's io_uring_cmd engine is nvmesim's uring_cmd (which, set alone,
    // means that engine); sqthread_poll and cmd_type are options of fio's
    // io_uring engines (engines/io_uring.c options[]), refused by fio elsewhere.
    // (A registry without them, the config library's own, has neither.)
    const std::string in_job = "--job " + shown(file.path) + " [" + shown(section.name) + "]: ";
    auto flag = [&](const char* name) { return base.registry().find(name) && c.flag(name); };
    if (engine == "io_uring_cmd" && base.registry().find("uring_cmd")) c.set("uring_cmd", "on");
    else if (flag("uring_cmd") && engine_given)
      throw ConfigError(in_job + "uring_cmd=on is fio's ioengine=io_uring_cmd, not ioengine=" + engine);
    else if (flag("uring_cmd")) engine = "io_uring_cmd";
    if (!cmd_type_where.empty() && engine != "io_uring_cmd")
      throw ConfigError(cmd_type_where + ": an option of ioengine=io_uring_cmd (this job's is " + engine + ")");
    if (flag("sqthread_poll") && engine != "io_uring" && engine != "io_uring_cmd")
      throw ConfigError(in_job + "sqthread_poll=1 needs ioengine=io_uring or io_uring_cmd (this job's is " +
                        engine + ")");
    // fio: verify_pattern without verify means verify=pattern.
    if (verify_pattern_set && !verify_set) c.set("verify", "pattern");
    job.engine = engine;
    // A job without size addresses its whole file, here the block device:
    // fio's size becomes the device's size (filesetup.c setup_files:
    // `o->size = total_size`, the sum of its files' real_file_size).
    // fill_device=1 (alias fill_fs; init.c fixup_options sets size to -1
    // when none is given) is the same on a block device (fio's HOWTO: its
    // size "is already known"): a sequential writer covers the device once
    // and stops at its end (io_u.c get_next_seq_offset returns 1 at
    // real_file_size, fill_io_u refuses an I/O crossing it), so the
    // ENOSPC that ends a file-system fill never comes. A size given wins.
    const bool device_sized = !c.is_set("size") && (fio_defaults || fill_device);
    if (uint64_t capacity = 0; device_sized && device_capacity(c, capacity)) {
      try {
        c.set("size", std::to_string(capacity));
      } catch (const ConfigError& e) {
        throw ConfigError("--job " + shown(file.path) + " [" + shown(section.name) + "]: without size the job " +
                          "addresses the whole device (" + backend_param(c, "capacity") + "), and " + e.what() +
                          ": give size");
      }
    }
    const bool ios_from_size = !c.is_set("number_ios") && !io_size && !(time_based && c.time_ns("runtime") > 0);
    sized.push_back(device_sized && ios_from_size ? 2 : device_sized ? 1 : 0);

    if (io_size && !c.is_set("number_ios") && !(time_based && c.time_ns("runtime") > 0) &&
        io_size < c.size_bytes("bs"))
      throw ConfigError("--job " + shown(file.path) + " [" + shown(section.name) + "]: io_size (" +
                        format_size(io_size) + ") is smaller than bs (" + c.text("bs") +
                        "): the job would do no I/O (allowed io_size >= bs)");
    if (!c.is_set("number_ios")) {
      if (time_based && c.time_ns("runtime") > 0)
        c.set("number_ios", "0");  // runs for the runtime
      else  // fio: the job transfers io_size (else size) bytes
        c.set("number_ios", std::to_string((io_size ? io_size : c.size_bytes("size")) / c.size_bytes("bs")));
    }
    try {
      c.validate_all();
    } catch (const ConfigError& e) {
      throw ConfigError("--job " + shown(file.path) + " [" + shown(section.name) + "]: " + e.what());
    }
    job.numjobs = uint32_t(c.integer("numjobs"));
    for (std::string* stem : {&job.log_names[0], &job.log_names[1], &job.log_names[2]})
      if (*stem == "\1") *stem = job.name;
    job.logs.lat = job.log_names[0];
    job.logs.bw = job.log_names[1];
    job.logs.iops = job.log_names[2];
    job.logs.bs = uint32_t(c.size_bytes("bs"));
    if (job.logs.any()) out.logs = true;
    out.jobs.push_back(std::move(job));
  }

  // With the device's size unset, the namespace grows to the largest size a
  // job gives (fit_namespace_to_size): the jobs without one follow it.
  uint64_t capacity = 0;
  if (!out.jobs.empty() && !device_capacity(out.jobs[0].config, capacity)) {
    uint64_t largest = 0;
    for (const FioJob& job : out.jobs) largest = std::max(largest, job.config.size_bytes("size"));
    if (largest > capacity) capacity = (largest + 4095) / 4096 * 4096;  // as fit_namespace_to_size grows it
    for (size_t j = 0; j < out.jobs.size(); ++j) {
      Config& c = out.jobs[j].config;
      if (!sized[j] || c.size_bytes("size") == capacity) continue;
      c.set("size", std::to_string(capacity));
      if (sized[j] == 2) c.set("number_ios", std::to_string(capacity / c.size_bytes("bs")));
      c.validate_all();
    }
  }

  // Identical workloads run as one job with the summed numjobs (the plain
  // path); differing ones give each vCPU its own.
  const char* const workload[] = {"rw",   "bs",        "iodepth", "iodepth_batch_submit",
                                  "iodepth_batch_complete_min", "iodepth_batch_complete_max",
                                  "number_ios", "runtime", "size", "rwmixread", "seed", "verify",
                                  "iodepth_low", "bssplit", "bsrange", "random_distribution", "rate",
                                  "rate_iops", "thinktime", "thinktime_spin", "thinktime_blocks",
                                  "latency_target", "latency_window", "latency_percentile", "latency_run",
                                  "verify_interval", "verify_pattern", "verify_fatal", "do_verify",
                                  "uring_cmd", "sqthread_poll"};
  uint32_t total = 0;
  int group = 0;
  for (size_t j = 0; j < out.jobs.size(); ++j) {
    FioJob& job = out.jobs[j];
    // The vCPUs it waits for: every earlier job's (stonewall), and the named
    // job's (wait_for: defined above it, its name unique, as fio requires).
    std::vector<unsigned> waits;
    if (job.stonewall && j > 0)
      for (unsigned v = 0; v < total; ++v) waits.push_back(v);
    if (!job.wait_for.empty()) {
      int found = -1, named = 0;
      for (size_t k = 0; k < out.jobs.size(); ++k)
        if (out.jobs[k].name == job.wait_for) {
          ++named;
          if (k < j && found < 0) found = int(k);
        }
      if (found < 0 || named > 1)
        throw ConfigError(job.wait_for_where + "wait_for=" + shown(job.wait_for) +
                          (job.wait_for == job.name ? ": a job cannot wait for itself"
                           : named == 0 ? ": no job has that name"
                           : named > 1 ? ": more than one job has that name (fio needs it unique)"
                                       : ": that job comes later in the file (fio waits only for jobs above)"));
      unsigned first = 0;
      for (int k = 0; k < found; ++k) first += out.jobs[size_t(k)].numjobs;
      for (unsigned v = first; v < first + out.jobs[size_t(found)].numjobs; ++v)
        if (std::find(waits.begin(), waits.end(), v) == waits.end()) waits.push_back(v);
      std::sort(waits.begin(), waits.end());
    }
    if (j > 0 && (job.stonewall || job.new_group)) ++group;
    job.group = group;
    for (uint32_t k = 0; k < job.numjobs; ++k) {
      out.vcpu_job.push_back(unsigned(j));
      out.vcpu_waits_for.push_back(waits);
    }
    if (!waits.empty()) out.ordered = true;
    total += out.jobs[j].numjobs;
    for (const char* name : workload)
      if (base.registry().find(name) && out.jobs[j].config.text(name) != out.jobs[0].config.text(name))
        out.per_vcpu_workloads = true;
  }
  out.config = out.jobs[0].config;
  try {
    out.config.set("numjobs", std::to_string(total));
    out.config.validate_all();
  } catch (const ConfigError& e) {
    throw ConfigError("--job " + shown(file.path) + ": its job sections add up to " +
                      std::to_string(total) + " jobs: " + e.what());
  }
  return out;
}

std::vector<std::string> fio_notices(const FioJobs& jobs) {
  std::vector<std::string> lines;
  if (!jobs.ignored.empty())
    lines.push_back("nvmesim: ignored fio options (no effect on the simulation): " +
                    join(jobs.ignored, ", "));
  for (const std::string& w : jobs.warnings) lines.push_back("nvmesim: warning: " + w);
  return lines;
}

}  // namespace nvmesim::platform
