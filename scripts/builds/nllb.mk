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
#   LINES_SRC-TGT  lines of the text that direction takes (default: all),
#               the first ones: a smaller direction, as most are in
#               Open-NLLB, which temperature sampling draws from more
#               often than its size (default LINES_gu-lv=1000)
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
LINES_gu-lv ?= 1000
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

ME := nllb
TOOLS := subword-build subword-encode mmap-index batch-sample
tool = $(if $(BIN),$(BIN)/$(1),$(1))
STAGE_GOALS := text count vocab pieces dict bin data
STAGED := $(filter $(STAGE_GOALS),$(MAKECMDGOALS))

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
.DELETE_ON_ERROR:

# Names and values checked, products committed with records of what
# they were made from: scripts/builds/recipe.mk, shared by the recipes.
include $(dir $(lastword $(MAKEFILE_LIST)))recipe.mk

$(foreach v,OUT TEXT,$(call check_path,$(v)))
$(foreach v,BIN VOCAB DICT,$(call check_name,$(v)))
$(foreach v,SHARDS VOCAB_SIZE MAX_TOKENS EPOCHS SEED N K,$(call check_count,$(v)))
$(if $(filter 0,$(N)),$(error $(ME): N=0: not a number of parts))
$(if $(filter 0,$(SHARDS)),$(error $(ME): SHARDS=0: not a number of shards))
$(if $(word 2,$(STAGED)),$(error $(ME): $(STAGED): one stage at a time))
$(if $(and $(filter 1,$(words x$(call raw,TEMPERATURE)x)),$(filter-out .,$(call raw,TEMPERATURE)),\
	$(if $(filter-out .,$(call strip_digits,$(call raw,TEMPERATURE))),,1)),,\
	$(error $(ME): TEMPERATURE=$(call raw,TEMPERATURE): not a number such as 1.5))
$(if $(strip $(call raw,PAIRS)),,$(error $(ME): PAIRS is empty))
$(if $(call bad_in,$(call raw,PAIRS)),$(error $(ME): PAIRS=$(call raw,PAIRS): not directions SRC-TGT))
$(foreach p,$(PAIRS),$(if $(filter-out 2,$(words $(subst -, ,$(p))))$(filter -% %-,$(p)),\
	$(error $(ME): PAIRS: $(p): not a direction SRC-TGT)))
$(foreach p,$(PAIRS),$(if $(call raw,LINES_$(p)),$(call check_count,LINES_$(p))))

SUBWORD_BUILD := $(call sq,$(call tool,subword-build))
SUBWORD_ENCODE := $(call sq,$(call tool,subword-encode))
MMAP_INDEX := $(call sq,$(call tool,mmap-index))
BATCH_SAMPLE := $(call sq,$(call tool,batch-sample))

src = $(word 1,$(subst -, ,$(1)))
tgt = $(word 2,$(subst -, ,$(1)))
LANGS := $(sort $(foreach p,$(PAIRS),$(call src,$(p)) $(call tgt,$(p))))
SHARD_IDS := $(shell seq -f '%03g' 0 $$(($(SHARDS) - 1)))
input = $(firstword $(wildcard $(addprefix $(TEXT)/$(1),.txt .txt.xz .txt.gz)) $(TEXT)/$(1))
unpack = case $(call sq,$(1)) in *.xz) xz -dc $(call sq,$(1));; *.gz) gzip -dc $(call sq,$(1));; *) cat $(call sq,$(1));; esac
$(foreach l,$(LANGS),$(eval INPUT_$(l) := $$(call input,$(l))))

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
$(if $(filter $(K),$(KS)),,$(error $(ME): K=$(K): not a part of N=$(N) (0 to N - 1)))
part = $(if $(filter 1,$(N)),,--part $(1)/$(N))
pieces_part = $(OUT)/parts/$(1).s$(2).$(3)-of-$(N).pieces
PIECES_K := $(foreach l,$(LANGS),$(foreach s,$(SHARD_IDS),$(call pieces_part,$(l),$(s),$(K))))

.PHONY: all stages products $(STAGE_GOALS)
all: $(PRODUCTS)

stages:
	@printf '%s\n' 'text once' 'count parts' 'vocab once' 'pieces parts' \
	    'dict once' 'bin parts' 'data once'

products:
	@printf '%s\n' $(foreach p,$(PRODUCTS),$(call sq,$(patsubst $(OUT)/%,%,$(p))))

$(OUT)/text $(OUT)/parts $(OUT)/data_bin $(addprefix $(OUT)/data_bin/shard,$(SHARD_IDS)):
	mkdir -p $(call sq,$@)

