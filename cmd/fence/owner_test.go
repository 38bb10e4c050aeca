package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	azlease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/lockers/azblob"
)

// TestOwnerNeverPrinted: on every store, nothing fence prints about a
// lease held by `fence run -v` contains its owner id (FENCE_OWNER, which
// the command sees): not the holder's own reports, not inspect or break
// in text or JSON, not the refusal a second run gets. inspect names the
// holder by its fingerprint; --show-owner adds the raw id, with a warning.
func TestOwnerNeverPrinted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, b backend, store string) {
		dir := t.TempDir()
		ownerFile, started, release := filepath.Join(dir, "owner"), filepath.Join(dir, "started"), filepath.Join(dir, "release")
		script := `echo "$FENCE_OWNER" > ` + shellQuote(ownerFile) + `; touch ` + shellQuote(started) +
			`; while [ ! -e ` + shellQuote(release) + ` ]; do sleep 0.02; done`
		holder := startFence(t, nil, "run", "-v", "--ttl", b.ttl, "--store", store, "k", "--", "sh", "-c", script)
		waitFor(t, "the holder's command to start", func() bool { return exists(started) })
		lines := readLines(t, ownerFile)
		if len(lines) != 1 || lines[0] == "" {
			t.Fatalf("FENCE_OWNER = %q", lines)
		}
		owner, fp := lines[0], fence.OwnerFingerprint(lines[0])

		var outputs []result
		check := func(r result, wantFingerprint bool) {
			t.Helper()
			outputs = append(outputs, r)
			if wantFingerprint && !strings.Contains(r.stdout, fp) {
				t.Errorf("the output lacks the holder's fingerprint %s: %v", fp, r)
			}
		}
		r := fenceRun(t, nil, "inspect", "--store", store, "k")
		wantCode(t, r, 0)
		check(r, true)
		if !strings.Contains(r.stdout, "holder:  "+fp+"\n") {
			t.Errorf("inspect does not name the holder %s: %v", fp, r)
		}
		r = fenceRun(t, nil, "inspect", "--json", "--store", store, "k")
		wantCode(t, r, 0)
		check(r, true)
		var s state
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.Owner != fp || s.OwnerID != "" {
			t.Errorf("inspect --json: %+v (%v); want owner %s and no owner_id", s, err, fp)
		}
		r = fenceRun(t, nil, "run", "--ttl", b.ttl, "--store", store, "k", "--", "true")
		wantCode(t, r, exitBusy)
		check(r, false)

		if b.name == "azblob" {
			azureLeaseUnreachable(t, store, "k", owner, s.Token, b.minTTL, outputs)
		}
		forgedRenewals(t, b, store, "k", owner, s.Token, outputs)

		// --show-owner prints it, with a warning.
		r = fenceRun(t, nil, "inspect", "--show-owner", "--store", store, "k")
		wantCode(t, r, 0)
		if !strings.Contains(r.stdout, "owner id: "+owner+"\n") || !strings.Contains(r.stderr, "warning: --show-owner") {
			t.Errorf("inspect --show-owner: %v; want the owner id %s and a warning", r, owner)
		}
		r = fenceRun(t, nil, "inspect", "--json", "--show-owner", "--store", store, "k")
		wantCode(t, r, 0)
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.Owner != fp || s.OwnerID != owner {
			t.Errorf("inspect --json --show-owner: %+v (%v); want owner %s, owner_id %s", s, err, fp, owner)
		}

		if err := os.WriteFile(release, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		r = holder.wait()
		wantCode(t, r, 0)
		check(r, false)
		r = fenceRun(t, nil, "break", "--store", store, "k")
		wantCode(t, r, 0)
		check(r, true)
		r = fenceRun(t, nil, "break", "--json", "--store", store, "k")
		wantCode(t, r, 0)
		check(r, true)

		for _, r := range outputs {
			if strings.Contains(r.stdout+r.stderr, owner) {
				t.Errorf("fence printed the owner id %s: %v", owner, r)
			}
		}
	})
}

