package gcs

import (
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/fencekit/fence"
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
	token      fence.Token
	writeID    string
	tombstone  bool
	attrs      *storage.ObjectAttrs // as read, when exists
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
	if rec.tombstone && attrs.Size != 0 {
		return record{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("tombstone of %d bytes", attrs.Size)}
	}
	rec.exists, rec.generation, rec.attrs = true, attrs.Generation, attrs
	return rec, nil
}

// parseMeta reads the fence keys from an object's custom metadata. Keys are
// matched without regard to case, because the XML API and HTTP headers do
// not keep it; two keys that differ in case only are corrupt. A missing or
// non-decimal token, token 0 and a tombstone marker other than "true" get a
// *fence.CorruptError.
func parseMeta(key string, meta map[string]string) (record, error) {
	var rec record
	var tok, tomb *string
	for k, v := range meta {
		var dst **string
		switch strings.ToLower(k) {
		case MetaToken:
			dst = &tok
		case MetaWriteID:
			rec.writeID = v
			continue
		case MetaTombstone:
			dst = &tomb
		default:
			continue
		}
		if *dst != nil {
			return record{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("metadata key %q appears twice, in different case", strings.ToLower(k))}
		}
		*dst = &v
	}
	if tok == nil {
		return record{}, &fence.CorruptError{Key: key, Reason: "no " + MetaToken + " metadata: the object was not written by a fenced writer"}
	}
	t, err := fence.ParseToken(*tok)
	if err != nil {
		// The stored record is corrupt, not the caller's input: keep the
		// parser's reason, not its *fence.InvalidError.
		if ie, ok := errors.AsType[*fence.InvalidError](err); ok {
			err = errors.New(ie.Reason)
		}
		return record{}, &fence.CorruptError{Key: key, Reason: "bad " + MetaToken + " metadata", Err: err}
	}
	rec.token = t
	if tomb != nil {
		if *tomb != "true" {
			return record{}, &fence.CorruptError{Key: key, Reason: fmt.Sprintf("%s metadata is %q, not \"true\"", MetaTombstone, *tomb)}
		}
		rec.tombstone = true
	}
	return rec, nil
}

// fenceMeta returns the metadata of a write: the caller's keys plus the
// fence keys.
func fenceMeta(user map[string]string, token fence.Token, writeID string, tombstone bool) map[string]string {
	m := make(map[string]string, len(user)+3)
	for k, v := range user {
		m[k] = v
	}
	m[MetaToken] = token.String()
	m[MetaWriteID] = writeID
	if tombstone {
		m[MetaTombstone] = "true"
	}
	return m
}
