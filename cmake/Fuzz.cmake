# WEBHOOKS_FUZZ=ON: the libFuzzer build of tests/fuzz (`make fuzz`, docs/development.md). clang
# only; every library is compiled with -fsanitize=fuzzer-no-link,address,undefined (coverage for
# libFuzzer, ASan and UBSan that abort on the first error), the harnesses link -fsanitize=fuzzer.
# The test suite and the benchmarks are not part of this build; `make fuzz` builds only the
# harnesses and the libraries they link (target webhooks_fuzzers).
if(WEBHOOKS_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "WEBHOOKS_FUZZ needs clang++ (libFuzzer): configure a separate build "
                        "directory with -DCMAKE_CXX_COMPILER=clang++, as `make fuzz` does")
  endif()
  if(WEBHOOKS_SANITIZE)
    message(FATAL_ERROR "WEBHOOKS_FUZZ already builds with ASan and UBSan; leave WEBHOOKS_SANITIZE off")
  endif()
  set(WEBHOOKS_BUILD_TESTS OFF CACHE BOOL "Build the test suite" FORCE)
  set(WEBHOOKS_BUILD_BENCH OFF CACHE BOOL "Build the benchmarks" FORCE)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
