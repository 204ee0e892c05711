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
#   VOCAB_SIZE  size of the subword vocabulary shared by all languages
#               (default 8192): by default tensor2tensor subwords (a
#               target size), in place of Open-NLLB's shared
#               SentencePiece model; VOCAB=file uses a vocabulary made
#               before instead, and DICT=file a fairseq dictionary made
#               before (Open-NLLB's fixed dictionary), so that a change to
#               one language rebuilds only what reads it
#   SPM_MODEL   a SentencePiece .model (Open-NLLB's SPM-200, for one):
#               the pieces are that model's, as spm_encode
#               --output_format=piece writes them (subword-encode -m spm)
#   SPM=1       SentencePiece without a model: sentencepiece's own
#               spm_train trains one first on every language's whole text
#               (--model_type=SPM_TYPE, unigram; --vocab_size=VOCAB_SIZE,
#               exact: spm_train stops when the text cannot give so many;
#               --num_threads=SPM_THREADS, 16, which the model depends on;
#               spm_train's other defaults; SPM_TRAIN names the program).
#               The default, SPM= or SPM=0, is tensor2tensor subwords, with
#               the same products as before SentencePiece came
#   TEMPERATURE, MAX_TOKENS, EPOCHS, SEED
#               batch-sample's --sampling-temperature (1.5),
#               --max-tokens (4096), --epochs (SHARDS: each shard once),
#               --seed (1)
#
# Products:
#   vocab.subwords         the shared subword vocabulary (subword-build),
#                          unless VOCAB or SentencePiece
#   spm.model, spm.vocab   with SPM=1 and no SPM_MODEL: the model, and its
#                          pieces with their scores, from spm_train
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
#                          piece, with SentencePiece -m spm: spm_encode's)
#                          binarized with the dictionary (mmap-index
#                          build --input-format text, fairseq-preprocess
#                          --srcdict), </s> ending every sentence
#   batches.jsonl, batches.stats
#                          batch-sample batches over the shards, as
#                          Open-NLLB's translation_multi_simple_epoch
#                          task on fairseq main batches them (--task):
#                          --lang-pairs PAIRS, temperature sampling,
#                          --encoder-langtok src --decoder-langtok, epoch e
#                          reading shard (e - 1) mod SHARDS; the batches as
#                          JSON lines and --stats (text) per epoch
#
# Stages: text once, count parts, vocab once, pieces parts, dict once,
# bin parts, data once.  Parts cut every text file (--part K/N), count
# and encode it and binarize their own pieces; the data stage merges the
# parts (mmap-index merge).  Every product is byte-identical to `all`'s
# for any N (the counts take whole files: -b 1e12).  With SentencePiece
# there is nothing to count: text once, vocab once (spm_train, or nothing
# when SPM_MODEL is given), pieces parts, dict once, bin parts, data once
# (make stages SPM=1 prints them).  Each line says what a task of the
# stage needs where that is not one CPU and 2G (slurm-build): the
# threaded tools' stages 4 CPUs, the vocabulary 8G (spm_train as many
# CPUs as its SPM_THREADS).
#
# Not done: a valid split (Open-NLLB's valid.SRC-TGT.LANG in shard000),
# sampling the text spm_train reads (give SPM_MODEL a model trained on a
# sample instead), and Open-NLLB's filtering steps.

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
SPM ?=
SPM_MODEL ?=
SPM_TYPE ?= unigram
SPM_THREADS ?= 16
SPM_TRAIN ?= spm_train
TEMPERATURE ?= 1.5
MAX_TOKENS ?= 4096
EPOCHS ?= $(SHARDS)
SEED ?= 1
N ?= 1
K ?= 0

ME := nllb
# The SentencePiece build (SPM=1, or SPM_MODEL given) runs spm_train
# (when no model is given) in place of subword-build; its tools are
# named from the raw values, which recipe.mk has not checked yet.
spm_on = $(if $(filter 0,$(call raw,SPM)),,$(or $(filter 1,$(call raw,SPM)),$(call raw,SPM_MODEL)))
TOOLS = $(if $(spm_on),$(if $(call raw,SPM_MODEL),,spm_train),subword-build) subword-encode mmap-index batch-sample
tool = $(if $(filter spm_train,$(1)),$(call raw,SPM_TRAIN),$(if $(BIN),$(BIN)/$(1),$(1)))
STAGE_GOALS := text count vocab pieces dict bin data
STAGED := $(filter $(STAGE_GOALS),$(MAKECMDGOALS))

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
.DELETE_ON_ERROR:

