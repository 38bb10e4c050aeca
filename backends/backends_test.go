package backends_test

import (
	"slices"
	"testing"

	"github.com/fencekit/fence"
	_ "github.com/fencekit/fence/backends"
)

func TestEveryBackendRegistersItsSchemes(t *testing.T) {
	t.Parallel()
	for _, want := range []string{"azblob", "dynamodb", "etcd", "etcds", "gs", "mem", "mysql", "postgres", "postgresql", "redis", "redis+sentinel", "rediss", "redlock", "zk"} {
		if !slices.Contains(fence.LockerSchemes(), want) {
			t.Errorf("locker scheme %q not registered; have %v", want, fence.LockerSchemes())
		}
	}
	for _, want := range []string{"dynamodb", "etcd", "etcds", "gs", "mem", "mysql", "postgres", "postgresql", "redis", "rediss", "s3", "sqlite"} {
		if !slices.Contains(fence.ResourceSchemes(), want) {
			t.Errorf("resource scheme %q not registered; have %v", want, fence.ResourceSchemes())
		}
	}
	if n := len(fence.LockerURLForms()); n < 8 {
		t.Errorf("LockerURLForms() has %d forms; want one per locker backend", n)
	}
	if n := len(fence.ResourceURLForms()); n < 7 {
		t.Errorf("ResourceURLForms() has %d forms; want one per resource backend", n)
	}
}
