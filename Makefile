# informerkit — see README.md. Every target works on a fresh machine with only Go installed.
SHELL := /usr/bin/env bash
GO ?= go
FUZZTIME ?= 30s
BENCHTIME ?= 1s
BENCHCOUNT ?= 6
BENCH ?= .
# Packages of the root module (nested modules e2e/, bench/, compat/, examples/otel/ and
# docs/dashboard/ are excluded by go itself).
PKGS := ./...

.PHONY: all test vet fmt-check unit stress bench bench-compare bench-real bench-controllers fuzz explore demo walkthrough study-check otel dashboard dashboard-test e2e e2e-build compat schema schema-check clean

all: test

## test: everything that does not need the real kube-apiserver (vet, gofmt, race tests, fuzz seed corpora).
test: vet fmt-check unit

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go') | grep -v '^testdata/' || true); \
	if [ -n "$$out" ]; then echo "gofmt needs to run on:"; echo "$$out"; exit 1; fi

unit:
	$(GO) test -race -count=1 $(PKGS)

## stress: make test's packages STRESS_RUNS (5) times with -race while busy loops keep every core
## busy; reports every failing test of every run (see .ci/stress for the knobs).
stress:
	GO=$(GO) STRESS_PKGS='$(PKGS)' ./.ci/stress

## bench: informerkit's own benchmarks with allocation figures.
bench:
	$(GO) test -run='^$$' -bench='$(BENCH)' -benchmem -benchtime=$(BENCHTIME) $(PKGS)

## bench-compare: informerkit and client-go side by side in one process; prints medians and ratios.
# The test binary is built once and run BENCHCOUNT times with -count=1, so the two implementations'
# repetitions interleave in time instead of running back to back on a noisy machine.
bench-compare:
	@set -eo pipefail; cd bench; mkdir -p results; $(GO) test -c -o results/bench.test . ; \
	out=results/bench-$$(date +%Y%m%d-%H%M%S).txt; \
	for i in $$(seq $(BENCHCOUNT)); do \
	  ./results/bench.test -test.run='^$$' -test.bench='$(BENCH)' -test.benchmem -test.benchtime=$(BENCHTIME) -test.count=1; \
	done | tee $$out; \
	$(GO) run ./cmd/benchtable < $$out

## bench-real: informerkit's informer (its defaults: protobuf for built-in kinds, and
## informerkit-json, the same over JSON) against client-go v0.37.2's (its defaults: protobuf,
## WatchList) on the real kube-apiserver (v1.37.2) of bin/ (built like make e2e-build), each in
## a process of its own, interleaved over BENCH_REAL_ROUNDS rounds: medians and ratios of time
## to sync, process CPU, live and peak heap, events/s through a handler, a forced relist and
## a custom-resource fleet, with an SVG chart. BENCH_REAL_PODS=20000 for the README's figures.
BENCH_REAL_PODS ?= 5000
BENCH_REAL_ROUNDS ?= 3
BENCH_REAL_BIN ?= $(abspath bin)
bench-real:
	cd e2e && $(MAKE) build BIN=$(BENCH_REAL_BIN)
	@set -eo pipefail; cd bench; mkdir -p results; $(GO) build -o results/benchreal ./cmd/benchreal; \
	./results/benchreal run -bindir $(BENCH_REAL_BIN) -pods $(BENCH_REAL_PODS) -rounds $(BENCH_REAL_ROUNDS) \
	  -chart results/bench-real-$$(date +%Y%m%d).svg | tee results/bench-real-$$(date +%Y%m%d-%H%M%S).txt

## bench-controllers: a whole controller (Deployments owning Pods, a custom resource owning
## ConfigMaps) built on informerkit against the same built on controller-runtime v0.25.2, each a
## binary and a process of its own, on the real kube-apiserver of BENCH_REAL_BIN, interleaved
## over BENCH_CTL_ROUNDS rounds (bench/cmd/benchctl): binary size, time, CPU and peak RSS to
## ready, RSS and goroutines at rest, reconciles/s, CPU per reconcile and change-to-reconcile
## latency through a burst, with an SVG chart. BENCH_CTL_DEPLOYMENTS=200 BENCH_CTL_APPS=50 for a
## quick run; the defaults are the README's figures (20,000 Pods, 2,000 custom resources).
BENCH_CTL_DEPLOYMENTS ?= 2000
BENCH_CTL_APPS ?= 2000
BENCH_CTL_ROUNDS ?= 3
bench-controllers:
	cd e2e && $(MAKE) build BIN=$(BENCH_REAL_BIN)
	@set -eo pipefail; cd bench; mkdir -p results; $(GO) build -o results/benchctl ./cmd/benchctl; \
	$(GO) build -o results/informerkit ./cmd/benchctl/informerkit; \
	$(GO) build -o results/controllerruntime ./cmd/benchctl/controllerruntime; \
	./results/benchctl -bindir $(BENCH_REAL_BIN) -deployments $(BENCH_CTL_DEPLOYMENTS) -apps $(BENCH_CTL_APPS) \
	  -rounds $(BENCH_CTL_ROUNDS) -chart results/bench-controllers-$$(date +%Y%m%d).svg | tee results/bench-controllers-$$(date +%Y%m%d-%H%M%S).txt

