// fio's verify modes end to end (models/guest/fio_verify.*, fio_job_verify.cpp):
// a writing job's verify phase reads back each block it wrote (fio's
// do_verify), every read checked against fio's verify_header and checksum;
// a corrupted byte in the RAM backend fails exactly its block's read; the
// fio job file options and their refusals.
#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn, before any SystemC header
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <systemc>

#include "nvmesim/models/nvme/nvme_controller.h"
#include "nvmesim/platform/config/params.h"
#include "nvmesim/platform/fio/fio_job.h"
#include "nvmesim/platform/system/system.h"
#include "fio_text_job.h"
#include "run_binary.h"
#include "simulate.h"
#include "temp_file.h"

using namespace nvmesim;
using namespace nvmesim::platform;

namespace {

// rw=write over 64 blocks: the write phase writes each block once (number_ios
// = 64), so the verify phase reads 64 blocks, each checked.
RunResults sequential_write(const char* mode, const char* extra_name = nullptr, const char* extra = nullptr) {
  std::vector<std::pair<const char*, const char*>> s = {{"rw", "write"},       {"size", "256k"},
                                                        {"number_ios", "64"},  {"iodepth", "8"},
                                                        {"nvme.backend", "ram"}, {"verify", mode}};
  if (extra_name) s.emplace_back(extra_name, extra);
  return test::simulate(s);
}

FioJobs resolve(const std::string& text) { return test::resolve_fio_text(text); }
std::string error_of(const std::string& text) { return test::fio_text_error(text); }

}  // namespace

TEST_CASE("verify modes: crc32c reads back every block written and checks each without error", "[verify_modes][e2e]") {
  const RunResults r = sequential_write("crc32c");
  REQUIRE(r.bringup_ok);
  CHECK(r.count("write_ios") == 64);
  CHECK(r.count("read_ios") == 64);  // the verify reads count as reads, as fio's
  CHECK(r.count("verify.verified_reads") == 64);
  CHECK(r.count("verify.errors") == 0);
  CHECK(r.count("io_errors") == 0);
}

TEST_CASE("verify modes: md5 passes a small run", "[verify_modes][e2e]") {
  const RunResults r = sequential_write("md5");
  CHECK(r.count("verify.verified_reads") == 64);
  CHECK(r.count("verify.errors") == 0);
}

TEST_CASE("verify modes: sha256 passes a small run", "[verify_modes][e2e]") {
  const RunResults r = sequential_write("sha256");
  CHECK(r.count("verify.verified_reads") == 64);
  CHECK(r.count("verify.errors") == 0);
}

TEST_CASE("verify modes: meta passes a small run with 512-byte intervals", "[verify_modes][e2e]") {
  const RunResults r = sequential_write("meta", "verify_interval", "512");
  CHECK(r.count("verify.verified_reads") == 64);
  CHECK(r.count("verify.errors") == 0);
}

TEST_CASE("verify modes: md5 over I/Os split at MDTS, one header per 64 KiB interval", "[verify_modes][e2e]") {
  // bs 256k above nvme.mdts=5's 128 KiB: two commands per I/O, each two whole intervals.
  const RunResults r = test::simulate({{"rw", "write"}, {"bs", "256k"}, {"size", "4m"}, {"number_ios", "16"},
                                       {"nvme.backend", "ram"}, {"verify", "md5"}, {"verify_interval", "64k"}});
  CHECK(r.count("verify.verified_reads") == 16);
  CHECK(r.count("verify.errors") == 0);
}

TEST_CASE("verify modes: do_verify=off skips the read-back", "[verify_modes][e2e]") {
  const RunResults r = sequential_write("crc32c", "do_verify", "off");
  CHECK(r.count("write_ios") == 64);
  CHECK(r.count("read_ios") == 0);
  CHECK(r.count("verify.verified_reads") == 0);
}

TEST_CASE("verify modes: randwrite reads back each distinct block once", "[verify_modes][e2e]") {
  const RunResults r = test::simulate({{"rw", "randwrite"}, {"size", "256k"}, {"number_ios", "100"},
                                       {"nvme.backend", "ram"}, {"verify", "crc32"}});
  CHECK(r.count("write_ios") == 100);
  // 100 random writes over 64 blocks reach fewer than 64 (no random map)
  // and more than 64 * (1 - (63/64)^100) / 2.
  CHECK(r.count("read_ios") == r.count("verify.verified_reads"));
  CHECK(r.count("verify.verified_reads") < 64);
  CHECK(r.count("verify.verified_reads") > 25);
  CHECK(r.count("verify.errors") == 0);
}

namespace {
// rw=write of 64 blocks at `iodepth`, crc32c; once the writes are stored,
// one data byte of each block in `corrupt` flips in the RAM backend.
RunResults corrupted_run(const char* iodepth, std::vector<uint64_t> corrupt, const char* fatal) {
  Config c;
  for (const auto& [k, v] : std::vector<std::pair<const char*, const char*>>{
           {"rw", "write"}, {"size", "256k"}, {"number_ios", "64"}, {"iodepth", iodepth},
           {"nvme.backend", "ram"}, {"verify", "crc32c"}, {"verify_fatal", fatal}})
    c.set(k, v);
  c.validate_all();
  System system(c);
  models::StorageBackend& backend = system.controller().backend();
  sc_core::sc_spawn([&backend, corrupt] {
    while (backend.completed() < 64) sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
    for (uint64_t block : corrupt) backend.ram_data(block * 4096 + 100)[0] ^= 0x01;
  });
  return system.run();
}
}  // namespace

