package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
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

// render returns the report of j as CSV, from the order lines known now.
func (o *orders) render(j job) []byte {
	o.mu.Lock()
	lines := slices.Clone(o.lines[j.String()])
	o.mu.Unlock()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"customer", "date", "order", "sku", "quantity", "unit_cents", "total_cents"})
	var sum int64
	for _, l := range lines {
		total := int64(l.quantity) * l.cents
		sum += total
		_ = w.Write([]string{j.customer, j.date, l.id, l.sku, strconv.Itoa(l.quantity),
			strconv.FormatInt(l.cents, 10), strconv.FormatInt(total, 10)})
	}
	_ = w.Write([]string{j.customer, j.date, "TOTAL", "", "", "", strconv.FormatInt(sum, 10)})
	w.Flush() // writes to a bytes.Buffer cannot fail
	return buf.Bytes()
}
