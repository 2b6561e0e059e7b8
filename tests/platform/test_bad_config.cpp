// Bad command lines and config files, through the nvmesim binary as a user
// runs it: each gets exactly one line on standard error naming the field
// and the allowed values or range, nothing on standard output, exit code 2.
#include <catch2/catch.hpp>

#include "temp_file.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "tests/platform/run_binary.h"

using nvmesim::test::run_nvmesim;

namespace {

struct Bad {
  std::string args;   // as typed in a shell
  std::string error;  // the message after "nvmesim: error: "
};

void check_bad(const Bad& b) { nvmesim::test::check_refused(b.args, "nvmesim: error: " + b.error); }

using TempIni = nvmesim::test::TempFile;

}  // namespace

TEST_CASE("bad config: numbers out of range or malformed", "[cli][bad_config]") {
  const std::vector<Bad> table = {
      {"--numjobs=65", "--numjobs: 65 is out of range (1..64)"},
      {"--numjobs=0", "--numjobs: 0 is out of range (1..64)"},
      {"--iodepth=5000", "--iodepth: 5000 is out of range (1..4095)"},
      {"--iodepth=-1", "--iodepth: -1 is out of range (1..4095)"},
      {"--iodepth=99999999999999999999", "--iodepth: 99999999999999999999 is out of range (1..4095)"},
      {"--iodepth=3.5", "--iodepth: '3.5' is not an integer"},
      {"--iodepth", "--iodepth: missing value"},
      {"--number_ios=1e3", "--number_ios: '1e3' is not an integer"},
      {"--seed=-1", "--seed: -1 is out of range (0..9223372036854775807)"},
  };
  for (const Bad& b : table) check_bad(b);
}

TEST_CASE("bad config: sizes, times, choices and syntax", "[cli][bad_config]") {
  const std::vector<Bad> table = {
      {"--bs=", "--bs: empty value after '='"},
      {"--bs=4q", "--bs: '4q' has an unknown size suffix 'q' (k, m, g, t; also KiB, MiB, GiB, TiB)"},
      {"--size=-1",
       "--size: '-1' is not a size (a byte count, optionally with k, m, g or t (binary; also KiB, "
       "MiB, GiB, TiB))"},
      {"--size=1.5", "--size: '1.5' is not a whole number of bytes"},
      {"--hv.exit_mmio=5100", "--hv.exit_mmio: '5100' needs a unit (ns, us, ms, s or cyc)"},
      {"--runtime=1ks", "--runtime: '1ks' has an unknown unit 'ks' (ns, us, ms, s or cyc)"},
      {"--hv.exit_mmio=-5us", "--hv.exit_mmio: -5us is out of range (0ns..1ms)"},
      {"--virtio.busy_poll=-5us", "--virtio.busy_poll: -5us is out of range (0ns..1s)"},
      {"--virtio.busy_poll=fast",
       "--virtio.busy_poll: 'fast' is not a time (a number with a unit: ns, us, ms, s or cyc)"},
      {"--virtio.busy_poll=50", "--virtio.busy_poll: '50' needs a unit (ns, us, ms, s or cyc)"},
      {"--hv.exit_mmio=5000000cyc",
       "--hv.exit_mmio: 5000000cyc (2.17391ms at hv.cpu_ghz 2.3) is out of range (0ns..1ms)"},
      {"--hv.cpu_ghz=nan", "--hv.cpu_ghz: 'nan' is not a number"},
      {"--hv.cpu_ghz=0", "--hv.cpu_ghz: 0 is out of range (0.1..10)"},
      {"--rw=foo", "--rw: 'foo' is not one of read, write, randread, randwrite, randrw"},
      {"--nvme.dbbuf=SPEC", "--nvme.dbbuf: 'SPEC' is not one of off, spec, vendor"},
      {"--hv.apicv=maybe",
       "--hv.apicv: 'maybe' is not a boolean (on/off, true/false, yes/no, 1/0)"},
      {"--pcie.lanes=3", "--pcie.lanes: '3' is not one of 1, 2, 4, 8, 16"},
      {"--nvme.foo=1", "unknown option '--nvme.foo' (see --help and --list-params)"},
  };
  for (const Bad& b : table) check_bad(b);
}

