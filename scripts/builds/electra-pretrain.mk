# ELECTRA's build_pretraining_dataset.py, as a make build.
#
#   make -f scripts/builds/electra-pretrain.mk -j2 OUT=DIR \
#       CORPUS_DIR=corpus VOCAB=vocab.txt PROCS=4
#
# Inputs:
#   CORPUS_DIR  the --corpus-dir: every file in it, in sorted name order,
#               is a corpus file (.xz and .gz are decompressed on the fly);
#               or CORPUS, a list of files (default
#               ../shared/corpus/en-gutenberg.txt.xz).  One sentence a
#               line; a blank line, and the end of each file, ends a
#               document.  Names must differ once .xz/.gz is dropped;
#               a name make cannot take (white space, or one of
#               $ : ; % # \ * ? [ ] ( ) = , | &) stops the build, naming
#               it, before anything is run.
#   VOCAB       the BERT vocab.txt (default bert-base-uncased's, from
#               ../shared/wordpiece-vocabs)
#   LOWER       1 (the default, --do-lower-case) or 0 (--no-lower-case);
#               STRIP_ACCENTS 1 (the default, --do-strip-accents) or 0.
#               As in ELECTRA's tokenizer, accents are stripped only
#               when lower-casing.
#   MAX_SEQ_LENGTH  --max-seq-length (default 128)
#   PROCS       --num-processes (default 1): the corpus files are dealt
#               to PROCS jobs (file i to job i mod PROCS), and job j writes
#               the output files i with i mod PROCS = j, round-robin, as
#               ELECTRA's write_examples() and ExampleWriter do
#   OUT_FILES   ExampleWriter's num_out_files (default 1000)
#   SEED        seed of the random choices of every job (default 0)
#
# Products: pretrain_data.tfrecord-I-of-1000 (I from 0, not padded), each
# record an Example with input_ids, input_mask and segment_ids of
# MAX_SEQ_LENGTH values: `[CLS] a [SEP] b [SEP]', zero-padded (see
# pack-encdec(1), -C electra).  The WordPiece ids are those of ELECTRA's
# FullTokenizer (subword-encode -m wordpiece --rules electra).
#
# Differences from ELECTRA: each job reads its files in sorted order
# (ELECTRA shuffles them with the unseeded random module), and the random
# choices of the example layout come from pack-encdec's seeded generator,
# not Python's, with the same seed in every job (ELECTRA's forked jobs
# also start from one random state).  So the examples are ELECTRA's
# layout, not its bytes.
#
# Stages: examples parts, shards once.  Part K of N runs the jobs j with
# j mod N = K (a job is a unit of work of its own, as in ELECTRA: its
# output depends only on its files, VOCAB, SEED and PROCS).  Every
# product is byte-identical for any N, since N only decides which part
# runs which job; the products depend on PROCS (as ELECTRA's depend on
# --num-processes) and on SEED.  The per-file ids under parts/ids/ are
# the same for any PROCS too.

RECIPE := $(abspath $(lastword $(MAKEFILE_LIST)))
TOP := $(abspath $(dir $(RECIPE))../..)
SHARED := $(abspath $(TOP)/../shared)

OUT ?= build/electra-pretrain
BIN ?= $(if $(wildcard $(TOP)/build/bin/pack-encdec),$(TOP)/build/bin,)
CORPUS_DIR ?=
CORPUS ?= $(if $(CORPUS_DIR),,$(SHARED)/corpus/en-gutenberg.txt.xz)
VOCAB ?= $(SHARED)/wordpiece-vocabs/bert-base-uncased-vocab.txt
LOWER ?= 1
STRIP_ACCENTS ?= 1
MAX_SEQ_LENGTH ?= 128
PROCS ?= 1
OUT_FILES ?= 1000
SEED ?= 0
N ?= 1
K ?= 0

ME := electra-pretrain
TOOLS := subword-encode pack-encdec tfr-cat
tool = $(if $(BIN),$(BIN)/$(1),$(1))
STAGE_GOALS := examples shards
STAGED := $(filter $(STAGE_GOALS),$(MAKECMDGOALS))

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
.DELETE_ON_ERROR:

# Names and values checked, products committed with records of what
# they were made from: scripts/builds/recipe.mk, shared by the recipes.
include $(dir $(lastword $(MAKEFILE_LIST)))recipe.mk

