# tensor2tensor's translate_enzh_wmt8k generate_data, as a make build.
#
#   make -f scripts/builds/t2t-translate-enzh.mk -j2 OUT=DIR \
#       SRC=train.en TGT=train.zh DEV_SRC=dev.en DEV_TGT=dev.zh
#
# Inputs (line-parallel text, one sentence a line; .xz and .gz are
# decompressed into $(OUT)/text first):
#   SRC, TGT          the training pair, English and Chinese
#                     (default ../shared/corpus/enzh.en.xz and enzh.zh.xz)
#   DEV_SRC, DEV_TGT  the dev pair.  tensor2tensor never cuts dev out of
#                     the training text: it encodes separate files
#                     (newsdev2017), so this build takes a pair too, by
#                     default FLORES-200 devtest eng_Latn / zho_Hans from
#                     ../shared/corpus/multi/flores200-devtest.  To hold
#                     out the end of your training text instead, cut it
#                     off beforehand (head/tail) and pass both pairs.
#   BUDGET            generate_lines_for_vocab's file_byte_budget
#                     (default 1e8, as translate_enzh has it)
#   SEED              seed of the shuffle (default 1).  tensor2tensor
#                     shuffles with Python's unseeded random.shuffle, so
#                     its order differs on every run; this one is the
#                     same on every run and machine for a given SEED.
#
# Products (in $(OUT), the data_dir of t2t-datagen):
#   vocab.translate_enzh_wmt8k.8192.subwords.en, ....zh
#       get_or_generate_vocab(approx_vocab_size=2**13,
#       file_byte_budget=1e8, max_subtoken_length=200) over the training
#       side of each language: subword-build -t 8192 -b 1e8 -L 200.
#   translate_enzh_wmt8k-train-000NN-of-00010, 10 shards
#   translate_enzh_wmt8k-dev-00000-of-00001
#       Examples with int64 features inputs (English ids, then EOS = 1)
#       and targets (Chinese ids, then EOS), one per pair whose two sides
#       are both non-empty once stripped (compile_data drops the others),
#       dealt round-robin into the shards as generate_files() deals them
#       and each shard shuffled as shuffle_dataset() does.
#   The pairs go through subword-encode as "en TAB zh" lines (split at
#   the first tab, as text2text_txt_tab_iterator does), so a tab inside
#   the English side would move the rest of it into targets; a tab in
#   the Chinese side is kept, as in tensor2tensor.
#
# Stages (see `make -s -f ... stages`): text once, count parts, vocab
# once, encode parts, shards once.  Every product is byte-identical to
# `all`'s for any N.  The vocabularies are built from the merged counts
# of the parts when each training file is at most the byte budget (then
# every line is sampled, by parts or whole); a bigger file is sampled by
# tensor2tensor's per-file stride, which parts cannot reproduce, so the
# vocab stage then reads the whole file itself.

RECIPE := $(abspath $(lastword $(MAKEFILE_LIST)))
TOP := $(abspath $(dir $(RECIPE))../..)
CORPUS := $(abspath $(TOP)/../shared/corpus)

OUT ?= build/t2t-translate-enzh
BIN ?= $(if $(wildcard $(TOP)/build/bin/subword-build),$(TOP)/build/bin,)
SRC ?= $(CORPUS)/enzh.en.xz
TGT ?= $(CORPUS)/enzh.zh.xz
DEV_SRC ?= $(CORPUS)/multi/flores200-devtest/eng_Latn.txt.xz
DEV_TGT ?= $(CORPUS)/multi/flores200-devtest/zho_Hans.txt.xz
SEED ?= 1
N ?= 1
K ?= 0

PROBLEM := translate_enzh_wmt8k
VOCAB_SIZE := 8192
BUDGET ?= 100000000
SUBTOKEN := 200
TRAIN_SHARDS := 10

tool = $(if $(BIN),$(BIN)/$(1),$(1))
SUBWORD_BUILD := $(call tool,subword-build)
SUBWORD_ENCODE := $(call tool,subword-encode)
TFR_CAT := $(call tool,tfr-cat)

# A compressed input is decompressed once into $(OUT)/text; plain text is
# read where it is.
packed = $(filter %.xz %.gz,$(1))
text = $(if $(call packed,$(1)),$(OUT)/text/$(2),$(1))
TRAIN_EN := $(call text,$(SRC),train.en)
TRAIN_ZH := $(call text,$(TGT),train.zh)
DEV_EN := $(call text,$(DEV_SRC),dev.en)
DEV_ZH := $(call text,$(DEV_TGT),dev.zh)
unpack = case '$(1)' in *.xz) xz -dc '$(1)';; *.gz) gzip -dc '$(1)';; *) cat '$(1)';; esac >'$(2).tmp' && mv '$(2).tmp' '$(2)'

VOCAB_EN := $(OUT)/vocab.$(PROBLEM).$(VOCAB_SIZE).subwords.en
VOCAB_ZH := $(OUT)/vocab.$(PROBLEM).$(VOCAB_SIZE).subwords.zh
TRAIN := $(foreach i,$(shell seq 0 $$(($(TRAIN_SHARDS) - 1))),$(OUT)/$(PROBLEM)-train-$(shell printf '%05d-of-%05d' $(i) $(TRAIN_SHARDS)))
DEV := $(OUT)/$(PROBLEM)-dev-00000-of-00001
PRODUCTS := $(VOCAB_EN) $(VOCAB_ZH) $(TRAIN) $(DEV)

