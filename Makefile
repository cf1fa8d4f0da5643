# podflow: explain why a Kubernetes Pod is not running, from evidence, offline.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
BIN      := bin/podflow
DEMO     ?= testdata/bundles/demo
# Where the release archives are published; the krew manifest points there.
HOMEPAGE    ?= https://podflow.dev
RELEASE_URL ?= $(HOMEPAGE)/releases/$(VERSION)

# Tools are built from the Go module proxy into the machine-level cache (the folder
# .ci/run uses), one folder per version, so a pin change rebuilds and nothing is
# installed system-wide.
CACHE_DIR             ?= $(or $(PODFLOW_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/podflow)
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT         := $(CACHE_DIR)/tools/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

.PHONY: all build test fuzz bench bench-go bench-redact bench-fleet e2e e2e-scale record demo release lint fmt clean incidents catalog catalog-coverage

all: build

## build: a static podflow binary in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/podflow

## release: static binaries for linux/darwin amd64/arm64 and windows amd64, with
## SHA256SUMS and the krew manifest, in dist/ (PLATFORMS=linux/amd64 builds only those)
release:
	packaging/release.sh '$(VERSION)' '$(COMMIT)' '$(RELEASE_URL)' '$(HOMEPAGE)' $(PLATFORMS)

## test: unit and golden tests; hermetic, no cluster needed. The timeout is go test's
## guard against a hang, per package: cmd/podflow's corpus tests need more than the
## default 10 minutes on a 2-core machine shared with other work.
test:
	$(GO) test -timeout 30m ./...

## fuzz: every fuzz target in turn, FUZZTIME each (default 30s). Minimizing a new
## input is capped at FUZZMINTIME (default 5s): Go's default of 60s spends a short
## run minimizing an input that only grows the corpus, instead of fuzzing.
## FUZZ=FuzzRedact runs the targets whose name starts with it.
FUZZTIME    ?= 30s
FUZZMINTIME ?= 5s
FUZZ        ?= Fuzz
fuzz:
	@set -e; grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' . | grep -E ':func $(FUZZ)' | sort | \
	while IFS=: read -r file decl; do \
	  target=$${decl#func }; dir=./$$(dirname $${file#./}); \
	  echo "== $$dir $$target"; \
	  $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) $$dir; \
	done

## incidents: run podflow over the corpus of real incidents and print accuracy per stage
## and the cases it misses (INCIDENTS=DIR scores folders of the same layout instead,
## without the corpus's accuracy bars)
INCIDENTS ?=
incidents:
	PODFLOW_INCIDENTS='$(INCIDENTS)' $(GO) test ./cmd/podflow -run '^TestIncidents$$' -count=1 -v | sed -n '/incident corpus/,/^---/p'

## catalog: regenerate catalog/data/ from the released sources pinned in catalog/gen/pins.yaml
## and the curated entries in catalog/gen/curated.yaml
## (downloads them into the Go module cache; CI does not run it)
catalog:
	nice $(GO) run ./catalog/gen -pins catalog/gen/pins.yaml -curated catalog/gen/curated.yaml -out catalog/data/catalog.jsonl.gz

## catalog-coverage: the share of the incident corpus's warning and error lines the catalog recognizes
## (COVERAGE_FLAGS=-list lists every unrecognized line and the lines outside the measure)
catalog-coverage:
	$(GO) run ./catalog/coverage $(COVERAGE_FLAGS) testdata/incidents

## bench: podflow side by side with the floor (stream, decode, split) on generated S/M/L/XL bundles (XL is 4×L);
## BENCH_FLAGS='-commands analyze,analyze-scoped' adds analyze -n of one namespace (-namespace)
BENCH_SIZES ?= S,M
BENCH_CACHE ?= .cache/bench
bench: build
	$(GO) build -o $(BENCH_CACHE)/floor ./testdata/floor
	$(GO) run ./testdata/bench -sizes $(BENCH_SIZES) -podflow $(BIN) -floor $(BENCH_CACHE)/floor -cache $(BENCH_CACHE) $(BENCH_FLAGS)

## bench-go: Go benchmarks for loading, analysis and redaction
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-redact: redaction of logs, journals and Pod-list JSON timed in turns with gzip -6 of the same bytes
bench-redact:
	$(GO) test -run '^$$' -bench RedactVsGzip -benchmem -count 3 ./bundle/redact

## bench-fleet: the index on SQLite and PostgreSQL side by side: ingest, look-ups, aggregates,
## phrase search, a new signature over stored lines, size per ticket (FLEET_N=100000 on demand;
## PostgreSQL from .ci/postgres.sh, or FLEET_POSTGRES=postgres://... of your own), then
## index add against analyze and reanalyze --jobs 2 against 1, interleaved, median and
## quartiles (FLEET_FLAGS=-cli measures only those two)
FLEET_N        ?= 10000
FLEET_PG_PORT  ?= 54330
FLEET_POSTGRES ?=
FLEET_FLAGS    ?=
bench-fleet: build
	@pg='$(FLEET_POSTGRES)'; if [ -z "$$pg" ]; then pg=$$(.ci/postgres.sh install $(CACHE_DIR)/postgres/bench $(FLEET_PG_PORT)); fi; \
	$(GO) run ./testdata/benchfleet -n $(FLEET_N) -podflow $(BIN) -postgres "$$pg" $(FLEET_FLAGS)

## e2e: start a real control plane and node on loopback, reproduce every scenario, collect and check
e2e: build
	testbed/e2e.sh

## e2e-scale: podflow collect -A on a real API server with kwok's fake nodes (5k, then 20k
## pods), side by side with kubectl cluster-info dump and a floor; not part of e2e
e2e-scale: build
	testbed/e2e-scale.sh

## record: re-record testdata/bundles/ from the test bed
record: build
	PODFLOW_RECORD=1 testbed/e2e.sh

## demo: run podflow on the example bundle that ships in testdata/
demo: build
	$(BIN) analyze $(DEMO) --fail-on none

## lint: formatting, vet and the linters of .golangci.yml, with a pinned golangci-lint
lint: $(GOLANGCI_LINT)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOLANGCI_LINT_CACHE=$(CACHE_DIR)/golangci-lint $(GOLANGCI_LINT) run ./...

# The linter is built from its module's own folder in the module cache, so only that module is
# asked of the proxy (`go install PKG@V` also asks for every shorter path of the package, and a
# proxy that cannot answer those fails the install); a download that fails is tried again.
$(GOLANGCI_LINT):
	@for try in 1 2 3; do \
	  dir=$$($(GO) mod download -json github.com/golangci/golangci-lint/v2@$(GOLANGCI_LINT_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	  if [ -n "$$dir" ]; then cd "$$dir" && exec $(GO) build -trimpath -o $(abspath $@) ./cmd/golangci-lint; fi; \
	  echo "golangci-lint download failed (try $$try of 3)" >&2; sleep $$((try * 10)); \
	done; exit 1

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin dist