$(foreach v,OUT VOCAB,$(call check_path,$(v)))
$(foreach v,BIN CORPUS_DIR,$(call check_name,$(v)))
$(foreach v,LOWER STRIP_ACCENTS MAX_SEQ_LENGTH PROCS OUT_FILES SEED N K,$(call check_count,$(v)))
$(if $(filter 0,$(N)),$(error $(ME): N=0: not a number of parts))
$(if $(filter 0,$(PROCS)),$(error $(ME): PROCS=0: not a number of jobs))
$(if $(filter 0,$(OUT_FILES)),$(error $(ME): OUT_FILES=0: not a number of files))
$(if $(shell [ $(K) -lt $(N) ] && echo ok),,$(error $(ME): K=$(K): not a part of N=$(N) (0 to N - 1)))
$(if $(word 2,$(STAGED)),$(error $(ME): $(STAGED): one stage at a time))

# The corpus files: every name in CORPUS_DIR (listed by the shell, never
# put on a command line unquoted; a name with white space or a control
# character comes back as ?NAME, quoted), or the names in CORPUS.
ifneq ($(CORPUS_DIR),)
CORPUS_NAMES := $(shell cd -- $(call sq,$(CORPUS_DIR)) || exit; for f in *; do \
	[ -e "$$f" ] || [ -L "$$f" ] || continue; \
	case $$f in (*[[:space:][:cntrl:]]*) printf '?%q\n' "$$f";; (*) printf '%s\n' "$$f";; esac; done)
$(foreach f,$(CORPUS_NAMES),$(if $(or $(filter ?%,$(f)),$(call bad_in,$(f))),\
	$(error $(ME): $(CORPUS_DIR)/$(patsubst ?%,%,$(f)): a name with white space or one of $(name_bad) cannot be used by make)))
FILES := $(sort $(addprefix $(CORPUS_DIR)/,$(CORPUS_NAMES)))
$(if $(FILES),,$(error $(ME): CORPUS_DIR=$(CORPUS_DIR): no corpus files))
else
$(if $(findstring $$,$(call raw,CORPUS))$(call bad_in,$(call raw,CORPUS)),\
	$(error $(ME): CORPUS=$(call raw,CORPUS): a name with one of $(name_bad) cannot be used by make))
FILES := $(sort $(CORPUS))
$(if $(FILES),,$(error $(ME): CORPUS is empty))
endif

SUBWORD_ENCODE := $(call sq,$(call tool,subword-encode))
PACK_ENCDEC := $(call sq,$(call tool,pack-encdec))
TFR_CAT := $(call sq,$(call tool,tfr-cat))

count := $(words $(FILES))
seq = $(if $(filter-out 0,$(1)),$(shell seq 0 $$(($(1) - 1))))
JOBS := $(call seq,$(PROCS))
base = $(basename $(filter-out %.xz %.gz,$(notdir $(1))))$(basename $(filter %.xz %.gz,$(notdir $(1))))
ids = $(OUT)/parts/ids/$(call base,$(1)).tfr
cat = case $(call sq,$(1)) in *.xz) xz -dc $(call sq,$(1));; *.gz) gzip -dc $(call sq,$(1));; *) cat $(call sq,$(1));; esac

# Job j: files j, j+PROCS, ... (of the sorted list, from 0); output
# files j, j+PROCS, ... below OUT_FILES, whose records it writes under
# parts/ first.  Part K of N runs the jobs j with j mod N = K.
job_dir = $(OUT)/parts/job-$(1)-of-$(PROCS)
define job_vars
JOB_FILES_$(1) := $(foreach i,$(shell seq $$(($(1) + 1)) $(PROCS) $(count)),$(word $(i),$(FILES)))
JOB_OUTS_$(1) := $(shell seq $(1) $(PROCS) $$(($(OUT_FILES) - 1)))
JOB_PART_$(1) := $(shell echo $$(($(1) % $(N))))
endef
$(foreach j,$(JOBS),$(eval $(call job_vars,$(j))))
job_files = $(JOB_FILES_$(1))
job_outs = $(JOB_OUTS_$(1))
job_products = $(patsubst %,$(OUT)/pretrain_data.tfrecord-%-of-$(OUT_FILES),$(JOB_OUTS_$(1)))
PRODUCTS := $(foreach j,$(JOBS),$(call job_products,$(j)))
# The job (and so the part) that reads each file.
$(foreach j,$(JOBS),$(foreach f,$(JOB_FILES_$(j)),$(eval FILE_JOB_$(f) := $(j))))

