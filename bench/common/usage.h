/**
 *  @file   usage.h
 *  @brief  The command-line contract every benchmark, example and tool of this repository keeps, in one call.
 *
 *  `forkunion_usage(argc, argv, options, positionals, usage)`, called first thing in `main`:
 *  - `--help` or `-h` anywhere: prints `usage: <program> <usage>` to stdout and exits with status 0;
 *  - an argument starting with `-` that is not one of `options`: prints one line naming it to stderr and exits
 *    with `FORKUNION_USAGE_STATUS` (1, the benchmarks' "bad setting" status);
 *  - more than `positionals` other arguments: the same, naming the first one too many;
 *  - anything else: returns, and the program reads its arguments as before.
 *
 *  `options` is a space-separated list (`"--fabric --quick"`; NULL or "" for none). An entry ending in `=` takes a
 *  value as the next argument (`--vectors=` accepts `--vectors 8`); an entry ending in `*` accepts
 *  every argument that starts with what precedes the star (`--benchmark_*`, Google Benchmark's flags). `usage`
 *  is the synopsis after the program's name, then the lines that describe the arguments and every environment
 *  variable the program reads. A lone `-` counts as a positional; `--` is refused like any unknown option.
 *
 *  C99 and C++: the C examples include it too. Not thread-safe (it calls `exit`): call it before starting threads.
 */
#ifndef FORKUNION_BENCH_USAGE_H
#define FORKUNION_BENCH_USAGE_H

#include <stdio.h>  /* `printf`, `fprintf` */
#include <stdlib.h> /* `exit` */
#include <string.h> /* `strncmp`, `strlen`, `strrchr` */

/**  The exit status of a refused argument. */
#define FORKUNION_USAGE_STATUS 1

/**  The program's name as typed, without its directory. */
static inline char const *forkunion_usage_program(char **argv) {
    char const *slash = argv[0] ? strrchr(argv[0], '/') : NULL;
    return slash ? slash + 1 : (argv[0] ? argv[0] : "program");
}

/**  How `argument` matches `options`: 0 not at all, 1 a flag, 2 an option whose value is the next argument. */
static inline int forkunion_usage_match(char const *options, char const *argument) {
    size_t const length = strlen(argument);
    char const *entry = options ? options : "";
    while (*entry) {
        size_t size = 0;
        while (*entry == ' ') ++entry;
        while (entry[size] && entry[size] != ' ') ++size;
        if (size && entry[size - 1] == '*') {
            if (strncmp(entry, argument, size - 1) == 0) return 1;
        } else if (size && entry[size - 1] == '=') {
            if (length == size - 1 && strncmp(entry, argument, size - 1) == 0) return 2;
        } else if (size && length == size && strncmp(entry, argument, size) == 0)
            return 1;
        entry += size;
    }
    return 0;
}

/**  Answers `--help` and refuses unknown or extra arguments (see the file's comment); returns otherwise. */
static inline void forkunion_usage(int argc, char **argv, char const *options, int positionals, char const *usage) {
    char const *program = forkunion_usage_program(argv);
    int index, seen = 0;
    for (index = 1; index < argc; ++index)
        if (strcmp(argv[index], "--help") == 0 || strcmp(argv[index], "-h") == 0) {
            printf("usage: %s%s%s", program, usage[0] == '\n' ? "" : " ", usage);
            if (!*usage || usage[strlen(usage) - 1] != '\n') printf("\n");
            fflush(stdout);
            exit(0);
        }
    for (index = 1; index < argc; ++index) {
        char const *argument = argv[index];
        if (argument[0] == '-' && argument[1] != '\0') {
            int const match = forkunion_usage_match(options, argument);
            if (match == 0) {
                fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", program, argument, program);
                exit(FORKUNION_USAGE_STATUS);
            }
            if (match == 2 && ++index == argc) {
                fprintf(stderr, "%s: option '%s' needs a value (see %s --help)\n", program, argument, program);
                exit(FORKUNION_USAGE_STATUS);
            }
            continue;
        }
        if (++seen > positionals) {
            if (positionals == 0)
                fprintf(stderr, "%s: unexpected argument '%s': it takes none (see %s --help)\n", program, argument,
                        program);
            else
                fprintf(stderr, "%s: unexpected argument '%s': it takes at most %d (see %s --help)\n", program,
                        argument, positionals, program);
            exit(FORKUNION_USAGE_STATUS);
        }
    }
}

#endif /* FORKUNION_BENCH_USAGE_H */
