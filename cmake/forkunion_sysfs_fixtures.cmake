# Unpacks the recorded sysfs trees of `test/fixtures/sysfs/<machine>/<machine>.tar.gz` into
# `<build>/sysfs/<machine>/`, where each folder stands for `/` (see test/fixtures/sysfs/README.md).
#
# Extraction happens at configure time, once per tarball: a stamp file holding the tarball's hash is compared,
# so a changed tarball is re-extracted and an unchanged one is not (the 9 trees are ~35,000 small files).
# Sets FORKUNION_SYSFS_FIXTURES_SOURCE (the folder with the tarballs and expected.json files),
# FORKUNION_SYSFS_FIXTURES_ROOT (the folder of extracted trees) and FORKUNION_SYSFS_MACHINES (their names) in
# the including directory's scope; including it again elsewhere (tests, examples) only re-checks the stamps.
# FORKUNION_SYSFS_FIXTURES_SOURCE_FROM_HERE and FORKUNION_SYSFS_FIXTURES_ROOT_FROM_HERE are the same folders relative
# to the including directory's binary folder, where ctest runs its tests: compiled into a test, they keep its object
# file the same in every clone, so the compiler cache hits a fresh clone in another folder.

set(FORKUNION_SYSFS_FIXTURES_SOURCE "${PROJECT_SOURCE_DIR}/test/fixtures/sysfs")
set(FORKUNION_SYSFS_FIXTURES_ROOT "${PROJECT_BINARY_DIR}/sysfs")
set(FORKUNION_SYSFS_MACHINES "")

file(GLOB _forkunion_sysfs_tarballs CONFIGURE_DEPENDS "${FORKUNION_SYSFS_FIXTURES_SOURCE}/*/*.tar.gz")
foreach(_tarball IN LISTS _forkunion_sysfs_tarballs)
    get_filename_component(_machine "${_tarball}" NAME)
    string(REGEX REPLACE "\\.tar\\.gz$" "" _machine "${_machine}")
    set(_destination "${FORKUNION_SYSFS_FIXTURES_ROOT}/${_machine}")
    file(SHA256 "${_tarball}" _hash)
    set(_stamp "${FORKUNION_SYSFS_FIXTURES_ROOT}/${_machine}.extracted")
    set(_previous "")
    if(EXISTS "${_stamp}")
        file(READ "${_stamp}" _previous)
    endif()
    if(NOT _previous STREQUAL _hash OR NOT EXISTS "${_destination}/sys")
        file(REMOVE_RECURSE "${_destination}")
        file(MAKE_DIRECTORY "${_destination}")
        file(ARCHIVE_EXTRACT INPUT "${_tarball}" DESTINATION "${_destination}")
        file(WRITE "${_stamp}" "${_hash}")
    endif()
    list(APPEND FORKUNION_SYSFS_MACHINES "${_machine}")
endforeach()
file(RELATIVE_PATH FORKUNION_SYSFS_FIXTURES_SOURCE_FROM_HERE "${CMAKE_CURRENT_BINARY_DIR}" "${FORKUNION_SYSFS_FIXTURES_SOURCE}")
file(RELATIVE_PATH FORKUNION_SYSFS_FIXTURES_ROOT_FROM_HERE "${CMAKE_CURRENT_BINARY_DIR}" "${FORKUNION_SYSFS_FIXTURES_ROOT}")
