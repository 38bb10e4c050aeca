package testenv

import "testing"

// The storage emulators started by scripts/emulators.sh (sourced by
// scripts/test.sh). Each function returns what a backend's test needs to
// reach one emulator; like Endpoint, it fails the test under scripts/test.sh
// and skips it otherwise when the emulator is not running.
//
// The script also points the AWS SDK's defaults at the emulators
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
// AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_S3, no profile files, no
// instance metadata), the GCS SDK through STORAGE_EMULATOR_HOST and the
// Azure locker's URL opener through AZURE_STORAGE_CONNECTION_STRING, so a
// client built with default settings cannot reach a real cloud.

// AzuriteBlobURL returns the base URL of Azurite's blob service for the
// emulator account, like http://127.0.0.1:PORT/devstoreaccount1; container
// URLs are this URL + "/" + container. Leases are timed by Azurite's own
// wall clock (15–60 s or infinite, as in Azure), so no fake clock shortens
// them.
func AzuriteBlobURL(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_AZURITE_BLOB_URL", "Azurite")
}

// AzuriteAccount returns the account name and base64 shared key that
// Azurite accepts (the published emulator account, devstoreaccount1).
func AzuriteAccount(t testing.TB) (name, key string) {
	t.Helper()
	return Endpoint(t, "FENCE_AZURITE_ACCOUNT", "Azurite"), Endpoint(t, "FENCE_AZURITE_KEY", "Azurite")
}

// AzuriteConnectionString returns an Azure Storage connection string with
// the emulator account, its key and the blob endpoint.
func AzuriteConnectionString(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_AZURITE_CONNECTION_STRING", "Azurite")
}

// DynamoEndpoint returns the base URL of dynalite, a DynamoDB emulator,
// like http://127.0.0.1:PORT. It accepts any credentials and region.
// dynalite answers UnknownOperationException to TransactWriteItems,
// TransactGetItems, UpdateTimeToLive and ExecuteStatement; it accepts
// ReturnValuesOnConditionCheckFailure but its ConditionalCheckFailedException
// carries no Item. Tables report CREATING once, then ACTIVE at once.
func DynamoEndpoint(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_DYNAMO_ENDPOINT", "dynalite (DynamoDB)")
}

// GCSEndpoint returns the base URL of fake-gcs-server, like
// http://127.0.0.1:PORT: the JSON API is under /storage/v1/, uploads under
// /upload/storage/v1/. It needs no credentials. It honours
// ifGenerationMatch (0 included) and ifGenerationNotMatch on media,
// multipart and resumable uploads, with 412; it ignores them on deletes and
// metadata patches, ignores metageneration preconditions everywhere, leaves
// metageneration at 1 after a patch and never answers 429.
func GCSEndpoint(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_GCS_ENDPOINT", "fake-gcs-server (GCS)")
}

// S3Endpoint returns the base URL of the S3 server, like
// http://127.0.0.1:PORT: MinIO, or versitygw when scripts/test.sh runs the
// S3 packages a second time (FENCE_S3_SERVER names which, as "name
// version"). Clients must use path-style addressing and region us-east-1,
// with the keys from S3Credentials. How each answers S3's conditional
// requests, and where it differs from S3, is tested and listed in
// internal/testing/emulators (gaps_test.go): MinIO ignores If-Match on
// DELETE; versitygw cannot hold both "a" and "a/b".
func S3Endpoint(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_S3_ENDPOINT", "MinIO (S3)")
}

// S3Credentials returns the access key and secret key of MinIO's root
// user; the same pair is in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
func S3Credentials(t testing.TB) (accessKey, secretKey string) {
	t.Helper()
	return Endpoint(t, "FENCE_S3_ACCESS_KEY", "MinIO (S3)"), Endpoint(t, "FENCE_S3_SECRET_KEY", "MinIO (S3)")
}

// The programs of the emulators, which scripts/emulators.sh exports so
// that a test (or a torture run) can start instances of its own, with
// their data on disk, and restart them.

// DynaliteCommand returns the node binary and scripts/dynalite.js of a
// checkout whose node_modules holds dynalite: `NODE JS REPO [dynalite's
// options]` runs dynalite, REPO being the directory above JS's.
func DynaliteCommand(t testing.TB) (node, js string) {
	t.Helper()
	return Endpoint(t, "FENCE_NODE", "node (for dynalite)"), Endpoint(t, "FENCE_DYNALITE_JS", "dynalite")
}

// AzuriteBin returns Azurite's blob service program
// (node_modules/.bin/azurite-blob).
func AzuriteBin(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_AZURITE_BIN", "Azurite")
}

// FakeGCSBin returns the fake-gcs-server binary.
func FakeGCSBin(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_FAKE_GCS_BIN", "fake-gcs-server (GCS)")
}

// MinIOBin returns the minio binary.
func MinIOBin(t testing.TB) string {
	t.Helper()
	return Endpoint(t, "FENCE_MINIO_BIN", "MinIO (S3)")
}
