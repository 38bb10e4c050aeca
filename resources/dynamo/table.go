package dynamo

import (
	"fmt"
	"regexp"

	"github.com/fencekit/fence"
)

// Limits of DynamoDB that the package checks before sending a request.
const (
	// MaxPartitionKeyLen is the longest partition key value, in bytes.
	MaxPartitionKeyLen = 2048
	// MaxSortKeyLen is the longest sort key value, in bytes.
	MaxSortKeyLen = 1024
	// maxAttributeNameLen is the longest attribute name the package
	// accepts for the attributes it writes, in bytes.
	maxAttributeNameLen = 255
)

// Default attribute names.
const (
	DefaultFenceAttribute     = "fence_token"
	DefaultTombstoneAttribute = "fence_deleted"
	DefaultWriteIDAttribute   = "fence_write_id"
)

// Options configure a Table. Table and PartitionKey are required.
type Options struct {
	// Table is the name of the DynamoDB table. Inputs whose TableName is
	// nil get it; inputs naming another table are refused.
	Table string
	// PartitionKey names the table's partition key attribute.
	PartitionKey string
	// SortKey names the table's sort key attribute; empty when the table
	// has none.
	SortKey string
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

// Table fences writes to the items of one DynamoDB table. Create it with
// New. It is safe for concurrent use.
type Table struct {
	api API
	o   Options
}

var tableName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

// New returns a Table writing through api. It checks the options and
// fills in the defaults; it does not call DynamoDB.
func New(api API, opts Options) (*Table, error) {
	if api == nil {
		return nil, &fence.InvalidError{Field: "api", Reason: "nil"}
	}
	if !tableName.MatchString(opts.Table) {
		return nil, &fence.InvalidError{Field: "Table", Reason: fmt.Sprintf("%q is not a DynamoDB table name (3 to 255 of a-z, A-Z, 0-9, '_', '-', '.')", opts.Table)}
	}
	if opts.FenceAttribute == "" {
		opts.FenceAttribute = DefaultFenceAttribute
	}
	if opts.TombstoneAttribute == "" {
		opts.TombstoneAttribute = DefaultTombstoneAttribute
	}
	if opts.WriteIDAttribute == "" {
		opts.WriteIDAttribute = DefaultWriteIDAttribute
	}
	attrs := []struct{ field, name string }{
		{"PartitionKey", opts.PartitionKey},
		{"FenceAttribute", opts.FenceAttribute},
		{"TombstoneAttribute", opts.TombstoneAttribute},
		{"WriteIDAttribute", opts.WriteIDAttribute},
	}
	if opts.SortKey != "" {
		attrs = append(attrs, struct{ field, name string }{"SortKey", opts.SortKey})
	}
	seen := map[string]string{}
	for _, a := range attrs {
		if err := fence.ValidateKey(a.field, a.name, maxAttributeNameLen); err != nil {
			return nil, err
		}
		if other, dup := seen[a.name]; dup {
			return nil, &fence.InvalidError{Field: a.field, Reason: fmt.Sprintf("%q is also the %s", a.name, other)}
		}
		seen[a.name] = a.field
	}
	return &Table{api: api, o: opts}, nil
}

// Options returns the table's options with the defaults filled in.
func (t *Table) Options() Options { return t.o }