# Names and values checked, products committed with records of what
# they were made from: scripts/builds/recipe.mk, shared by the recipes.
include $(dir $(lastword $(MAKEFILE_LIST)))recipe.mk

$(foreach v,OUT TEXT,$(call check_path,$(v)))
$(foreach v,BIN VOCAB DICT SPM_MODEL,$(call check_name,$(v)))
$(call check_path,SPM_TRAIN)
$(foreach v,SHARDS VOCAB_SIZE MAX_TOKENS EPOCHS SEED N K SPM_THREADS,$(call check_count,$(v)))
$(if $(call raw,SPM),$(if $(and $(call is_count,SPM),$(filter 0 1,$(call raw,SPM))),,\
	$(error $(ME): SPM=$(call raw,SPM): 1 (SentencePiece) or 0 (tensor2tensor subwords))))
$(if $(and $(filter 0,$(SPM)),$(SPM_MODEL)),$(error $(ME): SPM=0 and SPM_MODEL=$(SPM_MODEL): a model is SentencePiece))
$(if $(and $(filter 1,$(words x$(call raw,SPM_TYPE)x)),$(filter unigram bpe char word,$(call raw,SPM_TYPE))),,\
	$(error $(ME): SPM_TYPE=$(call raw,SPM_TYPE): not unigram, bpe, char or word))
$(if $(filter 0,$(SPM_THREADS)),$(error $(ME): SPM_THREADS=0: not a number of threads))
USE_SPM := $(if $(spm_on),1)
$(if $(and $(USE_SPM),$(VOCAB)),$(error $(ME): VOCAB=$(VOCAB): a tensor2tensor vocabulary, and this build is SentencePiece's (SPM_MODEL=FILE gives a model)))
$(if $(and $(USE_SPM),$(filter count,$(STAGED))),$(error $(ME): count: no stage of the SentencePiece build (make stages SPM=1 lists them)))
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
SPM_TRAIN_CMD := $(call sq,$(if $(findstring /,$(SPM_TRAIN)),$(abspath $(SPM_TRAIN)),$(SPM_TRAIN)))

src = $(word 1,$(subst -, ,$(1)))
tgt = $(word 2,$(subst -, ,$(1)))
LANGS := $(sort $(foreach p,$(PAIRS),$(call src,$(p)) $(call tgt,$(p))))
SHARD_IDS := $(shell seq -f '%03g' 0 $$(($(SHARDS) - 1)))
input = $(firstword $(wildcard $(addprefix $(TEXT)/$(1),.txt .txt.xz .txt.gz)) $(TEXT)/$(1))
unpack = case $(call sq,$(1)) in *.xz) xz -dc $(call sq,$(1));; *.gz) gzip -dc $(call sq,$(1));; *) cat $(call sq,$(1));; esac
$(foreach l,$(LANGS),$(eval INPUT_$(l) := $$(call input,$(l))))

TXT := $(foreach l,$(LANGS),$(OUT)/text/$(l).txt)
SHARD_TXT = $(foreach s,$(SHARD_IDS),$(OUT)/text/$(1).s$(s).txt)
# VOCAB_FILE: what the pieces are encoded with, a tensor2tensor
# vocabulary or a SentencePiece model (trained here: SPM_FILES).
SPM_FILES := $(if $(and $(USE_SPM),$(if $(SPM_MODEL),,1)),$(OUT)/spm.model $(OUT)/spm.vocab)
VOCAB_FILE := $(if $(USE_SPM),$(or $(SPM_MODEL),$(OUT)/spm.model),$(if $(VOCAB),$(VOCAB),$(OUT)/vocab.subwords))
DICT_FILE := $(OUT)/data_bin/dict.txt
DATA := $(foreach s,$(SHARD_IDS),$(foreach p,$(PAIRS),$(foreach l,$(call src,$(p)) $(call tgt,$(p)),\
	$(OUT)/data_bin/shard$(s)/train.$(p).$(l))))
