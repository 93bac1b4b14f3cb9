/*  `call report_server()` for the Fortran test program: the same served-by line as every C program's. */
#include "gomp_test.h"

void report_server_(void) {
    report_server();
}
