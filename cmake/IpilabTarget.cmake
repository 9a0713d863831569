# ipilab_target_defaults(<target>): warnings as errors for our own code, sanitizers when asked.
function(ipilab_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror
    # GCC 12 reports -Wrestrict inside libstdc++'s std::string at -O3 (GCC bug 105329): not our code.
    $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
  if(IPILAB_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                             -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# ipilab_library(<name> SOURCES ... DEPS ...): one static library per subsystem folder.
function(ipilab_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_SOURCES)
    message(STATUS "ipilab: ${name} has no sources yet; skipped")
    return()
  endif()
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  ipilab_target_defaults(${name})
  if(IPILAB_SANITIZE)
    target_compile_options(${name} PUBLIC -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${name} PUBLIC -fsanitize=address,undefined)
  endif()
  if(IPILAB_FUZZ)
    target_compile_options(${name} PUBLIC -fsanitize=fuzzer-no-link,address,undefined)
    target_link_options(${name} PUBLIC -fsanitize=address,undefined)
  endif()
endfunction()

# ipilab_test(<name> SOURCES ... DEPS ...): one GoogleTest executable, tests discovered by CTest.
function(ipilab_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_SOURCES)
    message(STATUS "ipilab: ${name} has no sources yet; skipped")
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE IPILAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  ipilab_target_defaults(${name})
  # The tests' own files are unoptimised in every build type: the code under test is in the
  # libraries, built as the build type says; a GoogleTest file takes 2.3x as long to compile at -O3
  # (GCC 12: 33 s against 15 s) and the suite runs no faster for it.
  target_compile_options(${name} PRIVATE -O0)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
                       PROPERTIES ENVIRONMENT "IPILAB_DATA_DIR=${PROJECT_SOURCE_DIR}")
endfunction()

# ipilab_fuzzer(<name> SOURCES ... DEPS ...): a libFuzzer target (clang, IPILAB_FUZZ=ON).
function(ipilab_fuzzer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined -Wall -Wextra -Werror)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  set_property(GLOBAL APPEND PROPERTY IPILAB_FUZZERS ${name})
endfunction()
