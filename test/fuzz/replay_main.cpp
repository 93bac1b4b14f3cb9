/**
 *  @file   replay_main.cpp
 *  @brief  Runs a libFuzzer entry point over files and folders given on the command line, without libFuzzer:
 *          the seed corpora are replayed in every regular build (gcc, ASan, TSan), and a crash reproduces with
 *          any compiler. Exits 1 if an argument cannot be read or no input was found.
 */
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const *data, std::size_t size);

namespace {

bool replay(std::filesystem::path const &path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) return std::fprintf(stderr, "cannot read %s\n", path.string().c_str()), false;
    std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    // A copy of exactly `size` bytes, so ASan flags any read past the end.
    std::vector<std::uint8_t> exact(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(exact.data(), exact.size());
    return true;
}

} // namespace

int main(int argc, char **argv) {
    std::size_t inputs = 0;
    for (int i = 1; i < argc; ++i) {
        std::filesystem::path const path(argv[i]);
        if (std::filesystem::is_directory(path)) {
            for (auto const &entry : std::filesystem::recursive_directory_iterator(path))
                if (entry.is_regular_file()) {
                    if (!replay(entry.path())) return 1;
                    ++inputs;
                }
        } else if (!replay(path))
            return 1;
        else
            ++inputs;
    }
    std::printf("replayed %zu inputs\n", inputs);
    return inputs ? 0 : 1;
}
