# gpufabric.roce — the two commands of the README:
#   make lab    boot the two-node kernel lab and roll the collection out on it
#   make test   lint, ansible-test sanity, unit tests and the molecule scenarios
# Both install what they need first (Debian packages with apt-get, Python packages into .venv).

SHELL := /bin/bash
.DEFAULT_GOAL := help
.ONESHELL:
.SHELLFLAGS := -euo pipefail -c

REPO := $(CURDIR)
VENV ?= $(REPO)/.venv
BIN := $(VENV)/bin
# The venv's interpreter: Debian's python3 where there is one (make deps installs python3-venv for it), not the
# first python3 on PATH (pyenv's on this workplace's machines). Debian builds it with PGO and LTO and links most
# C modules into the binary (28 shared objects mapped after importing Ansible's module_utils and pyroute2, against
# 48 and libpython for pyenv's --enable-shared build). Every module run in a lab guest starts this interpreter and
# maps those files under TCG: the same imports took 27 % less of the guest's CPU (four runs each, side by side in
# one guest), and site.yml on the controller about 9 % less.
PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)

export PATH := $(BIN):$(PATH)
export ANSIBLE_CONFIG := $(REPO)/ansible.cfg
export ANSIBLE_COLLECTIONS_PATH := $(REPO)/.build/collections
export GPUFABRIC_LAB_DIR := $(REPO)/lab
# The shared test data (envtest, charts, CRDs): ../shared beside this checkout, or, for a clone made
# elsewhere (git clone <checkout> "$$(mktemp -d)"), ../shared beside the checkout it was cloned from.
__ORIGIN := $(patsubst file://%,%,$(shell git -C $(REPO) remote get-url origin 2>/dev/null))
ifeq ($(origin GPUFABRIC_SHARED_DIR),undefined)
GPUFABRIC_SHARED_DIR := $(firstword $(wildcard $(abspath $(REPO)/../shared) \
	$(if $(filter /%,$(__ORIGIN)),$(abspath $(__ORIGIN)/../shared))))
endif
export GPUFABRIC_SHARED_DIR
# Empty when there is no shared/crds: the schema tests then download the pinned upstream CRDs
# (tests/crds/fetch_upstream_crds.py, sha256-checked) into .cache/crds.
ifeq ($(origin GPUFABRIC_CRDS_DIR),undefined)
GPUFABRIC_CRDS_DIR := $(if $(GPUFABRIC_SHARED_DIR),$(wildcard $(GPUFABRIC_SHARED_DIR)/crds))
endif
export GPUFABRIC_CRDS_DIR
# molecule/ansible-compat must not try Galaxy: everything comes from the venv and this checkout.
export ANSIBLE_GALAXY_SERVER_LIST :=
export MOLECULE_NO_LOG := false

COLLECTION_LINK := $(REPO)/.build/collections/ansible_collections/gpufabric/roce

.PHONY: help deps deps-system deps-python link lab lab-up lab-down lab-status test lint sanity unit integration matrix k8s molecule molecule-lab molecule-lab-loaded molecule-k8s-render molecule-k8s changelog clean

help:
	@echo "make lab     boot the two-node kernel lab, run playbooks/site.yml on it, print the report, tear it down"
	@echo "make test    lint + ansible-test sanity + unit tests + molecule scenarios (what CI runs)"
	@echo "make lab-up / lab-down / lab-status   keep the lab running to explore it (lab/labctl.py ssh node1)"

## ---- set-up ---------------------------------------------------------------

deps: deps-system deps-python link

deps-system:
	@$(REPO)/lab/install-system-deps.sh

deps-python: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt
	@echo "deps: creating $(VENV) and installing requirements-dev.txt"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -q -r requirements-dev.txt
	touch $@

# Playbooks and molecule resolve gpufabric.roce.* through this link, as if installed.
# Replaced only when wrong: ln -sfn unlinks first, and the lab scenario running beside the other
# stages would then miss the collection for an instant.
link:
	@mkdir -p $(dir $(COLLECTION_LINK))
	[ "$$(readlink $(COLLECTION_LINK) || true)" = "$(REPO)" ] || ln -sfn $(REPO) $(COLLECTION_LINK)

## ---- the lab ----------------------------------------------------------------

lab: deps
	@start=$$(date +%s)
	$(BIN)/python lab/labctl.py up
	rc=0
	$(BIN)/ansible-playbook -i inventories/lab playbooks/site.yml || rc=$$?
	$(BIN)/python lab/labctl.py down
	echo "make lab: finished in $$(( $$(date +%s) - start ))s, exit $$rc"
	exit $$rc

lab-up: deps
	$(BIN)/python lab/labctl.py up

lab-down:
	$(PYTHON) lab/labctl.py down

lab-status:
	$(PYTHON) lab/labctl.py status

## ---- tests ------------------------------------------------------------------

# Two lanes share the 2 cores. The background lane starts first with molecule lab (TCG guests; output in
# .build/logs/stage-labs.out, shown when it ends); the foreground lane runs the controller-only stages beside it.
# The floating stages go to whichever lane is free first (each claimed once, by an atomic mkdir): which lane
# ends first depends on the machine, and earlier layouts that pinned sanity and the reboot lab to one side
# flip-flopped with it (a337be8, 5a96393, 50acb87). The reboot lab has its own ports (REBOOTLAB_PORT_BASE),
# so it may run beside molecule lab.
# Every stage's wall time, lane and exit code go to .build/logs/stage-times.tsv and the table printed last.
STAGE_LOGS := $(REPO)/.build/logs
FOREGROUND_STAGES := lint unit integration k8s molecule-k8s-render molecule-k8s
BACKGROUND_STAGES := molecule-lab
# matrix: the controller matrix (2.21 and 2.22 on Debian 13); matrix-sanity: ansible-test sanity with the newest cell's
# ansible-test, which stands for the sanity stage in make test (`make sanity` runs the pinned .venv's). Two stages, so
# that the lanes end together: make test runs each stage with MATRIX_SANITY=0, which keeps sanity out of matrix.
FLOATING_STAGES := molecule-lab-reboot matrix matrix-sanity
test: deps link
	@start=$$(date +%s)
	mkdir -p $(STAGE_LOGS)
	times=$(STAGE_LOGS)/stage-times.tsv
	claims=$(STAGE_LOGS)/claims
	: > "$$times"
	rm -rf "$$claims"; mkdir -p "$$claims"
	stage() {
	  local name=$$1 lane=$$2 t0 rc=0
	  t0=$$(date +%s)
	  $(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) "$$name" MATRIX_SANITY=0 || rc=$$?
	  printf '%s\t%s\t%s\t%s\n' "$$name" "$$lane" "$$(( $$(date +%s) - t0 ))" "$$rc" >> "$$times"
	  return $$rc
	}
	floating() {
	  local s
	  for s in $(FLOATING_STAGES); do
	    mkdir "$$claims/$$s" 2>/dev/null || continue
	    stage "$$s" "$$1" || { rc=$$?; failed=$$s; return $$rc; }
	  done
	}
	show_times() {
	  echo "== stage wall times (s; the background lane ran beside the foreground lane)"
	  awk -F'\t' 'BEGIN { printf "%-22s %-11s %8s %5s\n", "stage", "lane", "seconds", "exit" } { printf "%-22s %-11s %8s %5s\n", $$1, $$2, $$3, $$4 }' "$$times"
	}
	# Its own process group (set -m), so that stop_lab reaches molecule, ansible and the VMs' launcher.
	set -m
	( for s in $(BACKGROUND_STAGES); do stage "$$s" background || exit $$?; done; floating background ) > $(STAGE_LOGS)/stage-labs.out 2>&1 &
	lab=$$!
	set +m
	# A failed foreground stage ends the run: stop the background lane (its VMs too) instead of waiting for it.
	stop_lab() {
	  kill -TERM -- "-$$lab" 2>/dev/null || true
	  wait "$$lab" 2>/dev/null || true
	  $(BIN)/python lab/labctl.py down > /dev/null 2>&1 || true
	  $(BIN)/python lab/rebootlab.py down > /dev/null 2>&1 || true
	}
	rc=0
	for s in $(FOREGROUND_STAGES); do stage "$$s" foreground || { rc=$$?; break; }; done
	failed=$$s
	[ $$rc -ne 0 ] || floating foreground || rc=$$?
	if [ $$rc -ne 0 ]; then
	  echo "make test: stage $$failed failed; stopping the background lane"
	  stop_lab; show_times; exit $$rc
	fi
	echo "== waiting for the background lane ($(BACKGROUND_STAGES) and what it claimed of $(FLOATING_STAGES)); output in $(STAGE_LOGS)/stage-labs.out"
	labrc=0
	wait "$$lab" || labrc=$$?
	tail -n 60 $(STAGE_LOGS)/stage-labs.out
	if [ $$labrc -ne 0 ]; then show_times; exit $$labrc; fi
	show_times
	echo "make test: all stages passed in $$(( $$(date +%s) - start ))s"

# ansible-lint resolves gpufabric.roce.* through the collection link, so lint makes it itself.
# antsibull-docs copies the checkout (git-tracked and untracked-but-not-ignored files) into a
# temporary ansible_collections tree, so it needs no link and no network.
lint: link
	@echo "== lint: yamllint, ruff, ansible-lint, antsibull-docs, antsibull-changelog, role READMEs"
	$(BIN)/yamllint -s .
	$(BIN)/ruff check .
	$(BIN)/python .ci/role_readme.py --check
	$(BIN)/ansible-lint --offline -q
	$(BIN)/antsibull-docs lint-collection-docs --plugin-docs .
	$(BIN)/antsibull-changelog lint

sanity:
	@echo "== ansible-test sanity"
	PYTHON=$(BIN)/python tests/sanity/run.sh

unit:
	@echo "== unit tests"
	$(BIN)/python -m pytest -q tests/unit

# Playbook-level tests on the controller: site.yml under ansible-runner (as AWX runs it), role renders.
# Two workers, a file each at a time (--dist loadfile: a file's tests share their fixtures): beside the labs the serial
# run used about 0.7 of a core, waiting on ansible-playbook's processes; with two workers 608 s -> 478 s there.
integration: link
	@echo "== integration tests (ansible-runner, render mode; two workers)"
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=10 tests/integration

# The controller matrix (issue 44): the ansible-core releases the pinned .venv cannot run (2.21, 2.22: Python >= 3.12
# and 3.13), each in a venv of a Debian 13 root filesystem that .ci/controller_matrix.py makes with mmdebstrap from this
# machine's apt mirror and fills with pip as this machine's pip is configured (cached in .build/controllers; rebuilt
# when the script or a cell's requirements in .ci/controllers change). On each cell, in turn: the unit tests, the
# render goldens byte for byte and site.yml's validation; a failure names the cell. Then ansible-test sanity with the
# newest cell's ansible-test (MATRIX_SANITY=0 leaves it out; matrix-sanity runs it alone). Needs root. Floating stages
# of make test.
# MATRIX_CELLS picks cells (.ci/controllers/ansible-core-<cell>.txt); MATRIX_PYTEST replaces the checks. The floor,
# 2.16 (on this machine's Python 3.11), is not in the default yet: 12 of its 53 golden and validation checks fail and 7
# unit test files import 2.19's APIs (issue 44).
MATRIX_CELLS ?= 2.21 2.22
MATRIX_PYTEST ?=
MATRIX_SANITY ?= 1
matrix: link
	@echo "== controller matrix (ansible-core on Python 3.13, Debian 13)"
	start=$$(date +%s)
	$(BIN)/python .ci/controller_matrix.py run $(MATRIX_CELLS) $(if $(MATRIX_PYTEST),-- $(MATRIX_PYTEST))
	if [ "$(MATRIX_SANITY)" = 1 ]; then $(BIN)/python .ci/controller_matrix.py sanity; fi
	echo "make matrix: passed in $$(( $$(date +%s) - start ))s"

# The newest cell's ansible-test sanity alone: make test's stage beside the matrix's cells (the cells' cache is shared).
.PHONY: matrix-sanity
matrix-sanity: link
	@echo "== ansible-test sanity of the newest controller cell"
	$(BIN)/python .ci/controller_matrix.py sanity

# The control-plane harness and stand-ins (lab/k8s) against a real kube-apiserver, kube-scheduler and helm,
# with the real network-operator chart: binaries from KUBEBUILDER_ASSETS or ../shared/envtest.
# In two pytest processes side by side: most of the stage is waiting (polls, the stand-ins' delays, helm --wait), so the
# halves overlap their waits. Each half starts its own control planes and has its own --basetemp. The first half holds
# the files on the session control plane (test_ipam_refusals.py while it is empty, then the ones that share its chart;
# test_standins.py stops it last) and test_secrets.py; the
# second every other file (a new file goes there unless named here), each on control planes of its module's own (no
# session control plane idles there until the half ends). The files are split so that the halves take about as long (their times: benchmarks/README.md,
# "make test stages").
K8S_FIRST_HALF := test_secrets.py test_ipam_refusals.py test_shared_cluster.py test_standins.py test_teardown.py \
  test_standin_logic.py test_nic_config_standin_logic.py test_nic_config.py \
  test_gitops_render.py test_rollout_wait.py test_dra.py
k8s:
	@echo "== k8s harness tests (real control plane, stand-ins, real chart; two halves side by side)"
	mkdir -p $(STAGE_LOGS)
	first="$(addprefix tests/k8s/,$(K8S_FIRST_HALF))"
	rest=$$(for f in tests/k8s/test_*.py; do case " $$first " in *" $$f "*) ;; *) echo "$$f";; esac; done)
	GPUFABRIC_K8S_HALF=1 $(BIN)/python -m pytest -q -p no:cacheprovider --durations=10 --basetemp=$(REPO)/.build/pytest-k8s-1 \
	  $$first > $(STAGE_LOGS)/k8s-1.log 2>&1 & one=$$!
	GPUFABRIC_K8S_HALF=2 $(BIN)/python -m pytest -q -p no:cacheprovider --durations=10 --basetemp=$(REPO)/.build/pytest-k8s-2 \
	  $$rest > $(STAGE_LOGS)/k8s-2.log 2>&1 & two=$$!
	rc1=0; wait $$one || rc1=$$?
	rc2=0; wait $$two || rc2=$$?
	echo "-- first half: $$first"; cat $(STAGE_LOGS)/k8s-1.log
	echo "-- second half: $$(echo $$rest)"; cat $(STAGE_LOGS)/k8s-2.log
	[ $$rc1 -eq 0 ] && [ $$rc2 -eq 0 ]