TEST_CASE("verify modes: a byte corrupted in the RAM backend fails exactly its block's read", "[verify_modes][e2e]") {
  // The last block: read back last (offset order), long after the flip.
  const RunResults r = corrupted_run("4", {63}, "off");
  CHECK(r.count("verify.verified_reads") == 64);
  CHECK(r.count("verify.errors") == 1);
}

TEST_CASE("verify modes: verify_fatal stops the job at its first mismatch", "[verify_modes][e2e]") {
  // Blocks 10 and 20 corrupted, one I/O at a time: without verify_fatal both
  // fail among 64 checks; with it the job stops after block 10's read (11 checked).
  const RunResults on = corrupted_run("1", {10, 20}, "on");
  CHECK(on.count("verify.verified_reads") == 11);
  CHECK(on.count("verify.errors") == 1);
}

TEST_CASE("verify modes: without verify_fatal every corrupted block fails", "[verify_modes][e2e]") {
  const RunResults off = corrupted_run("1", {10, 20}, "off");
  CHECK(off.count("verify.verified_reads") == 64);
  CHECK(off.count("verify.errors") == 2);
}

TEST_CASE("verify modes: fio's basic-verify.fio runs and exits 0", "[verify_modes][fio][binary]") {
  // fio's examples/basic-verify.fio (its options; filename is a host path, ignored).
  const test::TempFile job("[write-and-verify]\nrw=randwrite\nbs=4k\ndirect=1\nioengine=libaio\niodepth=16\n"
                           "verify=crc32c\nfilename=/dev/XXX\n");
  const auto r = test::run_nvmesim("--job " + job.path + " --nvme.backend=ram --size=1m --single-run");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("verify: ") != std::string::npos);
  CHECK(r.out.find(" 0 mismatches") != std::string::npos);
}

TEST_CASE("verify modes: fio options map and what is not modelled is refused by line", "[verify_modes][fio]") {
  const Config c = resolve("[a]\nverify=crc32c-intel\nverify_interval=512\nverify_fatal=1\ndo_verify=0\n"
                           "verify_sort=1\nverify_backlog=0\n")
                       .jobs[0]
                       .config;
  CHECK(c.choice("verify") == "crc32c");
  CHECK(c.size_bytes("verify_interval") == 512);
  CHECK(c.text("verify_fatal") == "on");
  CHECK(c.text("do_verify") == "off");
  // verify_pattern alone means verify=pattern, as fio.
  const Config p = resolve("[a]\nverify_pattern=0xaa555aa5\n").jobs[0].config;
  CHECK(p.choice("verify") == "pattern");
  CHECK(p.text("verify_pattern") == "0xaa555aa5");
  CHECK(resolve("[a]\nverify=md5\n").jobs[0].config.choice("verify") == "md5");
  CHECK(resolve("[a]\nverify=meta\n").jobs[0].config.choice("verify") == "meta");
  CHECK(error_of("[a]\nverify_backlog=16\n") ==
        "--job t.fio line 2: verify_backlog=16: not modelled (nvmesim runs only fio's default, verify_backlog=0)");
  CHECK(error_of("[a]\nverify_sort=maybe\n") == "--job t.fio line 2: verify_sort=maybe: not a boolean (1/0)");
  CHECK(error_of("[a]\ndo_verify=2\n") == "--job t.fio line 2: do_verify=2: not a boolean (1/0)");
  CHECK(error_of("[a]\nverify=xxhash\n") ==
        "--job t.fio line 2: verify=xxhash: not supported (nvmesim supports verify=crc32c, crc32c-intel, crc32, "
        "md5, sha256, meta, pattern or 0)");
  CHECK(error_of("[a]\nverify_pattern=%o\n").find("--job t.fio line 2: verify_pattern: ") == 0);
}

TEST_CASE("verify modes: a verify_interval that does not divide bs is refused", "[verify_modes][binary]") {
  test::check_refused("--nvme.backend=ram --verify=crc32c --verify_interval=3000",
                      "nvmesim: error: --verify_interval: 3000 must divide bs (4096), be a multiple of 8 and "
                      "exceed verify=its header (52 bytes)");
  test::check_refused("--nvme.backend=ram --verify=sha256 --verify_interval=64",
                      "nvmesim: error: --verify_interval: 64 must divide bs (4096), be a multiple of 8 and "
                      "exceed verify=its header (112 bytes)");
  test::check_refused("--nvme.backend=ram --verify=md5 --bs=256k",
                      "nvmesim: error: --verify_interval: 262144 must divide the largest command (131072 bytes, "
                      "nvme.mdts) that splits bs: give a verify_interval dividing it");
}
