# podflow: explain why a Kubernetes Pod is not running, from evidence, offline.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
BIN      := bin/podflow
DEMO     ?= testdata/bundles/demo

# Tools are built from the Go module proxy into the machine-level cache (the folder
# .ci/run uses), one folder per version, so a pin change rebuilds and nothing is
# installed system-wide.
CACHE_DIR             ?= $(or $(PODFLOW_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/podflow)
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT         := $(CACHE_DIR)/tools/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

.PHONY: all build test bench e2e record demo lint fmt clean

all: build

## build: a static podflow binary in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/podflow

## test: unit and golden tests; hermetic, no cluster needed
test:
	$(GO) test ./...

## bench: benchmarks for loading, analysis and redaction
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## e2e: start a real control plane and node on loopback, reproduce every scenario, collect and check
e2e: build
	testbed/e2e.sh

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

$(GOLANGCI_LINT):
	GOBIN=$(@D) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
