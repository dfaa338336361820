# memopt — the one build entry.
#   make            build libmemopt.a, libmemopt.so and the memopt binary in $(BUILD)
#   make run        start the server with the web UI on 127.0.0.1:8080
#   make test       install missing Debian packages (as root) and run every test
#   make check      the same tests under ASan+UBSan (build in $(BUILD)-san), then the unit
#                   tests, fuzz replays, golden and hostile suites under clang's UBSan with
#                   its integer checks (build in $(BUILD)-ubsan)
#   make bench      benchmarks with ratios against baselines measured in the same run
#   make accuracy   the estimator against PyTorch autograd (needs Debian's python3-torch)
#   make install    PREFIX=/usr/local DESTDIR= (make uninstall with the same)
.DELETE_ON_ERROR:
.SUFFIXES:

BUILD      ?= build
PREFIX     ?= /usr/local
PKG_CONFIG ?= pkg-config
CC         ?= cc
CLANG      ?= clang
CFLAGS     ?= -O2 -g
WERROR     ?= 1
SAN        ?=
HOST       ?= 127.0.0.1
PORT       ?= 8080

SONAME_MAJOR := 0
VERSION      := 0.1.0

PKGS      := yaml-0.1 libpcre2-8 jansson
SRV_PKGS  := libmicrohttpd zlib
BUILD_PKGS  := build-essential pkg-config libyaml-dev libpcre2-dev libjansson-dev \
               libmicrohttpd-dev zlib1g-dev
DEBIAN_PKGS := $(BUILD_PKGS) libcmocka-dev python3 python3-yaml curl wrk \
               chromium nodejs npm clang libclang-rt-dev

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) $(SRV_PKGS) 2>/dev/null)
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
SRV_LIBS   := $(shell $(PKG_CONFIG) --libs $(SRV_PKGS) 2>/dev/null)
CMOCKA_LIBS:= $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null || echo -lcmocka)

WARN := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wvla -Wno-format-nonliteral -fno-common
ifeq ($(WERROR),1)
WARN += -Werror
endif
# SAN=ubsan (with CC=clang): clang's UBSan with the checks GCC lacks, for a
# wrong number from overflow; any finding stops the test (no recover).
#   float-cast-overflow        a double -> integer conversion out of range
#   float-divide-by-zero       an inf or NaN figure from a zero divisor
#   unsigned-integer-overflow  a size, count or offset that wraps
#   unsigned-shift-base        bits shifted out of an unsigned value (n << 20)
#   implicit-conversion        an implicit conversion that changes the value
#                              (truncation to a narrower type, sign change)
# signed overflow, shifts, bounds and division by zero are in `undefined`.
# Wrapping on purpose (hashes) is marked MO_WRAPS (core/src/util/util.h).
# The libraries (libyaml, PCRE2, jansson, libmicrohttpd) are not instrumented.
UBSAN_CHECKS := undefined,float-cast-overflow,float-divide-by-zero,unsigned-integer-overflow,$\
                unsigned-shift-base,implicit-conversion
ifeq ($(SAN),ubsan)
SANFLAGS := -fsanitize=$(UBSAN_CHECKS) -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifneq ($(SAN),)
# float-cast-overflow: an out-of-range double -> integer conversion (a byte
# figure) is undefined and not part of -fsanitize=undefined in GCC
SANFLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
            -fno-sanitize-recover=all
endif

BASE_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SANFLAGS) -fPIC -fvisibility=hidden \
               -Icore/include $(PKG_CFLAGS) -MMD -MP
# The core sees its subsystem folders (core/src/<folder>/<folder>.h); the faces
# (api, server, cli, bench, fuzz harnesses) see the public header only, and
# tools/include_graph.sh checks that they include nothing else of the core.
# Unit tests test modules from the inside and see both.
CORE_CFLAGS := $(BASE_CFLAGS) -Icore/src
ALL_CFLAGS  := $(BASE_CFLAGS) -Iapi -Iserver
UNIT_CFLAGS := $(ALL_CFLAGS) -Icore/src -Itests
LDFLAGS_ALL := $(SANFLAGS) $(LDFLAGS)

