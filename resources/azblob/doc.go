// Package azblob fences writes to blobs in Azure Blob Storage
// (github.com/Azure/azure-sdk-for-go/sdk/storage/azblob): a write
// carrying token t is applied to a blob only if t is at least the highest
// token the blob has seen, and the check and the write are one
// conditional request.
//
// Its name clashes with the Azure SDK's package and with lockers/azblob;
// import it under an alias:
//
//	import fenceazblob "github.com/fencekit/fence/resources/azblob"
//
// # Layering
//
// New returns a *fence.Resource over this package's driver: the portable
// type checks keys (at most MaxKeyLen bytes less Options.Prefix) and
// tokens, checks ctx, and wraps every error as a *fence.OpError
// ("fence/azblob: put "k": ..."); the driver keeps what only Azure can
// do: the conditional writes, the read-back that settles a lost answer,
// the rules of blob names, and the metadata. PutBlob and GetBlob take
// that resource for streamed bodies, metadata and what Azure reports; they
// make the same checks and wrap their errors the same way, and refuse a
// resource of another backend with fence.ErrInvalid. The resource's As
// gives the container client New was given (or the URL opener made), to
// a **container.Client target.
//
// # Opening by URL
//
// Importing the package registers the resource URL scheme azblob with
// fence.OpenResource, in the form lockers/azblob's locker URLs take:
//
//	azblob://CONTAINER[?account=A&endpoint=URL&prefix=P]
//
// CONTAINER is the container of the blobs (3 to 63 lower-case letters,
// digits and single hyphens), account the storage account (3 to 24
// lower-case letters and digits), endpoint the blob service URL, for
// Azurite or a private endpoint (default:
// https://ACCOUNT.blob.core.windows.net), and prefix Options.Prefix.
// Credentials come from the environment, as for the locker:
// EnvConnectionString when the URL has neither account nor endpoint;
// otherwise the account (from the URL, or EnvAccount) with EnvAccountKey,
// or else EnvSASToken; a URL with an endpoint but no account, where
// EnvAccount is unset, takes the account and its key from
// EnvConnectionString, setting its endpoints aside. The resource's Create
// creates the container, and succeeds when it exists.
// fence.OpenOptions.HTTPClient, when set, carries the SDK's requests.
// Azurite is opened with
//
//	azblob://CONTAINER?account=devstoreaccount1&endpoint=http://127.0.0.1:10000/devstoreaccount1
//
// # How a write is fenced
//
// The token travels in the blob's metadata (MetaToken), next to a random
// id of the write (MetaWriteID). A fenced write (PutBlob, Put, Delete)
// first reads the blob's properties with Get Blob Properties: its ETag
// and metadata. It refuses a lower token with a *fence.StaleTokenError
// carrying the highest token, and then writes with If-Match on that ETag,
// or If-None-Match: * when there is no blob. If another writer got in
// between, Azure answers 412 ConditionNotMet (or 409 BlobAlreadyExists
// to If-None-Match: *); the write reads the blob again and retries, with
// jittered backoff, for as long as its context allows. The write cannot
// succeed unless the blob is still the one whose token was checked, so
// the check and the write are one step. Azure gives a blob a new ETag on
// every change, of its content or its metadata, even to the same bytes,
// so an ETag read never matches a later version.
//
// # Deletes leave tombstones
//
// A deleted blob would forget its token, and a stale writer could then
// create it again. Delete therefore replaces the blob, through the same
// conditional write, with a tombstone: an empty blob whose metadata
// carries the token and MetaTombstone "true". GetBlob and Get report a
// tombstone as not found (a *fence.NotFoundError with Tombstone set);
// Highest still returns its token. Lifecycle management rules that
// delete blobs, and anyone deleting blobs with the plain SDK, erase the
// high-water mark; do not apply them to fenced keys. Soft delete and
// versioning keep old versions; they do not change what is fenced.
//
// # Claims
//
// Claim (fence.Resource.Claim) reads the blob's properties and, if the
// token is at least the blob's, sets its metadata to the same with the
// claimed token and a new write id, in one Set Blob Metadata on If-Match
// of the ETag read. The content and properties stay; the ETag changes,
// so a slower writer that read the blob before the claim fails its
// condition after it. A key without a blob gets a tombstone of the
// token. A claim costs two requests whatever the blob's size. Set Blob
// Metadata replaces all the blob's metadata: the claim writes back the
// user metadata it read, with the names as the SDK returns them
// (capitalised; Azure compares names without regard to case).
//
// # Bodies
//
// A body that is an io.ReadSeeker (an *os.File, a *bytes.Reader, an
// io.SectionReader) is streamed and never held in memory whole: every
// attempt seeks back to where it started. Any other io.Reader is read into
// memory first, up to Options.MaxBufferedBody bytes (default 16 MiB), so
// that a retry can send it again; a longer one is refused with an error
// matching fence.ErrInvalid after that many bytes were consumed. A body of
// up to Options.MaxSinglePut bytes (default 256 MiB; Azure accepts up to
// 5000 MiB) goes in one Put Blob. A longer one is staged as blocks of
// Options.BlockSize bytes (default 8 MiB; at most 50,000 blocks) with Put
// Block, which changes nothing visible, and committed by one Put Block
// List under the same condition; a retry stages the blocks again, under
// new block ids, as a commit by another writer discards uncommitted
// blocks.
//
// # Lost answers
//
// Each conditional write is sent once, with the SDK's retries turned off
// for it (reads keep the client's settings), so that the package knows
// which writes lost their answers. When a write fails without an answer
// from Azure (a dropped connection, a timeout after sending) or with a
// 5xx, it may have been applied. The write then reads the blob back: if
// it carries this write's token and write id, and its ETag differs from
// the one the write was conditioned on, the write was applied and PutBlob
// reports success (PutResult.Reconciled); if the blob is still the one the
// write was conditioned on, the write goes round the loop again. So a
// retry neither duplicates a write nor reports a false stale token. When
// the outcome cannot be settled (the context ends, answers keep being
// lost, or a write with a higher token replaced the blob before it could
// be read back), the error is a *fence.UnknownOutcomeError, which matches
// neither success nor fence.ErrStaleToken; a retry with the same token and
// body is harmless.
//
// # Costs
//
// Measured in requests to the service (TestRequestsPerCall, on Azurite):
// Put is 2 (Get Blob Properties, Put Blob), plus 2 per lost race; Get is
// 1 (Get Blob); Delete is 2 (a tombstone over the blob), or 1 when the
// key is a tombstone of the same token already; Highest is 1; Claim is 2
// (Get Blob Properties, Set Blob Metadata, or Put Blob of a tombstone). A
// staged body adds one Put Block per block.
//
// # Names
//
// A key, after Options.Prefix, names its blob verbatim where Azure keeps
// it as given, so that blobs are readable in Azure's tools. Characters
// that Azure or HTTP would change are written as escapes, '~' and two
// upper-case hex digits per byte, so that two keys never share a blob: '~'
// itself, a backslash (Azure reads it as '/'), control characters and
// U+FFFE and U+FFFF, a '.' ending a path segment (Azure strips it; "."
// and ".." segments vanish in URL handling), and a '/' that would leave
// an empty segment (at the start, at the end, after another '/'). A key
// "a." is the blob "a~2E", a key "x~y" the blob "x~7Ey". A name of more
// than 1,024 characters or 254 segments after escaping, Azure's limits,
// is refused with an error matching fence.ErrInvalid.
//
// # Blobs written without fencing
//
// A blob without the token metadata (written before fencing was adopted,
// or with the plain SDK) counts as token 0: any fenced write may replace
// it, Highest returns 0, and GetBlob returns it with Token 0; Get, whose
// tokens are never 0, reports it as a *fence.CorruptError. A token that
// is not a decimal number or is 0, a tombstone marker other than "true",
// a write id that is not 32 hex digits, or a marker or write id without a
// token, is corrupt: every method returns an error matching
// fence.ErrCorrupt and writes nothing over the blob.
//
// # Locks and values
//
// lockers/azblob keeps a lock blob, named by the lock's key, in its
// container. Keep fenced values out of the locks' way: in another
// container, or under an Options.Prefix that no lock key starts with.
// A value's key that names a lock blob (one with the locker's owner or
// TTL metadata) is refused with an error matching fence.ErrInvalid, and
// the lock is left as it is; a lock blob that was never taken (token 0)
// is refused as corrupt.
//
// # The stored record
//
// A block blob under the key's name; its content is the value, or empty
// for a tombstone. The package adds three metadata names (x-ms-meta-*
// headers; the caller's own metadata sits beside them and may not use
// these names in any case):
//
//	fencetoken      the write's token in decimal, 1 to 18446744073709551615
//	                (MetaToken)
//	fencewriteid    32 hex digits, the random id of the write (MetaWriteID)
//	fencetombstone  "true" on a tombstone, absent otherwise (MetaTombstone)
//
// az storage blob metadata show shows them. A repaired blob must keep
// fencetoken at least the highest token any holder may still write with:
// a lower token or a deleted blob lets a stale writer through.
//
// # Limits
//
// Keys up to MaxKeyLen (1,024) bytes less the prefix, and 1,024
// characters after escaping (see "Names"). One Put Blob carries up to
// 5000 MiB; a block blob holds up to 50,000 blocks of up to 4000 MiB.
// Metadata, names and values together, up to 8 KiB, of which the
// package's names take at most 100 bytes; metadata names are C#
// identifiers, values printable ASCII.
//
// # Permissions
//
// The package reads blob properties and content, writes blobs (Put Blob,
// Put Block, Put Block List) and sets metadata; it never deletes a blob.
// A shared access signature for the container needs read (r), create (c)
// and write (w) permissions; the resource's Create, which creates the
// container, needs an account key or an account SAS. With Microsoft Entra
// ID, the role Storage Blob Data Contributor on the container covers it.
// These permissions are as Azure documents them; the tests use Azurite's
// account key and do not check them.
//
// # A missing container
//
// Every method on a container that does not exist gets an error matching
// fence.ErrStoreMissing (and bloberror.ContainerNotFound). Azure names the
// missing container in the x-ms-error-code header of its answer even to
// Get Blob Properties, which has no body, so no second request is needed
// to tell it from a missing blob.
//
// # Azurite
//
// The package is tested on Azurite, Azure's emulator, which honours
// every condition the package uses, as Azure documents them
// (emulator_test.go): If-Match and If-None-Match: * on Put Blob (409
// BlobAlreadyExists to a second create) and on Put Block List, If-Match
// on Set Blob Metadata and Delete Blob, a new ETag after Set Blob
// Metadata and after a write of the same bytes, 412 ConditionNotMet to
// If-Match on a missing blob, 304 to a read with If-None-Match on the
// current ETag, and ContainerNotFound in the header of an answer to a
// HEAD. Azurite (3.35) keeps a '.' at the end of a blob name, which
// Azure's documentation asks to avoid; the package escapes it (see
// "Names") and relies on neither. Azurite does not enforce Azure's
// request rates, SAS permissions or Entra ID roles. Run with
// --inMemoryPersistence, it refuses writes with 409
// MemoryExtentStoreAtSizeLimit once the content it holds, old versions
// of overwritten blobs included, reaches --extentMemoryLimit, until its
// garbage collection (every 10 minutes) frees them; Azure has no such
// answer. The costs above are counted on Azurite, not timed.
//
// # Conformance
//
// The resource of New passes resources/resourcetest on Azurite, with
// lost answers injected by dropping the answer of an applied write.
package azblob