TEST_CASE("bad config: combinations of values", "[cli][bad_config]") {
  const std::vector<Bad> table = {
      {"--bs=3000", "--bs: 3000 is not a multiple of nvme.lba_bytes (512)"},
      {"--nvme.capacity=1g --size=1t", "--size: 1t is larger than nvme.capacity (1g)"},
      {"--nvme.capacity=1m --size=2m", "--size: 2m is larger than nvme.capacity (1m)"},
      {"--runtime=0s --number_ios=0", "number_ios and runtime are both 0"},
      {"--blockalign=1000", "--blockalign: 1000 bytes is not a multiple of nvme.lba_bytes (512; allowed 0 or a "
                            "multiple up to 1m)"},
      {"--blockalign=8k --size=4k", "--blockalign: 8192 bytes is larger than size (4096)"},
      {"--blockalign=8k --verify=pattern --nvme.backend=ram",
       "--blockalign: 8192 with verify=pattern must be 0 or bs (4096): the pattern's blocks must not overlap"},
      {"--random_distribution=zoned:50/5:30/15",
       "--random_distribution: 'zoned:50/5:30/15': the access percentages must add up to 100 and the sizes to at "
       "most 100 (got 80 and 20)"},
      // Checked where the system is assembled (run_experiment: still exit 2).
      {"--hv.notify=ioeventfd --hv.device_thread=vcpu",
       "--hv.notify: ioeventfd needs a host thread (hv.device_thread mainloop or iothread, not "
       "vcpu)"},
      {"--guest.irq_coalescing_time=150us",
       "--guest.irq_coalescing_time: 150us is not a multiple of 100us in 0..25.5ms"},
      {"--device=virtio-blk --virtio.busy_poll=5us --hv.device_thread=vcpu",
       "--virtio.busy_poll: 5us needs a host thread woken by the kick (hv.device_thread mainloop or "
       "iothread, hv.notify deferred or ioeventfd)"},
      // 8 queues x 1023 tags x 64 KiB of data buffers do not fit 16 MiB.
      {"--mem.size=16m --numjobs=8 --iodepth=1023 --bs=64k --nvme.mdts=4",
       "--mem.size: 16m is too small for the driver's queues and buffers (numjobs 8, iodepth "
       "1023, bs 64k need 546m; allowed 546m..3g)"},
      // 64 x 4095 x 1 MiB: no mem.size can hold that.
      {"--mem.size=1g --numjobs=64 --iodepth=4095 --guest.io_queue_entries=4096 --bs=1m "
       "--nvme.mdts=8",
       "--mem.size: 1g is too small for the driver's queues and buffers (numjobs 64, iodepth "
       "4095, bs 1m need 263125m; more than mem.size allows, 3g: lower numjobs, iodepth or bs)"},
      {"--nvme.max_io_queues=1000",
       "--nvme.max_io_queues: 1000 queues do not fit one 4 KiB doorbell-buffer page at nvme.dstrd "
       "0 (allowed 1..511 with nvme.dbbuf spec)"},
      {"--nvme.max_io_queues=64 --nvme.dstrd=3 --nvme.dbbuf=vendor",
       "--nvme.max_io_queues: 64 queues do not fit one 4 KiB doorbell-buffer page at nvme.dstrd "
       "3 (allowed 1..63 with nvme.dbbuf vendor)"},
  };
  for (const Bad& b : table) check_bad(b);
  // Without the doorbell buffer the page limit does not apply.
  const auto r = run_nvmesim("--nvme.max_io_queues=1000 --nvme.dbbuf=off --number_ios=64");
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
}

TEST_CASE("bad config: config files", "[cli][bad_config]") {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"[foo]\nbar = 1\n", "line 2: unknown key 'foo.bar' (see --list-params)"},
      {"[hv]\nexit_mmo = 5us\n", "line 2: unknown key 'hv.exit_mmo' (see --list-params)"},
      {"[hv]\nexit_mmio = 5\n", "line 2: hv.exit_mmio: '5' needs a unit (ns, us, ms, s or cyc)"},
      {"[hv]\ncpu_ghz = 2.3GHz\n", "line 2: hv.cpu_ghz: '2.3GHz' is not a number"},
      {"[mem]\nsize = 256mb\nlatency = 5\n",
       "line 3: mem.latency: '5' needs a unit (ns, us, ms, s or cyc)"},
      {"[hv]\nexit_mmio = 5us\n\nexit_mmio = 6us\n",
       "line 4: 'hv.exit_mmio' is given twice (first on line 2)"},
      {"[fio]\nbs = 4k\n[fio]\nbs = 8k\n", "line 4: 'bs' is given twice (first on line 2)"},
      {"[hv]\nexit_mmio\n", "line 2: expected 'name = value', got 'exit_mmio'"},
      {"[hv]\nexit_mmio =\n",
       "line 2: hv.exit_mmio: '' is not a time (a number with a unit: ns, us, ms, s or cyc)"},
      {"iodepth = 5000\n", "line 1: iodepth: 5000 is out of range (1..4095)"},
      {"[hv\nexit_mmio = 5us\n", "line 1: bad section header '[hv'"},
      {"[nvme]\nhv.exit_mmio = 5us\n",
       "line 2: unknown key 'nvme.hv.exit_mmio' (see --list-params)"},
  };
  for (const auto& [content, error] : files) {
    TempIni ini(content);
    check_bad({"--config " + ini.path, "config file " + ini.path + " " + error});
  }
  // Cross-field errors of values from a file surface the same way.
  TempIni small("[mem]\nsize = 16m\n[fio]\nnumjobs = 8\niodepth = 1023\nbs = 64k\n[nvme]\nmdts = 4\n");
  check_bad({"--config " + small.path,
             "--mem.size: 16m is too small for the driver's queues and buffers (numjobs 8, iodepth "
             "1023, bs 64k need 546m; allowed 546m..3g)"});
  check_bad({"--config /nonexistent/x.ini",
             "config file /nonexistent/x.ini: cannot open (No such file or directory)"});
}
