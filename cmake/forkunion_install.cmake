# Install rules: headers, the exported `forkunion::header` target (and the C API libraries, from c/), a package
# config with version, and a `.pc`. Both the CMake package and the `.pc` find everything relative to their own
# location, so an installed prefix can be moved or packaged as a whole (test/install/ moves one).
include(CMakePackageConfigHelpers)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
install(TARGETS forkunion_header EXPORT forkunionTargets)
install(EXPORT forkunionTargets NAMESPACE forkunion:: DESTINATION "${CMAKE_INSTALL_LIBDIR}/cmake/forkunion")

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/forkunionConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/forkunionConfig.cmake"
                              INSTALL_DESTINATION "${CMAKE_INSTALL_LIBDIR}/cmake/forkunion")
# 0.x releases may break the API between minors; from 1.0 on, the major is the contract.
if(PROJECT_VERSION_MAJOR EQUAL 0)
    set(_forkunion_compatibility SameMinorVersion)
else()
    set(_forkunion_compatibility SameMajorVersion)
endif()
write_basic_package_version_file("${PROJECT_BINARY_DIR}/forkunionConfigVersion.cmake"
                                 COMPATIBILITY ${_forkunion_compatibility} ARCH_INDEPENDENT)
install(FILES "${PROJECT_BINARY_DIR}/forkunionConfig.cmake" "${PROJECT_BINARY_DIR}/forkunionConfigVersion.cmake"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/cmake/forkunion")

# pkg-config: `-I` plus the C++ standard and threads for the headers, `c_libs`/`c_libs_static` variables for the
# C API. Relocatable: `prefix` is derived from the file's own folder (`${pcfiledir}`, which pkg-config and pkgconf
# both define), so `cmake --install build --prefix P` (or moving P afterwards) yields a .pc that points into P. An
# absolute CMAKE_INSTALL_LIBDIR or INCLUDEDIR pins that folder instead.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(FORKUNION_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
    set(FORKUNION_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
    # One `..` per component of `<libdir>/pkgconfig`: lib/pkgconfig -> ../.., lib/x86_64-linux-gnu/pkgconfig -> ../../..
    string(REGEX REPLACE "[^/]+" ".." _forkunion_up "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
    set(FORKUNION_PC_PREFIX "\${pcfiledir}/${_forkunion_up}")
    set(FORKUNION_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(FORKUNION_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
    set(FORKUNION_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file("${PROJECT_SOURCE_DIR}/cmake/forkunion.pc.in" "${PROJECT_BINARY_DIR}/forkunion.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/forkunion.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
