package dynamo

import (
	"fmt"
	"regexp"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// Limits of DynamoDB that the package checks before sending a request.
const (
	// MaxPartitionKeyLen is the longest partition key value, in bytes.
	MaxPartitionKeyLen = 2048
	// MaxSortKeyLen is the longest sort key value, in bytes.
	MaxSortKeyLen = 1024
	// MaxKeyLen is the longest key the portable methods accept, in
	// bytes: DynamoDB's limit for a partition key.
	MaxKeyLen = MaxPartitionKeyLen
	// maxAttributeNameLen is the longest attribute name the package
	// accepts for the attributes it writes, in bytes.
	maxAttributeNameLen = 255
)

// Default attribute names.
const (
	// DefaultKeyAttribute is the partition key attribute, as in
	// lockers/dynamo.
	DefaultKeyAttribute = "key"
	// DefaultValueAttribute is the binary attribute holding the value of
	// the portable methods.
	DefaultValueAttribute     = "value"
	DefaultFenceAttribute     = "fencetoken"
	DefaultTombstoneAttribute = "fencetombstone"
	DefaultWriteIDAttribute   = "fencewriteid"
)

// Options configure New. A nil *Options means all defaults: a table
// whose only key is the string partition key "key".
type Options struct {
	// KeyAttribute names the table's partition key attribute. The
	// portable methods need it to be of type S. Default:
	// DefaultKeyAttribute.
	KeyAttribute string
	// SortKeyAttribute names the table's sort key attribute; empty when
	// the table has none. On a table with a sort key, a portable key
	// names no single item: only the item functions (PutItem, ...) work.
	SortKeyAttribute string
	// ValueAttribute names the binary attribute in which the portable
	// Put keeps the value. Default: DefaultValueAttribute.
	ValueAttribute string
	// FenceAttribute names the number attribute holding the highest token
	// an item has accepted. Default: DefaultFenceAttribute.
	FenceAttribute string
	// TombstoneAttribute names the attribute marking a deleted item.
	// Default: DefaultTombstoneAttribute.
	TombstoneAttribute string
	// WriteIDAttribute names the attribute holding the random id of the
	// last write, used to reconcile ambiguous outcomes. Default:
	// DefaultWriteIDAttribute.
	WriteIDAttribute string
}

var tableName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

// checkTableName refuses what DynamoDB does not accept as a table name.
func checkTableName(table string) error {
	if !tableName.MatchString(table) {
		return &fence.InvalidError{Field: "table", Reason: fmt.Sprintf("%q is not a DynamoDB table name (3 to 255 of a-z, A-Z, 0-9, '_', '-', '.')", table)}
	}
	return nil
}

// New returns a resource on table through api (a *dynamodb.Client); it is
// safe for concurrent use. opts may be nil. It checks the options and
// fills in the defaults; it does not call DynamoDB (create the table with
// the resource's Create, or your own tools). Its portable methods keep
// one item per key, the value in a binary attribute; the item functions
// (PutItem, UpdateItem, DeleteItem, GetItem, HighestItem) take it with
// the SDK's inputs.
func New(api API, table string, opts *Options) (*fence.Resource, error) {
	s, err := newStore(api, table, opts)
	if err != nil {
		return nil, err
	}
	return driver.NewResource(s, nil)
}

// newStore checks New's arguments and returns the store they describe.
func newStore(api API, table string, opts *Options) (*store, error) {
	if api == nil {
		return nil, &fence.InvalidError{Field: "api", Reason: "nil"}
	}
	if err := checkTableName(table); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	for _, a := range []struct {
		name *string
		def  string
	}{
		{&o.KeyAttribute, DefaultKeyAttribute},
		{&o.ValueAttribute, DefaultValueAttribute},
		{&o.FenceAttribute, DefaultFenceAttribute},
		{&o.TombstoneAttribute, DefaultTombstoneAttribute},
		{&o.WriteIDAttribute, DefaultWriteIDAttribute},
	} {
		if *a.name == "" {
			*a.name = a.def
		}
	}
	attrs := []struct{ field, name string }{
		{"KeyAttribute", o.KeyAttribute},
		{"FenceAttribute", o.FenceAttribute},
		{"TombstoneAttribute", o.TombstoneAttribute},
		{"WriteIDAttribute", o.WriteIDAttribute},
		{"ValueAttribute", o.ValueAttribute},
	}
	if o.SortKeyAttribute != "" {
		attrs = append(attrs, struct{ field, name string }{"SortKeyAttribute", o.SortKeyAttribute})
	}
	seen := map[string]string{}
	for _, a := range attrs {
		if err := driver.ValidateKey(a.field, a.name, maxAttributeNameLen); err != nil {
			return nil, err
		}
		if other, dup := seen[a.name]; dup {
			return nil, &fence.InvalidError{Field: a.field, Reason: fmt.Sprintf("%q is also the %s", a.name, other)}
		}
		seen[a.name] = a.field
	}
	return &store{api: api, table: table, o: o}, nil
}
