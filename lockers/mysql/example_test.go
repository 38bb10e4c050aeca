package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/mysql"
)

// The lease table is created once; each job then takes the key, does its
// work with the lease's token (pass it to a fenced resource), and
// releases. It needs a server, so it only compiles here.
func ExampleNew() {
	ctx := context.Background()
	db, err := sql.Open("mysql", os.Getenv("MYSQL_DSN")) // user:pass@tcp(db:3306)/app
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	locker, err := mysql.New(db, &mysql.Options{Table: "fence_locks"})
	if err != nil {
		log.Fatal(err)
	}
	if err := locker.Create(ctx); err != nil { // or mysql.SchemaSQL in a migration
		log.Fatal(err)
	}
	lease, err := locker.Acquire(ctx, "nightly-report", 30*time.Second, nil)
	var held *fence.HeldError
	if errors.As(err, &held) {
		fmt.Printf("busy: %s holds token %d until %v\n", held.Owner, held.Token, held.ValidUntil)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("writing with token", lease.Token)
	if err := locker.Release(ctx, lease); err != nil && !errors.Is(err, fence.ErrNotHeld) {
		log.Fatal(err)
	}
}

// GetLock holds a server lock on a connection of its own; it has no
// token, so it only saves duplicate work. Stop when Done closes: the
// server freed the lock when the connection ended. It needs a server, so
// it only compiles here.
func ExampleGetLock() {
	ctx := context.Background()
	db, err := sql.Open("mysql", os.Getenv("MYSQL_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	lock, err := mysql.GetLock(ctx, db, "rebuild-cache", 5*time.Second)
	if errors.Is(err, fence.ErrHeld) {
		return // someone else is rebuilding
	}
	if err != nil {
		log.Fatal(err)
	}
	defer lock.Release(ctx)
	select {
	case <-lock.Done():
		log.Print("lost the lock: ", lock.Err())
	case <-time.After(time.Second): // the work
	}
}

// Importing the package lets fence.OpenLocker open MySQL or MariaDB by
// URL; table is fence's parameter, the others go-sql-driver/mysql's. It
// needs a server, so it only compiles here.
func Example_openLocker() {
	ctx := context.Background()
	locker, err := fence.OpenLocker(ctx, "mysql://app@db.internal:3306/app?table=fence_locks&tls=true&timeout=5s", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Close()
	if err := locker.Create(ctx); err != nil {
		log.Fatal(err)
	}
}
