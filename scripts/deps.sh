#!/bin/sh
# Installs the Debian packages profd needs to build (and, with "test", to run
# its tests and benchmarks) when any is missing. Idempotent and quiet when
# everything is present.
set -eu
build="gcc make pkg-config libyaml-dev libprotobuf-c-dev protobuf-c-compiler libevent-dev
libdeflate-dev libisal-dev libjansson-dev libpcre2-dev libssl-dev libcurl4-openssl-dev libzstd-dev libdw-dev libelf-dev libdebuginfod-dev libnghttp2-dev zlib1g-dev libiberty-dev liburing-dev libjemalloc-dev"
test="clang llvm rustc libclang-rt-14-dev libtsan2 golang-go golang-github-felixge-fgprof-dev python3 valgrind time procps nginx-light curl openssl linux-perf libc6-dbg debuginfod dwz python3-grpcio python3-protobuf protobuf-compiler wrk tinyproxy"
# One at a time: make -j may start "deps" and "test-deps" together, and
# apt-get cannot run twice at once.
exec 9>"${TMPDIR:-/tmp}/profd-deps.lock"
flock 9
want=$build
[ "${1:-}" = test ] && want="$build $test"
missing=""
for p in $want; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