WORDPIECE := $(SUBWORD_ENCODE) -q -m wordpiece --rules electra \
	$(if $(filter 0,$(LOWER)),--no-lower,--lower) \
	$(if $(filter-out 0,$(LOWER)),$(if $(filter 0,$(STRIP_ACCENTS)),--no-strip-accents,--strip-accents),--no-strip-accents)

.PHONY: all stages products examples shards
all: $(PRODUCTS)

stages:
	@printf '%s\n' 'examples parts' 'shards once'

products:
	@printf '%s\n' $(foreach p,$(PRODUCTS),$(call sq,$(notdir $(p))))

examples: $(foreach j,$(shell seq $(K) $(N) $$(($(PROCS) - 1))),$(call job_dir,$(j)).done)
shards: $(PRODUCTS)

$(OUT) $(OUT)/parts/ids:
	mkdir -p $(call sq,$@)

# A file's WordPiece ids (in the part of the job that reads it).
IDS_REC = $(call record,LOWER STRIP_ACCENTS VOCAB,subword-encode,,$(1))
define file_rule
$(call ids,$(1)): $(1) $(VOCAB) $$(call stale,$(call ids,$(1)),$$(call IDS_REC,$(1))) | $(OUT)/parts/ids
	$$(call own,examples,$(JOB_PART_$(FILE_JOB_$(1))))
	$$(call unrecord,$$@)
	$$(call cat,$(1)) | $$(WORDPIECE) -v $$(call sq,$$(VOCAB)) -o $$(call sq,$$@)
	$$(call commit,$$@,$$(call IDS_REC,$(1)))
endef
$(foreach f,$(FILES),$(eval $(call file_rule,$(f))))

# A job: its files' examples, dealt round-robin into its output files
# under parts/ (job-J-of-PROCS/NNNNN, then the stamp .done, whose record
# is the part's), then linked into place under ELECTRA's names.
IDENTS := $(call idents,$(foreach f,$(FILES),$(call ids,$(f))))
JOB_REC = $(call record,MAX_SEQ_LENGTH SEED PROCS OUT_FILES VOCAB N,pack-encdec tfr-cat,$(foreach f,$(call job_files,$(1)),$(call ids,$(f))))
define job_rule
$(call job_dir,$(1)).done: $(foreach f,$(call job_files,$(1)),$(call ids,$(f))) $(VOCAB) \
	    $$(call stale,$(call job_dir,$(1)).done,$$(call JOB_REC,$(1)))
	$$(call own,examples,$(JOB_PART_$(1)))
	$$(call unrecord,$$@)
	@printf '%s\n' $$(call sq,pack-encdec -C electra | tfr-cat --split: job $(1) of $(PROCS): $(words $(call job_files,$(1))) files -> $(words $(call job_outs,$(1))) files in $(call job_dir,$(1)))
	@mkdir -p $$(call sq,$(call job_dir,$(1)))
	@$$(PACK_ENCDEC) -q -C electra --max-seq-length $$(MAX_SEQ_LENGTH) \
	    -v $$(call sq,$$(VOCAB)) -s $$(SEED) $$(foreach f,$(call job_files,$(1)),$$(call sq,$$(call ids,$$(f)))) </dev/null | \
	    $$(TFR_CAT) -R --split $(words $(call job_outs,$(1))) -o $$(call sq,$(call job_dir,$(1))/%05d)
	@touch $$(call sq,$$@)
	$$(call commit,$$@,$$(call JOB_REC,$(1)))
$(call job_products,$(1)) &: $(call job_dir,$(1)).done | $(OUT)
	$$(call own,shards)
	@printf '%s\n' $$(call sq,ln: job $(1) of $(PROCS): $(words $(call job_outs,$(1))) files -> $(OUT)/pretrain_data.tfrecord-I-of-$(OUT_FILES) (I = $(firstword $(call job_outs,$(1))) to $(lastword $(call job_outs,$(1))) by $(PROCS)))
	@m=0; for i in $(call job_outs,$(1)); do \
	    printf -v p '%s/%05d' $$(call sq,$(call job_dir,$(1))) $$$$m; \
	    f=$$(call sq,$(OUT)/pretrain_data.tfrecord-)$$$$i$$(call sq,-of-$(OUT_FILES)); \
	    ln -f "$$$$p" "$$$$f" 2>/dev/null || cp "$$$$p" "$$$$f" || exit 1; \
	    m=$$$$((m + 1)); done
	@touch -c $$(foreach p,$(call job_products,$(1)),$$(call sq,$$(p)))
endef
$(foreach j,$(JOBS),$(eval $(call job_rule,$(j))))

# (the makefile is read: idents are asked anew from here on)
PARSING :=
