# SPDX-License-Identifier: Apache-2.0
# profd build. `make run` and `make test` install what is missing first.

BUILD    ?= build
CC       ?= gcc
VERSION  ?= 0.1.0
PREFIX   ?= /usr/local
WERROR   ?= -Werror
SANITIZE ?=

PKGS     := yaml-0.1 libevent libevent_openssl libdeflate jansson libprotobuf-c libpcre2-8 libssl libcrypto \
            libnghttp2 libzstd libisal liburing
OPT      ?= -O2 -g
# Asked of pkg-config when a recipe first needs them, once `deps` has
# installed the packages (a fresh machine has none when make starts).
PKG_CFLAGS = $(eval PKG_CFLAGS := $$(shell pkg-config --cflags $$(PKGS) 2>/dev/null))$(PKG_CFLAGS)
PKG_LIBS = $(eval PKG_LIBS := $$(shell pkg-config --libs $$(PKGS) 2>/dev/null))$(PKG_LIBS)
CFLAGS   = $(OPT) -std=gnu11 -fno-omit-frame-pointer -Wall -Wextra -Wno-missing-field-initializers \
            $(WERROR) -Icore/include -I$(BUILD)/proto -MMD -MP -D_GNU_SOURCE -DPROFD_VERSION='"$(VERSION)"' \
            $(SANITIZE) $(PKG_CFLAGS)
LDLIBS   = $(PKG_LIBS) -lpthread -ldl -lm
# The executable's allocator: jemalloc (see "Allocator" in the README's
# design section), linked in statically, so that no C++ runtime comes with
# it, with the functions the libraries and modules may call exported too.
# Sanitizer builds keep glibc's, which the sanitizers replace.
JEMALLOC_EXPORTS := memalign valloc mallctl
ALLOC_LIBS := $(if $(SANITIZE),,-l:libjemalloc_pic.a -lm -lpthread -ldl \
    $(foreach f,$(JEMALLOC_EXPORTS),-Wl,--export-dynamic-symbol=$(f)))
# -z defs proves a module uses no daemon symbol; sanitizer runtimes live in
# the executable, so sanitized modules are linked without it.
MODFLAGS := -fPIC -fvisibility=hidden -shared $(if $(SANITIZE),,-Wl,-z,defs)