CORE_SRC   := $(sort $(wildcard core/src/*/*.c))
API_SRC    := $(sort $(wildcard api/*.c))
SERVER_SRC := $(sort $(wildcard server/*.c))
CLI_SRC    := $(sort $(wildcard cli/*.c))
UNIT_SRC   := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC   := $(sort $(wildcard tests/fuzz/fuzz_*.c))
BENCH_SRC  := $(sort $(wildcard bench/bench_*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

CORE_OBJ   := $(call obj,$(CORE_SRC))
API_OBJ    := $(call obj,$(API_SRC))
SERVER_OBJ := $(call obj,$(SERVER_SRC))
CLI_OBJ    := $(call obj,$(CLI_SRC))
GEN_OBJ    := $(BUILD)/obj/gen/embedded.o

LIB_A   := $(BUILD)/libmemopt.a
LIB_SO  := $(BUILD)/libmemopt.so.$(VERSION)
APP_A   := $(BUILD)/libmemopt_app.a
MEMOPT  := $(BUILD)/memopt
UNIT_BIN  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
FUZZ_BIN  := $(patsubst tests/fuzz/%.c,$(BUILD)/tests/%,$(FUZZ_SRC))
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

# Files embedded into the binary (openapi document, ...): listed in gen/embed.list
EMBED_FILES := $(shell cat tools/embed.list 2>/dev/null)

.PHONY: all run test check bench install uninstall clean deps build-deps format format-check tests-build accuracy
all: $(LIB_A) $(LIB_SO) $(MEMOPT)

$(BUILD)/obj/core/%.o: core/%.c | $(BUILD)/obj
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: %.c | $(BUILD)/obj
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/obj/gen/embedded.c: tools/embed.sh tools/embed.list $(EMBED_FILES)
	@mkdir -p $(dir $@)
	sh tools/embed.sh $(EMBED_FILES) > $@

$(GEN_OBJ): $(BUILD)/obj/gen/embedded.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/obj:
	@mkdir -p $@

$(LIB_A): $(CORE_OBJ)
	rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(CORE_OBJ)
	$(CC) -shared -Wl,-soname,libmemopt.so.$(SONAME_MAJOR) $(LDFLAGS_ALL) -o $@ $^ $(PKG_LIBS) -lm
	ln -sf libmemopt.so.$(VERSION) $(BUILD)/libmemopt.so.$(SONAME_MAJOR)
	ln -sf libmemopt.so.$(SONAME_MAJOR) $(BUILD)/libmemopt.so

# api + server + embedded files, for the binary and the tests
$(APP_A): $(API_OBJ) $(SERVER_OBJ) $(GEN_OBJ)
	rm -f $@ && ar rcs $@ $^

$(MEMOPT): $(CLI_OBJ) $(APP_A) $(LIB_A)
	$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJ) $(APP_A) $(LIB_A) $(PKG_LIBS) $(SRV_LIBS) -lpthread -lm

$(BUILD)/tests/%: tests/unit/%.c $(APP_A) $(LIB_A) | $(BUILD)/obj
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(APP_A) $(LIB_A) $(PKG_LIBS) $(SRV_LIBS) $(CMOCKA_LIBS) $(LDFLAGS_ALL) -lpthread -lm

# fuzz harnesses built with gcc and a replay main (tests/fuzz/replay.c)
$(BUILD)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(APP_A) $(LIB_A) | $(BUILD)/obj
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< tests/fuzz/replay.c $(APP_A) $(LIB_A) $(PKG_LIBS) $(SRV_LIBS) $(LDFLAGS_ALL) -lpthread -lm

$(BUILD)/bench/%: bench/%.c $(APP_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(APP_A) $(LIB_A) $(PKG_LIBS) $(SRV_LIBS) $(LDFLAGS_ALL) -lpthread -lm

tests-build: all $(UNIT_BIN) $(FUZZ_BIN)

# Installs what a fresh Debian machine lacks (only when root and only what is missing;
# a command of the package's name counts, e.g. npm bundled with another nodejs).
# Installs the Debian packages of $(1) that are missing (only when root; a
# package also counts as present when a command of its name exists).
install_missing = @missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || \
	    command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing Debian packages:$$missing (run as root or install them)"; exit 1; fi; \
	fi

# what the tests need / what building and serving need
deps:
	$(call install_missing,$(DEBIAN_PKGS))

build-deps:
	$(call install_missing,$(BUILD_PKGS))

test: deps
	$(MAKE) tests-build
	BUILD=$(BUILD) sh tests/run.sh

# The clang build runs the suites that drive sizes and counts to their limits
# (golden, hostile, hostile_work) besides the units and the fuzz replays.
UBSAN_SUITES := golden hostile hostile_work

check: deps
	$(MAKE) BUILD=$(BUILD)-san SAN=1 CFLAGS="-O1 -g" tests-build
	BUILD=$(BUILD)-san sh tools/include_graph.sh
	BUILD=$(BUILD)-san SAN=1 \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	sh tests/run.sh
	$(MAKE) BUILD=$(BUILD)-ubsan SAN=ubsan CC=$(CLANG) CFLAGS="-O1 -g" tests-build
	BUILD=$(BUILD)-ubsan SAN=ubsan SUITES="$(UBSAN_SUITES)" \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	sh tests/run.sh

run: build-deps
	$(MAKE) all
	$(MEMOPT) serve --host $(HOST) --port $(PORT) --web-root web

# Not part of `make test`: torch is a large download (Debian python3-torch).
accuracy: all
	/usr/bin/python3 tests/accuracy/accuracy.py --memopt $(MEMOPT)

bench: all $(BENCH_BIN)
	BUILD=$(BUILD) sh bench/run.sh

# ---- install (PREFIX, DESTDIR; DESTDIR is only ever given on the command line) ----
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
WEBDIR     := $(DATADIR)/memopt/web
MAN1       := $(sort $(wildcard man/*.1))
# memopt.pc names its directories relative to ${prefix} when they are under it
pc_rel      = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
WEB_FILES  := $(shell find web -type f ! -name '.*' 2>/dev/null | LC_ALL=C sort)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/memopt \
	           $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(WEBDIR)
	install -m 0755 $(MEMOPT) $(DESTDIR)$(BINDIR)/memopt
	install -m 0644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libmemopt.a
	install -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libmemopt.so.$(VERSION)
	ln -sf libmemopt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmemopt.so.$(SONAME_MAJOR)
	ln -sf libmemopt.so.$(SONAME_MAJOR) $(DESTDIR)$(LIBDIR)/libmemopt.so
	install -m 0644 core/include/memopt/*.h $(DESTDIR)$(INCLUDEDIR)/memopt/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_rel,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(call pc_rel,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
	    core/memopt.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/memopt.pc
	chmod 0644 $(DESTDIR)$(LIBDIR)/pkgconfig/memopt.pc
	$(if $(MAN1),install -m 0644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/)
	install -D -m 0644 api/accuracy.tsv $(DESTDIR)$(DATADIR)/memopt/accuracy.tsv
	for f in $(WEB_FILES); do \
	  install -D -m 0644 "$$f" "$(DESTDIR)$(WEBDIR)/$${f#web/}" || exit 1; \
	done

# Removes exactly what install put there, and the directories that are ours.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/memopt $(DESTDIR)$(LIBDIR)/libmemopt.a \
	      $(DESTDIR)$(LIBDIR)/libmemopt.so $(DESTDIR)$(LIBDIR)/libmemopt.so.$(SONAME_MAJOR) \
	      $(DESTDIR)$(LIBDIR)/libmemopt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/pkgconfig/memopt.pc \
	      $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1)))
	rm -rf $(DESTDIR)$(INCLUDEDIR)/memopt $(DESTDIR)$(DATADIR)/memopt

format:
	clang-format -i $(CORE_SRC) $(API_SRC) $(SERVER_SRC) $(CLI_SRC) core/include/memopt/*.h core/src/*/*.h

clean:
	rm -rf $(BUILD) $(BUILD)-san $(BUILD)-ubsan

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
