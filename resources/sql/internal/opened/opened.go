// Package opened builds the resource of a URL opener of resources/sql's
// subpackages (sqlite, mysql) over a database the opener made.
package opened

import (
	"database/sql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
	fencesql "github.com/fencekit/fence/resources/sql"
)

// Resource returns the portable resource of the Fences of db in dialect d
// with opts, which closes db when it is closed. On an error it closes db.
func Resource(db *sql.DB, d fencesql.Dialect, opts *fencesql.Options) (*fence.Resource, error) {
	f, err := fencesql.New(db, d, opts)
	var r *fence.Resource
	if err == nil {
		r, err = driver.NewResource(driver.ResourceOf(f.Resource()), &driver.ResourceOptions{Close: db.Close})
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return r, nil
}
