# What every build recipe of scripts/builds shares, included by each
# (include $(dir $(lastword $(MAKEFILE_LIST)))recipe.mk, before any other
# include).  A recipe sets ME, TOOLS, tool, STAGE_GOALS, STAGED, OUT, BIN,
# N and K first.
#
# Every name and value is checked before make expands any of them: a
# name must be one word for make and for the shell (no white space, none
# of  $ : ; % # \ * ? [ ] ( ) = , | &, no ~ first), a number digits
# only; every name goes to the shell quoted (sq).  Every product is
# committed with a record of what it was made from (its values, the
# SHA-256 of each tool it runs and, for a part, the size and time of the
# files it reads), under OUT/records or OUT/parts/records; a product
# whose record says otherwise is made again, and a product of another
# stage or part is never made here: when it is missing or out of date,
# make stops naming it before anything is merged.
empty :=
space := $(empty) $(empty)
comma := ,
hash := \#
backslash := $(strip \ )
sq = '$(subst ','\'',$(1))'
raw = $(if $(filter command% environment%,$(origin $(1))),$(value $(1)),$($(1)))
name_bad := $$ : ; % $(hash) $(backslash) * ? [ ] ( ) = $(comma) | &
bad_in = $(strip $(foreach c,$(name_bad),$(findstring $(c),$(1))))
check_name = $(if $(or $(filter-out 1,$(words x$(call raw,$(1))x)),$(call bad_in,$(call raw,$(1)))),\
	$(error $(ME): $(1)=$(call raw,$(1)): a name with white space or one of $(name_bad) cannot be used by make))\
	$(if $(filter ~%,$(call raw,$(1))),$(error $(ME): $(1)=$(call raw,$(1)): make would read ~ as a home directory))
check_path = $(if $(call raw,$(1)),$(call check_name,$(1)),$(error $(ME): $(1) is empty))
strip_digits = $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1)))))))))))
is_count = $(and $(call raw,$(1)),$(filter 1,$(words x$(call raw,$(1))x)),$(if $(call strip_digits,$(call raw,$(1))),,1),$(if $(filter 0%,$(call raw,$(1))),$(filter 0,$(call raw,$(1))),1))
check_count = $(if $(call is_count,$(1)),,$(error $(ME): $(1)=$(call raw,$(1)): not a whole number))
eq = $(and $(findstring x$(1),x$(2)),$(findstring x$(2),x$(1)))
rec = $(if $(filter $(OUT)/parts/%,$(1)),$(OUT)/parts/records/$(patsubst $(OUT)/parts/%,%,$(1)),$(OUT)/records/$(patsubst $(OUT)/%,%,$(1)))
# The identity of each tool of TOOLS: NAME:SHA256 of the binary that
# make runs (found on PATH when BIN is empty), asked once, when a record
# first needs it (after the recipe has checked BIN: a tool's name is
# never expanded before), and not for the plan (stages, products).
PLAN_ONLY := $(if $(MAKECMDGOALS),$(if $(filter-out stages products,$(MAKECMDGOALS)),,1))
tool_path = $(if $(findstring /,$(call tool,$(1))),$(call tool,$(1)),$(firstword $(wildcard $(addsuffix /$(1),$(subst :, ,$(PATH))))))
ask_tool_ids = $(if $(PLAN_ONLY),,$(shell sha256sum -- $(foreach t,$(TOOLS),$(call sq,$(call tool_path,$(t)))) 2>/dev/null | \
	awk '{ n = $$2; sub(/.*\//, "", n); print n ":" $$1 }'))
TOOL_IDS = $(eval TOOL_IDS := $$(ask_tool_ids))$(TOOL_IDS)
tool_id = $(or $(filter $(1):%,$(TOOL_IDS)),$(1):unknown)
# The files a part record names, each OUT/... (under OUT) with its size
# and time, looked up in IDENTS, which the recipe asks once for all the
# files of its part records: while the makefile is read, and in the
# recipes when IDENTS_HOLD says that no file of IDENTS is made by this
# make (a stage's parts read only what earlier stages made); else they
# are asked anew.
PARSING := 1
idents = $(if $(PLAN_ONLY),,$(if $(1),$(shell stat -L -c '%n=%s:%.9Y' -- $(foreach f,$(1),$(call sq,$(f))) 2>/dev/null)))
ident_in = $(patsubst $(OUT)/%,OUT/%,$(1))=$(or $(patsubst $(1)=%,%,$(filter $(1)=%,$(2))),missing)
ident_list = $(foreach f,$(1),$(call ident_in,$(f),$(2)))
# record VARS,TOOLS,FILES[,WORDS]: what a product is made from, one line.
record = $(strip $(foreach v,$(1),$(v)=$(call sq,$($(v)))) $(foreach t,$(2),$(call tool_id,$(t))) \
	$(call ident_list,$(3),$(if $(PARSING)$(IDENTS_HOLD),$(IDENTS),$(call idents,$(3)))) $(foreach w,$(4),$(call sq,$(w))))
# stale P,RECORD: FORCE (make P again) unless P's record holds RECORD
# (stripped: make 4.3 may leave the newline at the end of what $(file <)
# reads).
stale = $(if $(PLAN_ONLY)$(call eq,$(strip $(file <$(call rec,$(1)))),$(2)),,FORCE)
# The first line of a recipe that makes P, and its last, which commits
# P's record (new: the first removed it; a file planted there since is
# not written through).
unrecord = @rm -f $(call sq,$(call rec,$(1)))
commit = @set -C; r=$(call sq,$(call rec,$(1))); [ -d "$${r%/*}" ] || mkdir -p "$${r%/*}"; \
	printf '%s\n' $(call sq,$(2)) >"$$r"
# mine STAGE[,K]: this make makes STAGE's products (part K's): it runs
# STAGE (as part K), or no stage (the one-process build).  own STAGE[,K]:
# the first line of every recipe: it refuses to make another's product.
mine = $(if $(STAGED),$(and $(filter $(1),$(STAGED)),$(if $(2),$(filter $(2),$(K)),ok)),ok)
own = $(if $(call mine,$(1),$(2)),,@printf '%s\n' $(call sq,$(ME): $@: missing or out of date (made from other inputs or options than this build's): run the stage $(1)$(if $(2), (part $(2) of $(N))) again) >&2; exit 1)
# tmp P: a shell command setting t to a new temporary file beside P
# (mode as the umask asks), for a product no tool writes itself.
tmp = t=$$(mktemp $(call sq,$(1)).XXXXXX) && chmod "$$(printf %o $$((0666 & ~0$$(umask))))" "$$t"
.DEFAULT_GOAL := all
.PHONY: FORCE
FORCE:
