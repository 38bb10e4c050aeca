package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fencekit/fence/driver"
	"github.com/fencekit/fence/internal/clockfree"
)

// errConflict reports a write refused by its expected revision: another
// write came first.
var errConflict = errors.New("the entry's revision changed")

// conflict reports whether err is a refused compare-and-set: a Create of
// a key that exists, or an Update of a revision that is no longer the
// latest (10071, or 10164 on a replicated stream).
func conflict(err error) bool {
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return true
	}
	if ae, ok := errors.AsType[*jetstream.APIError](err); ok {
		return ae.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || ae.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}

// fail returns the error of a failed request of op on name. When the
// request found no stream, it asks whether the bucket still exists: a
// deleted bucket gets an error matching fence.ErrStoreMissing.
func (d *store) fail(ctx context.Context, op, name string, err error) error {
	err = fmt.Errorf("%s %q: %w", op, name, err)
	if !noStream(err) {
		return err
	}
	if ctx.Err() != nil {
		return err
	}
	if _, serr := d.js.KeyValue(ctx, d.bucket); errors.Is(serr, jetstream.ErrBucketNotFound) {
		d.unbind()
		return driver.StoreMissing(fmt.Errorf("%w (bucket %q not found)", err, d.bucket))
	}
	return err
}

// noStream reports whether err says that a request found no stream to
// answer it (the errors of nats.go's jetstream package, and of its older
// API behind KV watches).
func noStream(err error) bool {
	for _, target := range []error{
		jetstream.ErrNoStreamResponse, jetstream.ErrStreamNotFound, jetstream.ErrBucketNotFound,
		natsgo.ErrNoResponders, natsgo.ErrNoStreamResponse, natsgo.ErrStreamNotFound,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// get reads the latest entry of name from the leader of the bucket's
// stream (the stream API's message get, not the KV's direct get, which
// any replica may answer with what it has applied so far): its value and
// revision, found false when the key has no entry or its latest is a
// delete or purge marker.
func (d *store) get(ctx context.Context, name string) (data []byte, rev uint64, found bool, err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.js.Options().DefaultTimeout)
		defer cancel()
	}
	req, _ := json.Marshal(msgGetRequest{LastBySubject: "$KV." + d.bucket + "." + name})
	msg, err := d.js.Conn().RequestWithContext(ctx, apiPrefix(d.js)+"STREAM.MSG.GET.KV_"+d.bucket, req)
	if err != nil {
		return nil, 0, false, d.fail(ctx, "get", name, err)
	}
	var resp msgGetResponse
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, 0, false, fmt.Errorf("get %q: the answer does not parse: %w", name, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, 0, false, nil
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeStreamNotFound:
		d.unbind()
		return nil, 0, false, driver.StoreMissing(fmt.Errorf("get %q: %w (bucket %q not found)", name, resp.Error, d.bucket))
	case resp.Error != nil:
		return nil, 0, false, fmt.Errorf("get %q: %w", name, resp.Error)
	case resp.Message == nil || resp.Message.Sequence == 0:
		return nil, 0, false, fmt.Errorf("get %q: the answer holds no message", name)
	}
	m := resp.Message
	if len(m.Header) > 0 {
		h, err := natsgo.DecodeHeadersMsg(m.Header)
		if err != nil {
			return nil, 0, false, fmt.Errorf("get %q: the message's headers do not parse: %w", name, err)
		}
		if op := h.Get("KV-Operation"); op == "DEL" || op == "PURGE" || h.Get("Nats-Marker-Reason") != "" {
			return nil, 0, false, nil
		}
	}
	return m.Data, m.Sequence, true, nil
}

// msgGetRequest and msgGetResponse are the JetStream API's message get
// (STREAM.MSG.GET), as nats-server documents it.
type msgGetRequest struct {
	LastBySubject string `json:"last_by_subj"`
}

