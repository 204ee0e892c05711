# An Open-NLLB data build: line-parallel text in several languages to
# fairseq datasets laid out as Open-NLLB lays them out, then the batches
# fairseq-train would make of them.
#
#   make -f scripts/builds/nllb.mk -j2 OUT=DIR TEXT=dir PAIRS='a-b a-c c-b'
#
# Inputs:
#   TEXT        a directory of line-parallel files LANG.txt (or .txt.xz,
#               .txt.gz, or just LANG): line i of every file is the same
#               sentence (default ../shared/corpus/multi/bible-nt)
#   PAIRS       the directions SRC-TGT, languages named as their files
#               (default uk-eu uk-lv zu-uk gu-lv; with FLORES-200 files,
#               for instance eng_Latn-fra_Latn eng_Latn-zho_Hans)
#   SHARDS      data shards (default 2): line i goes to shard i mod SHARDS,
#               in every language alike
#   VOCAB_SIZE  target size of the subword vocabulary shared by all
#               languages (default 8192), in place of Open-NLLB's shared
#               SentencePiece model; VOCAB=file uses a vocabulary made
#               before instead, and DICT=file a fairseq dictionary made
#               before (Open-NLLB's fixed dictionary), so that a change to
#               one language rebuilds only what reads it
#   TEMPERATURE, MAX_TOKENS, EPOCHS, SEED
#               batch-sample's --sampling-temperature (1.5),
#               --max-tokens (4096), --epochs (SHARDS: each shard once),
#               --seed (1)
#
# Products:
#   vocab.subwords         the shared subword vocabulary (subword-build)
#   data_bin/dict.txt      the fairseq dictionary of the pieces of every
#                          language (mmap-index dict, as fairseq-preprocess
#                          --joined-dictionary builds it), then __LANG__ 1
#                          for each language, in sorted order, where
#                          fairseq's multilingual task adds them (so ids
#                          are the same whether the trainer adds them or
#                          finds them)
#   data_bin/shardNNN/train.SRC-TGT.LANG.{bin,idx}
#                          both sides of every direction in every shard:
#                          the pieces (subword-encode --output-format
#                          piece) binarized with the dictionary (mmap-index
#                          build --input-format text, fairseq-preprocess
#                          --srcdict), </s> ending every sentence
#   batches.jsonl, batches.stats
#                          batch-sample batches over the shards:
#                          --lang-pairs PAIRS, temperature sampling,
#                          --encoder-langtok src --decoder-langtok, epoch e
#                          reading shard (e - 1) mod SHARDS; the batches as
#                          JSON lines and --stats (text) per epoch
#
# Stages: text once, count parts, vocab once, pieces parts, dict once,
# bin parts, data once.  Parts cut every text file (--part K/N), count
# and encode it and binarize their own pieces; the data stage merges the
# parts (mmap-index merge).  Every product is byte-identical to `all`'s
# for any N (the counts take whole files: -b 1e12).
#
# Not done: a valid split (Open-NLLB's valid.SRC-TGT.LANG in shard000),
# SentencePiece (the subwords are tensor2tensor's, made into fairseq
# words by their pieces' spaces), and Open-NLLB's filtering steps.

RECIPE := $(abspath $(lastword $(MAKEFILE_LIST)))
TOP := $(abspath $(dir $(RECIPE))../..)
SHARED := $(abspath $(TOP)/../shared)

OUT ?= build/nllb
BIN ?= $(if $(wildcard $(TOP)/build/bin/mmap-index),$(TOP)/build/bin,)
TEXT ?= $(SHARED)/corpus/multi/bible-nt
PAIRS ?= uk-eu uk-lv zu-uk gu-lv
SHARDS ?= 2
VOCAB_SIZE ?= 8192
VOCAB ?=
DICT ?=
TEMPERATURE ?= 1.5
MAX_TOKENS ?= 4096
EPOCHS ?= $(SHARDS)
SEED ?= 1
N ?= 1
K ?= 0

tool = $(if $(BIN),$(BIN)/$(1),$(1))
SUBWORD_BUILD := $(call tool,subword-build)
SUBWORD_ENCODE := $(call tool,subword-encode)
MMAP_INDEX := $(call tool,mmap-index)
BATCH_SAMPLE := $(call tool,batch-sample)

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
.DELETE_ON_ERROR:

