package dynamo_test

import (
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/internal/emulators"
	"github.com/fencekit/fence/resources/dynamo"
	"github.com/fencekit/fence/resources/resourcetest"
)

// TestResource runs the conformance suite on dynalite, on one table with
// the default layout (string partition key "name").
func TestResource(t *testing.T) {
	t.Parallel()
	c := emulators.DynamoClient(t, nil)
	table := createTable(t, c, nil)
	resourcetest.Run(t, resourcetest.Harness{
		New: func(t *testing.T) fence.Resource {
			r, err := dynamo.NewResource(c, table, nil)
			if err != nil {
				t.Fatalf("NewResource: %v", err)
			}
			return r
		},
		MaxNameLen: dynamo.MaxNameLen,
	})
}
