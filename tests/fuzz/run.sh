#!/bin/sh
# Builds the libFuzzer drivers (clang, ASan+UBSan) and runs each for
# FUZZ_SECONDS (default 10), two builds and two drivers at a time, from its
# seeds: the pprof decoder from the shared
# Go corpus; the perf.data reader from the shared perf corpus and tests/fuzz/seeds/perf
# (inputs that failed once); symbolize's
# ELF/DWARF, DWARF packages, inflated copies, Go pc-line table, kallsyms and perf map reading from the corpus
# binaries, tests/fuzz/seeds/elf (kallsyms, a perf map, a small binary whose
# DWARF names a dwz file, and that file, one by clang without .debug_aranges,
# DWARF packages of both index versions)
# and a Go program's .gopclntab; the config
# loader, relabel engine, file_sd reader, OTLP decoders (protobuf, JSON), the JSON pull
# reader (against jansson), gRPC framer and
# pushed series (Parca, Pyroscope), folded stacks, speedscope files, /ingest
# queries, cgroup files (a process's, and the CPU quota's mounts and files), Kubernetes pod lists, kubeconfigs, exec plugins' output,
# backends' responses (headers, trailers, bodies) and exporter queues' stored
# records from tests/fuzz/seeds/<name>;
# JFR recordings from tests/integration/jfr.
#
# With FUZZ_SEED=1 (the default, the smoke run of `make test`) each driver
# starts from its seeds alone, in a fresh directory, with libFuzzer's seed
# fixed, so that a run goes over what a run elsewhere went over: the same
# inputs in the same order for nine of the drivers; the others' coverage
# varies a little from run to run (perf, config, relabel, json_pull, push,
# jfr, k8s), and with it which inputs they keep and mutate further.
# FUZZ_SEED=0 (`make fuzz`) takes a random seed and goes on from what
# earlier runs kept in build-fuzz/corpus-<name>.
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
FUZZ_BUILD=build-fuzz
SECONDS_EACH=${FUZZ_SECONDS:-10}
SEED=${FUZZ_SEED:-1}
CORPUS=${PROFD_CORPUS:-../shared/corpus}
FLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE
-std=gnu11 -DPROFD_VERSION=\"fuzz\" -Icore/include $(pkg-config --cflags yaml-0.1 libdeflate libisal)"
LIBS="$(pkg-config --libs yaml-0.1 libdeflate libisal libpcre2-8) -lpthread"
mkdir -p $FUZZ_BUILD
core="core/pb.c core/pprof_decode.c core/pprof_decode_ids.c core/pprof_decode_message.c
core/pprof_types.c core/pprof_valid.c core/pprof_encode.c core/profile.c core/arena.c core/block_cache.c core/alloc.c core/gzip.c
core/gzip_pieces.c core/huge_arena.c core/thread_slot.c lib/cpus.c lib/cgroup_dir.c lib/file_io.c"
conf="config/tree.c config/service.c config/bind.c config/units.c config/diag.c core/alloc.c core/log.c
core/relabel.c core/md5.c core/labels.c core/thread_slot.c core/utf8.c lib/utf8_valid.c core/go_regex.c core/text.c"
all_core="$(ls core/*.c config/*.c | grep -v core/main.c) lib/grpc_frame.c lib/utf8_valid.c lib/json_pull.c
lib/file_io.c lib/cpus.c lib/cgroup_dir.c"
PKGS="yaml-0.1 libevent libevent_openssl libdeflate jansson libprotobuf-c libpcre2-8 libssl libcrypto
libnghttp2 libzstd liburing"
perf="receivers/perf_data/perf_file.c receivers/perf_data/order.c receivers/perf_data/session.c
receivers/perf_data/build.c receivers/perf_data/process.c receivers/perf_data/index.c
receivers/perf_data/util.c receivers/perf_data/unwind.c lib/binary_lookup.c lib/own_vdso.c
lib/grow.c"
# The drivers, built in two halves at once (each half one after another).
build_half_one() {
    clang $FLAGS tests/fuzz/fuzz_pprof.c $core -o $FUZZ_BUILD/fuzz_pprof $LIBS
    clang $FLAGS tests/fuzz/fuzz_config.c $conf -o $FUZZ_BUILD/fuzz_config $LIBS
    clang $FLAGS tests/fuzz/fuzz_relabel.c core/relabel.c core/md5.c core/labels.c core/utf8.c lib/utf8_valid.c core/go_regex.c \
        core/text.c config/bind.c config/tree.c config/units.c config/diag.c core/alloc.c \
        core/thread_slot.c -o $FUZZ_BUILD/fuzz_relabel $LIBS
    clang $FLAGS $(pkg-config --cflags libevent jansson libprotobuf-c) tests/fuzz/fuzz_perf.c $perf \
        $all_core -o $FUZZ_BUILD/fuzz_perf $LIBS $(pkg-config --libs $PKGS) -ldw -lelf -ldl -lm
    clang $FLAGS tests/fuzz/fuzz_elf.c processors/symbolize/elf_symbols.c processors/symbolize/scope_index.c \
        processors/symbolize/debug_search.c processors/symbolize/demangle.c processors/symbolize/dwp.c \
        processors/symbolize/kernel_symbols.c processors/symbolize/perf_map.c processors/symbolize/plt_symbols.c \
        processors/symbolize/gopclntab.c processors/symbolize/inflated_cache.c \
        processors/symbolize/frame_cache.c lib/binary_lookup.c lib/own_vdso.c \
        lib/file_io.c lib/grow.c lib/key_map.c \
        -o $FUZZ_BUILD/fuzz_elf \
        -ldw -lelf -lz -lzstd -liberty
    clang $FLAGS $(pkg-config --cflags libevent jansson libprotobuf-c) tests/fuzz/fuzz_otlp.c \
        $all_core -o $FUZZ_BUILD/fuzz_otlp $LIBS $(pkg-config --libs $PKGS) -ldl -lm
    clang $FLAGS $(pkg-config --cflags libevent jansson libprotobuf-c) tests/fuzz/fuzz_json.c \
        $all_core -o $FUZZ_BUILD/fuzz_json $LIBS $(pkg-config --libs $PKGS) -ldl -lm
    clang $FLAGS tests/fuzz/fuzz_http1.c core/http1_parse.c -o $FUZZ_BUILD/fuzz_http1
    clang $FLAGS $(pkg-config --cflags jansson) tests/fuzz/fuzz_json_pull.c lib/json_pull.c \
        lib/utf8_valid.c -o $FUZZ_BUILD/fuzz_json_pull $(pkg-config --libs jansson)
    clang $FLAGS tests/fuzz/fuzz_grpc_frame.c lib/grpc_frame.c core/compression.c core/gzip.c \
        core/huge_arena.c core/alloc.c core/thread_slot.c -o $FUZZ_BUILD/fuzz_grpc_frame $LIBS -lzstd
}
build_half_two() {
    clang $FLAGS $(pkg-config --cflags libevent jansson libprotobuf-c) tests/fuzz/fuzz_push.c \
        lib/raw_series.c lib/label_valid.c lib/grow.c lib/profile_family.c receivers/pyroscope/folded.c \
        receivers/pyroscope/multipart.c receivers/pyroscope/ingest_query.c \
        receivers/pyroscope/trie_tree.c receivers/pyroscope/speedscope.c lib/key_map.c \
        $all_core -o $FUZZ_BUILD/fuzz_push $LIBS $(pkg-config --libs $PKGS) -ldl -lm
    clang $FLAGS $(pkg-config --cflags libevent jansson libprotobuf-c) tests/fuzz/fuzz_jfr.c \
        lib/grow.c lib/key_map.c receivers/pyroscope/jfr.c receivers/pyroscope/jfr_reader.c \
        receivers/pyroscope/jfr_chunk.c \
        receivers/pyroscope/multipart.c \
        $all_core -o $FUZZ_BUILD/fuzz_jfr $LIBS $(pkg-config --libs $PKGS) -ldl -lm
    clang $FLAGS $(pkg-config --cflags libevent jansson libprotobuf-c) tests/fuzz/fuzz_queue_store.c \
        $all_core -o $FUZZ_BUILD/fuzz_queue_store $LIBS $(pkg-config --libs $PKGS) -ldl -lm
    clang $FLAGS $(pkg-config --cflags jansson) tests/fuzz/fuzz_k8s.c lib/grow.c lib/key_map.c lib/json_pull.c \
        lib/k8s_pods.c lib/k8s_network.c lib/label_valid.c lib/utf8_valid.c processors/k8s_metadata/cgroup.c \
        processors/k8s_metadata/pods.c receivers/pprof_scrape/k8s_sd.c \
        receivers/pprof_scrape/k8s_sd_endpoints.c receivers/pprof_scrape/k8s_sd_service.c \
        receivers/pprof_scrape/k8s_sd_ingress.c lib/k8s_api.c lib/oauth2_shared.c lib/file_io.c \
        lib/client_tls.c lib/k8s_kubeconfig.c core/base64.c core/labels.c core/alloc.c \
        lib/client_auth.c lib/client_proxy.c lib/http_headers.c lib/client_credentials.c lib/oauth2_token.c \
        -o $FUZZ_BUILD/fuzz_k8s $LIBS $(pkg-config --libs jansson libcurl)
    clang $FLAGS tests/fuzz/fuzz_rpc_response.c lib/grpc_frame.c lib/grow.c lib/client_tls.c \
        lib/client_auth.c lib/client_proxy.c lib/http_headers.c lib/client_credentials.c core/base64.c \
        lib/file_io.c lib/oauth2_token.c lib/json_pull.c lib/utf8_valid.c core/compression.c \
        core/gzip.c core/huge_arena.c core/alloc.c core/thread_slot.c \
        -o $FUZZ_BUILD/fuzz_rpc_response $LIBS $(pkg-config --libs libcurl libcrypto) -lzstd
    clang $FLAGS tests/fuzz/fuzz_sd_file.c core/sd_file.c core/labels.c config/tree.c config/json_text.c config/diag.c \
        core/alloc.c -o $FUZZ_BUILD/fuzz_sd_file $LIBS
    clang $FLAGS tests/fuzz/fuzz_cpus.c lib/cpus.c lib/cgroup_dir.c lib/memory_usage.c lib/file_io.c -o $FUZZ_BUILD/fuzz_cpus $LIBS
}
build_half_one > $FUZZ_BUILD/build-1.log 2>&1 &
one=$!
build_half_two > $FUZZ_BUILD/build-2.log 2>&1 &
two=$!
built=0
wait $one || { cat $FUZZ_BUILD/build-1.log; built=1; }
wait $two || { cat $FUZZ_BUILD/build-2.log; built=1; }
[ $built = 0 ] || exit 1