# Each language, decompressed, and dealt line by line into the shards
# (written into a directory of its own, then moved into place).
define lang_rule
$(OUT)/text/$(1).txt: $$(INPUT_$(1)) $$(call stale,$(OUT)/text/$(1).txt,$$(call record,INPUT_$(1))) | $(OUT)/text
	$$(call own,text)
	$$(call unrecord,$$@)
	$$(call tmp,$$@) && { $$(call unpack,$$<) >"$$$$t" && mv -f "$$$$t" $$(call sq,$$@) || { rm -f "$$$$t"; exit 1; }; }
	$$(call commit,$$@,$$(call record,INPUT_$(1)))
$(call SHARD_TXT,$(1)) &: $(OUT)/text/$(1).txt $$(call stale,$$(firstword $$(call SHARD_TXT,$(1))),$$(call record,SHARDS))
	$$(call own,text)
	$$(call unrecord,$$(firstword $$(call SHARD_TXT,$(1))))
	d=$$$$(mktemp -d $$(call sq,$(OUT)/text/$(1).split.XXXXXX)) && \
	awk -v n=$$(SHARDS) -v d="$$$$d" '{ print > (d "/" sprintf("%03d", (NR - 1) % n)) }' $$(call sq,$$<) && \
	for s in $$(SHARD_IDS); do touch "$$$$d/$$$$s" && \
	    chmod "$$$$(printf %o $$$$((0666 & ~0$$$$(umask))))" "$$$$d/$$$$s" && \
	    mv -f "$$$$d/$$$$s" $$(call sq,$(OUT)/text/$(1).s)"$$$$s.txt" || exit 1; done; rmdir "$$$$d"
	$$(call commit,$$(firstword $$(call SHARD_TXT,$(1))),$$(call record,SHARDS))
endef
$(foreach l,$(LANGS),$(eval $(call lang_rule,$(l))))

# The dictionary of all pieces, and the language tokens after it.
LANGTOKS := printf '__%s__ 1\n' $(foreach l,$(LANGS),$(call sq,$(l)))
DICT_REC = $(call record,LANGS DICT N,mmap-index)
ifneq ($(DICT),)
$(DICT_FILE): $(DICT) $(call stale,$(DICT_FILE),$(DICT_REC)) | $(OUT)/data_bin
	$(call own,dict)
	$(call unrecord,$@)
	$(call tmp,$@) && { { cat $(call sq,$<) && $(LANGTOKS); } >"$$t" && mv -f "$$t" $(call sq,$@) || { rm -f "$$t"; exit 1; }; }
	$(call commit,$@,$(DICT_REC))
endif
dict_from = $(call tmp,$@) && { { $(MMAP_INDEX) dict -q $(foreach f,$(1),$(call sq,$(f))) && $(LANGTOKS); } >"$$t" && \
	mv -f "$$t" $(call sq,$@) || { rm -f "$$t"; exit 1; }; }
VOCAB_FLAGS := -q -t $(VOCAB_SIZE) -L 200
VOCAB_REC = $(call record,VOCAB_SIZE LANGS N,subword-build)
PIECES_REC = $(call record,VOCAB_FILE,subword-encode)
BIN_REC = $(call record,N,mmap-index)

ifeq ($(STAGED),)
# One process per file (make -j runs them side by side).
ifeq ($(VOCAB),)
$(VOCAB_FILE): $(TXT) $(call stale,$(VOCAB_FILE),$(VOCAB_REC))
	$(call unrecord,$@)
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) -b 1e12 -o $(call sq,$@) $(foreach f,$(TXT),$(call sq,$(f)))
	$(call commit,$@,$(VOCAB_REC))
endif
define pieces_rule
$(OUT)/text/$(1).pieces: $(OUT)/text/$(1).txt $(VOCAB_FILE) $$(call stale,$(OUT)/text/$(1).pieces,$$(PIECES_REC))
	$$(call unrecord,$$@)
	$$(SUBWORD_ENCODE) -q -v $$(call sq,$$(VOCAB_FILE)) --output-format piece -o $$(call sq,$$@) $$(call sq,$$<)
	$$(call commit,$$@,$$(PIECES_REC))
endef
$(foreach l,$(LANGS),$(foreach s,$(SHARD_IDS),$(eval $(call pieces_rule,$(l).s$(s)))))
PIECES := $(foreach l,$(LANGS),$(foreach s,$(SHARD_IDS),$(OUT)/text/$(l).s$(s).pieces))
ifeq ($(DICT),)
$(DICT_FILE): $(PIECES) $(call stale,$(DICT_FILE),$(DICT_REC)) | $(OUT)/data_bin
	$(call unrecord,$@)
	$(call dict_from,$(PIECES))
	$(call commit,$@,$(DICT_REC))
