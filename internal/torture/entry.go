package torture

import (
	"encoding/json"
	"fmt"

	"github.com/fencekit/fence"
)

// Entry is one applied write as the resource stores it: the list a
// worker read, plus this entry, is the value it put back.
type Entry struct {
	// Worker is the writer's number.
	Worker int `json:"w"`
	// Seq numbers the writer's attempts from 1; with Worker it names the
	// write.
	Seq int `json:"s"`
	// Token is the lease token the write carried.
	Token fence.Token `json:"t"`
}

// ID names the write that appended e.
func (e Entry) ID() string { return entryID(e.Worker, e.Seq) }

func entryID(worker, seq int) string { return fmt.Sprintf("w%d.%d", worker, seq) }

// encodeEntries returns the stored form of a list.
func encodeEntries(es []Entry) []byte {
	b, err := json.Marshal(es)
	if err != nil { // a slice of plain structs always marshals
		panic(err)
	}
	return b
}

// decodeEntries parses a stored list; a value that is not one gets an
// error matching fence.ErrCorrupt.
func decodeEntries(name string, b []byte) ([]Entry, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var es []Entry
	if err := json.Unmarshal(b, &es); err != nil {
		return nil, &fence.CorruptError{Key: name, Reason: "not a list of entries", Err: err}
	}
	return es, nil
}
