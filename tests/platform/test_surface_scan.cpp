// fio's examples/surface-scan.fio: a writer with fill_device=1 covers the
// device once with verify=meta headers (one per verify_interval, with
// verify_pattern's bytes between), then a stonewalled read-only job reads
// it all back and checks every header (fio backend.c do_io: a job that only
// reads verifies each read; verify.c verify_header). The expected counts
// are worked out here from fio's rules, not read from the model: the writer
// does floor(capacity / bs) I/Os (io_u.c: a sequential job stops at the
// device's end, and an I/O crossing it is not issued), the reader as many,
// and each read examines bs / verify_interval headers (its check stops at
// the first bad one).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "fio_text_job.h"
#include "run_binary.h"
#include "temp_file.h"

using nvmesim::test::run_nvmesim;
using Json = nlohmann::ordered_json;

namespace {

// fio's examples/surface-scan.fio as written (its comment lines aside).
const std::string kGlobal =
    "[global]\nthread\nbs=64k\ndirect=1\nioengine=sync\nverify=meta\nverify_pattern=0xaa555aa5\n"
    "verify_interval=512\n";
const std::string kWrite = "[write-phase]\nfilename=datafile.tmp\nrw=write\nfill_device=1\ndo_verify=0\n";
const std::string kRead = "[verify-phase]\nstonewall\ncreate_serialize=0\nfilename=datafile.tmp\nrw=read\ndo_verify=1\n";

struct Run {
  int exit_code = -1;
  Json stats;  // "stats"
  std::string err;
};

Run run(const std::string& text, const std::string& args) {
  const nvmesim::test::TempFile job(text);
  const auto r = run_nvmesim("--job " + job.path + " --nvme.backend=ram --single-run --output-format=json " + args);
  Run out;
  out.exit_code = r.exit_code;
  out.err = r.err;
  if (!r.out.empty()) out.stats = Json::parse(r.out)["stats"];
  return out;
}

uint64_t stat(const Run& r, const char* vcpu, const char* name) { return r.stats[vcpu][name].get<uint64_t>(); }

constexpr uint64_t kBs = 64 * 1024, kInterval = 512;

}  // namespace

TEST_CASE("surface-scan: fio's job fills the namespace once and the read-only job verifies every header",
          "[surface_scan][fio][binary]") {
  const uint64_t capacity = 4 * 1024 * 1024;
  const Run r = run(kGlobal + kWrite + kRead, "--nvme.capacity=4m");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const uint64_t ios = capacity / kBs;  // 64
  CHECK(stat(r, "vcpu0", "write_ios") == ios);
  CHECK(stat(r, "vcpu0", "read_ios") == 0);  // do_verify=0: no read-back
  CHECK(stat(r, "vcpu0", "write_bytes") == capacity);
  CHECK(stat(r, "vcpu1", "read_ios") == ios);
  CHECK(stat(r, "vcpu1", "write_ios") == 0);
  CHECK(stat(r, "vcpu1", "verified_reads") == ios);
  CHECK(stat(r, "vcpu1", "verify_intervals") == capacity / kInterval);  // 8192 headers
  CHECK(stat(r, "vcpu1", "verify_errors") == 0);
  CHECK(r.err.find("ignored fio options (no effect on the simulation): thread, direct, filename, create_serialize") !=
        std::string::npos);
}

TEST_CASE("surface-scan: a device that is no whole number of blocks: the I/O crossing its end is not issued",
          "[surface_scan][fio][binary]") {
  const uint64_t capacity = 4 * 1024 * 1024 + 32 * 1024;  // 64.5 blocks
  const Run r = run(kGlobal + kWrite + kRead, "--nvme.capacity=4128k");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const uint64_t ios = capacity / kBs;  // 64: the half block at the end is never addressed
  CHECK(stat(r, "vcpu0", "write_ios") == ios);
  CHECK(stat(r, "vcpu1", "verified_reads") == ios);
  CHECK(stat(r, "vcpu1", "verify_intervals") == ios * kBs / kInterval);
  CHECK(stat(r, "vcpu1", "verify_errors") == 0);
}

TEST_CASE("surface-scan: virtio-blk's capacity is the device's size too", "[surface_scan][fio][binary]") {
  const Run r = run(kGlobal + kWrite + kRead, "--device=virtio-blk --virtio.backend=ram --virtio.capacity=2m");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(stat(r, "vcpu0", "write_ios") == 2 * 1024 * 1024 / kBs);
  CHECK(stat(r, "vcpu1", "verified_reads") == 2 * 1024 * 1024 / kBs);
  CHECK(stat(r, "vcpu1", "verify_intervals") == 2 * 1024 * 1024 / kInterval);
  CHECK(stat(r, "vcpu1", "verify_errors") == 0);
}