BATCHES := $(OUT)/batches.jsonl $(OUT)/batches.stats
PRODUCTS := $(if $(USE_SPM),$(SPM_FILES),$(if $(VOCAB),,$(VOCAB_FILE))) $(DICT_FILE) $(addsuffix .bin,$(DATA)) \
	$(addsuffix .idx,$(DATA)) $(BATCHES)

KS := $(shell seq 0 $$(($(N) - 1)))
$(if $(filter $(K),$(KS)),,$(error $(ME): K=$(K): not a part of N=$(N) (0 to N - 1)))
part = $(if $(filter 1,$(N)),,--part $(1)/$(N))
pieces_part = $(OUT)/parts/$(1).s$(2).$(3)-of-$(N).pieces
PIECES_K := $(foreach l,$(LANGS),$(foreach s,$(SHARD_IDS),$(call pieces_part,$(l),$(s),$(K))))

.PHONY: all stages products $(STAGE_GOALS)
all: $(PRODUCTS)

stages:
	@printf '%s\n' 'text once' $(if $(USE_SPM),,'count parts cpus=4') \
	    'vocab once $(if $(USE_SPM),cpus=$(SPM_THREADS) )mem=8G' 'pieces parts cpus=4' \
	    'dict once' 'bin parts cpus=4' 'data once'

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
# The pieces: a SentencePiece model's as spm_encode --output_format=piece
# writes them (lines split at \n only, nothing stripped), or the
# subwords' pieces.
ENCODE_VARS := $(if $(USE_SPM),SPM_MODEL) VOCAB_FILE
ENCODE := $(SUBWORD_ENCODE) -q $(if $(USE_SPM),-m spm) -v $(call sq,$(VOCAB_FILE)) --output-format piece
PIECES_REC = $(call record,$(ENCODE_VARS),subword-encode)

# The SentencePiece model trained by sentencepiece's own spm_train on
# every language's whole text (the same for any N), in a directory of
# its own, from which it reads ../text/LANG.txt and writes spm.model and
# spm.vocab (the model keeps these names: so it is the same in any OUT).
SPM_REC = $(call record,SPM_TYPE VOCAB_SIZE SPM_THREADS LANGS,spm_train)
ifneq ($(SPM_FILES),)
$(SPM_FILES) &: $(TXT) $(call stale,$(OUT)/spm.model,$(SPM_REC))
	$(call own,vocab)
	$(call unrecord,$(OUT)/spm.model)
	d=$$(mktemp -d $(call sq,$(OUT)/spm.XXXXXX)) && \
	if (cd "$$d" && $(SPM_TRAIN_CMD) $(call sq,--input=$(subst $(space),$(comma),$(foreach l,$(LANGS),../text/$(l).txt))) \
	    --model_prefix=spm --model_type=$(SPM_TYPE) --vocab_size=$(VOCAB_SIZE) \
	    --num_threads=$(SPM_THREADS) >log 2>&1); then \
	    mv -f "$$d/spm.vocab" $(call sq,$(OUT)/spm.vocab) && mv -f "$$d/spm.model" $(call sq,$(OUT)/spm.model) && \
	    rm -f "$$d/log" && rmdir "$$d"; \
	else tail -n 2 "$$d/log" | sed 's/^/$(ME): spm_train: /' >&2; rm -rf "$$d"; exit 1; fi
	$(call commit,$(OUT)/spm.model,$(SPM_REC))
endif
BIN_REC = $(call record,N,mmap-index)

ifeq ($(STAGED),)
# One process per file (make -j runs them side by side).
ifeq ($(VOCAB)$(USE_SPM),)
$(VOCAB_FILE): $(TXT) $(call stale,$(VOCAB_FILE),$(VOCAB_REC))
	$(call unrecord,$@)
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) -b 1e12 -o $(call sq,$@) $(foreach f,$(TXT),$(call sq,$(f)))
	$(call commit,$@,$(VOCAB_REC))
