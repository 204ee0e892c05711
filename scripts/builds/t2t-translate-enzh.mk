# tensor2tensor's translate_enzh_wmt8k generate_data, as a make build.
#
#   make -f scripts/builds/t2t-translate-enzh.mk -j2 OUT=DIR \
#       SRC=train.en TGT=train.zh DEV_SRC=dev.en DEV_TGT=dev.zh
#
# Inputs (line-parallel text, one sentence a line; .xz and .gz are
# decompressed into $(OUT)/text first):
#   SRC, TGT          the training pair, English and Chinese
#                     (default $(CORPUS)/enzh.en.xz and enzh.zh.xz, where
#                     CORPUS is ../shared/corpus unless CORPUS=DIR)
#   DEV_SRC, DEV_TGT  the dev pair.  tensor2tensor never cuts dev out of
#                     the training text: it encodes separate files
#                     (newsdev2017), so this build takes a pair too, by
#                     default FLORES-200 devtest eng_Latn / zho_Hans from
#                     $(CORPUS)/multi/flores200-devtest.  To hold
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
# once, encode parts, shards once; the counts and the encoding take 4
# CPUs a task (the tools' threads), the vocabulary from the merged
# counts 8G.  Every product is byte-identical to
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
BUDGET ?= 100000000
N ?= 1
K ?= 0

ME := t2t-translate-enzh
TOOLS := subword-build subword-encode tfr-cat
tool = $(if $(BIN),$(BIN)/$(1),$(1))
STAGE_GOALS := text count vocab encode shards
STAGED := $(filter $(STAGE_GOALS),$(MAKECMDGOALS))

# Names and values checked, products committed with records of what
# they were made from: scripts/builds/recipe.mk, shared by the recipes.
include $(dir $(lastword $(MAKEFILE_LIST)))recipe.mk

$(foreach v,OUT SRC TGT DEV_SRC DEV_TGT,$(call check_path,$(v)))
$(call check_name,BIN)
$(foreach v,SEED BUDGET N K,$(call check_count,$(v)))
$(if $(filter 0,$(N)),$(error $(ME): N=0: not a number of parts))
$(if $(word 2,$(STAGED)),$(error $(ME): $(STAGED): one stage at a time))

PROBLEM := translate_enzh_wmt8k
VOCAB_SIZE := 8192
SUBTOKEN := 200
TRAIN_SHARDS := 10

SUBWORD_BUILD := $(call sq,$(call tool,subword-build))
SUBWORD_ENCODE := $(call sq,$(call tool,subword-encode))
TFR_CAT := $(call sq,$(call tool,tfr-cat))

# A compressed input is decompressed once into $(OUT)/text; plain text is
# read where it is.
packed = $(filter %.xz %.gz,$(1))
text = $(if $(call packed,$(1)),$(OUT)/text/$(2),$(1))
TRAIN_EN := $(call text,$(SRC),train.en)
TRAIN_ZH := $(call text,$(TGT),train.zh)
DEV_EN := $(call text,$(DEV_SRC),dev.en)
DEV_ZH := $(call text,$(DEV_TGT),dev.zh)
unpack = case $(call sq,$(1)) in *.xz) xz -dc $(call sq,$(1));; *.gz) gzip -dc $(call sq,$(1));; *) cat $(call sq,$(1));; esac

VOCAB_EN := $(OUT)/vocab.$(PROBLEM).$(VOCAB_SIZE).subwords.en
VOCAB_ZH := $(OUT)/vocab.$(PROBLEM).$(VOCAB_SIZE).subwords.zh
TRAIN := $(foreach i,$(shell seq 0 $$(($(TRAIN_SHARDS) - 1))),$(OUT)/$(PROBLEM)-train-$(shell printf '%05d-of-%05d' $(i) $(TRAIN_SHARDS)))
DEV := $(OUT)/$(PROBLEM)-dev-00000-of-00001
PRODUCTS := $(VOCAB_EN) $(VOCAB_ZH) $(TRAIN) $(DEV)

# Parts of a stage: K of N, and every part of N for the stage after.
part = $(if $(filter 1,$(N)),,--part $(1)/$(N))
KS := $(shell seq 0 $$(($(N) - 1)))
$(if $(filter $(K),$(KS)),,$(error $(ME): K=$(K): not a part of N=$(N) (0 to N - 1)))
count_part = $(OUT)/parts/count.$(1).$(2)-of-$(N)
encode_part = $(OUT)/parts/train.$(1)-of-$(N).tfr

.PHONY: all stages products $(STAGE_GOALS)
.DELETE_ON_ERROR:

all: $(PRODUCTS)

stages:
	@printf '%s\n' 'text once' 'count parts cpus=4' 'vocab once mem=8G' 'encode parts cpus=4' 'shards once'

products:
	@printf '%s\n' $(foreach p,$(PRODUCTS),$(call sq,$(notdir $(p))))