CORE_SRC := $(wildcard core/*.c config/*.c) lib/grpc_frame.c lib/utf8_valid.c lib/json_pull.c \
    lib/file_io.c lib/cpus.c lib/cgroup_dir.c
CORE_LIB_SRC := $(filter-out core/main.c,$(CORE_SRC))
CORE_OBJ := $(CORE_LIB_SRC:%.c=$(BUILD)/obj/%.o)
CORE_LIB := $(BUILD)/libprofdcore.a

# Modules: one folder, one .so. Extra libraries a module needs: <kind>_<type>_LIBS.
MODULE_DIRS := $(wildcard receivers/* processors/* exporters/*)
module_name  = $(patsubst %s,%,$(word 1,$(subst /, ,$(1))))_$(word 2,$(subst /, ,$(1)))
MODULES := $(foreach d,$(MODULE_DIRS),$(BUILD)/modules/$(call module_name,$(d)).so)
receiver_pprof_file_LIBS := -lpcre2-8 -levent
receiver_pprof_scrape_LIBS := -lcurl -levent -ljansson -lyaml
receiver_perf_data_LIBS := -lzstd -ldw -lelf -levent
# Sources from lib/ a module compiles in: <kind>_<type>_SRCS.
receiver_pprof_scrape_SRCS := lib/instant_timers.c lib/client_tls.c lib/file_io.c lib/grow.c lib/http_client.c lib/k8s_api.c \
    lib/oauth2_shared.c \
    lib/k8s_kubeconfig.c lib/k8s_exec.c core/base64.c lib/k8s_pods.c lib/k8s_network.c \
    lib/k8s_watch.c lib/label_valid.c lib/utf8_valid.c lib/key_map.c lib/json_pull.c \
    lib/client_auth.c lib/client_proxy.c lib/client_credentials.c lib/oauth2_token.c lib/http_headers.c
receiver_perf_data_SRCS := lib/binary_lookup.c lib/own_vdso.c lib/file_io.c lib/grow.c lib/aside_scan.c \
    lib/memory_release.c
processor_symbolize_LIBS := -ldw -lelf -lz -lzstd -liberty
processor_symbolize_SRCS := lib/binary_lookup.c lib/own_vdso.c lib/file_io.c lib/grow.c lib/key_map.c \
    lib/cpus.c lib/cgroup_dir.c
exporter_pprof_file_SRCS := lib/file_io.c
receiver_pprof_file_SRCS := lib/aside_scan.c lib/profile_family.c lib/key_map.c lib/grow.c
exporter_otlp_LIBS := -lcurl -lcrypto
# What the exporters that send through lib/rpc_client.c compile in.
RPC_CLIENT_SRCS := lib/rpc_client.c lib/client_auth.c lib/client_proxy.c lib/client_credentials.c core/base64.c \
    lib/http_headers.c \
    lib/client_tls.c lib/oauth2_token.c lib/json_pull.c lib/utf8_valid.c lib/file_io.c lib/grpc_frame.c lib/grow.c
exporter_otlp_SRCS := $(RPC_CLIENT_SRCS) lib/running_total.c lib/tenant_id.c
exporter_parca_LIBS := -lcurl -lcrypto
exporter_parca_SRCS := $(RPC_CLIENT_SRCS) lib/raw_series.c lib/label_valid.c lib/running_total.c \
    lib/tenant_id.c
receiver_otlp_SRCS := lib/serve.c lib/server_auth.c lib/tenant_id.c
receiver_parca_SRCS := lib/raw_series.c lib/label_valid.c lib/utf8_valid.c lib/grow.c lib/serve.c lib/server_auth.c lib/json_escape.c \
    lib/tenant_id.c
receiver_pyroscope_SRCS := lib/raw_series.c lib/label_valid.c lib/grow.c lib/serve.c lib/server_auth.c \
    lib/tenant_id.c lib/json_escape.c lib/profile_family.c lib/key_map.c lib/json_pull.c lib/utf8_valid.c
exporter_pyroscope_LIBS := -lcurl -lcrypto
receiver_pyroscope_LIBS := -ljansson
processor_downsample_LIBS := -levent
processor_downsample_SRCS := lib/grow.c lib/key_map.c lib/tick.c
processor_memory_limiter_LIBS := -levent
processor_memory_limiter_SRCS := lib/memory_usage.c lib/cgroup_dir.c lib/file_io.c \
    lib/memory_release.c lib/tick.c
processor_k8s_metadata_LIBS := -lcurl -levent -ljansson -lyaml
processor_k8s_metadata_SRCS := lib/grow.c lib/key_map.c lib/client_tls.c lib/file_io.c \
    lib/label_valid.c lib/utf8_valid.c lib/running_total.c lib/k8s_api.c lib/oauth2_shared.c lib/k8s_kubeconfig.c \
    lib/k8s_exec.c core/base64.c lib/k8s_pods.c lib/k8s_network.c lib/k8s_watch.c lib/http_client.c \
    lib/json_pull.c lib/client_auth.c lib/client_proxy.c lib/client_credentials.c lib/oauth2_token.c lib/http_headers.c
exporter_pyroscope_SRCS := $(RPC_CLIENT_SRCS) lib/raw_series.c lib/profile_family.c \
    lib/label_valid.c lib/running_total.c lib/tenant_id.c

PROTO_SRC := $(wildcard proto/*.proto)
PROTO_C   := $(PROTO_SRC:proto/%.proto=$(BUILD)/proto/%.pb-c.c)

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
CONFORMANCE := $(BUILD)/tests/conformance

.SECONDARY:
.PHONY: all deps test-deps run test unit asan tsan fuzz bench docs install clean
TLS_LIB := $(BUILD)/profd-tls.so
all: deps $(BUILD)/profd $(MODULES) $(TLS_LIB)

deps:
	@scripts/deps.sh
test-deps:
	@scripts/deps.sh test

Q := $(if $(V),,@)

$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

# --as-needed: the executable maps only the libraries it calls, not
# OpenSSL, which the TLS library below brings when a server needs it.
$(BUILD)/profd: $(BUILD)/obj/core/main.o $(CORE_LIB)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS) -Wl,--as-needed $^ -o $@ $(ALLOC_LIBS) $(LDLIBS)

# Server TLS (core/tls_server.h), loaded by the executable on first use.
$(TLS_LIB): core/tls/server_openssl.c core/tls_server.h | deps
	@echo "  MODULE  $@"
	$(Q)$(CC) $(CFLAGS) $(MODFLAGS) $< -o $@ -lssl -lcrypto -levent_openssl -levent_core -lc

define module_rule
$(BUILD)/modules/$(call module_name,$(1)).so: $(wildcard $(1)/*.c) $(wildcard $(1)/*.h) $($(call module_name,$(1))_SRCS) $(wildcard lib/*.h) core/include/profd/plugin.h core/include/profd/model.h core/include/profd/options.h | deps
	@mkdir -p $(BUILD)/modules
	@echo "  MODULE  $$@"
	$(Q)$(CC) $(CFLAGS) $(MODFLAGS) $(wildcard $(1)/*.c) $($(call module_name,$(1))_SRCS) -o $$@ $($(call module_name,$(1))_LIBS) -lc
endef
$(foreach d,$(MODULE_DIRS),$(eval $(call module_rule,$(d))))

$(BUILD)/proto/%.pb-c.c $(BUILD)/proto/%.pb-c.h: proto/%.proto | deps
	@mkdir -p $(BUILD)/proto
	protoc-c --proto_path=proto --c_out=$(BUILD)/proto $<

$(BUILD)/obj/proto/%.o: $(BUILD)/proto/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-unused-parameter -c $< -o $@

$(BUILD)/tests/%: tests/unit/%.c tests/unit/check.h tests/unit/smaps.h tests/unit/fake_root.h $(CORE_LIB) $(PROTO_C:$(BUILD)/proto/%.c=$(BUILD)/obj/proto/%.o)
	@mkdir -p $(dir $@)
	@echo "  TEST    $@"
	$(Q)$(CC) $(CFLAGS) -Itests/unit $< $(filter %.o %.a,$^) -o $@ $(LDLIBS)

# Unit tests that compile a module's sources in also link that module's libraries.
$(BUILD)/tests/test_perf_data_parts: LDLIBS += -lzstd
$(BUILD)/tests/test_perf_process: LDLIBS += -ldw -lelf
$(BUILD)/tests/test_symbolize_parts: LDLIBS += -ldw -lelf -lz -lzstd -liberty
$(BUILD)/tests/test_symbol_cache: LDLIBS += -ldw -lelf -lz -lzstd -liberty
$(BUILD)/tests/test_dwp: LDLIBS += -ldw -lelf
$(BUILD)/tests/test_k8s_metadata_parts: LDLIBS += -ljansson
$(BUILD)/tests/test_k8s_pods: LDLIBS += -ljansson
$(BUILD)/tests/test_k8s_sd: LDLIBS += -ljansson -lcurl
$(BUILD)/tests/test_k8s_kubeconfig: LDLIBS += -ljansson
$(BUILD)/tests/test_rpc_client: LDLIBS += -lcurl
$(BUILD)/tests/test_client_tls: LDLIBS += -lcurl
$(BUILD)/tests/test_http_headers: LDLIBS += -lcurl
$(BUILD)/tests/test_oauth2_token: LDLIBS += -lcurl
$(BUILD)/tests/test_client_credentials: LDLIBS += -lcurl
$(BUILD)/tests/test_job_credentials: LDLIBS += -lcurl -levent
$(BUILD)/tests/test_http_discovery: LDLIBS += -lcurl -levent
$(BUILD)/tests/test_memory_release: LDLIBS += $(ALLOC_LIBS)
$(BUILD)/tests/test_huge_arena: LDLIBS += $(ALLOC_LIBS)

$(CONFORMANCE): tests/plugins/conformance.c tests/unit/check.h $(CORE_LIB)
	@mkdir -p $(dir $@)
	@echo "  TEST    $@"
	$(Q)$(CC) $(CFLAGS) -Itests/unit $< $(filter %.a,$^) -o $@ $(LDLIBS)

# The Go scrape target the integration tests start (net/http/pprof, fgprof).
# Its one dependency comes from Debian's Go source packages, built offline.
$(BUILD)/tests/target: tests/integration/target/main.go | test-deps
	@mkdir -p $(dir $@)
	@echo "  GO      $@"
	$(Q)cd tests/integration/target && GO111MODULE=off GOPATH=/usr/share/gocode \
		go build -o $(abspath $@) main.go

# Go's regexp as Prometheus relabels with it, which the relabel unit test
# compares profd's engine with.
$(BUILD)/tests/relabel_go: tests/integration/relabel_go/main.go | test-deps
	@mkdir -p $(dir $@)
	@echo "  GO      $@"
	$(Q)cd tests/integration/relabel_go && GO111MODULE=off go build -o $(abspath $@) main.go

run: all
	$(BUILD)/profd

unit: all $(UNIT_BIN) $(CONFORMANCE) $(BUILD)/tests/target $(BUILD)/tests/relabel_go

test: test-deps unit
	BUILD=$(BUILD) PROFD_SANITIZED=$(PROFD_SANITIZED) tests/run.sh

asan: test-deps
	$(MAKE) test BUILD=build-asan CC=clang SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
		OPT="-O1 -g" PROFD_SANITIZED=1

# ThreadSanitizer, gcc's (clang 14's aborted on a CHECK of its own while
# reporting a race on a file descriptor). A race is an error: profd then
# exits 66, and the tests that stop it check for 0.
tsan: test-deps
	TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp" PROFD_TEST_DEADLINE=60 \
		$(MAKE) test BUILD=build-tsan CC=gcc SANITIZE="-fsanitize=thread" OPT="-O1 -g" \
		PROFD_SANITIZED=1

fuzz: test-deps
	BUILD=$(BUILD) FUZZ_SECONDS=$${FUZZ_SECONDS:-60} FUZZ_SEED=$${FUZZ_SEED:-0} tests/fuzz/run.sh

# The OTLP codec benchmark links the daemon's core and allocator.
$(BUILD)/bench/otlp_codec: bench/otlp_codec.c $(CORE_LIB)
	@mkdir -p $(dir $@)
	@echo "  BENCH   $@"
	$(Q)$(CC) $(CFLAGS) $< $(CORE_LIB) -o $@ $(ALLOC_LIBS) $(LDLIBS)

# The push benchmark's floor: files written the way pprof_file writes them.
$(BUILD)/bench/file_floor: bench/file_floor.c
	@mkdir -p $(dir $@)
	@echo "  BENCH   $@"
	$(Q)$(CC) $(CFLAGS) $< -o $@

bench: test-deps all $(BUILD)/bench/otlp_codec $(BUILD)/bench/file_floor
	BUILD=$(BUILD) bench/run.sh

# docs/options.md, the options reference, from what the modules declare.
docs: all
	/usr/bin/python3 scripts/options_doc.py $(BUILD)/profd

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/profd/modules
	install -m 755 $(BUILD)/profd $(DESTDIR)$(PREFIX)/bin/profd
	install -m 644 $(MODULES) $(DESTDIR)$(PREFIX)/lib/profd/modules/
	install -m 644 $(TLS_LIB) $(DESTDIR)$(PREFIX)/lib/profd/

clean:
	rm -rf build build-asan build-tsan build-fuzz

-include $(shell find $(BUILD)/obj $(BUILD)/modules $(BUILD)/tests -name '*.d' 2>/dev/null)