type msgGetResponse struct {
	Error   *jetstream.APIError `json:"error,omitempty"`
	Message *struct {
		Sequence uint64 `json:"seq"`
		Header   []byte `json:"hdrs,omitempty"`
		Data     []byte `json:"data,omitempty"`
	} `json:"message,omitempty"`
}

// apiPrefix returns the subject prefix of js's JetStream API requests.
func apiPrefix(js jetstream.JetStream) string {
	o := js.Options()
	switch {
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	case o.APIPrefix == "":
		return jetstream.DefaultAPIPrefix
	case !strings.HasSuffix(o.APIPrefix, "."):
		return o.APIPrefix + "."
	}
	return o.APIPrefix
}

// put writes data as name's entry on the condition that its latest
// revision is rev, or that it has none (or a delete marker) when rev is
// 0, and returns the new revision. A refused condition returns
// errConflict.
func (d *store) put(ctx context.Context, kv jetstream.KeyValue, name string, rev uint64, data []byte) (uint64, error) {
	var (
		next uint64
		err  error
	)
	if rev == 0 {
		next, err = kv.Create(ctx, name, data)
	} else {
		next, err = kv.Update(ctx, name, data, rev)
	}
	switch {
	case err == nil:
		return next, nil
	case conflict(err):
		return 0, errConflict
	}
	return 0, d.fail(ctx, "write", name, err)
}

// state is what a store knows of one key's entry: whether it exists, its
// record (with its revision), and since when that revision has been seen.
type state struct {
	found  bool
	rec    record
	since  time.Time
	cached bool // from the Observations, not read just now: it may be stale
}

// sighting returns r as clockfree sees it: the revision is the version
// and orders them.
func sighting(r record) clockfree.Sighting {
	return clockfree.Sighting{Version: strconv.FormatUint(r.revision, 10), Seq: int64(r.revision), Held: r.held, TTL: r.ttl, Record: r}
}

// look reads key's entry and records what it saw.
func (d *store) look(ctx context.Context, key, name string) (state, error) {
	data, rev, found, err := d.get(ctx, name)
	if err != nil {
		return state{}, err
	}
	// The revision existed when the answer arrived; a time taken before
	// sending the read could precede the write that made it.
	seen := d.clock.Now()
	if !found {
		return state{}, nil
	}
	r, err := parseRecord(key, data, rev)
	if err != nil {
		return state{}, err
	}
	since := d.obs.Note(d.bucket, name, sighting(r), seen)
	if last, lastSince, ok := d.obs.Last(d.bucket, name); ok && last.Seq > int64(r.revision) {
		// A later revision was seen already (by a watch, a write or a
		// read of this process): the read was answered before it was
		// applied, as a read right after a lost compare-and-set can be
		// on a replicated stream, where the winning write may still be
		// in flight. The later one is the key's state.
		if lr, ok := last.Record.(record); ok {
			return state{found: true, rec: lr, since: lastSince}, nil
		}
	}
	return state{found: true, rec: r, since: since}, nil
}

// remembered returns the last state the Observations hold for name, or
// reads it when they hold none.
func (d *store) remembered(ctx context.Context, key, name string) (state, error) {
	if s, since, ok := d.obs.Last(d.bucket, name); ok {
		if r, ok := s.Record.(record); ok {
			return state{found: true, rec: r, since: since, cached: true}, nil
		}
	}
	return d.look(ctx, key, name)
}

// wrote records r, which d wrote with a request sent at sent.
func (d *store) wrote(name string, r record, sent time.Time) {
	d.obs.Note(d.bucket, name, sighting(r), sent)
}

// holding decides whether st holds a lease that still runs at now on d's
// clock, and until when: a held record whose revision d has seen
// unchanged for less than its lease duration.
func (d *store) holding(st state, now time.Time) (held bool, until time.Time) {
	if !st.found {
		return false, time.Time{}
	}
	return clockfree.Mode{}.Holding(clockfree.Sighting{Held: st.rec.held, TTL: st.rec.ttl}, st.since, now)
}
