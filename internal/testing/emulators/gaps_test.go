package emulators_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The condition probes (s3conditions_test.go, azconditions_test.go) send
// each conditional request that fence's S3 and Azure backends rely on and
// compare the emulator's answer with the one the real service documents.
// An emulator that answers otherwise fails the probe, unless the
// difference is listed in gaps below with exactly the answer observed:
// then the probe is skipped with a message naming the emulator, its
// version and the difference. A listed gap that the emulator no longer
// shows fails too, so the list stays true; the README's list of emulator
// differences is this table.

// answer is what a server said to one request: the HTTP status (2xx
// written as 200) and the service's error code, if any.
type answer struct {
	status int
	code   string
}

// ok is any 2xx answer.
var ok = answer{status: http.StatusOK}

func (a answer) String() string {
	if a.status >= 200 && a.status < 300 {
		return "2xx"
	}
	if a.code == "" {
		return fmt.Sprintf("%d", a.status)
	}
	return fmt.Sprintf("%d %s", a.status, a.code)
}

// server names the emulator a probe talks to.
type server struct {
	name    string // lower case, as in gaps: "minio", "versitygw", "azurite"
	version string // "" when unknown
}

func (s server) String() string {
	if s.version == "" {
		return s.name + " (version unknown)"
	}
	return s.name + " " + s.version
}

// gap is a known difference of an emulator from the real service.
type gap struct {
	server string // server.name
	probe  string // the probe's subtest name
	got    answer // the emulator's answer
	effect string // what it means for fence, and what fence does about it
}

// gaps are the differences found. Keep each line's effect short: it is
// printed in the skip message and copied to the README.
var gaps = []gap{
	{"minio", "DeleteObject If-Match other ETag", ok,
		"deletes the object whatever its ETag: MinIO ignores If-Match on DELETE. fence never deletes a lock record or a fenced object (a release leaves a free record, a Delete a tombstone), so nothing relies on it."},
	{"minio", "PutObject user metadata of 2 KB", metadataTooLong,
		"MinIO counts each key with its x-amz-meta- prefix (11 bytes more a key) against the 2 KB limit; S3 documents keys and values only. Metadata near the limit that S3 accepts, MinIO refuses with 400 MetadataTooLarge."},
	{"versitygw", "PutObject key below an object", answer{http.StatusConflict, "ObjectParentIsFile"},
		"versitygw's posix backend keeps each object as a file at its key's path, so a key and a key below it (\"a\" and \"a/b\") cannot both exist. The lock and resource suites' tests of such names are skipped on versitygw (scripts/test.sh); MinIO runs them."},
	{"versitygw", "PutObject key above an object", answer{http.StatusConflict, "ExistingObjectIsDirectory"},
		"the same as above, the other way round."},
	{"azurite", "Put Blob If-Match * missing blob", ok,
		"creates the blob (Azurite issue 2589); Azure refuses with 412. fence sends If-Match only with an ETag it read, never *."},
}

// check compares got with the documented answers want for the probe
// running in t on srv: it returns if got is one of them (and fails if a
// gap was listed for it), skips t if the difference is a listed gap, and
// fails t otherwise.
func check(t *testing.T, srv server, got answer, documented string, want ...answer) {
	t.Helper()
	probe := t.Name()[strings.LastIndex(t.Name(), "/")+1:]
	probe = strings.ReplaceAll(probe, "_", " ")
	i := slices.IndexFunc(gaps, func(g gap) bool { return g.server == srv.name && g.probe == probe })
	if slices.ContainsFunc(want, func(w answer) bool { return same(w, got) }) {
		if i >= 0 {
			t.Errorf("%s answers %v as documented (%s), but a gap is listed for it: remove it from gaps", srv, got, documented)
		}
		return
	}
	if i >= 0 && same(gaps[i].got, got) {
		t.Skipf("emulator gap: %s answers %v; the service documents %s. %s", srv, got, documented, gaps[i].effect)
	}
	t.Errorf("%s answers %v; the service documents %s (%v). If the emulator cannot do better, list it in gaps with what it means for fence", srv, got, documented, want)
}

// same reports whether a and b are the same answer, any 2xx being ok.
func same(a, b answer) bool {
	if a.status >= 200 && a.status < 300 && b.status >= 200 && b.status < 300 {
		return true
	}
	return a == b
}

// race runs write(i) for 8 values of i at once, checks that exactly one
// succeeded, and returns its i and the answers of the others.
func race(t *testing.T, srv server, write func(i int) answer) (int, []answer) {
	t.Helper()
	const n = 8
	var (
		wg      sync.WaitGroup
		answers [n]answer
		start   = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			answers[i] = write(i)
		})
	}
	close(start)
	wg.Wait()
	var winners []int
	var losers []answer
	for i, a := range answers {
		if a == ok {
			winners = append(winners, i)
		} else {
			losers = append(losers, a)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%v: %d of %d conditional writes succeeded (%v), want exactly 1", srv, len(winners), n, answers)
	}
	return winners[0], losers
}
