# kfpbench_part(NAME SOURCES ... DEPS ... TESTS ...)
#
# Defines the static library kfpbench_<NAME> from SOURCES, linked against DEPS,
# and registers TESTS (foo_test.cc files beside the code) for the single test
# binary kfpbench_tests. A per-part binary <NAME>_tests (not built by default)
# lets one work on a part without compiling every other part's tests.
function(kfpbench_part name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;TESTS" ${ARGN})
  add_library(kfpbench_${name} STATIC ${ARG_SOURCES})
  target_include_directories(kfpbench_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(kfpbench_${name} PUBLIC ${ARG_DEPS})
  target_compile_definitions(kfpbench_${name} PUBLIC
    KFPBENCH_VERSION="${PROJECT_VERSION}"
    KFPBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(ARG_TESTS)
    list(TRANSFORM ARG_TESTS PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
    set_property(GLOBAL APPEND PROPERTY KFPBENCH_TEST_SOURCES ${ARG_TESTS})
    set_property(GLOBAL APPEND PROPERTY KFPBENCH_TEST_LIBS kfpbench_${name})
    add_executable(${name}_tests EXCLUDE_FROM_ALL ${ARG_TESTS})
    target_link_libraries(${name}_tests PRIVATE kfpbench_${name} GTest::gtest GTest::gtest_main GTest::gmock)
    target_compile_definitions(${name}_tests PRIVATE KFPBENCH_BINARY_DIR="${PROJECT_BINARY_DIR}")
  endif()
endfunction()

# One test binary for every part, each test registered with CTest.
function(kfpbench_finish_tests)
  get_property(sources GLOBAL PROPERTY KFPBENCH_TEST_SOURCES)
  get_property(libs GLOBAL PROPERTY KFPBENCH_TEST_LIBS)
  add_executable(kfpbench_tests ${sources})
  target_link_libraries(kfpbench_tests PRIVATE ${libs} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(kfpbench_tests PRIVATE KFPBENCH_BINARY_DIR="${PROJECT_BINARY_DIR}")
  # End-to-end tests run the real binary.
  if(TARGET kfpbench)
    add_dependencies(kfpbench_tests kfpbench)
  endif()
  include(GoogleTest)
  # The sanitizer build (-O0, ASan) runs the binary's end-to-end tests several
  # times slower: the docs-example test's commands take about 4 minutes in
  # Release.
  set(test_timeout 300)
  if(KFPBENCH_SANITIZE)
    set(test_timeout 1200)
  endif()
  gtest_discover_tests(kfpbench_tests DISCOVERY_TIMEOUT 120 PROPERTIES TIMEOUT ${test_timeout})
endfunction()
