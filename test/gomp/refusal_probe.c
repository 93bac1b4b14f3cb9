/*  Calls one entry point of a library, looked up by name (and version, if given), and returns if it returns:
 *  `exports.cmake` runs it for every entry point the drop-in refuses and expects an abort naming it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 // `dlvsym`
#endif
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s library symbol [version]\n", argv[0]);
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    void *symbol = argc > 3 ? dlvsym(library, argv[2], argv[3]) : dlsym(library, argv[2]);
    if (!symbol) {
        fprintf(stderr, "no symbol %s\n", argv[2]);
        return 2;
    }
    void (*entry)(void);
    *(void **)&entry = symbol;
    entry();
    fprintf(stderr, "%s returned\n", argv[2]);
    return 0;
}
