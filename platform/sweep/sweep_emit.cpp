#include "nvmesim/platform/sweep/sweep_emit.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/platform/sweep/sweep_output.h"
#include "nvmesim/platform/sweep/sweep_runner.h"

namespace nvmesim::platform::sweep {

std::string shell_quote(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 2);
  o += '\'';
  for (char c : s) {
    if (c == '\'') o += "'\\''";
    else o += c;
  }
  o += '\'';
  return o;
}

std::string point_command(const std::string& exe, const std::vector<std::string>& fixed,
                          const std::string& dir, const Point& point) {
  std::string line;
  for (const std::string& a : point_argv(exe, fixed, point)) line += (line.empty() ? "" : " ") + shell_quote(a);
  const std::string base = dir + "/points/" + std::to_string(point.id);
  // The exit status goes to .rc last, so a .rc means the point has finished.
  return line + " >" + shell_quote(base + ".json") + " 2>" + shell_quote(base + ".err") +
         "; rc=$?; echo $rc >" + shell_quote(base + ".rc") + "; exit $rc";
}

void check_emit_size(const std::string& dir, const std::string& exe, const std::vector<std::string>& fixed,
                     const std::vector<Point>& points) {
  uint64_t bytes = 0;
  for (const Point& p : points) {
    bytes += point_command(exe, fixed, dir, p).size() + 1;
    if (bytes > kEmitMaxBytes)
      throw UsageError("--emit: the list of " + std::to_string(points.size()) + " points would pass " +
                       std::to_string(kEmitMaxBytes >> 20) + " MiB (at point " + std::to_string(p.id) +
                       "): sweep fewer points, or shorten the fixed options (a --config FILE holds them)");
  }
}

namespace {

// One point's command per line, streamed into a temporary file renamed
// over `path` once complete (as write_file_atomic does for a string).
bool write_point_list(const std::string& path, const std::string& exe, const std::vector<std::string>& fixed,
                      const std::string& dir, const std::vector<Point>& points) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write '" + tmp + "' (" + std::strerror(errno) + ")");
  int error = 0;
  for (const Point& p : points) {
    if (interrupt::received()) {  // a signal: no list rather than half of one
      std::fclose(f);
      std::remove(tmp.c_str());
      return false;
    }
    const std::string line = point_command(exe, fixed, dir, p) + "\n";
    if (std::fwrite(line.data(), 1, line.size(), f) != line.size()) {
      error = errno;
      break;
    }
  }
  if (std::fclose(f) != 0 && !error) error = errno;
  if (error) {
    std::remove(tmp.c_str());
    throw std::runtime_error("error writing '" + tmp + "' (" + std::strerror(error) + ")");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename '" + tmp + "' (" + std::strerror(errno) + ")");
  }
  return true;
}

}  // namespace

std::string emit(const std::string& what, const std::string& dir, const std::string& exe,
                 const std::vector<std::string>& fixed, const std::vector<Point>& points) {
  make_dirs(dir + "/points");
  if (what == "parallel") {
    write_point_list(dir + "/parallel.txt", exe, fixed, dir, points);
    return dir + "/parallel.txt";
  }
  if (!write_point_list(dir + "/points.txt", exe, fixed, dir, points)) return dir + "/points.txt";
  make_dirs(dir + "/slurm");
  const std::string list = shell_quote(dir + "/points.txt");
  std::string s = "#!/bin/bash\n";
  s += "# Written by nvmesim sweep --emit slurm: array task k runs line k+1 of points.txt,\n";
  s += "# one sweep point, writing points/<k>.json, .err and .rc. Submit with\n";
  s += "#   sbatch [--partition=... --time=...] " + dir + "/sweep.slurm\n";
  s += "# then: nvmesim sweep --merge " + dir + " --out OUT\n";
  s += "#SBATCH --job-name=nvmesim-sweep\n";
  s += "#SBATCH --array=0-" + std::to_string(points.size() - 1) + "\n";
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  s += "#SBATCH --output=" + dir + "/slurm/%A_%a.out\n";
  s += "line=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" " + list + ")\n";
  s += "if [ -z \"$line\" ]; then echo \"no point $SLURM_ARRAY_TASK_ID in \"" + list + " >&2; exit 2; fi\n";
  s += "exec bash -c \"$line\"\n";
  write_file_atomic(dir + "/sweep.slurm", s);
  return dir + "/sweep.slurm";
}

}  // namespace nvmesim::platform::sweep
