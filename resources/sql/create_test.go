package sql_test

import (
	"testing"

	"github.com/fencekit/fence/internal/testing/createtest"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// TestConcurrentCreate checks that replicas starting together may all
// create the tables: on each database, three creators, each with a
// connection of its own, create the same fresh tables at once, through
// Resource.Create and through Fences.Create, and each succeeds.
func TestConcurrentCreate(t *testing.T) {
	t.Parallel()
	kinds := []struct {
		name string
		// open returns a backend on a connection of its own to the
		// database that dsn names (SQLite; empty elsewhere).
		open func(t *testing.T, dsn string) *backend
	}{
		{"sqlite", func(t *testing.T, dsn string) *backend {
			return sqlBackend("sqlite", fencesql.SQLite, openSQLiteDSN(t, dsn))
		}},
		{"postgres-stdlib", func(t *testing.T, _ string) *backend {
			return sqlBackend("postgres-stdlib", fencesql.PostgreSQL, openPgStd(t, 1))
		}},
		{"postgres-pgx", func(t *testing.T, _ string) *backend { return pgxBackend(openPgPool(t, 1, nil)) }},
		{"mysql", func(t *testing.T, _ string) *backend { return mysqlBackend(openMySQL(t, 1, nil)) }},
	}
	vias := []struct {
		name   string
		create func(b *backend, tb fencesql.Options) (createtest.Create, error)
	}{
		{"Resource.Create", func(b *backend, tb fencesql.Options) (createtest.Create, error) {
			r, err := b.newResource(tb)
			if err != nil {
				return nil, err
			}
			return r.Create, nil
		}},
		{"Fences.Create", func(b *backend, tb fencesql.Options) (createtest.Create, error) {
			f, err := b.newFences(&tb)
			if err != nil {
				return nil, err
			}
			return f.Create, nil
		}},
	}
	for _, k := range kinds {
		for _, via := range vias {
			t.Run(k.name+"/"+via.name, func(t *testing.T) {
				t.Parallel()
				createtest.Race(t, func(t *testing.T, n int) []createtest.Create {
					dsn := ""
					if k.name == "sqlite" {
						dsn = sqliteDSN(t)
					}
					tb := fencesql.Options{FenceTable: uniqueName("fence"), ValueTable: uniqueName("value")}
					creates := make([]createtest.Create, n)
					for i := range creates {
						b := k.open(t, dsn)
						if i == 0 {
							b.dropLater(t, tb.FenceTable, tb.ValueTable)
						}
						c, err := via.create(b, tb)
						if err != nil {
							t.Fatal(err)
						}
						creates[i] = c
					}
					return creates
				})
			})
		}
	}
}
