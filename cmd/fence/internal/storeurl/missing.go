package storeurl

import (
	"errors"
	"strings"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5/pgconn"
)

// Missing reports whether err says that the store's table, container or
// bucket does not exist: the store was never initialised (fence init).
func Missing(err error) bool {
	if err == nil {
		return false
	}
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pe.Code == "42P01" || pe.Code == "3F000" // undefined_table, invalid_schema_name
	}
	if _, ok := errors.AsType[*types.ResourceNotFoundException](err); ok {
		return true
	}
	if bloberror.HasCode(err, bloberror.ContainerNotFound) {
		return true
	}
	return errors.Is(err, storage.ErrBucketNotExist)
}

// MissingSchema reports whether err is PostgreSQL's invalid_schema_name:
// the schema to create the lease table in does not exist (or, for a table
// name without a schema, no schema on the search_path does). fence init
// creates tables, not schemas.
func MissingSchema(err error) bool {
	pe, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pe.Code == "3F000"
}

// Schema returns the schema of a PostgreSQL lease table given as
// table=schema.table, or "" when the table name has none.
func (s *Spec) Schema() string {
	if s.Kind != Postgres {
		return ""
	}
	schema, _, ok := strings.Cut(s.Table, ".")
	if !ok {
		return ""
	}
	return schema
}
