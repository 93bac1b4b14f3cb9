/**
 *  @file   shape_tool.cpp
 *  @brief  The host side of a NUMA guest shape: validates a shape file and prints what `run.sh` needs.
 *
 *      forkunion_numa_vm_shape --qemu-args FILE   the emulator's machine arguments, one per line
 *      forkunion_numa_vm_shape --describe FILE    a one-line summary
 *
 *  Exits 0 on success; 1 with `FILE: line N: what is wrong` for a shape that does not parse; 2 for bad usage.
 */
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "shape.hpp"

namespace nv = forkunion::numa_vm;

int main(int argc, char **argv) {
    if (argc != 3 || (std::strcmp(argv[1], "--qemu-args") != 0 && std::strcmp(argv[1], "--describe") != 0)) {
        std::fprintf(stderr, "usage: %s --qemu-args|--describe SHAPE_FILE\n", argv[0]);
        return 2;
    }
    std::ifstream file(argv[2]);
    if (!file) {
        std::fprintf(stderr, "%s: cannot be read\n", argv[2]);
        return 1;
    }
    nv::shape_t shape;
    if (std::string const error = nv::parse_shape(file, shape); !error.empty()) {
        std::fprintf(stderr, "%s: %s\n", argv[2], error.c_str());
        return 1;
    }
    if (std::strcmp(argv[1], "--describe") == 0)
        std::printf("%s\n", nv::describe(shape).c_str());
    else
        for (std::string const &argument : nv::qemu_arguments(shape)) std::printf("%s\n", argument.c_str());
    return 0;
}