TEST_CASE("surface-scan: a reader with another verify_pattern fails every read, and verify_fatal stops at the first",
          "[surface_scan][fio][binary]") {
  // The headers are sound (offset, len, CRC); the bytes after each are not
  // the reader's pattern, so each read fails at its first interval.
  const std::string other = kRead + "verify_pattern=0x12345678\n";
  const Run r = run(kGlobal + kWrite + other, "--nvme.capacity=2m");
  const uint64_t ios = 2 * 1024 * 1024 / kBs;  // 32
  CHECK(r.exit_code == 4);                     // failed verification, as before
  CHECK(stat(r, "vcpu1", "read_ios") == ios);
  CHECK(stat(r, "vcpu1", "verified_reads") == ios);
  CHECK(stat(r, "vcpu1", "verify_errors") == ios);
  CHECK(stat(r, "vcpu1", "verify_intervals") == ios);  // one each: the check stops at the first bad interval
  // verify_fatal: the job (depth 1, ioengine=sync) issues nothing after its first failed read.
  const Run fatal = run(kGlobal + kWrite + other + "verify_fatal=1\n", "--nvme.capacity=2m");
  CHECK(fatal.exit_code == 4);
  CHECK(stat(fatal, "vcpu1", "read_ios") == 1);
  CHECK(stat(fatal, "vcpu1", "verified_reads") == 1);
  CHECK(stat(fatal, "vcpu1", "verify_errors") == 1);
}

TEST_CASE("surface-scan: a region never written fails its reads, and a reader verifies whatever do_verify says",
          "[surface_scan][fio][binary]") {
  // The writer covers the first 1 MiB of a 2 MiB device; the reader (no
  // size: the whole device) finds zeros in the second half: bad magic at
  // each read's first header. do_verify=0 changes nothing for a job that
  // only reads (fio tests do_verify only before a writer's verify phase).
  const std::string write_half = kWrite + "size=1m\n";
  const std::string read_all = "[verify-phase]\nstonewall\nrw=read\ndo_verify=0\n";
  const Run r = run(kGlobal + write_half + read_all, "--nvme.capacity=2m");
  const uint64_t written = 1024 * 1024 / kBs, ios = 2 * 1024 * 1024 / kBs;  // 16 of 32
  CHECK(r.exit_code == 4);
  CHECK(stat(r, "vcpu0", "write_ios") == written);
  CHECK(stat(r, "vcpu1", "verified_reads") == ios);
  CHECK(stat(r, "vcpu1", "verify_errors") == ios - written);
  CHECK(stat(r, "vcpu1", "verify_intervals") == written * (kBs / kInterval) + (ios - written));
}

TEST_CASE("surface-scan: fill_device and a job without size take the device's size", "[surface_scan][fio]") {
  using nvmesim::test::resolve_fio_text;
  // The device's size given: fill_device=1, fill_fs=1 and no size at all give it.
  for (const char* opt : {"fill_device=1\n", "fill_fs=1\n", "fill_device\n", ""}) {
    INFO(opt);
    const auto jobs = resolve_fio_text(std::string("[a]\nrw=write\nbs=64k\n") + opt, {{"nvme.capacity", "8m"}});
    CHECK(jobs.jobs[0].config.size_bytes("size") == 8u * 1024 * 1024);
    CHECK(jobs.jobs[0].config.integer("number_ios") == 128);
  }
  // A size given wins (fio: fill_device sets size only when none is given).
  const auto sized = resolve_fio_text("[a]\nrw=write\nbs=64k\nsize=1m\nfill_device=1\n", {{"nvme.capacity", "8m"}});
  CHECK(sized.jobs[0].config.size_bytes("size") == 1024u * 1024);
  CHECK(sized.jobs[0].config.integer("number_ios") == 16);
  // With the device's size unset, the namespace grows to the largest size a
  // job gives, and a job without size follows it.
  const auto grown = resolve_fio_text("[a]\nsize=2g\nnumber_ios=10\n[b]\nrw=read\nbs=1m\n");
  CHECK(grown.jobs[1].config.size_bytes("size") == 2ull << 30);
  CHECK(grown.jobs[1].config.integer("number_ios") == 2048);
  // Without any size: nvmesim's default namespace (1 GiB), as before.
  const auto plain = resolve_fio_text("[a]\nrw=read\nbs=1m\n");
  CHECK(plain.jobs[0].config.size_bytes("size") == 1ull << 30);
  CHECK(plain.jobs[0].config.integer("number_ios") == 1024);
  CHECK(nvmesim::test::fio_text_error("[a]\nfill_device=maybe\n") ==
        "--job t.fio line 2: fill_device=maybe: not a boolean (1/0, true/false)");
  // A device larger than size's range (1 TiB): the job must give its size.
  std::string error;
  try {
    resolve_fio_text("[a]\nrw=read\n", {{"nvme.capacity", "2t"}});
  } catch (const nvmesim::platform::ConfigError& e) {
    error = e.what();
  }
  CHECK(error == "--job t.fio [a]: without size the job addresses the whole device (nvme.capacity), and --size: "
                 "2199023255552 is out of range (4k..1t): give size");
}

TEST_CASE("surface-scan: --fill_device=1 on the command line writes the namespace once", "[surface_scan][fio][binary]") {
  const auto r = run_nvmesim("--rw=write --bs=64k --fill_device=1 --nvme.capacity=2m --single-run "
                             "--output-format=json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(Json::parse(r.out)["stats"]["vcpu0"]["write_ios"].get<uint64_t>() == 2 * 1024 * 1024 / kBs);
}
