// The test helper that runs the binary drops AddressSanitizer's notice about
// SystemC's thread stacks, and nothing else.
#include <catch2/catch.hpp>

#include "run_binary.h"

using nvmesim::test::without_asan_stack_notices;

TEST_CASE("run_binary: ASan's stack notice is dropped, the program's errors and real reports are kept",
          "[run_binary]") {
  // The notice as ASan (GCC 12) prints it when a SystemC thread unwinds.
  const std::string notice =
      "==4242==WARNING: ASan is ignoring requested __asan_handle_no_return: stack type: default top: "
      "0x7ffd00000000; bottom 0x7f0000000000; size: 0x00fd00000000 (1086626725888)\n"
      "False positive error reports may follow\n"
      "For details see https://github.com/google/sanitizers/issues/189\n";
  const std::string error = "nvmesim: error: --iodepth: 0 is not in 1..65535\n";
  const std::string report =
      "==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011\n"
      "SUMMARY: AddressSanitizer: heap-buffer-overflow\n";
  CHECK(without_asan_stack_notices(notice + error) == error);
  CHECK(without_asan_stack_notices(error + notice) == error);
  CHECK(without_asan_stack_notices(notice + report + notice) == report);
  CHECK(without_asan_stack_notices(error) == error);
  CHECK(without_asan_stack_notices("no newline at the end") == "no newline at the end");
  CHECK(without_asan_stack_notices("") == "");
}
