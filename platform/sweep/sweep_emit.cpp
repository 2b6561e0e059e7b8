#include "nvmesim/platform/sweep/sweep_emit.h"

#include "nvmesim/platform/sweep/sweep_output.h"
#include "nvmesim/platform/sweep/sweep_runner.h"

namespace nvmesim::platform::sweep {

std::string shell_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
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

std::string emit(const std::string& what, const std::string& dir, const std::string& exe,
                 const std::vector<std::string>& fixed, const std::vector<Point>& points) {
  make_dirs(dir + "/points");
  std::string lines;
  for (const Point& p : points) lines += point_command(exe, fixed, dir, p) + "\n";
  if (what == "parallel") {
    write_file_atomic(dir + "/parallel.txt", lines);
    return dir + "/parallel.txt";
  }
  write_file_atomic(dir + "/points.txt", lines);
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
