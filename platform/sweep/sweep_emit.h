// Sweeps beyond one machine. Each point is one shell line that runs the
// point's nvmesim command and writes DIR/points/<id>.json, .err and .rc
// (its exit status, written last); `nvmesim sweep --merge DIR` reads them.
//   --emit slurm     DIR/points.txt (line k+1 = point k) and DIR/sweep.slurm,
//                    an sbatch array script (task k runs line k+1);
//                    Slurm's own logs go to DIR/slurm/.
//   --emit parallel  DIR/parallel.txt, one line per point, for
//                    `parallel --will-cite < DIR/parallel.txt` (add
//                    --sshlogin for other hosts: DIR and the nvmesim binary
//                    must then be at the same paths there, e.g. on NFS).
// Paths in the files are absolute. The list is written line by line (never
// whole in memory) and bounded: check_emit_size refuses, before anything
// is written, a list over kEmitMaxBytes (10^6 points of long fixed options
// would be most of a gigabyte; a --config FILE shortens every line).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvmesim/platform/sweep/sweep_grid.h"

namespace nvmesim::platform::sweep {

std::string shell_quote(const std::string& s);  // 'it'\''s'

std::string point_command(const std::string& exe, const std::vector<std::string>& fixed,
                          const std::string& dir, const Point& point);

constexpr uint64_t kEmitMaxBytes = uint64_t(256) << 20;  // 256 MiB

// Throws UsageError when the list of `points` would exceed kEmitMaxBytes.
void check_emit_size(const std::string& dir, const std::string& exe, const std::vector<std::string>& fixed,
                     const std::vector<Point>& points);

// Writes the files above; `what` is "slurm" or "parallel". Returns the
// path of the script or list written.
std::string emit(const std::string& what, const std::string& dir, const std::string& exe,
                 const std::vector<std::string>& fixed, const std::vector<Point>& points);

}  // namespace nvmesim::platform::sweep
