// Catch2 v2 main. SystemC's sc_main is provided by the models library's
// startup; tests that elaborate SystemC call sc_core::sc_start themselves.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>
#ifndef NVMESIM_TEST_WITHOUT_SYSTEMC
#include <systemc>

extern "C" int sc_main(int, char**) { return 0; }
#endif

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return Catch::Session().run(argc, argv);
}
