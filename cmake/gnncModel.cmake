#===- gnncModel.cmake - gnnc_add_model() -------------------------------===#
#
# Part of gnnc. Compiles .gnn files to C++ at build time and wraps the
# result in a static library:
#
#   gnnc_add_model(<target>
#                  SOURCES a.gnn [b.gnn ...]
#                  BACKEND cpu|cuda           # C++/OpenMP, or CUDA (gnnc::cuda)
#                  [TRAINING]                 # also F_train / F_backward (--training)
#                  [DEFINES name=value ...]   # hyper-parameters (--define)
#                  [NAMESPACE ns]             # C++ namespace (--cpp-namespace)
#                  [ENTRY name]               # only this layer or model (--entry)
#                  [LINE_DIRECTIVES])         # #line directives into the .gnn
#
# For each source, one custom command runs gnnc --emit=cpp into
# <binary dir>/gnnc_models/<target>/ and produces <stem>.h, <stem>.cpp and
# <stem>.gnnmap.json; it depends on the .gnn file and on the gnnc
# executable, so editing either regenerates the code and rebuilds the
# library. <target> is a STATIC library of the generated .cpp files that
# links gnnc::ops (the host operations, OpenMP and OpenBLAS) and has on its
# public include path both the output folder (#include "<stem>.h") and its
# parent (#include "<target>/<stem>.h", unambiguous when one program links
# several models compiled from files of the same name).
#
# The same file serves an installed package (find_package(gnnc), which
# defines the imported gnnc::gnnc and gnnc::ops) and gnnc's own source tree
# (where gnnc::gnnc and gnnc::ops are aliases of the targets gnnc and
# gnnc_ops, so a custom command waits for gnnc to be built).
#
#===----------------------------------------------------------------------===#

include_guard(GLOBAL)

# The real (non-alias) name of target `name`, in `out`.
function(_gnnc_resolve_target out name)
  get_target_property(_aliased "${name}" ALIASED_TARGET)
  if(_aliased)
    set(${out} "${_aliased}" PARENT_SCOPE)
  else()
    set(${out} "${name}" PARENT_SCOPE)
  endif()
endfunction()

