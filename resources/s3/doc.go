// Package s3 fences writes to objects in Amazon S3 and S3-compatible
// stores (MinIO): a write carrying token t is applied to an object only if
// t is at least the highest token the object has seen, and the check and
// the write are one conditional PUT.
//
// Its name clashes with the AWS SDK's package; import it under an alias:
//
//	import fences3 "github.com/fencekit/fence/resources/s3"
//
// # Layering
//
// New returns a *fence.Resource over this package's driver: the portable
// type checks keys (at most MaxKeyLen bytes less Options.Prefix) and
// tokens, checks ctx, and wraps every error as a *fence.OpError
// ("fence/s3: put "k": ..."); the driver keeps what only S3 can do: the
// conditional PUT, the read-back that settles a lost answer, the key
// segment limit, and the metadata. PutObject and GetObject take that
// resource for streamed bodies, metadata and what S3 reports; they make
// the same checks and wrap their errors the same way, and refuse a
// resource of another backend with fence.ErrInvalid. The resource's As
// gives the client New was given, to a *API target, or to an **s3.Client
// target when it is one.
//
// # Opening by URL
//
// Importing the package registers the resource URL scheme s3 with
// fence.OpenResource:
//
//	s3://BUCKET[?region=R&endpoint=URL&path-style=true&prefix=P&max-key-segment=N]
//
// Credentials, and the region and endpoint when the URL has none, come
// from the AWS SDK's default chain (AWS_REGION, AWS_ENDPOINT_URL_S3,
// AWS_ACCESS_KEY_ID..., shared files, instance roles). endpoint is an S3
// server other than AWS's; path-style=true addresses buckets in the path
// rather than the host name; prefix and max-key-segment are
// Options.Prefix and Options.MaxKeySegmentLen. OpenOptions.HTTPClient,
// when set, carries the SDK's requests. The resource's Create creates the
// bucket in the client's region, and succeeds when the bucket is yours
// already. MinIO, which refuses a key segment (between slashes) longer
// than 255 bytes, is opened with
//
//	s3://BUCKET?endpoint=http://HOST:9000&path-style=true&max-key-segment=255
//
// # How a write is fenced
//
// The token travels in the object's user metadata (x-amz-meta-fencetoken),
// next to a random id of the write (x-amz-meta-fencewriteid). A fenced
// write (PutObject and Put, and Delete) first reads the
// object's metadata and ETag with HeadObject, refuses a lower token with a
// *fence.StaleTokenError carrying the highest token, and then writes with
// If-Match on that ETag, or If-None-Match: * when there is no object. If
// another writer got in between, S3 answers 412 Precondition Failed (or
// 409 ConditionalRequestConflict, which S3 returns to writers racing on
// one key); the write reads the object again and retries, with jittered
// backoff, for as long as its context allows. The PUT cannot succeed
// unless the object is still the one whose token was checked, so the
// check and the write are one step.
//
// # Deletes leave tombstones
//
// S3 has no conditional delete that every implementation honours, and a
// deleted object would forget its token: a stale writer could then create
// it again. Delete therefore replaces the object, through the
// same conditional PUT, with a tombstone: a small object whose metadata
// carries the token and x-amz-meta-fencetombstone: true. GetObject and
// Get report a tombstone as not found (a *fence.NotFoundError with
// Tombstone set); Highest still returns its token. A tombstone's body is
// its random write id rather than nothing, so that two tombstones never
// share an ETag (see "ETags name contents" below). Lifecycle rules that
// expire objects, and anyone deleting objects with the plain SDK, erase
// the high-water mark; do not apply them to fenced keys.
//
// # Bodies
//
// A body that is an io.ReadSeeker (an *os.File, a *bytes.Reader, an
// io.SectionReader) is streamed and never held in memory whole: every
// attempt seeks back to where it started (the SDK itself may read it more
// than once, to sign it and to checksum it). Any other io.Reader is read
// into memory first, up to Options.MaxBufferedBody bytes (default 16 MiB),
// so that a retry can send it again; a longer one is refused with an error
// matching fence.ErrInvalid after that many bytes were consumed. Upload
// larger streams from a seekable source.
//
// # Lost answers
//
// The package sends each PUT once, with the SDK's retries turned off for it
// (HeadObject and GetObject keep the client's settings), so that it knows
// which PUTs lost their answers. When a PUT fails without an answer from S3
// (a dropped connection, a timeout after sending) or with a 5xx, it may
// have been applied. The write then reads the object back: if it carries
// this write's token and write id, and its ETag differs from the one the
// PUT was conditioned on, the write was applied and PutObject reports
// success (PutResult.Reconciled); if the object is still the one the PUT
// was conditioned on, the write goes round the loop again. So a retry
// neither duplicates a write nor reports a false stale token. When the
// outcome cannot be settled (the context ends, answers keep being lost, or
// a write with a higher token replaced the object before it could be read
// back), the error is a *fence.UnknownOutcomeError, which matches neither
// success nor fence.ErrStaleToken; a retry with the same token and body is
// harmless.
//
// # ETags name contents
//
// If-Match compares ETags, and S3 derives the ETag of an unencrypted or
// SSE-S3 object from its bytes alone, not its metadata. A write of the very
// bytes the object already holds therefore leaves the ETag unchanged, and
// a slower writer that read the object before that write still passes
// If-Match with its lower token (the ABA problem). Tombstones avoid it with
// unique bodies. Puts of byte-identical content racing a lower-token
// writer are not protected; buckets with SSE-KMS or SSE-C, whose ETags are
// not content hashes, are.
//
// So make each write's body unique: put the token (and, if useful, the
// writer) in the body, as a header line, a field or a column. Two writes
// under different leases then never share bytes, and the gap cannot
// arise. examples/reports stamps each report this way.
//
// # Claims
//
// Claim (fence.Resource.Claim) reads the object whole and writes it back
// with the claimed token, on If-Match of the ETag it read (a missing key
// gets a tombstone, on If-None-Match: *). Writing the same bytes back
// would keep the ETag, and a slower writer that read the object before
// the claim would pass If-Match after it; so a claimed object's body is
// its value followed by the claim's 32-character write id, marked by
// x-amz-meta-fenceclaimed. GetObject and Get return the value alone; the
// plain SDK sees the suffix. The next Put stores the plain value again.
// A claimed value is held in memory, up to Options.MaxBufferedBody.
//
// # Objects written without fencing
//
// An object without the token metadata (written before fencing was
// adopted, or with the plain SDK) counts as token 0: any fenced write may
// replace it, Highest returns 0, and GetObject returns it with Token 0;
// Get, whose tokens are never 0, reports it as a *fence.CorruptError. A
// token that is not a
// decimal number, is 0, or a tombstone marker or write id without a token,
// is corrupt: every method returns an error matching fence.ErrCorrupt and
// writes nothing over the object.
//
// # The stored record
//
// An object under its key; its body is the value (followed by the write id
// when claimed), or for a tombstone the 32-character write id. The package
// adds four user metadata keys
// (x-amz-meta-* headers, which S3 hands back in lower case; the caller's
// own metadata sits beside them and may not use these keys in any case):
//
//	fencetoken      the write's token in decimal, 1 to 18446744073709551615
//	                (MetaToken)
//	fencewriteid    32 hex digits, the random id of the write (MetaWriteID)
//	fencetombstone  "true" on a tombstone, absent otherwise (MetaTombstone)
//	fenceclaimed    "true" on a value rewritten by Claim, whose body is the
//	                value followed by the claim's write id (MetaClaimed)
//
// These are the names every fence backend uses, without a dash (Azure's
// metadata names cannot hold one). With them, the caller's metadata must
// fit S3's 2 KB limit on user metadata, each key counted with its
// x-amz-meta- prefix as MinIO counts it; more is refused with an error
// matching fence.ErrInvalid before anything is sent.
//
// aws s3api head-object --bucket B --key K shows them under Metadata. A
// repaired object must keep fencetoken at least the highest token any
// holder may still write with: a lower token or a deleted object lets a
// stale writer through.
//
// # A missing bucket
//
// Every method on a bucket that does not exist gets an error matching
// fence.ErrStoreMissing (and S3's NoSuchBucket). HeadObject answers 404
// to a missing key and to a missing bucket alike, without a body, so until
// a resource has seen its bucket, a 404 to HeadObject is checked with a
// GetObject of the key, whose answer names NoSuchBucket.
//
// # Conformance
//
// The resource of New passes resources/resourcetest on MinIO.
package s3
