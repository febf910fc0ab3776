# Weir developer and CI entry points. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.ONESHELL:
.DEFAULT_GOAL := test

GO ?= go
SERVICES := scripts/services.sh

.PHONY: test lint services-up services-down services-status build bench vendor-web

# gofmt check (tracked and untracked files alike), go vet, the project's own
# lint tests.
define LINT_STEPS
echo "==> gofmt -l ."
unformatted="$$(gofmt -l .)"
if [ -n "$$unformatted" ]; then
	echo "gofmt: these files are not formatted (run gofmt -w):" >&2
	echo "$$unformatted" >&2
	exit 1
fi
echo "==> go mod tidy -diff"
if ! $(GO) mod tidy -diff; then
	echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit the result" >&2
	exit 1
fi
echo "==> go vet ./..."
$(GO) vet ./...
echo "==> go test ./internal/lint/"
$(GO) test ./internal/lint/
endef

# Full suite: start Kafka/MariaDB/PostgreSQL, lint, then every test with -race
# against those services.
test:
	@start=$$SECONDS
	trap 'rc=$$?; echo "make test: $$([ $$rc -eq 0 ] && echo ok || echo "FAILED (exit $$rc)") in $$((SECONDS - start))s"' EXIT
	echo "==> $(SERVICES) up"
	bash $(SERVICES) up
	eval "$$(bash $(SERVICES) env)"
	$(LINT_STEPS)
	echo "==> go test -race -count=1 -timeout 40m ./..."
	$(GO) test -race -count=1 -timeout 40m ./...
	echo "==> Flink compatibility suite (TestFlinkCompat passed, so these counts are this run's)"
	grep -v '^#' sql/session/testdata/compat/summary

lint:
	@$(LINT_STEPS)

services-up:
	bash $(SERVICES) up

services-down:
	bash $(SERVICES) down

services-status:
	bash $(SERVICES) status

build:
	$(GO) build -o bin/weir ./cmd/weir

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

# Re-fetch the dashboard's vendored Chart.js (pinned in the script) from npm;
# the result is committed, so go build never needs npm.
vendor-web:
	bash scripts/vendor-web.sh
