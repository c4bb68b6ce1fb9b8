#===- GnncPackage.cmake - gnnc as an installable CMake package -----------===#
#
# Part of gnnc; included from the top-level CMakeLists.txt once the runtime
# and the compiler are defined. It
#
#   * makes gnnc_add_model() (cmake/gnncModel.cmake) usable in this tree,
#     through the aliases gnnc::gnnc, gnnc::runtime and gnnc::ops;
#   * installs the gnnc executable, the static libraries gnnc_runtime,
#     gnnc_loaders and gnnc_ops and the header-only gnnc_abi with their
#     headers, the bundled datasets, the layer library (share/gnnc/gnn),
#     and a CMake package
#     (lib/cmake/gnnc: gnncConfig.cmake, gnncConfigVersion.cmake,
#     gnncTargets.cmake, gnncModel.cmake), so that another project can say
#
#       find_package(gnnc REQUIRED)
#       gnnc_add_model(my_model SOURCES model.gnn BACKEND cpu TRAINING)
#       target_link_libraries(my_app PRIVATE my_model)
#
#   * optionally (GNNC_BUILD_TRAIN_DEMO) builds dsl-examples/train, the
#     minimal training program train-gcn, in this tree and registers its
#     short training run as the ctest test train-gcn.runs (the top-level
#     CMakeLists.txt then adds the training harness gnnc-train,
#     tools/benchmarks/train, and its tests train.*).
#
#   cmake --install build --prefix build/install
#
#===----------------------------------------------------------------------===#

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

#===- In-tree use ---------------------------------------------------------===#

add_executable(gnnc::gnnc ALIAS gnnc)
add_executable(gnnc::gnnc-cxx ALIAS gnnc-cxx)
add_library(gnnc::abi ALIAS gnnc_abi)
add_library(gnnc::runtime ALIAS gnnc_runtime)
add_library(gnnc::loaders ALIAS gnnc_loaders)
add_library(gnnc::ops ALIAS gnnc_ops)
add_library(gnnc::dist ALIAS gnnc_dist)
add_library(gnnc::sample ALIAS gnnc_sample)
include("${CMAKE_CURRENT_LIST_DIR}/gnncModel.cmake")