molecule: molecule-k8s-render molecule-k8s molecule-lab molecule-lab-reboot

# CI keeps the tail of its log, where a molecule failure shows only the scenario recap: each scenario's
# output is also kept in .build/logs, and on failure .ci/failure_digest.py prints the failed tasks last.
define molecule_test
	mkdir -p $(REPO)/.build/logs
	rc=0
	$(BIN)/molecule test -s $(1) 2>&1 | tee $(REPO)/.build/logs/molecule-$(1).log || rc=$$?
	if [ $$rc -ne 0 ]; then $(PYTHON) $(REPO)/.ci/failure_digest.py $(REPO)/.build/logs/molecule-$(1).log; fi
	exit $$rc
endef

molecule-lab:
	@echo "== molecule test -s lab (two VMs, real kernel)"
	$(call molecule_test,lab)

# molecule lab beside a bounded CPU hog (lab/cpu_hog.py: HOG_PROCS busy processes for at most
# HOG_SECONDS), stopped whatever the outcome. The load average is sampled every 30 s into
# lab/build/loaded-run/<time>/load.log; the VMs' sshd and health logs are kept beside it.
HOG_PROCS ?= 10
HOG_SECONDS ?= 5400
molecule-lab-loaded: link
	@out=$(REPO)/lab/build/loaded-run/$$(date -u +%Y%m%dT%H%M%SZ)
	mkdir -p "$$out"
	start=$$(date +%s)
	$(BIN)/python lab/cpu_hog.py run --procs $(HOG_PROCS) --seconds $(HOG_SECONDS) \
	  --pidfile "$$out/hog.pid" --load-log "$$out/load.log" > "$$out/hog.out" 2>&1 &
	hog=$$!
	stop_hog() {
	  kill -TERM "$$hog" 2>/dev/null || true
	  wait "$$hog" 2>/dev/null || true
	  $(BIN)/python lab/cpu_hog.py stop --pidfile "$$out/hog.pid" > /dev/null
	  cat "$$out/hog.out"
	}
	trap stop_hog EXIT
	trap 'exit 130' INT TERM HUP
	echo "== molecule test -s lab beside $(HOG_PROCS) busy processes (output in $$out)"
	rc=0
	LAB_KEEP_LOGS="$$out/lab-logs" $(BIN)/molecule test -s lab > "$$out/molecule.log" 2>&1 || rc=$$?
	tail -n 40 "$$out/molecule.log"
	echo "molecule-lab-loaded: exit $$rc after $$(( $$(date +%s) - start ))s; load samples and logs in $$out"
	exit $$rc