$(OUT) $(OUT)/text $(OUT)/parts $(OUT)/tmp:
	mkdir -p $(call sq,$@)

# The text stage: each input decompressed (its record: which input).
define unpack_rule
$(OUT)/text/$(1): $$($(2)) $$(call stale,$(OUT)/text/$(1),$$(call record,$(2))) | $(OUT)/text
	$$(call own,text)
	$$(call unrecord,$$@)
	$$(call tmp,$$@) && { $$(call unpack,$$<) >"$$$$t" && mv -f "$$$$t" $$(call sq,$$@) || { rm -f "$$$$t"; exit 1; }; }
	$$(call commit,$$@,$$(call record,$(2)))
endef
$(eval $(call unpack_rule,train.en,SRC))
$(eval $(call unpack_rule,train.zh,TGT))
$(eval $(call unpack_rule,dev.en,DEV_SRC))
$(eval $(call unpack_rule,dev.zh,DEV_TGT))

# The pairs as "en TAB zh" lines: what compile_data's .lang1/.lang2 hold,
# side by side (subword-encode --fields drops a pair with an empty side).
paste = $(call tmp,$@) && { paste $(call sq,$(word 1,$^)) $(call sq,$(word 2,$^)) >"$$t" && \
	mv -f "$$t" $(call sq,$@) || { rm -f "$$t"; exit 1; }; }
$(OUT)/text/train.tsv: $(TRAIN_EN) $(TRAIN_ZH) $(call stale,$(OUT)/text/train.tsv,$(call record,TRAIN_EN TRAIN_ZH)) | $(OUT)/text
	$(call own,text)
	$(call unrecord,$@)
	$(paste)
	$(call commit,$@,$(call record,TRAIN_EN TRAIN_ZH))
$(OUT)/text/dev.tsv: $(DEV_EN) $(DEV_ZH) $(call stale,$(OUT)/text/dev.tsv,$(call record,DEV_EN DEV_ZH)) | $(OUT)/text
	$(call own,text)
	$(call unrecord,$@)
	$(paste)
	$(call commit,$@,$(call record,DEV_EN DEV_ZH))

VOCAB_FLAGS := -q -t $(VOCAB_SIZE) -L $(SUBTOKEN)
ENCODE = $(SUBWORD_ENCODE) -q --eos --fields inputs,targets \
	-v inputs=$(call sq,$(VOCAB_EN)) -v targets=$(call sq,$(VOCAB_ZH))
SHARDS = $(TFR_CAT) --shuffle -s $(SEED)
VOCAB_REC = $(call record,BUDGET VOCAB_SIZE SUBTOKEN $(1),subword-build)
ENCODE_REC = $(call record,$(1),subword-encode)
SHARDS_REC = $(call record,SEED TRAIN_SHARDS,tfr-cat)

ifeq ($(STAGED),)
# One process per step (make -j runs the two languages side by side).
$(VOCAB_EN): $(TRAIN_EN) $(call stale,$(VOCAB_EN),$(call VOCAB_REC,TRAIN_EN)) | $(OUT)
	$(call unrecord,$@)
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) -b $(BUDGET) -o $(call sq,$@) $(call sq,$<)
	$(call commit,$@,$(call VOCAB_REC,TRAIN_EN))
$(VOCAB_ZH): $(TRAIN_ZH) $(call stale,$(VOCAB_ZH),$(call VOCAB_REC,TRAIN_ZH)) | $(OUT)
	$(call unrecord,$@)
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) -b $(BUDGET) -o $(call sq,$@) $(call sq,$<)
	$(call commit,$@,$(call VOCAB_REC,TRAIN_ZH))
$(OUT)/tmp/train.tfr: $(OUT)/text/train.tsv $(VOCAB_EN) $(VOCAB_ZH) \
	    $(call stale,$(OUT)/tmp/train.tfr,$(call ENCODE_REC,TRAIN_EN TRAIN_ZH)) | $(OUT)/tmp
	$(call unrecord,$@)
	$(ENCODE) -o $(call sq,$@) $(call sq,$<)
	$(call commit,$@,$(call ENCODE_REC,TRAIN_EN TRAIN_ZH))
TRAIN_RECORDS := $(OUT)/tmp/train.tfr
else
# Stages: count and encode by parts, vocab and shards once.
IDENTS_HOLD := 1
IDENTS := $(call idents,$(TRAIN_EN) $(TRAIN_ZH) $(OUT)/text/train.tsv $(VOCAB_EN) $(VOCAB_ZH))
text: $(TRAIN_EN) $(TRAIN_ZH) $(OUT)/text/train.tsv $(OUT)/text/dev.tsv
count: $(call count_part,en,$(K)) $(call count_part,zh,$(K))
vocab: $(VOCAB_EN) $(VOCAB_ZH)
encode: $(call encode_part,$(K))
shards: $(TRAIN) $(DEV)

