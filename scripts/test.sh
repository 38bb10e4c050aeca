#!/usr/bin/env bash
# The project's test command: installs and starts every server the tests
# need, runs formatting and vet checks, the race-enabled test suite (the S3
# packages a second time on versitygw, the DynamoDB packages a second time
# on DynamoDB Local), and the ledger and reports examples
# on their embedded defaults and on the servers. Usage:
#   scripts/test.sh [go test flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo /root/go)/bin
# shellcheck source=scripts/services.sh
source scripts/services.sh
trap services_down EXIT
services_up
export FENCE_TEST_STRICT=1 # tests fail, not skip, when a server is missing

echo "== gofmt"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
[ -z "$bad" ] || { echo "gofmt would change: $bad"; exit 1; }
echo "== go vet"
go vet ./...
echo "== go vet on the newest Go release too (the suite runs on this machine's Go)"
GOTOOLCHAIN=go1.27.3 go vet ./...
echo "== docs (every go block in README.md and docs/ compiles)"
(cd docs && go vet ./... && go test -count=1 ./...)
echo "== go test -race"
go test -race -count=1 -timeout 20m "$@" ./...
echo "== the S3 packages again, on versitygw (a second S3 server)"
# versitygw keeps each object as a file at its key's path, so "a" and "a/b"
# cannot both exist (a gap internal/testing/emulators names): the suites'
# tests of such names run on MinIO only.
on_versitygw() {
	FENCE_S3_ENDPOINT=$FENCE_VERSITYGW_ENDPOINT AWS_ENDPOINT_URL_S3=$FENCE_VERSITYGW_ENDPOINT \
		FENCE_S3_SERVER=$FENCE_VERSITYGW_SERVER "$@"
}
on_versitygw go test -race -count=1 -timeout 20m "$@" -run 'TestS3Conditions' ./internal/testing/emulators
on_versitygw go test -race -count=1 -timeout 20m "$@" -skip 'TestResourceSuite/Names/AreIndependent$' ./resources/s3
on_versitygw go test -race -count=1 -timeout 20m "$@" -skip 'TestConformance/.*/Keys/SimilarKeysDoNotShareALock$' ./lockers/s3
echo "== the DynamoDB packages again, on DynamoDB Local (a second DynamoDB server)"
# dynalite has no transactions, so the tests of lockers/dynamo's LockAll in
# one TransactWriteItems skip there, naming the gap; DynamoDB Local has
# them, and FENCE_DYNAMO_SERVER tells the tests they must not skip here
# (internal/testing/emulators.DynamoTransactions fails instead).
ddblocal_wait
on_ddblocal() {
	FENCE_DYNAMO_ENDPOINT=$FENCE_DDBLOCAL_ENDPOINT AWS_ENDPOINT_URL_DYNAMODB=$FENCE_DDBLOCAL_ENDPOINT \
		FENCE_DYNAMO_SERVER=$FENCE_DDBLOCAL_SERVER "$@"
}
on_ddblocal go test -race -count=1 -timeout 20m "$@" -run 'TestDynamo' ./internal/testing/emulators
on_ddblocal go test -race -count=1 -timeout 20m "$@" ./lockers/dynamo ./resources/dynamo
echo "== ledger demo (embedded default)"
go run ./examples/ledger
echo "== ledger demo (PostgreSQL)"
go run ./examples/ledger -postgres "$FENCE_POSTGRES_URL"
echo "== reports example (embedded default)"
go run ./examples/reports
echo "== reports example (MinIO + PostgreSQL)"
go run ./examples/reports -s3-bucket fence-reports -postgres "$FENCE_POSTGRES_URL"
echo "== reports example (Azurite + PostgreSQL)"
go run ./examples/reports -azblob-container fence-reports -postgres "$FENCE_POSTGRES_URL"
