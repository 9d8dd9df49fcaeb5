# The two commands of the README:
#   make example   render the bundled 4-SU DGX H100 SuperPOD inventory into out/superpod-4su
#   make test      install everything (Debian tools, a virtualenv) and run the whole test suite
VENV ?= .venv
PY := $(VENV)/bin/python
# Real tools the integration tests feed our output to.
APT_PACKAGES := opensm ibsim-utils infiniband-diags graphviz libyang-tools shellcheck slurmctld slurm-client netplan.io frr \
                iputils-ping lldpd ibutils qemu-system-x86 linux-image-amd64 busybox-static postgresql redis-server \
                dnsmasq-base
# (qemu, a stock kernel and busybox-static: the EVPN lab runs in a VM where the machine's own
# kernel lacks bonding, 802.1Q or VRF; tests/evpn_vm.py)
# (dnsmasq-base: the dnsmasq binary alone, for the ZTP lab in tests/test_ztp_lab.py; the `dnsmasq`
# package would also start a DNS service on the machine itself)

# Arista AVD (pyavd) in a virtualenv of its own, so pyavd's pins never touch the test one:
# `make test` builds it for tests/test_avd.py (AVD renders the same designs, every EOS line is
# compared); `make bench-avd` times fabgen beside it. The scale benchmarks are not part of
# the two commands.
AVD_VENV ?= .venv-avd
# Slurm 25.05 and later read topology.yaml; Debian 12's slurmctld is 22.05. tests/slurm_sid.sh
# unpacks Debian unstable's slurmctld, with everything it links against, into a directory of its
# own (nothing is installed on the machine); tests/test_slurm_yaml.py runs it there, chrooted.
SLURM_ROOT ?= build/slurm-sid
# NetBox (the `netbox` package from PyPI; 4.7 needs Python 3.12 or later) in a virtualenv of its
# own, with PostgreSQL and Redis from Debian: tests/test_netbox_real.py imports renders into it.
# Python: the first python3.13 or python3.12 that runs, else one pyenv keeps.
NETBOX_VERSION := 4.7.3
NETBOX_VENV ?= .venv-netbox
NETBOX_PYTHON ?= $(shell for p in python3.13 python3.12 $(wildcard $(HOME)/.pyenv/versions/3.1[234]*/bin/python3); do \
                 $$p -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null && { echo $$p; break; }; done)
BENCH_ARGS ?=

.PHONY: example test lint system-deps bench bench-diff bench-ansible bench-avd

# fabgen alone (what `make example` needs), then the test tools on top (what `make test` needs)
$(VENV)/.base: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed: $(VENV)/.base
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test]'
	touch $@

system-deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

example: $(VENV)/.base
	$(VENV)/bin/fabgen render inventories/superpod-4su.yaml -o out/superpod-4su
	@echo
	@echo "The output is in out/superpod-4su. Open out/superpod-4su/report.md first: the fabric's size,"
	@echo "its bill of materials and the warnings to act on. The other files are listed in the README."
	@echo "Run fabgen yourself with $(VENV)/bin/fabgen (or: . $(VENV)/bin/activate; fabgen --help)."

test: system-deps $(VENV)/.installed $(AVD_VENV)/.installed $(SLURM_ROOT)/.installed $(NETBOX_VENV)/.installed
	AVD_VENV=$(AVD_VENV) SLURM_ROOT=$(SLURM_ROOT) NETBOX_VENV=$(NETBOX_VENV) $(PY) -m pytest -n 2 --durations=30

# ruff and mypy with the configuration in pyproject.toml (tests/test_lint.py runs the same in `make test`)
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check generator tests benchmarks mutation
	$(VENV)/bin/mypy

$(SLURM_ROOT)/.installed: tests/slurm_sid.sh
	bash tests/slurm_sid.sh $(SLURM_ROOT)
	touch $@

bench: $(VENV)/.installed
	$(PY) benchmarks/run.py $(BENCH_ARGS)

bench-diff: $(VENV)/.installed
	$(PY) benchmarks/diff.py $(BENCH_ARGS)

bench-ansible: $(VENV)/.installed
	$(PY) benchmarks/ansible.py $(BENCH_ARGS)

$(AVD_VENV)/.installed: pyproject.toml
	python3 -m venv $(AVD_VENV)
	$(AVD_VENV)/bin/python -m pip install -q --disable-pip-version-check -e '.[bench-avd]'
	touch $@

$(NETBOX_VENV)/.installed:
	@test -n "$(NETBOX_PYTHON)" || { echo "NetBox $(NETBOX_VERSION) needs Python 3.12 or later: set NETBOX_PYTHON"; exit 1; }
	$(NETBOX_PYTHON) -m venv $(NETBOX_VENV)
	$(NETBOX_VENV)/bin/python -m pip install -q --disable-pip-version-check netbox==$(NETBOX_VERSION)
	touch $@

bench-avd: $(AVD_VENV)/.installed
	$(AVD_VENV)/bin/python benchmarks/compare_avd.py $(BENCH_ARGS)

# Mutation testing (a development tool, not part of `make test` or CI; docs/internals/mutation.md):
# mutmut in a virtualenv of its own under build/, on a copy of the tree under build/mutation/.
#   make mutation                                   every module (qos addressing sizing)
#   make mutation MUTATION_MODULES=sizing MUTATION_ARGS=--again
MUTATION_VENV ?= build/mutation-venv
MUTATION_MODULES ?=
MUTATION_ARGS ?=

$(MUTATION_VENV)/.installed: pyproject.toml
	python3 -m venv $(MUTATION_VENV)
	$(MUTATION_VENV)/bin/python -m pip install -q --disable-pip-version-check -e '.[mutation]'
	touch $@

.PHONY: mutation
mutation: $(MUTATION_VENV)/.installed
	nice -n 19 $(MUTATION_VENV)/bin/python mutation/run.py $(MUTATION_MODULES) $(MUTATION_ARGS)
