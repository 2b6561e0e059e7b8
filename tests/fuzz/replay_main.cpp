// Runs every file of a corpus directory through the fuzz harness's entry
// point once, without libFuzzer: the corpus as a regression test (ctest).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_replay CORPUS_DIR\n");
    return 2;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(argv[1], ec))
    if (e.is_regular_file()) files.push_back(e.path());
  if (ec || files.empty()) {  // a missing corpus must fail, not pass vacuously
    std::fprintf(stderr, "fuzz_replay: no corpus files in %s\n", argv[1]);
    return 1;
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("fuzz_replay: %zu inputs replayed\n", files.size());
  return 0;
}