#===- The CUDA runtime (the CUDA backend) --------------------------------===#
# When gnnc is built with CUDA: gnnc::cuda (runtime/cuda) for
# gnnc_add_model(... BACKEND cuda), installed with its headers.
set(GNNC_PACKAGE_HAS_CUDA OFF)
if(TARGET gnnc_cuda)
  add_library(gnnc::cuda ALIAS gnnc_cuda)
  set_target_properties(gnnc_cuda PROPERTIES EXPORT_NAME cuda)
  install(TARGETS gnnc_cuda EXPORT gnncTargets
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
          INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/cuda/include/gnnc"
          DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
          FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh")
  set(GNNC_PACKAGE_HAS_CUDA ON)
endif()
# gnnc::dist_cuda: the device memory types and the NCCL communicator of
# gnnc_dist (runtime/dist/lib/cuda).
set(GNNC_PACKAGE_HAS_DIST_CUDA OFF)
if(TARGET gnnc_dist_cuda)
  add_library(gnnc::dist_cuda ALIAS gnnc_dist_cuda)
  set_target_properties(gnnc_dist_cuda PROPERTIES EXPORT_NAME dist_cuda)
  install(TARGETS gnnc_dist_cuda EXPORT gnncTargets
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
  set(GNNC_PACKAGE_HAS_DIST_CUDA ON)
endif()
#===- end of the CUDA runtime --------------------------------------------===#

#===- Installation --------------------------------------------------------===#

set(GNNC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/gnnc" CACHE STRING
    "Where the gnnc CMake package files are installed, relative to the prefix")
set(GNNC_INSTALL_DATADIR "${CMAKE_INSTALL_DATADIR}/gnnc/data" CACHE STRING
    "Where the bundled datasets are installed, relative to the prefix")

# The names the targets have in the package: gnnc::gnnc, gnnc::runtime,
# gnnc::ops (and gnnc::abi, the header-only part of the runtime, and
# gnnc::openmp, the OpenMP flags that gnnc::ops carries).
set_target_properties(gnnc PROPERTIES EXPORT_NAME gnnc)
set_target_properties(gnnc_abi PROPERTIES EXPORT_NAME abi)
set_target_properties(gnnc_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(gnnc_loaders PROPERTIES EXPORT_NAME loaders)
set_target_properties(gnnc_ops PROPERTIES EXPORT_NAME ops)
set_target_properties(gnnc_openmp PROPERTIES EXPORT_NAME openmp)
set_target_properties(gnnc_dist PROPERTIES EXPORT_NAME dist)
set_target_properties(gnnc_sample PROPERTIES EXPORT_NAME sample)

# The installed tools find libLLVM and libMLIR where they were linked
# against them (e.g. /usr/lib/llvm-19/lib).
foreach(_tool gnnc gnnc-cxx gnn-opt gnnc-interp)
  if(TARGET ${_tool})
    set_target_properties(${_tool} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  endif()
endforeach()

install(TARGETS gnnc gnnc-cxx EXPORT gnncTargets
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(TARGETS gnnc_abi gnnc_runtime gnnc_loaders gnnc_ops gnnc_openmp
                gnnc_dist gnnc_sample
        EXPORT gnncTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/include/gnnc"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/dist/include/gnnc"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/sample/include/gnnc"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
install(FILES "${PROJECT_SOURCE_DIR}/runtime/data/cora.gnnd"
              "${PROJECT_SOURCE_DIR}/runtime/data/citeseer.gnnd"
              "${PROJECT_SOURCE_DIR}/runtime/data/README.md"
        DESTINATION "${GNNC_INSTALL_DATADIR}")
# The layer library (docs/library.md), for gnnc.torch.load and
# gnnc_add_model: share/gnnc/gnn/*.gnn.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/gnn/"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/gnnc/gnn"
        FILES_MATCHING PATTERN "*.gnn")

install(EXPORT gnncTargets
        NAMESPACE gnnc::
        FILE gnncTargets.cmake
        DESTINATION "${GNNC_INSTALL_CMAKEDIR}")

# What the config file must find again in the consuming project: {fmt}
# (gnnc::runtime and gnnc::cuda link fmt::fmt), zlib (gnnc::loaders links
# ZLIB::ZLIB) and the link dependencies of gnnc::ops, as
# runtime/CMakeLists.txt found them here.
get_target_property(_gnnc_openmp_libs gnnc_openmp INTERFACE_LINK_LIBRARIES)
if(_gnnc_openmp_libs AND "OpenMP::OpenMP_CXX" IN_LIST _gnnc_openmp_libs)
  set(GNNC_PACKAGE_NEEDS_OPENMP ON)
else()
  set(GNNC_PACKAGE_NEEDS_OPENMP OFF)
endif()
get_target_property(_gnnc_ops_libs gnnc_ops LINK_LIBRARIES)
if(_gnnc_ops_libs AND "PkgConfig::GNNC_OPENBLAS" IN_LIST _gnnc_ops_libs)
  set(GNNC_PACKAGE_NEEDS_PKGCONFIG_OPENBLAS ON)
else()
  set(GNNC_PACKAGE_NEEDS_PKGCONFIG_OPENBLAS OFF)
endif()

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/gnncConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/package/gnncConfig.cmake"
  INSTALL_DESTINATION "${GNNC_INSTALL_CMAKEDIR}"
  PATH_VARS GNNC_INSTALL_DATADIR CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a new minor version may change the ABI of generated code.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/package/gnncConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/package/gnncConfig.cmake"
              "${PROJECT_BINARY_DIR}/package/gnncConfigVersion.cmake"
              "${CMAKE_CURRENT_LIST_DIR}/gnncModel.cmake"
        DESTINATION "${GNNC_INSTALL_CMAKEDIR}")

#===- The training demo in this tree (optional) --------------------------===#

option(GNNC_BUILD_TRAIN_DEMO
       "Build the training programs in this tree with gnnc_add_model, and their ctests: dsl-examples/train (train-gcn) and tools/benchmarks/train (gnnc-train)" OFF)
if(GNNC_BUILD_TRAIN_DEMO)
  add_subdirectory("${PROJECT_SOURCE_DIR}/dsl-examples/train"
                   "${PROJECT_BINARY_DIR}/dsl-examples/train")
endif()
