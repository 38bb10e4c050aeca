package azblob

import (
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/resourcetest"
)

// TestConformance runs the resource suite on Azurite, every Resource on
// its own client to one container of this run.
func TestConformance(t *testing.T) {
	t.Parallel()
	c := newContainer(t, nil)
	resourcetest.Run(t, resourcetest.Harness{
		New: func(t *testing.T) *fence.Resource {
			return testResource(t, sameContainer(t, c, nil), fastOptions)
		},
		MaxKeyLen: MaxKeyLen,
		// Azurite applies the first write; the transport drops its
		// answer.
		LostAnswer: func(t *testing.T, after func()) *fence.Resource {
			return testResource(t, sameContainer(t, c, dropFirstWrite(after)), fastOptions)
		},
	})
}
