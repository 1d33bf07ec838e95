# j17: the event-sourcing platform as one self-hosted binary.
GO        ?= go
BIN       := bin/j17
DATA      ?= ./data
LISTEN    ?= 127.0.0.1:8017
FUZZTIME  ?= 30s
TESTFLAGS ?= -race -timeout 9m

.PHONY: build run test vet bench bench-compare fuzz soak clean

build:
	$(GO) build -o $(BIN) ./cmd/j17

run: build
	./$(BIN) serve --data $(DATA) --listen $(LISTEN)

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo 'gofmt: files above need formatting'; exit 1; }

test: vet
	$(GO) test $(TESTFLAGS) ./...

bench: build
	bash bench/install-peers.sh
	$(GO) run ./bench/cmd/loadgen run $(if $(BENCH_QUICK),-quick) -j17 $(BIN) -out bench/out -markdown BENCHMARKS.md \
		-command 'make bench$(if $(BENCH_QUICK), BENCH_QUICK=1)$(if $(BENCH_ARGS), BENCH_ARGS="$(BENCH_ARGS)")' $(BENCH_ARGS)
	bash bench/micro.sh >> BENCHMARKS.md

bench-compare: build
	@test -n '$(OLD)' || { echo 'usage: make bench-compare OLD=<git ref> [BENCH_QUICK=1] [BENCH_ARGS=...]'; exit 2; }
	./bench/compare.sh '$(OLD)' $(if $(BENCH_QUICK),-quick) $(BENCH_ARGS)

fuzz:
	FUZZTIME=$(FUZZTIME) ./fuzz/run.sh

# make soak [SOAK_TIME=10m] [SOAK_KILL=1m]: traffic with a SIGKILL restart every SOAK_KILL (0 = none).
soak: build
	$(GO) run ./soak/cmd/soak -j17 $(BIN) -time $(or $(SOAK_TIME),10m) -kill-every $(or $(SOAK_KILL),1m)

clean:
	rm -rf bin