endif
data_in = $(OUT)/text/$(3).s$(1).pieces
shard_pieces = $(OUT)/text/$(2).s$(1).pieces
DATA_VERB := build
else
# Stages.  Every part has its rules, but only its own part's make runs
# them: the others check that it is there and up to date.
text: $(foreach l,$(LANGS),$(call SHARD_TXT,$(l))) $(TXT)
count: $(OUT)/parts/count.$(K)-of-$(N)
vocab: $(VOCAB_FILE)
pieces: $(PIECES_K)
dict: $(DICT_FILE)
bin: $(PIECES_K:.pieces=.idx)
data: $(addsuffix .idx,$(DATA)) $(BATCHES)

IDENTS_HOLD := 1
IDENTS := $(call idents,$(TXT) $(foreach l,$(LANGS),$(call SHARD_TXT,$(l))) $(VOCAB_FILE) $(DICT_FILE) \
	$(foreach k,$(KS),$(foreach l,$(LANGS),$(foreach s,$(SHARD_IDS),$(call pieces_part,$(l),$(s),$(k))))))
COUNT_REC = $(call record,LANGS N,subword-build,$(TXT))
define count_rule
$(OUT)/parts/count.$(1)-of-$(N): $(TXT) $$(call stale,$(OUT)/parts/count.$(1)-of-$(N),$$(COUNT_REC)) | $(OUT)/parts
	$$(call own,count,$(1))
	$$(call unrecord,$$@)
	$$(SUBWORD_BUILD) -q --count-only -b 1e12 $$(call part,$(1)) -o $$(call sq,$$@) $$(foreach f,$$(TXT),$$(call sq,$$(f)))
	$$(call commit,$$@,$$(COUNT_REC))
endef
$(foreach k,$(KS),$(eval $(call count_rule,$(k))))
ifeq ($(VOCAB),)
$(VOCAB_FILE): $(foreach k,$(KS),$(OUT)/parts/count.$(k)-of-$(N)) $(call stale,$(VOCAB_FILE),$(VOCAB_REC))
	$(call own,vocab)
	$(call unrecord,$@)
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) --from-counts -o $(call sq,$@) $(foreach k,$(KS),$(call sq,$(OUT)/parts/count.$(k)-of-$(N)))
	$(call commit,$@,$(VOCAB_REC))
endif
PIECES_PART_REC = $(call record,VOCAB_FILE N,subword-encode,$(OUT)/text/$(1).txt $(VOCAB_FILE))
BIN_PART_REC = $(call record,N,mmap-index,$(call pieces_part,$(1),$(2),$(3)) $(DICT_FILE))
define part_rules
$(call pieces_part,$(1),$(2),$(3)): $(OUT)/text/$(1).s$(2).txt $(VOCAB_FILE) \
	    $$(call stale,$(call pieces_part,$(1),$(2),$(3)),$$(call PIECES_PART_REC,$(1).s$(2))) | $(OUT)/parts
	$$(call own,pieces,$(3))
	$$(call unrecord,$$@)
	$$(SUBWORD_ENCODE) -q -v $$(call sq,$$(VOCAB_FILE)) --output-format piece $$(call part,$(3)) -o $$(call sq,$$@) $$(call sq,$$<)
	$$(call commit,$$@,$$(call PIECES_PART_REC,$(1).s$(2)))
$(patsubst %.pieces,%.idx,$(call pieces_part,$(1),$(2),$(3))): $(call pieces_part,$(1),$(2),$(3)) $(DICT_FILE) \
	    $$(call stale,$(patsubst %.pieces,%.idx,$(call pieces_part,$(1),$(2),$(3))),$$(call BIN_PART_REC,$(1),$(2),$(3)))
	$$(call own,bin,$(3))
	$$(call unrecord,$$@)
	$$(MMAP_INDEX) build -q --input-format text --dict $$(call sq,$$(DICT_FILE)) -o $$(call sq,$$(@:.idx=)) $$(call sq,$$<)
	$$(call commit,$$@,$$(call BIN_PART_REC,$(1),$(2),$(3)))
endef
$(foreach l,$(LANGS),$(foreach s,$(SHARD_IDS),$(foreach k,$(KS),$(eval $(call part_rules,$(l),$(s),$(k))))))
ifeq ($(DICT),)
ALL_PIECES := $(foreach k,$(KS),$(foreach l,$(LANGS),$(foreach s,$(SHARD_IDS),$(call pieces_part,$(l),$(s),$(k)))))
$(DICT_FILE): $(ALL_PIECES) $(call stale,$(DICT_FILE),$(DICT_REC)) | $(OUT)/data_bin
	$(call own,dict)
	$(call unrecord,$@)
	$(call dict_from,$(ALL_PIECES))
	$(call commit,$@,$(DICT_REC))
