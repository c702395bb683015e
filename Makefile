# cronactor — make help lists the targets.
GO ?= go
PKGS := ./...
# staticcheck runs through the module proxy at this pinned version
# (v0.8.2 is staticcheck 2026.2.2, which reads Go 1.26 code).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The platforms every change must still compile for (GOOS/GOARCH).
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)

.PHONY: help run test bench fuzz lint cross tidy build peers chromium postgres chaos

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build bin/cronactor, stamped with the git version and commit
	$(GO) build -ldflags '-X main.version=$(VERSION) -X main.commit=$(COMMIT)' -o bin/cronactor ./cmd/cronactor

peers: ## build bin/cronactor-benchpeers, the peer schedulers of the benchmarks (its own module: internal/benchpeers)
	cd internal/benchpeers && $(GO) build -o ../../bin/cronactor-benchpeers .

run: ## run the scheduler on the embedded store in ./cronactor-data
	$(GO) run ./cmd/cronactor serve

test: lint cross chromium postgres ## lint, cross-compile, then every test with the race detector (installs Chromium and PostgreSQL for the tests first)
	$(GO) test -race -count=1 -timeout 30m $(PKGS)
	cd internal/benchpeers && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd internal/traceidle && $(GO) vet ./... && $(GO) test -race -count=1 ./...

chromium: ## install Chromium for the dashboard's browser tests, if missing and root (.ci/install-chromium)
	@./.ci/install-chromium

postgres: ## install PostgreSQL for the Postgres store's tests, if missing and root (.ci/install-postgres)
	@./.ci/install-postgres

# Where make bench keeps each measurement's --json output for the table,
# the tasks of the scheduler and lag measurements (the bars of DESIGN.md §6
# are at 100,000) and how long the store and projections phases append.
BENCHOUT ?= bin/bench
BENCH_TASKS ?= 100000
BENCH_DURATION ?= 5s
# The tasks of the scheduler measurement on Postgres, with River on the same
# server (a throwaway one from .ci/bench-postgres unless CRONACTOR_POSTGRES
# names one; skipped without server binaries).
BENCH_PG_TASKS ?= 20000
# The old task of bench history (DESIGN.md §8.3: 1,000,000 events).
BENCH_HISTORY_EVENTS ?= 1000000

bench: build peers ## print throughput figures next to their baselines and the peers, then one table of them all
	@mkdir -p $(BENCHOUT)
	$(GO) test ./actors/task/schedule -run '^$$' -bench . -benchmem
	$(GO) test -run '^$$' -bench AsOf -benchtime 20x ./projections/crontasks
	./bin/cronactor bench store --duration $(BENCH_DURATION) --json > $(BENCHOUT)/store.json
	./bin/cronactor bench projections --duration $(BENCH_DURATION) --json > $(BENCHOUT)/projections.json
	./bin/cronactor bench scheduler --tasks $(BENCH_TASKS) --json > $(BENCHOUT)/scheduler.json
	./bin/cronactor bench lag --tasks $(BENCH_TASKS) --load 0.5 --json > $(BENCHOUT)/lag.json
	./bin/cronactor bench history --events $(BENCH_HISTORY_EVENTS) --json > $(BENCHOUT)/history.json
	./.ci/bench-postgres ./bin/cronactor bench scheduler --store postgres --postgres '{URL}' --tasks $(BENCH_PG_TASKS) --json > $(BENCHOUT)/scheduler-postgres.json
	@echo
	@./bin/cronactor bench report --store $(BENCHOUT)/store.json --projections $(BENCHOUT)/projections.json \
		--scheduler $(BENCHOUT)/scheduler.json --lag $(BENCHOUT)/lag.json --history $(BENCHOUT)/history.json \
		--scheduler-postgres $(BENCHOUT)/scheduler-postgres.json

fuzz: ## run each fuzz target for FUZZTIME (default 30s)
	$(GO) test ./events -run '^$$' -fuzz FuzzDecode -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./events/esdb -run '^$$' -fuzz FuzzDecodeMetadata -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./actors/simulation -run '^$$' -fuzz FuzzParse -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./projections/crontasks -run '^$$' -fuzz FuzzQueryCursor -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./projections/crontasks -run '^$$' -fuzz FuzzParsePoint -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./projections/history -run '^$$' -fuzz FuzzParseClock -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./projections/history -run '^$$' -fuzz FuzzEventListJSON -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./actors/task/schedule -run '^$$' -fuzz FuzzParse -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./actors/task/schedule -run '^$$' -fuzz FuzzNext -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./actors/task/schedule -run '^$$' -fuzz FuzzExclude -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./cmd/cronactor -run '^$$' -fuzz FuzzServeConfigFile -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./cmd/cronactor -run '^$$' -fuzz FuzzEscapeControl -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./internal/httpapi -run '^$$' -fuzz FuzzDecodeStrict -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./internal/tracing -run '^$$' -fuzz FuzzRead -fuzztime $${FUZZTIME:-30s}
	$(GO) test ./actors/worker -run '^$$' -fuzz FuzzTyped -fuzztime $${FUZZTIME:-30s}

chaos: build ## the chaos harness: SIGKILL the daemon CHAOS_KILLS times (default 100) under load, fault scripts, HTTP fuzzer; on Postgres with CHAOS_POSTGRES=URL (and CHAOS_POSTGRES_STOP/START commands) (docs/reliability.md)
	$(GO) run ./cmd/cronactor-chaos -bin bin/cronactor -kills $${CHAOS_KILLS:-100} -fuzz $${CHAOS_FUZZ:-2000} $${CHAOS_SEED:+-seed $$CHAOS_SEED} \
		$${CHAOS_POSTGRES:+-postgres "$$CHAOS_POSTGRES"} $${CHAOS_POSTGRES_STOP:+-postgres-stop "$$CHAOS_POSTGRES_STOP" -postgres-start "$$CHAOS_POSTGRES_START"}

lint: ## gofmt, go vet and staticcheck
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

cross: ## build every package for linux, darwin and windows (amd64, arm64)
	@for p in $(PLATFORMS); do \
		echo "GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build $(PKGS)"; \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build $(PKGS) || exit 1; \
	done

tidy: ## go mod tidy
	$(GO) mod tidy
