package gcs

import (
	"fmt"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/fencedobj"
)

// The custom metadata keys the package writes on every object it fences:
// the names every fence backend gives these fields, without a dash, which
// Azure's metadata cannot hold. Keys starting with MetaPrefix, in any
// case, are reserved: UploadOptions.Metadata may not use them.
const (
	// MetaPrefix starts every reserved key.
	MetaPrefix = "fence"
	// MetaToken holds the token of the write, in decimal.
	MetaToken = "fencetoken"
	// MetaWriteID holds the id of the write (UploadOptions.WriteID), by
	// which an ambiguous upload is recognised as applied.
	MetaWriteID = "fencewriteid"
	// MetaTombstone is "true" on the zero-length object Delete leaves.
	MetaTombstone = "fencetombstone"
)

// record is what the package reads from an object's attributes.
type record struct {
	exists     bool  // an object (value or tombstone) is stored
	generation int64 // of that object, when exists
	fencedobj.Record
	attrs *storage.ObjectAttrs // as read, when exists
}

// recordOf turns the attributes of key's object into a record. attrs nil
// means no object. Metadata that is missing or unparsable gets a
// *fence.CorruptError.
func recordOf(key string, attrs *storage.ObjectAttrs) (record, error) {
	if attrs == nil {
		return record{}, nil
	}
	rec, err := parseMeta(key, attrs.Metadata)
	if err != nil {
		return record{}, err
	}
	if rec.Tombstone && attrs.Size != 0 {
		return record{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("tombstone of %d bytes", attrs.Size)}
	}
	rec.exists, rec.generation, rec.attrs = true, attrs.Generation, attrs
	return rec, nil
}

// parseMeta reads the fence keys from an object's custom metadata (see
// fencedobj.Parse, which matches keys without regard to case, because the
// XML API and HTTP headers do not keep it). Every object of the bucket is
// fenced: one without a token is a *fence.CorruptError too.
func parseMeta(key string, meta map[string]string) (record, error) {
	r, err := fencedobj.Parse(key, meta)
	if err != nil {
		return record{}, err
	}
	if r.Token == 0 {
		return record{}, &fence.CorruptError{Key: key, Reason: "no " + MetaToken + " metadata: the object was not written by a fenced writer"}
	}
	return record{Record: r}, nil
}