# Parts of a stage: K of N, and every part of N for the stage after.
PART := $(if $(filter 1,$(N)),,--part $(K)/$(N))
KS := $(shell seq 0 $$(($(N) - 1)))
count_part = $(OUT)/parts/count.$(1).$(2)-of-$(N)
encode_part = $(OUT)/parts/train.$(1)-of-$(N).tfr

STAGE_GOALS := text count vocab encode shards
STAGED := $(filter $(STAGE_GOALS),$(MAKECMDGOALS))

.PHONY: all stages products $(STAGE_GOALS)
.DELETE_ON_ERROR:

all: $(PRODUCTS)

stages:
	@printf '%s\n' 'text once' 'count parts' 'vocab once' 'encode parts' 'shards once'

products:
	@printf '%s\n' $(notdir $(PRODUCTS))

$(OUT) $(OUT)/text $(OUT)/parts $(OUT)/tmp:
	mkdir -p $@

$(OUT)/text/train.en: $(SRC) | $(OUT)/text
	$(call unpack,$<,$@)
$(OUT)/text/train.zh: $(TGT) | $(OUT)/text
	$(call unpack,$<,$@)
$(OUT)/text/dev.en: $(DEV_SRC) | $(OUT)/text
	$(call unpack,$<,$@)
$(OUT)/text/dev.zh: $(DEV_TGT) | $(OUT)/text
	$(call unpack,$<,$@)

# The pairs as "en TAB zh" lines: what compile_data's .lang1/.lang2 hold,
# side by side (subword-encode --fields drops a pair with an empty side).
$(OUT)/text/train.tsv: $(TRAIN_EN) $(TRAIN_ZH) | $(OUT)/text
	paste '$(word 1,$^)' '$(word 2,$^)' >'$@.tmp' && mv '$@.tmp' '$@'
$(OUT)/text/dev.tsv: $(DEV_EN) $(DEV_ZH) | $(OUT)/text
	paste '$(word 1,$^)' '$(word 2,$^)' >'$@.tmp' && mv '$@.tmp' '$@'

VOCAB_FLAGS := -q -t $(VOCAB_SIZE) -L $(SUBTOKEN)
ENCODE = $(SUBWORD_ENCODE) -q --eos --fields inputs,targets \
	-v inputs='$(VOCAB_EN)' -v targets='$(VOCAB_ZH)'
SHARDS = $(TFR_CAT) --shuffle -s $(SEED)

ifeq ($(STAGED),)
# One process per step (make -j runs the two languages side by side).
$(VOCAB_EN): $(TRAIN_EN) | $(OUT)
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) -b $(BUDGET) -o '$@' '$<'
$(VOCAB_ZH): $(TRAIN_ZH) | $(OUT)
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) -b $(BUDGET) -o '$@' '$<'
$(OUT)/tmp/train.tfr: $(OUT)/text/train.tsv $(VOCAB_EN) $(VOCAB_ZH) | $(OUT)/tmp
	$(ENCODE) -o '$@' '$<'
TRAIN_RECORDS := $(OUT)/tmp/train.tfr
else
# Stages: count and encode by parts, vocab and shards once.
text: $(TRAIN_EN) $(TRAIN_ZH) $(OUT)/text/train.tsv $(OUT)/text/dev.tsv
count: $(call count_part,en,$(K)) $(call count_part,zh,$(K))
vocab: $(VOCAB_EN) $(VOCAB_ZH)
encode: $(call encode_part,$(K))
shards: $(TRAIN) $(DEV)

$(call count_part,en,$(K)): $(TRAIN_EN) | $(OUT)/parts
	$(SUBWORD_BUILD) -q --count-only $(PART) -b $(BUDGET) -o '$@' '$<'
$(call count_part,zh,$(K)): $(TRAIN_ZH) | $(OUT)/parts
	$(SUBWORD_BUILD) -q --count-only $(PART) -b $(BUDGET) -o '$@' '$<'

# From the parts' counts when the budget covers the whole file, else
# from the file (see the top of this file).
vocab_from = if [ "$$(stat -L -c %s '$(1)')" -le $(BUDGET) ]; then \
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) --from-counts -o '$@' $(2); else \
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) -b $(BUDGET) -o '$@' '$(1)'; fi
$(VOCAB_EN): $(foreach k,$(KS),$(call count_part,en,$(k))) | $(OUT)
	$(call vocab_from,$(TRAIN_EN),$(filter %-of-$(N),$^))
$(VOCAB_ZH): $(foreach k,$(KS),$(call count_part,zh,$(k))) | $(OUT)
	$(call vocab_from,$(TRAIN_ZH),$(filter %-of-$(N),$^))

$(call encode_part,$(K)): $(OUT)/text/train.tsv $(VOCAB_EN) $(VOCAB_ZH) | $(OUT)/parts
	$(ENCODE) $(PART) -o '$@' '$<'
TRAIN_RECORDS := $(foreach k,$(KS),$(call encode_part,$(k)))
endif

# Records dealt round-robin into the shards, each shard shuffled.
$(TRAIN) &: $(TRAIN_RECORDS)
	$(SHARDS) --split $(TRAIN_SHARDS) -o '$(OUT)/$(PROBLEM)-train-%05d-of-%05d' $^
$(OUT)/tmp/dev.tfr: $(OUT)/text/dev.tsv $(VOCAB_EN) $(VOCAB_ZH) | $(OUT)/tmp
	$(ENCODE) -o '$@' '$<'
$(DEV): $(OUT)/tmp/dev.tfr
	$(SHARDS) --split 1 -o '$(OUT)/$(PROBLEM)-dev-%05d-of-%05d' '$<'
