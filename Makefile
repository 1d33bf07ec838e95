# j17: the event-sourcing platform as one self-hosted binary.
GO        ?= go
BIN       := bin/j17
DATA      ?= ./data
LISTEN    ?= 127.0.0.1:8017
FUZZTIME  ?= 30s
TESTFLAGS ?= -race -timeout 9m

.PHONY: build run test vet bench fuzz soak clean

build:
	$(GO) build -o $(BIN) ./cmd/j17

run: build
	./$(BIN) serve --data $(DATA) --listen $(LISTEN)

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo 'gofmt: files above need formatting'; exit 1; }

test: vet
	$(GO) test $(TESTFLAGS) ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fuzz:
	FUZZTIME=$(FUZZTIME) ./fuzz/run.sh

clean:
	rm -rf bin
