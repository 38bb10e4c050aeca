package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"

	"github.com/fencekit/fence"
)

// job asks for the daily report of one customer.
type job struct {
	customer string
	date     string // YYYY-MM-DD
	// redelivered marks the copy the queue hands out again because the
	// first taker never acknowledged it within its visibility timeout.
	redelivered bool
}

func (j job) String() string { return j.customer + "/" + j.date }

// lockKey is the lease that keeps two workers from rendering the same
// report at once: report:{customer}:{date}.
func (j job) lockKey() string { return "report:" + j.customer + ":" + j.date }

// objectName is where the report is uploaded: under the run's prefix, so
// that runs against a persistent bucket do not see each other's reports.
func (j job) objectName(prefix string) string {
	return prefix + j.customer + "/" + j.date + ".csv"
}

// orderLine is one line of fake order data.
type orderLine struct {
	id       string
	sku      string
	quantity int
	cents    int64 // unit price
}

// orders is the fake data the reports are rendered from: order lines per
// customer and day. Late orders can arrive while reports are rendered.
type orders struct {
	mu    sync.Mutex
	lines map[string][]orderLine // job.String() -> lines
}

var skus = []string{"WIDGET-S", "WIDGET-L", "GADGET", "SPROCKET", "FLANGE", "GROMMET"}

// newOrders makes a few deterministic order lines for every job.
func newOrders(js []job) *orders {
	o := &orders{lines: map[string][]orderLine{}}
	for _, j := range js {
		if _, ok := o.lines[j.String()]; ok {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(j.String()))
		r := rand.New(rand.NewPCG(h.Sum64(), 1))
		n := 3 + r.IntN(4)
		for i := range n {
			o.lines[j.String()] = append(o.lines[j.String()], orderLine{
				id:       fmt.Sprintf("%s-%s-%02d", j.customer, j.date, i+1),
				sku:      skus[r.IntN(len(skus))],
				quantity: 1 + r.IntN(20),
				cents:    int64(100 + r.IntN(9900)),
			})
		}
	}
	return o
}

// add records a late order line for j and returns it.
func (o *orders) add(j job, sku string, quantity int, cents int64) orderLine {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := orderLine{id: fmt.Sprintf("%s-%s-%02d", j.customer, j.date, len(o.lines[j.String()])+1),
		sku: sku, quantity: quantity, cents: cents}
	o.lines[j.String()] = append(o.lines[j.String()], l)
	return l
}

// The report's columns. The last two stamp every row with the write that
// stored it: the token of the lease it was rendered under and the worker.
var header = []string{"customer", "date", "order", "sku", "quantity", "unit_cents", "total_cents", "token", "rendered_by"}

// render returns the report of j as CSV, from the order lines known now,
// stamped with the token of the lease it is rendered and uploaded under,
// and the worker. The stamp makes the bytes of every write differ: S3
// derives an object's ETag from its bytes alone, so a conditional PUT of
// the very bytes the object already holds could not be told apart from
// the write before it (see resources/s3, "ETags name contents"). A job
// that is delivered twice renders two different objects, each naming the
// lease that wrote it.
func (o *orders) render(j job, token fence.Token, worker string) []byte {
	o.mu.Lock()
	lines := slices.Clone(o.lines[j.String()])
	o.mu.Unlock()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(header)
	tok := token.String()
	var sum int64
	for _, l := range lines {
		total := int64(l.quantity) * l.cents
		sum += total
		_ = w.Write([]string{j.customer, j.date, l.id, l.sku, strconv.Itoa(l.quantity),
			strconv.FormatInt(l.cents, 10), strconv.FormatInt(total, 10), tok, worker})
	}
	_ = w.Write([]string{j.customer, j.date, "TOTAL", "", "", "", strconv.FormatInt(sum, 10), tok, worker})
	w.Flush() // writes to a bytes.Buffer cannot fail
	return buf.Bytes()
}

// stamp returns the token and worker a stored report names in its rows,
// and an error when the body is not a report or its rows disagree.
func stamp(body []byte) (fence.Token, string, error) {
	records, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		return 0, "", err
	}
	if len(records) < 2 || !slices.Equal(records[0], header) {
		return 0, "", errors.New("not a report: no header or no rows")
	}
	tok, worker := records[1][7], records[1][8]
	for _, r := range records[2:] {
		if r[7] != tok || r[8] != worker {
			return 0, "", fmt.Errorf("rows name different writes: token %s by %s, token %s by %s", tok, worker, r[7], r[8])
		}
	}
	t, err := fence.ParseToken(tok)
	if err != nil {
		return 0, "", err
	}
	return t, worker, nil
}
