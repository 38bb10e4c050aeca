// Package fencedobj holds what the fenced resources on object storage
// (resources/s3, resources/azblob, resources/gcs) share: the fence record
// kept in an object's metadata (Record, Parse, Record.Format), the random
// write id that recognises a write whose answer was lost (NewWriteID), the
// body of a write that every attempt sends again from its start (Body),
// and the errors of a write loop whose ctx ended (CtxErr, WithCtx, Pause).
//
// What differs per store stays in each package: the limits and name rules
// of user metadata, the keys a store also reserves, the form a write id
// must have when read back, and how the store's answers are classified.
package fencedobj
