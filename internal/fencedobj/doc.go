// Package fencedobj holds what the fenced resources on object storage
// (resources/s3, resources/azblob, resources/gcs) share: the fence record
// kept in an object's metadata (Record, Parse, Record.Format), the random
// write id that recognises a write whose answer was lost (NewWriteID),
// the body of a write that every attempt sends again from its start
// (Body), the bookkeeping of the conditional write loop (Loop), and the
// checks and errors of a package's own calls (Native, Fail, NewBackoff).
//
// What differs per store stays in each package: the limits and name rules
// of user metadata, the keys a store also reserves or adds (S3's claimed
// marker), the form a write id must have when read back, and which of the
// store's answers mean "not applied" or "may have been applied".
package fencedobj