# Runs driver t from its seeds for SECONDS_EACH; fails when it found a crash.
fuzz_one() {
    t=$1
    if [ "$SEED" = 0 ]; then
        work=$FUZZ_BUILD/corpus-$t
    else
        work=$FUZZ_BUILD/smoke-$t
        rm -rf $work
    fi
    mkdir -p $work
    case $t in
    pprof) seeds="$CORPUS/go" ;;
    perf) seeds="$CORPUS/perf tests/fuzz/seeds/perf" ;;   # recordings, and inputs that failed once
    elf) seeds="$CORPUS/bin tests/fuzz/seeds/elf" ;;   # binaries, kallsyms, perf maps, packages
    jfr) seeds=$FUZZ_BUILD/seeds-jfr; mkdir -p $seeds
         for f in tests/integration/jfr/*.jfr.gz; do
             gzip -dc "$f" > $seeds/$(basename "$f" .gz)
         done ;;
    *) seeds=tests/fuzz/seeds/$t ;;
    esac
    if [ $t = pprof ]; then   # raw profiles too: the decoder past gunzip, the quick proof
        for f in "$CORPUS"/go/*.pb.gz; do gzip -dc "$f" > $work/raw-$(basename "$f" .gz); done
    fi
    if [ $t = elf ] && command -v go >/dev/null; then   # a Go pc-line table to start from
        go build -ldflags="-s -w" -o $FUZZ_BUILD/gofuncs tests/integration/symbolize/gofuncs.go
        objcopy -O binary --only-section=.gopclntab $FUZZ_BUILD/gofuncs $work/gopclntab
    fi
    echo "fuzz_$t: ${SECONDS_EACH}s, seed $SEED"
    if $FUZZ_BUILD/fuzz_$t -seed="$SEED" -max_total_time="$SECONDS_EACH" -max_len=1048576 -rss_limit_mb=2048 \
        -print_final_stats=0 -artifact_prefix=$FUZZ_BUILD/crash-$t- $work $seeds \
        > $FUZZ_BUILD/fuzz_$t.log 2>&1; then
        echo "fuzz_$t: ok ($(grep -c '' $FUZZ_BUILD/fuzz_$t.log) log lines)"
    else
        echo "fuzz_$t: FAILED"; tail -40 $FUZZ_BUILD/fuzz_$t.log; return 1
    fi
}

# Runs the drivers named, one after another; fails when any did.
fuzz_lane() {
    failed=0
    for t in "$@"; do
        fuzz_one $t || failed=1
    done
    return $failed
}

# Two lanes at once, the drivers dealt between them in turn.
lane_one="" lane_two="" k=0
for t in ${FUZZ_ONLY:-pprof perf elf config relabel sd_file otlp json json_pull grpc_frame push jfr http1 k8s rpc_response queue_store cpus}; do
    if [ $((k % 2)) = 0 ]; then lane_one="$lane_one $t"; else lane_two="$lane_two $t"; fi
    k=$((k + 1))
done
fuzz_lane $lane_one > $FUZZ_BUILD/lane-1.log 2>&1 &
one=$!
fuzz_lane $lane_two > $FUZZ_BUILD/lane-2.log 2>&1 &
two=$!
rc=0
wait $one || rc=1
wait $two || rc=1
cat $FUZZ_BUILD/lane-1.log $FUZZ_BUILD/lane-2.log
exit $rc