empty :=
space := $(empty) $(empty)
comma := ,
src = $(word 1,$(subst -, ,$(1)))
tgt = $(word 2,$(subst -, ,$(1)))
LANGS := $(sort $(foreach p,$(PAIRS),$(call src,$(p)) $(call tgt,$(p))))
SHARD_IDS := $(shell seq -f '%03g' 0 $$(($(SHARDS) - 1)))
input = $(firstword $(wildcard $(addprefix $(TEXT)/$(1),.txt .txt.xz .txt.gz)) $(TEXT)/$(1))
unpack = case '$(1)' in *.xz) xz -dc '$(1)';; *.gz) gzip -dc '$(1)';; *) cat '$(1)';; esac

TXT := $(foreach l,$(LANGS),$(OUT)/text/$(l).txt)
SHARD_TXT = $(foreach s,$(SHARD_IDS),$(OUT)/text/$(1).s$(s).txt)
VOCAB_FILE := $(if $(VOCAB),$(VOCAB),$(OUT)/vocab.subwords)
DICT_FILE := $(OUT)/data_bin/dict.txt
DATA := $(foreach s,$(SHARD_IDS),$(foreach p,$(PAIRS),$(foreach l,$(call src,$(p)) $(call tgt,$(p)),\
	$(OUT)/data_bin/shard$(s)/train.$(p).$(l))))
BATCHES := $(OUT)/batches.jsonl $(OUT)/batches.stats
PRODUCTS := $(if $(VOCAB),,$(VOCAB_FILE)) $(DICT_FILE) $(addsuffix .bin,$(DATA)) \
	$(addsuffix .idx,$(DATA)) $(BATCHES)

KS := $(shell seq 0 $$(($(N) - 1)))
PART := $(if $(filter 1,$(N)),,--part $(K)/$(N))
PIECES_K := $(foreach l,$(LANGS),$(foreach s,$(SHARD_IDS),$(OUT)/parts/$(l).s$(s).$(K)-of-$(N).pieces))

STAGE_GOALS := text count vocab pieces dict bin data
STAGED := $(filter $(STAGE_GOALS),$(MAKECMDGOALS))

.PHONY: all stages products $(STAGE_GOALS)
all: $(PRODUCTS)

stages:
	@printf '%s\n' 'text once' 'count parts' 'vocab once' 'pieces parts' \
	    'dict once' 'bin parts' 'data once'

products:
	@printf '%s\n' $(patsubst $(OUT)/%,%,$(PRODUCTS))

$(OUT)/text $(OUT)/parts $(OUT)/data_bin $(addprefix $(OUT)/data_bin/shard,$(SHARD_IDS)):
	mkdir -p $@

# Each language, decompressed, and dealt line by line into the shards.
define lang_rule
$(OUT)/text/$(1).txt: $(call input,$(1)) | $(OUT)/text
	$$(call unpack,$$<) >'$$@.tmp' && mv '$$@.tmp' '$$@'
$(call SHARD_TXT,$(1)) &: $(OUT)/text/$(1).txt
	awk -v n=$(SHARDS) -v p='$(OUT)/text/$(1).s' \
	    '{ print > (p sprintf("%03d", (NR - 1) % n) ".txt.tmp") }' '$$<'
	for s in $(SHARD_IDS); do f='$(OUT)/text/$(1).s'$$$$s.txt; \
	    touch "$$$$f.tmp" && mv "$$$$f.tmp" "$$$$f" || exit 1; done
endef
$(foreach l,$(LANGS),$(eval $(call lang_rule,$(l))))

# The dictionary of all pieces, and the language tokens after it.
LANGTOKS := printf '__%s__ 1\n' $(LANGS)
ifneq ($(DICT),)
$(DICT_FILE): $(DICT) | $(OUT)/data_bin
	{ cat '$<'; $(LANGTOKS); } >'$@.tmp' && mv '$@.tmp' '$@'
endif
dict_from = $(MMAP_INDEX) dict -q -o '$@.words' $(1) && \
	{ cat '$@.words'; $(LANGTOKS); } >'$@.tmp' && rm '$@.words' && mv '$@.tmp' '$@'
VOCAB_FLAGS := -q -t $(VOCAB_SIZE) -L 200

ifeq ($(STAGED),)
# One process per file (make -j runs them side by side).
ifeq ($(VOCAB),)
$(VOCAB_FILE): $(TXT)
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) -b 1e12 -o '$@' $^
endif
$(OUT)/text/%.pieces: $(OUT)/text/%.txt $(VOCAB_FILE)
	$(SUBWORD_ENCODE) -q -v '$(VOCAB_FILE)' --output-format piece -o '$@' '$<'
