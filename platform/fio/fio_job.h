// fio job files in: `nvmesim --job FILE`.
//
// The file is fio's INI dialect: `[global]` and job sections, `name=value`
// or a bare `name` (a boolean set, e.g. `time_based`), comment lines starting
// with '#' or ';', and as fio's parser does, an option line ends at its first
// ';' or '#' (`numjobs=4 ; four threads`). `include FILE` inside a section
// reads FILE's options there (the name as given, else relative to the
// including file; no sections in an included file; includes nest at most 16
// deep, at most 256 are followed in one job file and they hold at most 1 MiB in
// all, so a fan-out cannot grow without end). fio semantics: the [global] options given above a job
// section apply to it, then the section's own; each job section is a job
// that runs `numjobs` copies (one vCPU and I/O queue pair each). Options on
// nvmesim's command line (--bs, --runtime, ...) override the file.
//
// Options nvmesim knows map onto its parameters: rw (readwrite), bs
// (blocksize; bs=R,W per direction is bssplit's, bs=min-max bsrange's),
// iodepth, iodepth_batch_submit (iodepth_batch; 0 = iodepth),
// iodepth_batch_complete_min/_max, iodepth_low, numjobs, runtime (timeout;
// a bare number is seconds, as fio), time_based, number_ios, size, io_size
// (io_limit), rwmixread, rwmixwrite, randseed (nvmesim's seed), verify
// (crc32c, crc32c-intel, crc32, md5, sha256, meta, pattern or 0),
// verify_interval, verify_pattern, verify_fatal, do_verify, verify_sort
// (1 or 0: offset order either way), fill_device (fill_fs: the job's size is
// the device's, as without size), bssplit, bsrange, random_distribution (random, zipf,
// pareto, normal), rate, rate_iops, thinktime (bare = microseconds),
// thinktime_spin, thinktime_blocks, ioengine (libaio, io_uring, posixaio;
// io_uring_cmd with cmd_type=nvme, NVMe passthrough: uring_cmd; psync, sync,
// vsync, pvsync, pvsync2 run at depth 1, as fio's FIO_SYNCIO engines),
// sqthread_poll (io_uring engines; hipri=1 refused, sqthread_poll_cpu,
// nonvectored, registerfiles, fixedbufs ignored: docs/fio.md); stonewall (wait_for_previous), wait_for and new_group order the
// jobs and group them as fio does; write_lat_log, write_bw_log,
// write_iops_log, log_avg_msec and log_offset write fio's logs
// (platform/fio/fio_logs.h). Where a file is silent, fio 3.33's defaults
// apply (options.c, init.c): rw=read, bs=4k, iodepth=1, ioengine=psync,
// randseed=0x89 (the bare command line keeps nvmesim's own). A job without
// size addresses the whole device (nvme.capacity, virtio.capacity), as
// fio's job on a block device does. Without
// time_based and without number_ios a job does io_size (else `size`) bytes
// of I/O, as fio does; with time_based and a runtime it runs for the
// runtime. Options that cannot change the simulation (direct, filename,
// ...) are accepted and reported once as ignored; options that change the
// workload and are not modelled (loops, startdelay, ramp_time, ...) are
// accepted at fio's default value only; any other option or value is
// refused (one line naming the file and line, exit 2; --strict is kept and
// changes nothing). Options on nvmesim's command line (--bs, --runtime=5,
// --write_lat_log=x, ...) mean what they mean in a file and override it.
// Not modelled: fio's random map (nvmesim's random offsets may repeat, as
// with norandommap), rwmix's issue cycles (each I/O draws its direction).
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/fio/fio_logs.h"

