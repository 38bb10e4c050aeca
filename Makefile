# Make targets of fence. The tests themselves run with scripts/test.sh.

DURATION ?= 10m
PAIRS ?=

.PHONY: test torture

# test: the project's test command (servers, gofmt, vet, go test -race).
test:
	scripts/test.sh

# torture: the long fault-injection run, each pair fenced and as a
# control, in two waves of DURATION each (default 10m), on servers
# started for it (or on those of the environment when FENCE_POSTGRES_URL
# is set):
#   make torture DURATION=10m [PAIRS=memory/memory,postgres]
torture:
	@bash -c 'set -euo pipefail; \
	if [ -z "$${FENCE_POSTGRES_URL:-}" ]; then \
		source scripts/services.sh; trap services_down EXIT; services_up; \
	fi; \
	go run ./cmd/torture -duration "$(DURATION)" -pairs "$(PAIRS)"'
