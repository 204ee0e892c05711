# recpipe: one flat Makefile.  The user owns CC, CFLAGS, CPPFLAGS,
# LDFLAGS, PREFIX and DESTDIR; everything we need is added beside them.

# The version is lib/version.h's, the one the library reports.
VERSION   != sed -n 's/^\#define RECPIPE_VERSION[[:space:]]*"\(.*\)"/\1/p' lib/version.h
SOVERSION  = 0

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
PKG_CONFIG ?= pkg-config
CFLAGS     ?= -O2 -g
FUZZ_CC    ?= clang
# Build directory: the default build and the sanitizer build live apart.
O          ?= build

DEPS        = zlib jansson libsodium
DEPS_CFLAGS != $(PKG_CONFIG) --cflags $(DEPS) 2>/dev/null
DEPS_LIBS   != $(PKG_CONFIG) --libs $(DEPS) 2>/dev/null || echo -lz -ljansson -lsodium

WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wwrite-strings -Wformat=2 -Wvla -Wpointer-arith -Wno-format-nonliteral
ifdef DEVELOPER
WARN += -Werror
endif
ifdef SANITIZE
SAN = -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
endif

ALL_CPPFLAGS = -Ilib -Icmd -D_DEFAULT_SOURCE -D_FILE_OFFSET_BITS=64 $(DEPS_CFLAGS) $(CPPFLAGS)
ALL_CFLAGS   = -std=c11 -fPIC $(WARN) $(SAN) $(CFLAGS)
ALL_LDFLAGS  = $(SAN) $(LDFLAGS)
LIBS         = $(DEPS_LIBS) -lm