## fuzz: run every fuzz target of the root module for FUZZTIME each.
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "== $$pkg $$t ($(FUZZTIME))"; \
	    $(GO) test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZTIME) $$pkg; \
	  done; \
	done

## explore: the explorer (docs/explore.md) with a long budget: every example controller and
## every fixed corpus controller EXPLORE_RUNS (300) perturbed runs, then the search for each
## corpus bug from 5 seeds (the figures of bench/README.md, "The explorer").
EXPLORE_RUNS ?= 300
# The packages whose tests import the explorer (the -explore.* flags are theirs).
EXPLORE_PKGS := ./examples/widgets ./examples/configmapreplicator ./examples/deployment ./examples/nodepool
explore:
	$(GO) test -count=1 -run '^TestExplore' $(EXPLORE_PKGS) -explore.runs=$(EXPLORE_RUNS)
	$(GO) test -count=1 -run '^TestCorpusFixedVersionsPass$$' ./controller/controllertest/explore -explore.runs=$(EXPLORE_RUNS)
	$(GO) test -count=1 -v -run '^TestCorpusFigures$$' ./controller/controllertest/explore -corpus.figures=5 | grep -v '^=== '

## demo: the example controller against the embedded API server (or KUBECONFIG=path for a real cluster).
demo:
	$(GO) run ./cmd/demo $(if $(KUBECONFIG),--kubeconfig=$(KUBECONFIG))

## walkthrough: regenerate docs/walkthrough.md and docs/walkthrough.svg from a run of
## cmd/walkthrough's scenario, figures included (make test checks that they are current).
walkthrough:
	INFORMERKIT_WRITE_WALKTHROUGH=1 $(GO) test -count=1 -run='^TestWalkthroughIsCurrent$$' ./cmd/walkthrough/

## study-check: apply each exercise of docs/study.md to a copy of its file and check that the
## test it names then fails as the page says (one go test per exercise; in .ci/run).
study-check:
	INFORMERKIT_STUDY_CHECK=1 $(GO) test -count=1 -run='^TestStudyExercisesFailAsDescribed$$' -v ./cmd/walkthrough/

## otel: the OpenTelemetry adapter of package tracing and its traced demo (nested module
## examples/otel/; `cd examples/otel && go run ./cmd/tracedemo` prints one object's trace).
otel:
	cd examples/otel && $(GO) vet ./... && $(GO) test -race -count=1 ./...

## dashboard: redraw docs/dashboard/informerkit.png, the Grafana dashboard's panels, from a
## 90 s workload's /metrics (nested module docs/dashboard/); dashboard-test checks its queries.
dashboard:
	cd docs/dashboard && $(GO) run . -out informerkit.png

dashboard-test:
	cd docs/dashboard && $(GO) vet ./... && $(GO) test -race -count=1 ./...

## e2e: build (once, cached in bin/) and start etcd + kube-apiserver v1.37.2, run e2e/, stop
## them. E2E_RELEASE=1.36: the same on v1.36.3, built into bin/1.36 (e2e/README.md, Releases).
e2e:
	cd e2e && $(MAKE) e2e

e2e-build:
	cd e2e && $(MAKE) build

## compat: real clients (client-go, controller-runtime, kubectl) against apitest, and kubeproto
## against k8s.io/apimachinery's protobuf serializer (nested module compat/).
compat:
	cd compat && $(GO) vet ./... && \
	  $(GO) build -o bin/kubectl -ldflags="-X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" ./cmd/kubectl && \
	  $(GO) test -race -count=1 ./...

## crsuites: controller-runtime v0.25.2's envtest-backed test suites, unchanged, on apitest and
## on the real kube-apiserver of make e2e-build, one fresh server per package; writes the
## table of docs/apitest.md, "controller-runtime suites" (compat/cmd/crsuites; about 8 min on
## 2 cores). Heavy: run it under `flock /tmp/informerkit-heavy.lock` on a shared machine.
.PHONY: crsuites crsuites-check
CRSUITES_FLAGS ?=
crsuites: e2e-build
	cd compat && $(GO) run ./cmd/crsuites -docs ../docs/apitest.md $(CRSUITES_FLAGS)

## crsuites-check: the apitest side of crsuites only (CI): fails on any failing spec that
## compat/cmd/crsuites/exceptions.json does not list with its reason.
crsuites-check:
	cd compat && $(GO) run ./cmd/crsuites -servers apitest -check $(CRSUITES_FLAGS)

## schema: regenerate kubeschema/schema.json from the release pinned in e2e/tools/go.mod.
schema:
	cd e2e/tools && $(GO) run ./schemagen -o ../../internal/kubeschema/schema.json

## schema-check: fail if kubeschema/schema.json is not what its sources generate.
schema-check:
	cd e2e/tools && $(GO) run ./schemagen -check -o ../../internal/kubeschema/schema.json

clean:
	rm -rf bin e2e/bin
