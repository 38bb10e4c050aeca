// Package gcs fences writes to Google Cloud Storage objects
// (cloud.google.com/go/storage): an upload carrying token t is applied only
// if t is at least the highest token the object has seen, and the check and
// the write are one conditional request.
//
// Its name clashes with lockers/gcs; import it under an alias:
//
//	import fencegcs "github.com/fencekit/fence/resources/gcs"
//
// # How a write is fenced
//
// The token travels in the object's custom metadata (MetaToken), with a
// random write id (MetaWriteID). A fenced Upload reads the object's
// attributes (token and generation), refuses a lower token with a
// *fence.StaleTokenError, and uploads with ifGenerationMatch set to the
// generation whose token it checked, or ifGenerationMatch=0 (the object must
// not exist) when there was none. If another writer changed the object in
// between, the service answers 412 and Upload reads the attributes again and
// retries with jittered backoff, for as long as ctx allows (see
// Options.MaxAttempts). The check never races the write: a write lands only
// on the very generation whose token was checked.
//
// # Deletes leave tombstones
//
// Delete does not remove the object: it writes a zero-length tombstone
// (MetaTombstone) carrying the token, under the same precondition. A stale
// writer therefore cannot re-create the object with an old token, and
// readers see the tombstone as not found (*fence.NotFoundError with
// Tombstone set). Conditional DELETE requests are not used: the emulator
// the tests run on (fake-gcs-server) ignores their preconditions.
//
// # Rate limits and retries
//
// Google Cloud Storage accepts about one write per second to one object
// name. Answers 408, 429 and 5xx are retried after a longer backoff
// (Options.RateLimitBackoff, doubling up to Options.MaxBackoff). The SDK's
// own retries are switched off for uploads, so every retry passes through
// the token check again.
//
// # Streaming bodies
//
// Upload sends the body in one request (Writer.ChunkSize 0) without
// buffering it. When the body is an io.Seeker (a *bytes.Reader, an
// *os.File), a retry seeks back to where the body started. A plain
// io.Reader is read once: when a retry would be needed after its bytes were
// sent, Upload re-reads the attributes, returns success if the write was in
// fact applied and a *fence.StaleTokenError if the token has become stale,
// and otherwise an error matching ErrBodyConsumed, so that the caller
// uploads again with a fresh body. Wrap a small plain body in a
// bytes.Reader to have it retried.
//
// # Lost answers
//
// When the answer to an upload is lost (a dropped connection after the
// request was sent), Upload does not guess: it reads the attributes back,
// and when they carry its write id and token the write was applied and
// Upload returns it. A caller retrying after an ambiguous error (ctx done)
// can pass the same UploadOptions.WriteID so that a write already applied
// is recognised instead of repeated; Put derives its write id from the
// token and the value, so a retried Put with the same arguments never
// writes twice.
//
// # Bad input and corrupted records
//
// Object names are 1 to 1024 bytes of UTF-8 without NUL, CR or LF, and not
// "." or ".." (ValidateName); token 0 is refused. An object whose fence
// metadata is missing or not a decimal token is reported with an error
// matching fence.ErrCorrupt, and nothing is written over it.
//
// # The stored record
//
// An object under its name; its content is the value, and a tombstone's is
// empty. The package adds custom metadata keys, matched without regard to
// case (the caller's own keys sit beside them and may not start with
// MetaPrefix):
//
//	fence-token     the write's token in decimal, 1 to 18446744073709551615
//	                (MetaToken)
//	fence-write-id  the id of the write: UploadOptions.WriteID or 32 random
//	                hex digits; for Put, "put-" and a hash of token and
//	                value (MetaWriteID)
//	fence-tombstone "true" on a tombstone, absent otherwise (MetaTombstone)
//
// gcloud storage objects describe gs://BUCKET/NAME shows them. A repaired
// object must keep fence-token at least the highest token any holder may
// still write with: a lower token or a deleted object lets a stale writer
// through. An object without fence-token is corrupt, not unfenced.
//
// # The emulator
//
// The tests run against fake-gcs-server (scripts/emulators.sh starts it
// with -scheme http -backend memory on 127.0.0.1:PORT), which honours
// DoesNotExist and GenerationMatch preconditions on uploads (all this
// package relies on) but ignores metageneration preconditions and
// conditional deletes, and never answers 429. Configure the client for it
// with
//
//	storage.NewClient(ctx,
//		option.WithEndpoint("http://127.0.0.1:PORT/storage/v1/"),
//		option.WithoutAuthentication(),
//		storage.WithJSONReads())
//
// (or set STORAGE_EMULATOR_HOST=http://127.0.0.1:PORT).
package gcs
