package fenceotel_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/fenceotel"
)

// Lock keys appear on metrics only when asked for; spans carry them
// always.
func TestKeyAttributeOptIn(t *testing.T) {
	t.Parallel()
	for _, withKey := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[withKey], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fenceotel.Options{KeyAttribute: withKey})
			if err := startJob(t, e.session(t), "acct-9").end(func(context.Context, *fence.Handle) error { return nil }); err != nil {
				t.Fatal(err)
			}
			rm := e.collect(t)
			lockMetrics := []string{fenceotel.MetricAcquireAttempts, fenceotel.MetricAcquireDuration,
				fenceotel.MetricHoldDuration, fenceotel.MetricHeld, fenceotel.MetricLockOperationDuration}
			for _, name := range lockMetrics {
				for _, set := range pointSets(find(t, rm, name).Data) {
					v, ok := set.Value("fence.key")
					if ok != withKey || (ok && v.AsString() != "acct-9") {
						t.Errorf("%s point %v: key %v (%v), want key attribute %v", name, set.Encoded(attribute.DefaultEncoder()), v.Emit(), ok, withKey)
					}
				}
			}
			for _, s := range e.spans.Ended() {
				if v, _ := attr(s, "fence.key"); v.AsString() != "acct-9" {
					t.Errorf("span %s key %q, want acct-9", s.Name(), v.AsString())
				}
			}
		})
	}
}

// pointSets returns the attribute sets of the points of an int64 sum or a
// float64 histogram.
func pointSets(d metricdata.Aggregation) []attribute.Set {
	var sets []attribute.Set
	switch d := d.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	}
	return sets
}
