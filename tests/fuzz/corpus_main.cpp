// A fuzz target's corpus run without libFuzzer (the GCC build of `make test`, through CTest):
// every file of the folders or files named is given to LLVMFuzzerTestOneInput once. A crash, an
// abort or a sanitizer report fails the run, naming the file.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "app/log_output.hpp"
#include "fuzz.hpp"

int main(int argc, char** argv) {
  tesoro::app::log_to_stderr();  // an invariant's message, should one fail
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path given(argv[i]);
    if (std::filesystem::is_directory(given)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(given)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else {
      files.push_back(given);
    }
  }
  if (files.empty()) {
    std::cerr << "no input: name the corpus folder\n";
    return 1;
  }
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::cerr << "running " << file.string() << "\n";
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::cout << files.size() << " inputs ran\n";
  return 0;
}