// bearerOwner names the stores on which the owner id and the token are all
// another client needs to renew (or release) a lease: Release and Renew
// are conditions on the record. On ZooKeeper a lease is its session's
// lock node, which only the Locker that made it can renew or delete.
var bearerOwner = map[string]bool{
	"postgres": true, "dynamo-clock-free": true, "dynamo-trusted-clock": true, "azblob": true,
	"gcs-clock-free": true, "gcs-trusted-clock": true, "etcd": true, "redis": true,
	"redlock": true, "mysql": true, "zookeeper": false, "sqlite": true,
	"s3-clock-free": true, "s3-trusted-clock": true, "nats": true, "kubernetes": true,
}

// forgedRenewals fails t if a lease made from any word of outputs as its
// owner, with key, token and the store's TTL, is renewed by a Locker of
// the test's own; with the raw owner id it is exactly on the stores of
// bearerOwner.
func forgedRenewals(t *testing.T, b backend, store, key, owner string, token fence.Token, outputs []result) {
	t.Helper()
	l, err := fence.OpenLocker(t.Context(), store, nil)
	if err != nil {
		t.Fatalf("OpenLocker: %v", err)
	}
	defer l.Close()
	forged := func(owner string) error {
		_, err := l.Renew(t.Context(), fence.Lease{Key: key, Owner: owner, Token: token, TTL: b.minTTL, ValidUntil: time.Now().Add(b.minTTL)})
		return err
	}
	seen := map[string]bool{}
	for _, r := range outputs {
		for _, w := range regexp.MustCompile(`[A-Za-z0-9_:.\-]+`).FindAllString(r.stdout+r.stderr, -1) {
			if seen[w] {
				continue
			}
			seen[w] = true
			if err := forged(w); err == nil {
				t.Errorf("a lease with owner %q, from fence's output, was renewed", w)
			}
		}
	}
	want, ok := bearerOwner[b.name]
	if !ok {
		t.Fatalf("bearerOwner does not say whether the owner id acts on %s", b.name)
	}
	err = forged(owner)
	if got := err == nil; got != want {
		t.Errorf("a lease forged with the raw owner id renewed: %v (%v), want %v", got, err, want)
	}
	t.Logf("%d words of the output tried as owners; the raw owner id renews: %v", len(seen), err == nil)
}

// azureLeaseUnreachable fails t if any word of outputs, taken as an owner
// id or a lease id, renews key's Azure lease (token, ttl) with Azure's own
// lease client; the holder's owner id must (the control).
func azureLeaseUnreachable(t *testing.T, store, key, owner string, token fence.Token, ttl time.Duration, outputs []result) {
	t.Helper()
	u, err := url.Parse(store)
	if err != nil {
		t.Fatal(err)
	}
	c, err := container.NewClientFromConnectionString(os.Getenv("AZURE_STORAGE_CONNECTION_STRING"), u.Host, nil)
	if err != nil {
		t.Fatal(err)
	}
	renews := func(id string) bool {
		lc, err := azlease.NewBlobClient(c.NewBlobClient(key), &azlease.BlobClientOptions{LeaseID: &id})
		if err != nil {
			t.Fatal(err)
		}
		_, err = lc.RenewLease(t.Context(), nil)
		return err == nil
	}
	seen := map[string]bool{}
	for _, r := range outputs {
		for _, w := range regexp.MustCompile(`[A-Za-z0-9_:.\-]+`).FindAllString(r.stdout+r.stderr, -1) {
			for _, id := range []string{w, azblob.LeaseID(key, w, token, ttl), azblob.LeaseID(key, strings.TrimPrefix(w, "owner:"), token, ttl)} {
				if !seen[id] {
					seen[id] = true
					if renews(id) {
						t.Errorf("%q, from fence's output, renews the Azure lease", id)
					}
				}
			}
		}
	}
	if !renews(azblob.LeaseID(key, owner, token, ttl)) {
		t.Errorf("the control failed: the holder's lease id does not renew its lease")
	}
	t.Logf("%d ids from the output tried on the Azure lease", len(seen))
}
