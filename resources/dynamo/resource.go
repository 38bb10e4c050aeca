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

// Options configure a Resource. A nil *Options means all defaults: a table
// whose only key is the string partition key "key", as CreateTable makes
// with nil TableOptions.
type Options struct {
	// KeyAttribute names the table's partition key attribute. The
	// portable methods need it to be of type S. Default:
	// DefaultKeyAttribute.
	KeyAttribute string
	// SortKeyAttribute names the table's sort key attribute; empty when
	// the table has none. On a table with a sort key, a portable key
	// names no single item: only the item methods (PutItem, ...) work.
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

// Resource fences writes to the items of one DynamoDB table. It is a
// fence.Resource (the embedded *fence.Resource: one item per key,
// the value in a binary attribute) and has the item methods PutItem,
// UpdateItem, DeleteItem, GetItem and HighestItem, which take the SDK's
// inputs. Create it with New; it is safe for concurrent use.
type Resource struct {
	*fence.Resource
	api   API
	table string
	o     Options
}

var _ fence.Resource = (*Resource)(nil)

var tableName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)

// checkTableName refuses what DynamoDB does not accept as a table name.
func checkTableName(table string) error {
	if !tableName.MatchString(table) {
		return &fence.InvalidError{Field: "table", Reason: fmt.Sprintf("%q is not a DynamoDB table name (3 to 255 of a-z, A-Z, 0-9, '_', '-', '.')", table)}
	}
	return nil
}

// New returns a Resource on table through api (a *dynamodb.Client). opts
// may be nil. It checks the options and fills in the defaults; it does
// not call DynamoDB (create the table with CreateTable or your own tools).
func New(api API, table string, opts *Options) (*Resource, error) {
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
	r := &Resource{api: api, table: table, o: o}
	p, err := driver.NewResource(&store{r: r})
	if err != nil {
		return nil, err
	}
	r.PortableResource = p
	return r, nil
}

// Table returns the name of the table.
func (r *Resource) Table() string { return r.table }

// Options returns the options with the defaults filled in.
func (r *Resource) Options() Options { return r.o }
