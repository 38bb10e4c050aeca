// Package dynamo fences writes to Amazon DynamoDB items, driven through the
// AWS SDK for Go v2: a write carrying token t is applied only if t is at
// least the highest token the item has seen, and in the same conditional
// write the item's fence attribute becomes t.
//
// # Fenced writes
//
// PutItem, UpdateItem and DeleteItem take the *fence.Resource of New and
// the SDK's own input structs, so existing code keeps its expressions,
// and return the SDK's outputs. Each is one conditional PutItem or UpdateItem whose
// condition is
//
//	(attribute_not_exists(#f) OR #f BETWEEN :1 AND :t) AND (your condition)
//
// where #f is the fence attribute (Options.FenceAttribute) and :t the
// token. (BETWEEN 1 AND t is "#f <= t" that also refuses a fence attribute
// someone set by hand to 0, a negative number or a string; only a
// fraction between 1 and t gets through, as expressions cannot test for an
// integer, and reads then report the item as corrupt.) Your
// ConditionExpression, ExpressionAttributeNames and
// ExpressionAttributeValues are kept; the package's own placeholders all
// start with "#fencekit" and ":fencekit", which your names and values may
// not use (fence.ErrInvalid). The same write sets the fence attribute to t:
// in the item of a PutItem, and in the SET clause of an UpdateItem's
// UpdateExpression (added when the expression has none). Nothing uses
// transactions. The legacy parameters (Expected, AttributeUpdates,
// ConditionalOperator) are refused: DynamoDB does not mix them with
// expressions.
//
// # Telling failures apart
//
// When the condition fails, the package looks at the item as it was
// (ReturnValuesOnConditionCheckFailure ALL_OLD; where the service returns
// no item, a consistent GetItem). A fence above t gives a
// *fence.StaleTokenError with the highest token seen; a fence attribute
// that is not a positive integer gives a *fence.CorruptError and nothing
// is written; otherwise your own condition failed, and the error is a
// *ConditionFailedError wrapping the SDK's
// *types.ConditionalCheckFailedException.
//
// # Tombstones
//
// A fenced DeleteItem does not delete: it replaces the item with a
// tombstone holding only the key, the fence attribute (the token) and a
// marker attribute (Options.TombstoneAttribute), so that a stale writer
// cannot re-create the item with an old token. GetItem and the portable
// Get report a tombstone as absent. Your condition
// expressions, though, are evaluated by DynamoDB against the stored item,
// tombstones included: after a delete, attribute_exists(pk) is true and
// attribute_not_exists(pk) false. To test whether an item is live, test an
// attribute your items always have, or the marker attribute through a
// placeholder of your own. A fenced UpdateItem on a tombstone re-creates
// the item (the marker is removed), as UpdateItem on an absent item creates
// it. Reclaim tombstones only when no writer with an old token can still
// come back.
//
// # Claims
//
// Claim (fence.Resource.Claim) is a conditional UpdateItem that sets the
// fence attribute of an existing item, a value or a tombstone, to the
// token, under the fence condition, and leaves the value: Get then
// returns the value with the claimed token. A key without an item gets a
// tombstone carrying the token, conditioned on there still being none.
// UpdateItem with an empty UpdateExpression only raises the fence too,
// but it also removes a tombstone's marker.
//
// # Ambiguous outcomes
//
// Every fenced write also stores a fresh random write id
// (Options.WriteIDAttribute). When a write fails in a way that leaves its
// outcome unknown (a network error or server fault after the request was
// sent, or a condition failure of an SDK retry whose first attempt was
// applied), the package reads the item back with a consistent read: if it
// carries the token and this write's id, the write was applied and the
// method succeeds. Otherwise the item may have been written by the lost
// attempt and replaced since, or the attempt may still land: the error is
// a *fence.UnknownOutcomeError (with the higher token in Highest when one
// is stored), never a stale token or ConditionFailedError, and a retry
// with the same token is harmless for the fence. When ctx is done, nothing
// is read back, and the *fence.UnknownOutcomeError wraps ctx's error.
//
// # The stored record
//
// The package adds three attributes to an item (names set in Options):
//
//	fencetoken      N, the highest token the item has accepted, a whole
//	                number from 1 to 18446744073709551615 (FenceAttribute)
//	fencewriteid    S, the random id of the last fenced write (WriteIDAttribute)
//	fencetombstone  BOOL true on a tombstone, absent otherwise; its presence
//	                marks the tombstone (TombstoneAttribute)
//
// A tombstone holds only the key and these attributes. The portable
// methods keep a key in the partition key "key" (S, Options.KeyAttribute)
// and the value in "value" (B, Options.ValueAttribute). aws dynamodb
// get-item --consistent-read shows them. A repaired item must keep
// fencetoken at least the highest token any holder may still write with:
// a lower token or a deleted item lets a stale writer through.
//
// # Portable form and layering
//
// New returns a *fence.Resource over the package's driver. The portable
// layer checks
// keys (at most MaxKeyLen bytes) and tokens, checks ctx, and wraps every
// error in a *fence.OpError ("fence/dynamo: put "k": ..."); the store
// does only what is DynamoDB's: one conditional PutItem per Put or Delete
// (on the item whose string partition key is the key, the value in a
// binary attribute), a consistent GetItem per Get or Highest, and the
// read-back that settles a write whose answer was lost. On a table with a
// sort key (Options.SortKeyAttribute) a key names no single item: the
// portable methods fail with errors.ErrUnsupported, and only the item
// functions work. The item functions (PutItem, UpdateItem, DeleteItem,
// GetItem, HighestItem) do their own input checks and wrap their errors
// in a *fence.OpError too; given a resource that is not one of New's,
// they return a *fence.InvalidError. A table that does not exist gets an
// error matching fence.ErrStoreMissing (and the SDK's
// *types.ResourceNotFoundException).
//
// The resource's Create creates the table of its Options (on-demand
// billing, string keys) if it is missing and waits until it is ACTIVE;
// its As gives the client New was given, to a *API target, or to a
// **dynamodb.Client target when it is one.
//
// # Opening from a URL
//
// Importing the package registers the resource scheme "dynamodb":
//
//	r, err := fence.OpenResource(ctx, "dynamodb://TABLE[?region=R&endpoint=URL&key-attribute=A]", nil)
//
// TABLE is the table, region the AWS region (default: the SDK's chain:
// AWS_REGION, the profile, ...), endpoint the DynamoDB endpoint (for
// emulators and private endpoints; default: the SDK's, which reads
// AWS_ENDPOINT_URL_DYNAMODB), key-attribute Options.KeyAttribute.
// Credentials come from the SDK's default chain (environment, shared
// files, roles), as config.LoadDefaultConfig finds them. The client sends
// its requests through OpenOptions.HTTPClient when set. The resource's
// Create creates the table.
package dynamo