# The reboot proof: both lab nodes booted with systemd as init (lab/rebootlab.py: node1 on an mmdebstrap'd
# Debian 13 image with its own kernel and an igb PF, node2 on Debian 12 with the lab's kernel and netdevsim, cached in
# lab/build/rebootlab; the first run on a machine downloads and builds them),
# the host phases rolled out with persist: true, both nodes rebooted, everything read back.
.PHONY: molecule-lab-reboot
molecule-lab-reboot: link
	@echo "== molecule test -s lab_reboot (systemd boot, persist: true, reboot, read back)"
	start=$$(date +%s)
	( $(call molecule_test,lab_reboot) )
	echo "molecule lab_reboot: passed in $$(( $$(date +%s) - start ))s"

molecule-k8s-render:
	@echo "== molecule test -s k8s_render (manifests + CRD schemas, no cluster)"
	$(call molecule_test,k8s_render)

# site.yml (phases operator, sriov, verify in pod mode) in apply mode against a real kube-apiserver,
# kube-scheduler, kube-controller-manager and helm with the real network-operator chart; stand-ins
# (lab/k8s) play the kubelet and the operators. Binaries from KUBEBUILDER_ASSETS or ../shared/envtest.
molecule-k8s: link
	@echo "== molecule test -s k8s (real control plane, real chart, stand-ins for kubelet and operators)"
	$(call molecule_test,k8s)

# CHANGELOG.rst from changelogs/fragments (kept: keep_fragments), folded into the current version's release
# (galaxy.yml) until it ships; antsibull-changelog lists new plugins through ansible-doc, hence the link.
changelog: link
	$(BIN)/antsibull-changelog release --update-existing

clean:
	-$(PYTHON) lab/labctl.py down
	-$(PYTHON) lab/rebootlab.py down
	rm -rf .build tests/output lab/build render-out
