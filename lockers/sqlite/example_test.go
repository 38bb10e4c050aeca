package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fencekit/fence"
	_ "github.com/fencekit/fence/lockers/sqlite" // registers sqlite://
)

// Open a locker on a file, take a lock, release it: the next holder, in
// this process or another on the host, gets a higher token.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fence-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	locker, err := fence.OpenLocker(ctx, "sqlite://"+filepath.ToSlash(filepath.Join(dir, "locks.db")), nil)
	if err != nil {
		fmt.Println("open:", err)
		return
	}
	defer locker.Close()

	lease, err := locker.Acquire(ctx, "reports/daily", 30*time.Second, nil)
	if err != nil {
		fmt.Println("acquire:", err)
		return
	}
	// Pass lease.Token with every write to a fenced resource.
	fmt.Println("acquired with token", lease.Token)
	if err := locker.Release(ctx, lease); err != nil {
		fmt.Println("release:", err)
		return
	}

	next, err := locker.Acquire(ctx, "reports/daily", 30*time.Second, nil)
	if err != nil {
		fmt.Println("acquire:", err)
		return
	}
	fmt.Println("next holder's token", next.Token)
	// Output:
	// acquired with token 1
	// next holder's token 2
}
