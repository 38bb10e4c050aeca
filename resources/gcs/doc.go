// Package gcs fences writes to Google Cloud Storage objects
// (cloud.google.com/go/storage): an upload carrying token t is applied only
// if t is at least the highest token the object has seen, and the check and
// the write are one conditional request.
//
// Its name clashes with lockers/gcs; import it under an alias:
//
//	import fencegcs "github.com/fencekit/fence/resources/gcs"
//
// # Layering
//
// New returns a *fence.Resource over this package's driver: the portable
// type checks keys (at most MaxKeyLen bytes less Options.Prefix) and
// tokens, checks ctx, and wraps every error as a *fence.OpError
// ("fence/gcs: put "k": ..."); the driver keeps what only Cloud Storage
// can do: the conditional upload and its retries, the read-back that
// settles a lost answer, the rules of object names, and the metadata.
// Upload and NewReader take that resource for streaming bodies and the
// object's attributes; they make the same checks and wrap their errors
// the same way, and refuse a resource of another backend with
// fence.ErrInvalid. The resource's As gives the bucket handle New was
// given, to a **storage.BucketHandle target.
//
// # Opening by URL
//
// Importing the package registers the resource URL scheme gs with
// fence.OpenResource:
//
//	gs://BUCKET[?prefix=P&project=ID&endpoint=URL]
//
// The client is built by storage.NewClient, which takes credentials from
// Application Default Credentials, or none when STORAGE_EMULATOR_HOST
// points at an emulator. prefix is Options.Prefix; endpoint is the base
// URL of a Cloud Storage server other than Google's (the JSON API is
// ENDPOINT/storage/v1/); project names the project the resource's Create
// makes the bucket in (default: GOOGLE_CLOUD_PROJECT; any on an
// emulator). Create succeeds when the bucket exists already.
// OpenOptions.HTTPClient, when set, carries the SDK's requests, with the
// SDK's credentials added to them (none on an emulator). The resource's
// Close closes the client.
//
// # How a write is fenced
//
// The token travels in the object's custom metadata (MetaToken), with a
// random write id (MetaWriteID). A fenced write (Upload, Put, Delete)
// reads the object's attributes (token and generation), refuses a lower
// token with a *fence.StaleTokenError, and uploads with ifGenerationMatch
// set to the generation whose token it checked, or ifGenerationMatch=0
// (the object must not exist) when there was none. If another writer
// changed the object in between, the service answers 412 and the write
// reads the attributes again and retries with jittered backoff, for as
// long as ctx allows (see Options.MaxAttempts). The check never races the
// write: a write lands only
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
// # Claims
//
// Claim (fence.Resource.Claim) reads the record, then the content of
// that very generation, and uploads the same content, headers and custom
// metadata again with the claimed token, on ifGenerationMatch of that
// generation: every upload makes a new generation, so a writer that read
// the object before the claim fails its precondition after it. A
// tombstone is replaced by a tombstone of the token, and a key without an
// object gets one. The content passes through memory; a claim is a write
// and counts against the rate of about one per second per object.
//
// # Rate limits and retries
//
// Google Cloud Storage accepts about one write per second to one object
// name. Answers 408, 429 and 5xx are retried after a longer backoff
// (Options.RateLimitBackoff, doubling up to Options.MaxBackoff, jittered
// as every backoff of fence is). The SDK's own retries are switched off
// for uploads, so every retry passes through the token check again.
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
// A key names the object Options.Prefix + key. Object names are 1 to 1024
// bytes of UTF-8 without NUL, CR or LF, not "." or "..", and not under
// .well-known/acme-challenge/ (Cloud Storage's rules); a key that breaks
// them, and token 0, get a *fence.InvalidError (for field "key" or
// "token") and send nothing. An object whose fence metadata is missing or
// not a decimal token is reported with an error matching
// fence.ErrCorrupt, and nothing is written over it.
//
// # A missing bucket
//
// Every method on a bucket that does not exist gets an error matching
// fence.ErrStoreMissing and storage.ErrBucketNotExist. Cloud Storage
// answers 404 to a missing object and to a missing bucket alike, so until
// a resource has seen its bucket, a missing object is checked by reading
// the bucket's attributes; a caller not allowed to read them (403) is
// taken at the object's word.
//
// # The stored record
//
// An object under its name (prefix + key); its content is the value, and a
// tombstone's is empty. The package adds custom metadata keys, matched
// without regard to case (the caller's own keys sit beside them and may
// not start with MetaPrefix, "fence"):
//
//	fencetoken      the write's token in decimal, 1 to 18446744073709551615
//	                (MetaToken)
//	fencewriteid    the id of the write: UploadOptions.WriteID or 32 random
//	                hex digits; for Put, "put-" and a hash of token and
//	                value (MetaWriteID)
//	fencetombstone  "true" on a tombstone, absent otherwise (MetaTombstone)
//
// These are the names every fence backend uses, without a dash (Azure's
// metadata names cannot hold one). Before this version of the package they
// were fence-token, fence-write-id and fence-tombstone; those are no
// longer read, so an object that carries only them is corrupt. Nothing was
// published with the old names.
//
// gcloud storage objects describe gs://BUCKET/NAME shows them. A repaired
// object must keep fencetoken at least the highest token any holder may
// still write with: a lower token or a deleted object lets a stale writer
// through. An object without fencetoken is corrupt, not unfenced.
package gcs
