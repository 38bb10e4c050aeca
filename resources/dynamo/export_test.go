package dynamo

import (
	"context"

	"github.com/fencekit/fence"
)

// TableOptions and CreateTable give the external tests the table maker
// under the resource's Create, with its key types and wait.
type TableOptions = tableOptions

// CreateTable is createTable, its errors in a *fence.OpError as Create's.
func CreateTable(ctx context.Context, api tableAPI, table string, opts *TableOptions) error {
	if err := createTable(ctx, api, table, opts); err != nil {
		return &fence.OpError{Backend: backend, Op: "create table", Key: table, Err: err}
	}
	return nil
}

// TableOf returns the table of r, a resource of New.
func TableOf(r *fence.Resource) string { return mustStore(r).table }

// OptionsOf returns the options of r, a resource of New, with the
// defaults filled in.
func OptionsOf(r *fence.Resource) Options { return mustStore(r).o }

func mustStore(r *fence.Resource) *store {
	s, err := storeOf(r, "test")
	if err != nil {
		panic(err)
	}
	return s
}