PIECES := $(foreach l,$(LANGS),$(foreach s,$(SHARD_IDS),$(OUT)/text/$(l).s$(s).pieces))
ifeq ($(DICT),)
$(DICT_FILE): $(PIECES) | $(OUT)/data_bin
	$(call dict_from,$^)
endif
define data_rule
$(OUT)/data_bin/shard$(1)/train.$(2).$(3).idx: $(OUT)/text/$(3).s$(1).pieces $(DICT_FILE) | $(OUT)/data_bin/shard$(1)
	$(MMAP_INDEX) build -q --input-format text --dict '$(DICT_FILE)' \
	    -o '$(OUT)/data_bin/shard$(1)/train.$(2).$(3)' '$$<'
endef
else
# Stages.
text: $(foreach l,$(LANGS),$(call SHARD_TXT,$(l))) $(TXT)
count: $(OUT)/parts/count.$(K)-of-$(N)
vocab: $(VOCAB_FILE)
pieces: $(PIECES_K)
dict: $(DICT_FILE)
bin: $(PIECES_K:.pieces=.idx)
data: $(addsuffix .idx,$(DATA)) $(BATCHES)

$(OUT)/parts/count.$(K)-of-$(N): $(TXT) | $(OUT)/parts
	$(SUBWORD_BUILD) -q --count-only -b 1e12 $(PART) -o '$@' $^
ifeq ($(VOCAB),)
$(VOCAB_FILE): $(foreach k,$(KS),$(OUT)/parts/count.$(k)-of-$(N))
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) --from-counts -o '$@' $^
endif
$(OUT)/parts/%.$(K)-of-$(N).pieces: $(OUT)/text/%.txt $(VOCAB_FILE) | $(OUT)/parts
	$(SUBWORD_ENCODE) -q -v '$(VOCAB_FILE)' --output-format piece $(PART) -o '$@' '$<'
ifeq ($(DICT),)
$(DICT_FILE): $(foreach k,$(KS),$(foreach l,$(LANGS),$(foreach s,$(SHARD_IDS),\
	$(OUT)/parts/$(l).s$(s).$(k)-of-$(N).pieces))) | $(OUT)/data_bin
	$(call dict_from,$^)
endif
$(OUT)/parts/%.$(K)-of-$(N).idx: $(OUT)/parts/%.$(K)-of-$(N).pieces $(DICT_FILE)
	$(MMAP_INDEX) build -q --input-format text --dict '$(DICT_FILE)' -o '$(@:.idx=)' '$<'
define data_rule
$(OUT)/data_bin/shard$(1)/train.$(2).$(3).idx: $(foreach k,$(KS),$(OUT)/parts/$(3).s$(1).$(k)-of-$(N).idx) | $(OUT)/data_bin/shard$(1)
	$(MMAP_INDEX) merge -q -o '$(OUT)/data_bin/shard$(1)/train.$(2).$(3)' $$^
endef
endif
$(foreach s,$(SHARD_IDS),$(foreach p,$(PAIRS),$(foreach l,$(call src,$(p)) $(call tgt,$(p)),\
	$(eval $(call data_rule,$(s),$(p),$(l))))))
# The .bin is written with its .idx (the .idx last).
$(addsuffix .bin,$(DATA)): %.bin: %.idx

# Batches of every epoch over the shards, with their statistics.
$(BATCHES) &: $(addsuffix .idx,$(DATA)) $(DICT_FILE)
	$(BATCH_SAMPLE) batches -q --lang-pairs $(subst $(space),$(comma),$(strip $(PAIRS))) \
	    --sampling-method temperature --sampling-temperature $(TEMPERATURE) \
	    --encoder-langtok src --decoder-langtok --dict '$(DICT_FILE)' \
	    --max-tokens $(MAX_TOKENS) --epochs $(EPOCHS) -s $(SEED) --stats \
	    -o '$(OUT)/batches.jsonl.tmp' \
	    $(subst $(space),:,$(strip $(addprefix $(OUT)/data_bin/shard,$(SHARD_IDS)))) \
	    2>'$(OUT)/batches.stats.tmp'
	mv '$(OUT)/batches.stats.tmp' '$(OUT)/batches.stats'
	mv '$(OUT)/batches.jsonl.tmp' '$(OUT)/batches.jsonl'