# Every part has its rule, but only its own part's make runs it: the
# others check that it is there and up to date.
COUNT_REC = $(call record,BUDGET N,subword-build,$(2))
define count_rule
$(call count_part,$(1),$(3)): $(2) $$(call stale,$(call count_part,$(1),$(3)),$$(call COUNT_REC,,$(2))) | $(OUT)/parts
	$$(call own,count,$(3))
	$$(call unrecord,$$@)
	$$(SUBWORD_BUILD) -q --count-only $$(call part,$(3)) -b $$(BUDGET) -o $$(call sq,$$@) $$(call sq,$$<)
	$$(call commit,$$@,$$(call COUNT_REC,,$(2)))
endef
$(foreach k,$(KS),$(eval $(call count_rule,en,$(TRAIN_EN),$(k)))$(eval $(call count_rule,zh,$(TRAIN_ZH),$(k))))

# From the parts' counts when the budget covers the whole file, else
# from the file (see the top of this file).
VOCAB_PARTS_REC = $(call record,BUDGET VOCAB_SIZE SUBTOKEN N $(1),subword-build)
vocab_from = if [ "$$(stat -L -c %s $(call sq,$(1)))" -le $(BUDGET) ]; then \
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) --from-counts -o $(call sq,$@) $(foreach f,$(2),$(call sq,$(f))); else \
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) -b $(BUDGET) -o $(call sq,$@) $(call sq,$(1)); fi
$(VOCAB_EN): $(foreach k,$(KS),$(call count_part,en,$(k))) $(TRAIN_EN) \
	    $(call stale,$(VOCAB_EN),$(call VOCAB_PARTS_REC,TRAIN_EN)) | $(OUT)
	$(call own,vocab)
	$(call unrecord,$@)
	$(call vocab_from,$(TRAIN_EN),$(filter %-of-$(N),$^))
	$(call commit,$@,$(call VOCAB_PARTS_REC,TRAIN_EN))
$(VOCAB_ZH): $(foreach k,$(KS),$(call count_part,zh,$(k))) $(TRAIN_ZH) \
	    $(call stale,$(VOCAB_ZH),$(call VOCAB_PARTS_REC,TRAIN_ZH)) | $(OUT)
	$(call own,vocab)
	$(call unrecord,$@)
	$(call vocab_from,$(TRAIN_ZH),$(filter %-of-$(N),$^))
	$(call commit,$@,$(call VOCAB_PARTS_REC,TRAIN_ZH))

ENCODE_PART_REC = $(call record,N,subword-encode,$(OUT)/text/train.tsv $(VOCAB_EN) $(VOCAB_ZH))
define encode_rule
$(call encode_part,$(1)): $(OUT)/text/train.tsv $(VOCAB_EN) $(VOCAB_ZH) \
	    $$(call stale,$(call encode_part,$(1)),$$(ENCODE_PART_REC)) | $(OUT)/parts
	$$(call own,encode,$(1))
	$$(call unrecord,$$@)
	$$(ENCODE) $$(call part,$(1)) -o $$(call sq,$$@) $$(call sq,$$<)
	$$(call commit,$$@,$$(ENCODE_PART_REC))
endef
$(foreach k,$(KS),$(eval $(call encode_rule,$(k))))
TRAIN_RECORDS := $(foreach k,$(KS),$(call encode_part,$(k)))
endif

# Records dealt round-robin into the shards, each shard shuffled.
$(TRAIN) &: $(TRAIN_RECORDS) $(call stale,$(firstword $(TRAIN)),$(SHARDS_REC))
	$(call own,shards)
	$(call unrecord,$(firstword $(TRAIN)))
	$(SHARDS) --split $(TRAIN_SHARDS) -o $(call sq,$(OUT)/$(PROBLEM)-train-%05d-of-%05d) $(foreach f,$(TRAIN_RECORDS),$(call sq,$(f)))
	$(call commit,$(firstword $(TRAIN)),$(SHARDS_REC))
$(OUT)/tmp/dev.tfr: $(OUT)/text/dev.tsv $(VOCAB_EN) $(VOCAB_ZH) \
	    $(call stale,$(OUT)/tmp/dev.tfr,$(call ENCODE_REC,DEV_EN DEV_ZH)) | $(OUT)/tmp
	$(call own,shards)
	$(call unrecord,$@)
	$(ENCODE) -o $(call sq,$@) $(call sq,$<)
	$(call commit,$@,$(call ENCODE_REC,DEV_EN DEV_ZH))
$(DEV): $(OUT)/tmp/dev.tfr $(call stale,$(DEV),$(SHARDS_REC))
	$(call own,shards)
	$(call unrecord,$@)
	$(SHARDS) --split 1 -o $(call sq,$(OUT)/$(PROBLEM)-dev-%05d-of-%05d) $(call sq,$<)
	$(call commit,$@,$(SHARDS_REC))

# (the makefile is read: idents are asked anew from here on)
PARSING :=