endif
data_in = $(foreach k,$(KS),$(patsubst %.pieces,%.idx,$(call pieces_part,$(3),$(1),$(k))))
shard_pieces = $(foreach k,$(KS),$(call pieces_part,$(2),$(1),$(k)))
DATA_VERB := merge
endif
# The datasets of shard $(1), direction $(2), language $(3): binarized
# from the shard's pieces (merged from the parts' datasets), or, for a
# direction of LINES_SRC-TGT lines, binarized from the sentences of the
# first LINES lines, ceil((LINES - S) / SHARDS) of them in shard S (in
# the stages, the parts' pieces one after the other, which are the whole
# pieces).
DATA_REC = $(call record,N,mmap-index)
CAPPED_REC = $(call record,LINES_$(1) SHARDS N,mmap-index)
define data_rule
$(OUT)/data_bin/shard$(1)/train.$(2).$(3).idx: $(call data_in,$(1),$(2),$(3)) $(DICT_FILE) \
	    $$(call stale,$(OUT)/data_bin/shard$(1)/train.$(2).$(3).idx,$$(DATA_REC)) | $(OUT)/data_bin/shard$(1)
	$$(call own,data)
	$$(call unrecord,$$@)
	$$(MMAP_INDEX) $(DATA_VERB) -q $(if $(filter build,$(DATA_VERB)),--input-format text --dict $$(call sq,$$(DICT_FILE))) \
	    -o $$(call sq,$(OUT)/data_bin/shard$(1)/train.$(2).$(3)) $$(foreach f,$(call data_in,$(1),$(2),$(3)),$$(call sq,$$(f)))
	$$(call commit,$$@,$$(DATA_REC))
endef
capped = $(shell awk 'BEGIN { m = $(LINES_$(2)) - $(1); print (m <= 0 ? 0 : int((m + $(SHARDS) - 1) / $(SHARDS))) }')
define capped_rule
$(OUT)/data_bin/shard$(1)/train.$(2).$(3).idx: $(call shard_pieces,$(1),$(3)) $(DICT_FILE) \
	    $$(call stale,$(OUT)/data_bin/shard$(1)/train.$(2).$(3).idx,$$(call CAPPED_REC,$(2))) | $(OUT)/data_bin/shard$(1)
	$$(call own,data)
	$$(call unrecord,$$@)
	cat $$(foreach f,$(call shard_pieces,$(1),$(3)),$$(call sq,$$(f))) | awk 'NR <= $(call capped,$(1),$(2))' | \
	    $$(MMAP_INDEX) build -q --input-format text --dict $$(call sq,$$(DICT_FILE)) \
	    -o $$(call sq,$(OUT)/data_bin/shard$(1)/train.$(2).$(3))
	$$(call commit,$$@,$$(call CAPPED_REC,$(2)))
endef
$(foreach s,$(SHARD_IDS),$(foreach p,$(PAIRS),$(foreach l,$(call src,$(p)) $(call tgt,$(p)),\
	$(eval $(call $(if $(LINES_$(p)),capped_rule,data_rule),$(s),$(p),$(l))))))
# The .bin is written with its .idx (the .idx last).
$(addsuffix .bin,$(DATA)): %.bin: %.idx

# Batches of every epoch over the shards, with their statistics (the
# batches written by batch-sample, the statistics from its stderr).
BATCHES_REC = $(call record,PAIRS TEMPERATURE MAX_TOKENS EPOCHS SEED SHARDS,batch-sample)
$(BATCHES) &: $(addsuffix .idx,$(DATA)) $(DICT_FILE) $(call stale,$(OUT)/batches.jsonl,$(BATCHES_REC))
	$(call own,data)
	$(call unrecord,$(OUT)/batches.jsonl)
	$(call tmp,$(OUT)/batches.stats) && \
	{ $(BATCH_SAMPLE) batches -q --lang-pairs $(call sq,$(subst $(space),$(comma),$(strip $(PAIRS)))) \
	    --sampling-method temperature --sampling-temperature $(TEMPERATURE) \
	    --encoder-langtok src --decoder-langtok --dict $(call sq,$(DICT_FILE)) \
	    --max-tokens $(MAX_TOKENS) --epochs $(EPOCHS) -s $(SEED) --stats \
	    -o $(call sq,$(OUT)/batches.jsonl) \
	    $(call sq,$(subst $(space),:,$(strip $(addprefix $(OUT)/data_bin/shard,$(SHARD_IDS))))) \
	    2>"$$t" && mv -f "$$t" $(call sq,$(OUT)/batches.stats) || { rm -f "$$t"; exit 1; }; }
	$(call commit,$(OUT)/batches.jsonl,$(BATCHES_REC))

# (the makefile is read: idents are asked anew from here on)
PARSING :=
