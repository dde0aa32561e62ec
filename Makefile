# rsbd build, test and maintenance targets. `make check` is the gate for every commit.
GO            ?= go
PROTOC_GEN_GO ?= google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC ?= google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
STATICCHECK   ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOBIN         ?= $(shell $(GO) env GOPATH)/bin
PROTO_FILES   := $(shell find proto -name '*.proto' | sort)
FUZZTIME      ?= 20s
SOAK_TIME     ?= 30m

.PHONY: deps all build install test check fmt vet staticcheck proto proto-check fuzz bench tidy-check bench-compare bench-check soak

all: build

# DEB_PACKAGES are the Debian packages the tests use: protoc for make proto,
# ip and nft for the e2e network namespaces and loss, curl as the gateway's
# independent HTTP client, chromium as the headless browser that subscribes
# to the gateway over WebSocket, prometheus for promtool (the alerting rules),
# kcat, redis-server, nats-server, mosquitto (with its clients) and
# rabbitmq-server for the broker bridges.
DEB_PACKAGES := protobuf-compiler iproute2 nftables curl chromium prometheus kcat redis-server nats-server mosquitto mosquitto-clients rabbitmq-server

# deps installs the DEB_PACKAGES that are missing (needs root).
deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing$$missing"; apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi

build:
	$(GO) build ./...

# install puts the rsbd and rsb binaries in $(GOBIN) (go env GOPATH/bin
# unless set), e.g. make install GOBIN=/usr/local/bin.
install:
	GOBIN=$(GOBIN) $(GO) install ./cmd/rsbd ./cmd/rsb

test:
	$(GO) test -race -shuffle=on -count=1 -timeout 20m ./...

check: fmt vet staticcheck tidy-check test

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	@test -x $(GOBIN)/staticcheck || GOBIN=$(GOBIN) $(GO) install $(STATICCHECK)
	$(GOBIN)/staticcheck ./...

# tidy-check fails when go mod tidy would change the module files of the
# project or of bench/, which requires the project's module.
tidy-check:
	@for d in . bench; do \
		cp $$d/go.mod /tmp/rsbd-go.mod.bak; cp $$d/go.sum /tmp/rsbd-go.sum.bak; \
		(cd $$d && $(GO) mod tidy) || exit 1; \
		if ! cmp -s $$d/go.mod /tmp/rsbd-go.mod.bak || ! cmp -s $$d/go.sum /tmp/rsbd-go.sum.bak; then \
			echo "$$d: go.mod/go.sum not tidy (run go mod tidy there)"; exit 1; fi; \
	done

# proto regenerates the Go code from proto/ with protoc and the pinned protoc-gen-go
# and protoc-gen-go-grpc (which writes stubs only for files that declare a service).
proto:
	@test -x $(GOBIN)/protoc-gen-go && $(GOBIN)/protoc-gen-go --version | grep -q v1.36.12 || GOBIN=$(GOBIN) $(GO) install $(PROTOC_GEN_GO)
	@test -x $(GOBIN)/protoc-gen-go-grpc && $(GOBIN)/protoc-gen-go-grpc --version | grep -q 1.6.2 || GOBIN=$(GOBIN) $(GO) install $(PROTOC_GEN_GO_GRPC)
	protoc -Iproto --plugin=protoc-gen-go=$(GOBIN)/protoc-gen-go \
		--plugin=protoc-gen-go-grpc=$(GOBIN)/protoc-gen-go-grpc \
		--go_out=. --go_opt=module=github.com/rsbd/rsbd \
		--go-grpc_out=. --go-grpc_opt=module=github.com/rsbd/rsbd $(PROTO_FILES)

# proto-check fails when the committed generated code differs from a fresh generation.
proto-check: proto
	@git diff --exit-code -- proto/ || (echo "generated protobuf code is stale: run make proto"; exit 1)

# fuzz runs every fuzz target for FUZZTIME each; minimizing a new input
# stops after 3 s, as targets that run a connection per input would
# otherwise spend FUZZTIME minimizing.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 3s $$pkg || exit 1; \
		done; \
	done

# soak runs three daemons in network namespaces at 5 % loss for SOAK_TIME
# (root, iproute2, nftables; see docs/FAULTS.md) and fails on RSS growth
# past 10 % after warm-up or on any reliable event lost.
soak:
	RSBD_SOAK_TIME=$(SOAK_TIME) $(GO) test -count=1 -run '^TestSoak$$' -v -timeout 0 ./e2e/

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# bench-compare runs the side-by-side comparison with Cyclone DDS and NATS
# (bench/ is its own module; see docs/BENCHMARKS.md).
bench-compare:
	$(MAKE) -C bench bench-compare

# bench-check vets and tests the benchmark module.
bench-check:
	cd bench && $(GO) vet ./... && $(GO) test -count=1 ./...