function(gnnc_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG
    "TRAINING;LINE_DIRECTIVES"
    "BACKEND;NAMESPACE;ENTRY"
    "SOURCES;DEFINES")

  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "gnnc_add_model(${target}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(ARG_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR
      "gnnc_add_model(${target}): no value given for ${ARG_KEYWORDS_MISSING_VALUES}")
  endif()
  if(TARGET "${target}")
    message(FATAL_ERROR "gnnc_add_model(${target}): a target of this name already exists")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "gnnc_add_model(${target}): SOURCES names no .gnn file")
  endif()
  if(NOT DEFINED ARG_BACKEND)
    message(FATAL_ERROR "gnnc_add_model(${target}): BACKEND is required (BACKEND cpu)")
  endif()
  string(TOLOWER "${ARG_BACKEND}" _backend)
  # What each backend prints and links: --emit=cpp, .cpp, gnnc::ops.
  set(_gnnc_emit --emit=cpp)
  set(_gnnc_ext cpp)
  set(_gnnc_link gnnc::ops)
  #===- BACKEND cuda (the CUDA backend, docs/abi.md "CUDA") --------------===#
  # gnnc --target=cuda --emit=cuda prints <stem>.h and <stem>.cu; the
  # library compiles the .cu files with the project's CUDA compiler (for
  # its CMAKE_CUDA_ARCHITECTURES) and links gnnc::cuda (the CUDA runtime,
  # cuBLAS, the CUDA runtime library).
  if(_backend STREQUAL "cuda")
    if(NOT TARGET gnnc::cuda)
      message(FATAL_ERROR
        "gnnc_add_model(${target}): BACKEND cuda needs gnnc built with CUDA "
        "(the target gnnc::cuda is missing)")
    endif()
    get_property(_gnnc_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CUDA" IN_LIST _gnnc_languages)
      message(FATAL_ERROR
        "gnnc_add_model(${target}): BACKEND cuda compiles .cu files; enable "
        "the CUDA language first (project(... LANGUAGES CXX CUDA) or "
        "enable_language(CUDA))")
    endif()
    set(_gnnc_emit --target=cuda --emit=cuda)
    set(_gnnc_ext cu)
    set(_gnnc_link gnnc::cuda)
  #===- end of BACKEND cuda ----------------------------------------------===#
  elseif(NOT _backend STREQUAL "cpu")
    message(FATAL_ERROR
      "gnnc_add_model(${target}): unknown BACKEND '${ARG_BACKEND}' (expected cpu or cuda)")
  endif()

  if(NOT TARGET gnnc::gnnc OR NOT TARGET gnnc::ops)
    message(FATAL_ERROR
      "gnnc_add_model(${target}): the targets gnnc::gnnc and gnnc::ops are "
      "missing; call find_package(gnnc REQUIRED) first")
  endif()
  _gnnc_resolve_target(_gnnc gnnc::gnnc)

  # Options common to every source.
  set(_flags ${_gnnc_emit})
  if(ARG_TRAINING)
    list(APPEND _flags --training)
  endif()
  if(ARG_LINE_DIRECTIVES)
    list(APPEND _flags --line-directives)
  endif()
  if(DEFINED ARG_NAMESPACE)
    if(NOT ARG_NAMESPACE MATCHES "^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")
      message(FATAL_ERROR
        "gnnc_add_model(${target}): NAMESPACE '${ARG_NAMESPACE}' is not a C++ namespace name")
    endif()
    list(APPEND _flags "--cpp-namespace=${ARG_NAMESPACE}")
  endif()
  if(DEFINED ARG_ENTRY)
    list(APPEND _flags "--entry=${ARG_ENTRY}")
  endif()
  foreach(_def IN LISTS ARG_DEFINES)
    if(NOT _def MATCHES "^[A-Za-z_][A-Za-z0-9_]*=.+$")
      message(FATAL_ERROR
        "gnnc_add_model(${target}): DEFINES entry '${_def}' is not name=value")
    endif()
    list(APPEND _flags "--define=${_def}")
  endforeach()

  set(_root "${CMAKE_CURRENT_BINARY_DIR}/gnnc_models")
  set(_dir "${_root}/${target}")
  set(_sources "")
  set(_headers "")
  set(_stems "")
  foreach(_src IN LISTS ARG_SOURCES)
    get_filename_component(_abs "${_src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${_abs}")
      message(FATAL_ERROR "gnnc_add_model(${target}): ${_abs} does not exist")
    endif()
    get_filename_component(_stem "${_abs}" NAME_WE)
    if(_stem IN_LIST _stems)
      message(FATAL_ERROR
        "gnnc_add_model(${target}): two sources are called ${_stem}.gnn; "
        "their generated files would collide (use one target per file)")
    endif()
    list(APPEND _stems "${_stem}")
    set(_outs "${_dir}/${_stem}.h" "${_dir}/${_stem}.${_gnnc_ext}" "${_dir}/${_stem}.gnnmap.json")
    file(RELATIVE_PATH _rel "${CMAKE_BINARY_DIR}" "${_dir}/${_stem}.${_gnnc_ext}")
    add_custom_command(
      OUTPUT ${_outs}
      COMMAND "${CMAKE_COMMAND}" -E make_directory "${_dir}"
      COMMAND "$<TARGET_FILE:${_gnnc}>" "${_abs}" ${_flags} -o "${_dir}"
      DEPENDS "${_abs}" ${_gnnc}
      COMMENT "gnnc: compiling ${_stem}.gnn (${target}) to ${_rel}"
      VERBATIM)
    list(APPEND _sources "${_dir}/${_stem}.${_gnnc_ext}")
    list(APPEND _headers "${_dir}/${_stem}.h")
  endforeach()

  add_library(${target} STATIC ${_sources} ${_headers})
  target_include_directories(${target} PUBLIC "${_dir}" "${_root}")
  target_link_libraries(${target} PUBLIC ${_gnnc_link})
  target_compile_features(${target} PUBLIC cxx_std_17)
  set_target_properties(${target} PROPERTIES
    GNNC_MODEL_SOURCES "${ARG_SOURCES}"
    GNNC_MODEL_OUTPUT_DIR "${_dir}")
endfunction()

#===- gnnc_add_cxx_sources() ----------------------------------------------===#
#
#   gnnc_add_cxx_sources(<target>
#                        SOURCES a.cpp [b.cpp ...]   # with GNNC_LAYER functions
#                        [FLAGS flag ...])           # more flags for parsing
#
# Compiles the node-centric layers written inside C++ sources
# (gnnc/cxx/NodeCentric.h, docs/cxx.md) as part of <target>, an existing
# executable or library. For each source, a custom command runs gnnc-cxx
# into <binary dir>/gnnc_cxx/<target>/<stem>/, which writes the source
# rewritten (each GNNC_LAYER body a call of the fused kernels, the rest as
# it was, at the same lines) and the kernels <stem>_gnnc.h/.cpp; <target>
# compiles those instead of the source. gnnc-cxx parses each source with
# -std=c++17, the target's include directories and compile definitions,
# gnnc's headers and FLAGS. List these sources here only, not also in
# add_executable/add_library. Editing a source, or a new gnnc-cxx,
# recompiles it. <target> links gnnc::ops.
function(gnnc_add_cxx_sources target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES;FLAGS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "gnnc_add_cxx_sources(${target}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET "${target}")
    message(FATAL_ERROR
      "gnnc_add_cxx_sources(${target}): no target ${target}; create it first "
      "(add_executable or add_library)")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "gnnc_add_cxx_sources(${target}): SOURCES names no file")
  endif()
  if(NOT TARGET gnnc::gnnc-cxx OR NOT TARGET gnnc::ops OR NOT TARGET gnnc::abi)
    message(FATAL_ERROR
      "gnnc_add_cxx_sources(${target}): the targets gnnc::gnnc-cxx, "
      "gnnc::ops and gnnc::abi are missing; call find_package(gnnc REQUIRED) "
      "first")
  endif()
  _gnnc_resolve_target(_tool gnnc::gnnc-cxx)
  _gnnc_resolve_target(_abi gnnc::abi)

  # The flags a layer is parsed with: the target's own, gnnc's headers.
  set(_incs "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(_defs "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(_gnnc_incs "$<TARGET_PROPERTY:${_abi},INTERFACE_INCLUDE_DIRECTORIES>")
  # (Each list joined with $<SEMICOLON>: COMMAND_EXPAND_LISTS makes them
  # separate arguments once evaluated.)
  set(_parse -std=c++17
      "$<$<BOOL:${_incs}>:-I$<JOIN:${_incs},$<SEMICOLON>-I>>"
      "$<$<BOOL:${_gnnc_incs}>:-I$<JOIN:${_gnnc_incs},$<SEMICOLON>-I>>"
      "$<$<BOOL:${_defs}>:-D$<JOIN:${_defs},$<SEMICOLON>-D>>"
      ${ARG_FLAGS})

  set(_root "${CMAKE_CURRENT_BINARY_DIR}/gnnc_cxx/${target}")
  set(_stems "")
  foreach(_src IN LISTS ARG_SOURCES)
    get_filename_component(_abs "${_src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${_abs}")
      message(FATAL_ERROR "gnnc_add_cxx_sources(${target}): ${_abs} does not exist")
    endif()
    get_filename_component(_name "${_abs}" NAME)
    get_filename_component(_stem "${_abs}" NAME_WE)
    string(MAKE_C_IDENTIFIER "${_stem}" _kernels)
    if(_kernels MATCHES "^[0-9]")
      set(_kernels "_${_kernels}")
    endif()
    set(_kernels "${_kernels}_gnnc")
    if(_stem IN_LIST _stems)
      message(FATAL_ERROR
        "gnnc_add_cxx_sources(${target}): two sources are called ${_stem}; "
        "their outputs would collide")
    endif()
    list(APPEND _stems "${_stem}")
    set(_dir "${_root}/${_stem}")
    set(_outs "${_dir}/${_name}" "${_dir}/${_kernels}.cpp"
              "${_dir}/${_kernels}.h" "${_dir}/${_kernels}.gnnmap.json")
    add_custom_command(
      OUTPUT ${_outs}
      COMMAND "$<TARGET_FILE:${_tool}>" "${_abs}" -o "${_dir}" -- ${_parse}
      DEPENDS "${_abs}" ${_tool}
      COMMENT "gnnc-cxx: compiling the layers of ${_name} (${target})"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    target_sources(${target} PRIVATE "${_dir}/${_name}" "${_dir}/${_kernels}.cpp")
    # The rewritten copy includes "<stem>_gnnc.h"; its own includes resolve
    # next to the original.
    get_filename_component(_src_dir "${_abs}" DIRECTORY)
    set_source_files_properties("${_dir}/${_name}" PROPERTIES
      INCLUDE_DIRECTORIES "${_dir};${_src_dir}")
  endforeach()
  target_link_libraries(${target} PRIVATE gnnc::ops)
  target_compile_features(${target} PRIVATE cxx_std_17)
endfunction()
