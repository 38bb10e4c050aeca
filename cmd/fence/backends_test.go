package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/testing/testlockers"
)

// backend is a store of testlockers.Backends that the command can open.
type backend struct {
	name string
	// minTTL is the store's shortest lease; ttl is it as a --ttl flag,
	// the TTL of the behaviour tests.
	minTTL time.Duration
	ttl    string
	// keyspace: the store has nothing to create (testlockers.Backend).
	keyspace bool
	// file: the store is a file on this host (testlockers.Backend).
	file bool
	// url returns a fresh store URL, not yet initialised, removed when
	// the test ends.
	url func(t testing.TB) string
}

// backends returns the stores every behaviour test runs on: every entry
// of testlockers.Backends but those that live in one process, which the
// command, another one, cannot share.
func backends() []backend {
	var bs []backend
	for _, b := range testlockers.Backends {
		if b.InProcess || b.Open != nil { // the command opens URLs only
			continue
		}
		bs = append(bs, backend{name: b.Name, minTTL: b.MinTTL, ttl: b.MinTTL.String(), keyspace: b.Keyspace, file: b.File, url: b.URL})
	}
	return bs
}

// backendNamed returns the backend called name, for tests of one store's
// own features.
func backendNamed(t *testing.T, name string) backend {
	t.Helper()
	for _, b := range backends() {
		if b.name == name {
			return b
		}
	}
	t.Fatalf("no backend %q in testlockers.Backends", name)
	return backend{}
}

// missingStore returns the URL of a store of the test's own that does not
// exist yet, after checking that the environment gives the binary what it
// reads credentials from.
func (b backend) missingStore(t *testing.T) string {
	t.Helper()
	u := b.url(t)
	sdkEnv(t, u)
	return u
}

// store returns the URL of a store of the test's own, created with fence
// init and removed when the test ends.
func (b backend) store(t *testing.T) string {
	t.Helper()
	u := b.missingStore(t)
	wantCode(t, fenceRun(t, nil, "init", "--store", u), 0)
	return u
}

// seconds formats d for sleep(1).
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// sdkEnv fails the test unless the environment points the binary's SDKs
// at the emulators as scripts/emulators.sh does: the command reads cloud
// credentials only from there (TestMain sets Azure's from Azurite's).
func sdkEnv(t *testing.T, store string) {
	t.Helper()
	var need []string
	switch {
	case strings.HasPrefix(store, "dynamodb://"):
		need = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}
	case strings.HasPrefix(store, "gs://"):
		need = []string{"STORAGE_EMULATOR_HOST"}
	case strings.HasPrefix(store, "azblob://"):
		need = []string{"AZURE_STORAGE_CONNECTION_STRING"}
	}
	for _, v := range need {
		if os.Getenv(v) == "" {
			t.Fatalf("%s is unset; scripts/emulators.sh exports it with the emulator's endpoint", v)
		}
	}
}

// forEachBackend runs test on every backend, in parallel subtests, each
// with a store of its own.
func forEachBackend(t *testing.T, test func(t *testing.T, b backend, store string)) {
	t.Helper()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b, b.store(t))
		})
	}
}

// TestKnowsNoBackend: the command's code imports no backend and no SDK
// (only package backends, for its side effect) and writes no backend's
// URL, so that a backend joins the command by registering its schemes.
func TestKnowsNoBackend(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{
		"github.com/fencekit/fence":          true,
		"github.com/fencekit/fence/guard":    true,
		"github.com/fencekit/fence/backends": true,
		// the registry's schemes and a Locker's driver.Info, not a backend
		"github.com/fencekit/fence/driver": true,
		// password redaction, and the SDKs' process-wide loggers, which
		// are the program's to set (sdklog.Quiet)
		"github.com/fencekit/fence/internal/redact": true,
		"github.com/fencekit/fence/internal/sdklog": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	schemes, _ := driver.LockerSchemes()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if strings.Contains(first, ".") && !allowed[path] {
				t.Errorf("%s imports %s; the command reaches backends only through fence.OpenLocker", name, path)
			}
		}
		for _, s := range schemes {
			if strings.Contains(string(src), s+"://") {
				t.Errorf("%s writes a %s:// URL; the manual lists driver.LockerSchemes' forms instead", name, s)
			}
		}
	}
}
