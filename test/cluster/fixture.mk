# A small recipe for the cluster check (test/cluster/run), following the
# recipe contract (README, "Build recipes"): a subword vocabulary and
# shuffled TFRecord shards from one text file.
#
#   make -f test/cluster/fixture.mk [TARGET] OUT=DIR TEXT=file [BIN=DIR]
#
# Inputs:
#   TEXT        UTF-8 text, one sentence a line (required)
#   VOCAB_SIZE  target vocabulary size (default 300)
#   SHARDS      output shards (default 2)
#   FAIL_PART   make part K of the count stage fail (for the failure test)
#   SLEEP       seconds each part of the count stage sleeps first (for the
#               interruption test)
#
# Stages: count parts (2 CPUs a task), vocab once (1G), encode parts,
# shards once.  Part K of N
# takes the K-th of N runs of consecutive lines, so the parts' records,
# in order, are the records of the whole file.

HERE       := $(dir $(lastword $(MAKEFILE_LIST)))
OUT        ?= build/fixture
BIN        ?= $(or $(wildcard $(abspath $(HERE)../../build/bin)),$(dir $(shell command -v tfr-cat)))
TEXT       ?= $(error TEXT= is required)
VOCAB_SIZE ?= 300
SHARDS     ?= 2
FAIL_PART  ?=
SLEEP      ?=
N          ?= 1
K          ?= 0

SHARD_FILES := $(foreach i,$(shell seq 0 $$(($(SHARDS) - 1))),$(shell printf 'train-%05d-of-%05d' $(i) $(SHARDS)))
PARTS       := $(shell seq 0 $$(($(N) - 1)))
P           := $(OUT)/parts

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all stages products count vocab encode shards

all: $(addprefix $(OUT)/,vocab $(SHARD_FILES))

stages:
	@echo count parts cpus=2
	@echo vocab once mem=1G
	@echo encode parts
	@echo shards once

products:
	@printf '%s\n' vocab $(SHARD_FILES)

# the one-process build
$(OUT)/vocab: $(TEXT)
	@mkdir -p $(@D)
	$(BIN)/subword-build -q -b 1e12 -t $(VOCAB_SIZE) -o $@ $(TEXT)

$(OUT)/all.tfrecord: $(TEXT) $(OUT)/vocab
	$(BIN)/subword-encode -q --eos -v $(OUT)/vocab -o $@ $(TEXT)

$(addprefix $(OUT)/,$(SHARD_FILES)) &: $(OUT)/all.tfrecord
	$(BIN)/tfr-cat -q --split $(SHARDS) --shuffle -s 7 -o '$(OUT)/train-%05d-of-%05d' $<

# the stages
count: $(P)/counts-$(K)-of-$(N).txt
vocab: $(P)/vocab-of-$(N)
encode: $(P)/enc-$(K)-of-$(N).tfrecord
shards: $(P)/shards-of-$(N).done

$(P)/text-%-of-$(N).txt: $(TEXT)
	@mkdir -p $(@D)
	awk -v k=$* -v n=$(N) 'NR == FNR { c++; next } FNR > int(c * k / n) && FNR <= int(c * (k + 1) / n)' $< $< >$@.tmp
	mv $@.tmp $@

$(P)/counts-%-of-$(N).txt: $(P)/text-%-of-$(N).txt
	$(if $(SLEEP),sleep $(SLEEP))
	$(if $(filter $*,$(FAIL_PART)),@echo "fixture: part $* fails as FAIL_PART=$(FAIL_PART) asks" >&2; exit 3)
	$(BIN)/subword-build -q --count-only -b 1e12 -o $@ $<

# the vocabulary goes to OUT/vocab, a product; the stamp under parts/
# says which N made it
$(P)/vocab-of-$(N): $(foreach k,$(PARTS),$(P)/counts-$(k)-of-$(N).txt)
	$(BIN)/subword-build -q --from-counts -t $(VOCAB_SIZE) -o $(OUT)/vocab $^
	touch $@

$(P)/enc-%-of-$(N).tfrecord: $(P)/text-%-of-$(N).txt $(P)/vocab-of-$(N)
	$(BIN)/subword-encode -q --eos -v $(OUT)/vocab -o $@ $<

$(P)/shards-of-$(N).done: $(foreach k,$(PARTS),$(P)/enc-$(k)-of-$(N).tfrecord)
	$(BIN)/tfr-cat -q --split $(SHARDS) --shuffle -s 7 -o '$(OUT)/train-%05d-of-%05d' $^
	touch $@