namespace nvmesim::platform {

struct FioOption {
  std::string name;   // as written
  std::string value;  // empty when !has_value
  bool has_value = false;
  int line = 0;
  std::string source;  // the file it was read from (an include file, or the job file)
};

struct FioSection {
  std::string name;                 // the text between the brackets
  int line = 0;
  std::vector<FioOption> global;    // the [global] options above this section
  std::vector<FioOption> options;   // its own
};

struct FioJobFile {
  std::string path;
  std::vector<FioOption> global;    // every [global] option in the file
  std::vector<FioSection> jobs;
  std::vector<std::string> includes;  // every file an include line read, as resolved
};

// Syntax only (no option is checked here). Throws ConfigError
// "--job PATH line N: ..." or "--job PATH: cannot open (reason)".
FioJobFile parse_fio_job_file(std::istream& in, const std::string& path);
FioJobFile load_fio_job_file(const std::string& path);

// One job section, resolved.
struct FioJob {
  explicit FioJob(const Config& base) : config(base) {}  // (no default: a Config needs its registry)
  std::string name;     // the section name, or its name= option
  Config config;        // base + [global] + section + command line, validated
  uint32_t numjobs = 1;
  std::vector<std::pair<std::string, std::string>> options;  // the section's, as written (fio's "job options")
  bool stonewall = false;   // stonewall / wait_for_previous: starts when every job above has finished
  bool new_group = false;   // new_group: a new reporting group
  std::string wait_for;     // wait_for=NAME: starts when that job (above it) has finished
  std::string wait_for_where;  // "--job FILE line N: ", for its error
  int group = 0;            // reporting group (fio's groupid): +1 at each stonewall or new_group
  std::string engine;       // ioengine (fio's default psync)
  std::string log_names[3];  // write_lat_log, write_bw_log, write_iops_log as given ("\1": the job's name)
  FioLogSpec logs;           // resolved (platform/fio/fio_logs.h)
};

struct FioJobs {
  explicit FioJobs(const Config& base) : config(base) {}
  std::vector<FioJob> jobs;
  // The run: the first job's configuration with numjobs = the total of all
  // sections' numjobs.
  Config config;
  // Set when the sections differ in their workload: vCPU v runs
  // jobs[vcpu_job[v]].config's workload. Always filled (one entry per vCPU).
  bool per_vcpu_workloads = false;
  std::vector<unsigned> vcpu_job;
  // The files the job file read (itself and its includes): no output may be one.
  std::vector<std::string> inputs;
  // Per vCPU: the vCPUs whose jobs must finish before its job starts
  // (stonewall, wait_for); `ordered` when any has one.
  std::vector<std::vector<unsigned>> vcpu_waits_for;
  bool ordered = false;
  bool logs = false;  // a job writes fio logs
  std::vector<std::pair<std::string, std::string>> global_options;  // fio's "global options"
  bool group_reporting = false;
  std::vector<std::string> ignored;   // option names, unique, in first-seen order
  std::vector<std::string> warnings;  // one line each, "FILE line N: unknown fio option 'x' ..."
};

// Applies the file to copies of `base` (the defaults plus --config files),
// then `command_line` (name, value) on top. Throws ConfigError (one line,
// naming the file, line and option) for values nvmesim cannot take, and with
// `strict` for unknown options.
// `fio_defaults`: fio 3.33's defaults where the file is silent (a job
// file); false for the bare command line's implicit job (nvmesim's defaults).
FioJobs resolve_fio_jobs(const FioJobFile& file, const Config& base,
                         const std::vector<std::pair<std::string, std::string>>& command_line,
                         bool strict, bool fio_defaults = true);

// "nvmesim: ignored fio options (no effect on the simulation): a, b" and the
// warnings, each line prefixed "nvmesim: ..."; empty when there is nothing to say.
std::vector<std::string> fio_notices(const FioJobs& jobs);

// fio's time syntax -> nvmesim's: a bare number is seconds; us/usec, ms/msec,
// s/sec, m/min, h/hour, d/day; ns/nsec. Returns "" when it is not a time.
std::string fio_time_to_param(const std::string& value, const char* bare_unit = "s");

// A command-line option given in fio's spelling, as nvmesim's parameter:
// --runtime=5 is 5 s and --thinktime=10 is 10 us as in a file; other
// values unchanged.
std::string fio_command_line_value(const std::string& name, const std::string& value);

}  // namespace nvmesim::platform
