# Sourced by scripts/test (--sanitize, --tsan) and scripts/fuzz.
#
# scripts/test --sanitize and scripts/fuzz share one clang build in
# build-sanitize/ (AddressSanitizer, UndefinedBehaviorSanitizer and
# libFuzzer coverage in every library), at -O0 with line tables: on two
# cores it builds in 5 minutes where -O1 took 12, the suite then runs in
# 225 s instead of 150 s, and reports still name file and line. Fuzzing runs
# 5 to 10 times more inputs a second at -O1: long fuzz runs
# (KFPBENCH_SANITIZE_OPT=-O1 scripts/fuzz --runs 10000000) build in a folder
# of their own, build-fuzz/, and leave the test build alone.
# No ccache: with clang it broke the dependency files.
sanitize_build_dir() {
  if [ "${KFPBENCH_SANITIZE_OPT:--O0}" = -O0 ]; then echo build-sanitize; else echo build-fuzz; fi
}

configure_sanitize_build() {
  if ! command -v clang++ > /dev/null; then
    echo "$(basename "$0"): clang++ is missing; run scripts/setup" >&2
    exit 2
  fi
  local opt=${KFPBENCH_SANITIZE_OPT:--O0}
  local werror=OFF
  if [ "${CI:-}" = "true" ]; then werror=ON; fi
  cmake -S . -B "$(sanitize_build_dir)" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt -gline-tables-only" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt -gline-tables-only" -DKFPBENCH_FUZZ=ON \
    -DKFPBENCH_BUILD_BENCH=OFF -DKFPBENCH_WERROR="$werror" > /dev/null
}

# The concurrent parts, whose tests scripts/test --tsan runs under
# ThreadSanitizer (build-tsan/, -O1): the HTTP server and client, the
# recorder, the engine's event loop, the store, the embedded backend end to
# end (API threads, engine loop, scheduler and SQLite at once), and capacity
# planning (replications simulated on threads at once). Not the tests that
# start the kfpbench binary, which this build does not make.
tsan_parts=(http metrics engine store server plan)
tsan_filter='-RestartTest.*'
configure_tsan_build() {
  if ! command -v clang++ > /dev/null; then
    echo "$(basename "$0"): clang++ is missing; run scripts/setup" >&2
    exit 2
  fi
  local werror=OFF
  if [ "${CI:-}" = "true" ]; then werror=ON; fi
  cmake -S . -B build-tsan -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DKFPBENCH_TSAN=ON \
    -DKFPBENCH_BUILD_BENCH=OFF -DKFPBENCH_WERROR="$werror" > /dev/null
}