LIB_SRC   := $(sort $(wildcard lib/*.c))
LIB_HDR   := $(sort $(wildcard lib/*.h))
# The installed API, as <recpipe/NAME.h>; the other headers of lib/ are
# internal to the library and the tools.
PUBLIC_HDR := $(addprefix lib/,batch.h buf.h crc32c.h example.h exjson.h \
	fairseq_dict.h manifest.h mmidx.h record.h seqio.h subword.h version.h \
	wordpiece.h)
LIB_OBJ   := $(LIB_SRC:%.c=$(O)/%.o)
CMD_SRC   := $(filter-out cmd/common.c,$(sort $(wildcard cmd/*.c)))
TOOLS     := $(CMD_SRC:cmd/%.c=%)
BINS      := $(TOOLS:%=$(O)/bin/%)
UNIT_SRC  := $(sort $(wildcard test/unit/t-*.c))
UNITS     := $(UNIT_SRC:test/unit/%.c=$(O)/test/%)
FUZZ_SRC  := $(sort $(wildcard test/fuzz/fuzz-*.c))
FUZZERS   := $(FUZZ_SRC:test/fuzz/%.c=$(O)/fuzz/%)
MANS      := $(sort $(wildcard man/*.1 man/*.3 man/*.5))
BATS      := $(sort $(wildcard test/*.bats))

STATIC    = $(O)/lib/librecpipe.a
SHARED    = $(O)/lib/librecpipe.so.$(VERSION)

.DELETE_ON_ERROR:
.SECONDARY: $(CMD_SRC:cmd/%.c=$(O)/cmd/%.o) $(O)/cmd/common.o
.PHONY: FORCE all lib unit static check check-build check-cluster check-deps deps demo fuzz fuzz-run bench \
	install uninstall clean manlint symbols test-unit test-bats test-install

all: lib $(BINS)

lib: $(STATIC) $(SHARED) $(O)/recpipe.pc

# Each object depends on the headers it includes, as the compiler lists
# them (-MMD -MP: $(O)/.../x.d, read below); an object without its .d
# (a tree built before) is made again.  The library's symbols are hidden
# but for the declarations of the public headers, each between
# "#pragma GCC visibility push(default)" and "pop": librecpipe.so exports
# the installed API, lib/librecpipe.sym.  The tools and unit tests link
# the archive, where hidden symbols still resolve.
$(O)/lib/%.o: lib/%.c $(O)/lib/%.d
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -fvisibility=hidden -MMD -MP -c -o $@ $<

$(O)/cmd/%.o: cmd/%.c $(O)/cmd/%.d
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

DEPFILES := $(LIB_OBJ:.o=.d) $(CMD_SRC:cmd/%.c=$(O)/cmd/%.d) $(O)/cmd/common.d
$(DEPFILES): ;
-include $(DEPFILES)

$(STATIC): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

$(SHARED): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,librecpipe.so.$(SOVERSION) -o $@ $(LIB_OBJ) $(LIBS)
	ln -sf librecpipe.so.$(VERSION) $(O)/lib/librecpipe.so.$(SOVERSION)
	ln -sf librecpipe.so.$(SOVERSION) $(O)/lib/librecpipe.so

$(O)/recpipe.pc: FORCE
	@mkdir -p $(@D)
	printf '%s\n' 'prefix=$(PREFIX)' \
	  'libdir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))' \
	  'includedir=$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))' '' \
	  'Name: recpipe' 'Description: TFRecord, Example, vocabulary and token dataset library' \
	  'Version: $(VERSION)' 'Requires.private: $(DEPS)' \
	  'Libs: -L$${libdir} -lrecpipe' 'Libs.private: -lm' 'Cflags: -I$${includedir}' >$@

$(O)/bin/%: $(O)/cmd/%.o $(O)/cmd/common.o $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(O)/cmd/common.o $(STATIC) $(LIBS)

$(O)/test/%: test/unit/%.c test/unit/tap.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(ALL_CPPFLAGS) -Itest/unit $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(STATIC) $(LIBS)

unit: $(UNITS)

# The tools linked statically (zlib, jansson, libsodium and the C
# library inside), for machines that have none of them: cluster nodes.
# In $(O)/static/bin; the library itself stays as it is.
static:
	$(MAKE) O=$(O)/static LDFLAGS='$(LDFLAGS) -static' $(TOOLS:%=$(O)/static/bin/%)

# Fuzz targets: libFuzzer through clang, the library compiled once for
# them (instrumented, into $(O)/fuzzlib) and linked into each; a pointer
# kept to a returned function's locals is caught.
FUZZ_FLAGS = -g -O1 -fno-sanitize-recover=all -fsanitize-address-use-after-return=always
FUZZ_OBJ  := $(LIB_SRC:lib/%.c=$(O)/fuzzlib/%.o)

$(O)/fuzzlib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined $(ALL_CPPFLAGS) -c -o $@ $<

$(O)/fuzzlib/librecpipe.a: $(FUZZ_OBJ)
	rm -f $@
	$(AR) rcs $@ $(FUZZ_OBJ)

$(O)/fuzz/%: test/fuzz/%.c $(O)/fuzzlib/librecpipe.a $(LIB_HDR) $(wildcard cmd/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined $(ALL_CPPFLAGS) \
	  -o $@ $< $(O)/fuzzlib/librecpipe.a $(LIBS)

fuzz: $(FUZZERS)

# Every fuzz target from its seeds in turn, SECONDS each (30 by default);
# the corpus grows in $(O)/fuzz-corpus.  Fails when a target finds a crash.
fuzz-run: all fuzz
	test/fuzz/run-all $(O) $(if $(SECONDS),$(SECONDS),30)

# Dependencies: install what is missing (as root), or say what to run.
deps:
	@scripts/install-deps --if-missing

check-deps:
	@scripts/install-deps --check

test-unit: unit
	@for t in $(UNITS); do echo "# $$t"; $$t || exit 1; done

# The suites run make themselves (the recipes, the build engines): they
# get the environment of a shell, not this make's MAKEFLAGS (whose -w
# would add "Entering directory" lines to what they read).
test-bats: all
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL RECPIPE_BIN=$(CURDIR)/$(O)/bin bats $(BATS)

# Install into a scratch DESTDIR and build programs against it as a user
# of the library would: a C++ one through pkg-config, and the worked
# example of librecpipe(3); the installed library must export exactly
# the names of lib/librecpipe.sym.
test-install: all
	scripts/test-install $(O)

# Write lib/librecpipe.sym again from the library just built, after a
# deliberate change to the public API; commit it with the change.
symbols: lib
	scripts/test-install -u $(O)

manlint:
	@scripts/manlint $(MANS)

check-build:
	$(MAKE) DEVELOPER=1 all unit

# The full suite: warnings as errors, unit tests, bats (including the
# ../shared/vectors suites when present), man lint; then the same tests
# built with AddressSanitizer and UndefinedBehaviorSanitizer, which also
# catches a pointer to a returned function's locals (as the fuzz targets
# do, compiled in).
check: deps
	$(MAKE) DEVELOPER=1 test-unit test-bats test-install
	$(MAKE) manlint
	$(MAKE) DEVELOPER=1 static
	scripts/test-static $(O)/static/bin
	ASAN_OPTIONS=detect_stack_use_after_return=1$(if $(ASAN_OPTIONS),:$(ASAN_OPTIONS)) \
	  $(MAKE) DEVELOPER=1 O=$(O)/san SANITIZE=address,undefined CFLAGS='-O1 -g' test-unit test-bats
	@echo "check: all passed"

# The build engines on a throwaway single-node Slurm cluster on localhost
# and with GNU parallel: products of every recipe run in N parts must be
# byte-identical to its one-process run.  Needs root and the packages of
# scripts/install-deps --cluster; says what is missing and fails without.
# Leaves no daemon, file or job behind.  .ci/run runs it after check.
check-cluster: all
	test/cluster/run

demo: deps
	$(MAKE) all
	scripts/demo $(O)/bin

# Every scripts/bench-* against its peer: one table, and $(O)/bench.json
# (compared with the previous run's).  QUICK=1: smaller data.
bench: all
	scripts/bench $(if $(filter 1,$(QUICK)),-q) $(O)/bin

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/recpipe \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5 \
	  $(DESTDIR)$(PKGCONFIGDIR)
	cp -f $(BINS) $(DESTDIR)$(BINDIR)/
	cp -f $(STATIC) $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf librecpipe.so.$(VERSION) $(DESTDIR)$(LIBDIR)/librecpipe.so.$(SOVERSION)
	ln -sf librecpipe.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/librecpipe.so
	cp -f $(PUBLIC_HDR) $(DESTDIR)$(INCLUDEDIR)/recpipe/
	cp -f $(O)/recpipe.pc $(DESTDIR)$(PKGCONFIGDIR)/
	for m in $(MANS); do cp -f $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/; done

uninstall:
	rm -f $(TOOLS:%=$(DESTDIR)$(BINDIR)/%)
	rm -f $(DESTDIR)$(LIBDIR)/librecpipe.a $(DESTDIR)$(LIBDIR)/librecpipe.so*
	rm -rf $(DESTDIR)$(INCLUDEDIR)/recpipe
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/recpipe.pc
	for m in $(MANS); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m#man/}; done

clean:
	rm -rf $(O)

FORCE:
