// Sweeps beyond one machine, for real: the GNU parallel job list run by GNU
// parallel, and the Slurm array script submitted to a single-node Slurm that
// tests/cluster/slurm_up.sh starts on localhost; each merged result must be
// byte-identical to a local sweep's.
#include <catch2/catch.hpp>

#include <string>

#include "tests/platform/run_binary.h"
#include "tests/platform/test_sweep_support.h"

using nvmesim::test::Csv;
using nvmesim::test::run_nvmesim;
using nvmesim::test::ScratchDir;
using nvmesim::test::shell;
using nvmesim::test::slurp;

namespace {

const std::string kGrid = "--grid iodepth=1,8 --grid nvme.dbbuf=off,spec,vendor --number_ios=300 --seed 3";

// The reference: the same grid run locally.
void local_sweep(const std::string& out) {
  const auto r = run_nvmesim("sweep " + kGrid + " --jobs 2 --out " + out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

void require_same_as_local(const std::string& emitted, const ScratchDir& d) {
  const auto m = run_nvmesim("sweep --merge " + emitted + " --out " + (d / "merged"));
  INFO(m.err);
  REQUIRE(m.exit_code == 0);
  local_sweep(d / "local");
  CHECK(Csv(slurp(d / "merged/results.csv")).rows.size() == 6);
  CHECK(slurp(d / "merged/results.csv") == slurp(d / "local/results.csv"));
  CHECK(slurp(d / "merged/results.jsonl") == slurp(d / "local/results.jsonl"));
}

// Stops the test cluster whatever happens in the test.
struct SlurmCluster {
  std::string dir;
  ~SlurmCluster() {
    std::string out;
    shell(std::string(NVMESIM_SOURCE_DIR) + "/tests/cluster/slurm_down.sh " + dir, out);
  }
};

}  // namespace

TEST_CASE("sweep cluster: the GNU parallel list run by GNU parallel merges to the local sweep", "[sweep][cluster]") {
  ScratchDir d;
  const auto e = run_nvmesim("sweep " + kGrid + " --emit parallel --out " + (d / "emitted"));
  INFO(e.err);
  REQUIRE(e.exit_code == 0);
  CHECK(nvmesim::test::text_lines(slurp(d / "emitted/parallel.txt")).size() == 6);
  std::string out;
  const int rc = shell("timeout 120 parallel --will-cite -j2 < " + (d / "emitted/parallel.txt"), out);
  INFO(out);
  REQUIRE(rc == 0);
  require_same_as_local(d / "emitted", d);
}

TEST_CASE("sweep cluster: the Slurm array script on a local single-node Slurm merges to the local sweep",
          "[sweep][cluster]") {
  ScratchDir d;
  SlurmCluster cluster{d / "cluster"};
  std::string out;
  int rc = shell("timeout 60 " + std::string(NVMESIM_SOURCE_DIR) + "/tests/cluster/slurm_up.sh " + cluster.dir, out);
  INFO("slurm_up.sh: " << out);
  REQUIRE(rc == 0);

  const auto e = run_nvmesim("sweep " + kGrid + " --emit slurm --out " + (d / "emitted"));
  INFO(e.err);
  REQUIRE(e.exit_code == 0);
  CHECK(slurp(d / "emitted/sweep.slurm").find("#SBATCH --array=0-5\n") != std::string::npos);
  rc = shell("SLURM_CONF=" + cluster.dir + "/slurm.conf timeout 90 sbatch --wait " + (d / "emitted/sweep.slurm"), out);
  INFO("sbatch: " << out << "\nslurmctld.log:\n" << slurp(cluster.dir + "/slurmctld.log"));
  REQUIRE(rc == 0);
  // Slurm, not something else, ran the tasks: its per-task logs are there.
  std::string job = out.substr(out.rfind(' ') + 1);
  while (!job.empty() && (job.back() == '\n' || job.back() == '\r')) job.pop_back();
  for (int k = 0; k < 6; ++k)
    CHECK(slurp(d / ("emitted/slurm/" + job + "_" + std::to_string(k) + ".out")).find("<missing") == std::string::npos);
  require_same_as_local(d / "emitted", d);
}