endif
define pieces_rule
$(OUT)/text/$(1).pieces: $(OUT)/text/$(1).txt $(VOCAB_FILE) $$(call stale,$(OUT)/text/$(1).pieces,$$(PIECES_REC))
	$$(call unrecord,$$@)
	$$(ENCODE) -o $$(call sq,$$@) $$(call sq,$$<)
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
count: $(if $(USE_SPM),,$(OUT)/parts/count.$(K)-of-$(N))
vocab: $(VOCAB_FILE) $(SPM_FILES)
pieces: $(PIECES_K)
dict: $(DICT_FILE)
bin: $(PIECES_K:.pieces=.idx)
data: $(addsuffix .idx,$(DATA)) $(BATCHES)

IDENTS_HOLD := 1
IDENTS := $(call idents,$(TXT) $(foreach l,$(LANGS),$(call SHARD_TXT,$(l))) $(VOCAB_FILE) $(DICT_FILE) \
	$(foreach k,$(KS),$(foreach l,$(LANGS),$(foreach s,$(SHARD_IDS),$(call pieces_part,$(l),$(s),$(k))))))
COUNT_REC = $(call record,LANGS N,subword-build,$(TXT))
ifeq ($(USE_SPM),)
define count_rule
$(OUT)/parts/count.$(1)-of-$(N): $(TXT) $$(call stale,$(OUT)/parts/count.$(1)-of-$(N),$$(COUNT_REC)) | $(OUT)/parts
	$$(call own,count,$(1))
	$$(call unrecord,$$@)
	$$(SUBWORD_BUILD) -q --count-only -b 1e12 $$(call part,$(1)) -o $$(call sq,$$@) $$(foreach f,$$(TXT),$$(call sq,$$(f)))
	$$(call commit,$$@,$$(COUNT_REC))
endef
$(foreach k,$(KS),$(eval $(call count_rule,$(k))))
endif
ifeq ($(VOCAB)$(USE_SPM),)
$(VOCAB_FILE): $(foreach k,$(KS),$(OUT)/parts/count.$(k)-of-$(N)) $(call stale,$(VOCAB_FILE),$(VOCAB_REC))
	$(call own,vocab)
	$(call unrecord,$@)
	$(SUBWORD_BUILD) $(VOCAB_FLAGS) --from-counts -o $(call sq,$@) $(foreach k,$(KS),$(call sq,$(OUT)/parts/count.$(k)-of-$(N)))
	$(call commit,$@,$(VOCAB_REC))
endif
PIECES_PART_REC = $(call record,$(ENCODE_VARS) N,subword-encode,$(OUT)/text/$(1).txt $(VOCAB_FILE))
BIN_PART_REC = $(call record,N,mmap-index,$(call pieces_part,$(1),$(2),$(3)) $(DICT_FILE))
define part_rules
$(call pieces_part,$(1),$(2),$(3)): $(OUT)/text/$(1).s$(2).txt $(VOCAB_FILE) \
	    $$(call stale,$(call pieces_part,$(1),$(2),$(3)),$$(call PIECES_PART_REC,$(1).s$(2))) | $(OUT)/parts
	$$(call own,pieces,$(3))
	$$(call unrecord,$$@)
	$$(ENCODE) $$(call part,$(3)) -o $$(call sq,$$@) $$(call sq,$$<)
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
	    --task translation_multi_simple_epoch \
	    --encoder-langtok src --decoder-langtok --dict $(call sq,$(DICT_FILE)) \
	    --max-tokens $(MAX_TOKENS) --epochs $(EPOCHS) -s $(SEED) --stats \
	    -o $(call sq,$(OUT)/batches.jsonl) \
	    $(call sq,$(subst $(space),:,$(strip $(addprefix $(OUT)/data_bin/shard,$(SHARD_IDS))))) \
	    2>"$$t" && mv -f "$$t" $(call sq,$(OUT)/batches.stats) || { rm -f "$$t"; exit 1; }; }
	$(call commit,$(OUT)/batches.jsonl,$(BATCHES_REC))

# (the makefile is read: idents are asked anew from here on)
PARSING :=
