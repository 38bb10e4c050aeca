package backends_test

import (
	"slices"
	"testing"

	_ "github.com/fencekit/fence/backends"
	"github.com/fencekit/fence/driver"
)

func TestEveryBackendRegistersItsSchemes(t *testing.T) {
	t.Parallel()
	for _, want := range []string{"azblob", "dynamodb", "etcd", "etcds", "gs", "kubernetes", "mem", "mysql", "nats", "postgres", "postgresql", "redis", "redis+sentinel", "rediss", "redlock", "s3", "zk"} {
		if !slices.Contains(registeredLockers(), want) {
			t.Errorf("locker scheme %q not registered; have %v", want, registeredLockers())
		}
	}
	for _, want := range []string{"dynamodb", "etcd", "etcds", "gs", "mem", "mysql", "postgres", "postgresql", "redis", "rediss", "s3", "sqlite"} {
		if !slices.Contains(registeredResources(), want) {
			t.Errorf("resource scheme %q not registered; have %v", want, registeredResources())
		}
	}
	if n := len(lockerForms()); n < 8 {
		t.Errorf("LockerURLForms() has %d forms; want one per locker backend", n)
	}
	if n := len(resourceForms()); n < 7 {
		t.Errorf("ResourceURLForms() has %d forms; want one per resource backend", n)
	}
}

func registeredLockers() []string {
	s, _ := driver.LockerSchemes()
	return s
}

func registeredResources() []string {
	s, _ := driver.ResourceSchemes()
	return s
}

func lockerForms() []string {
	_, f := driver.LockerSchemes()
	return f
}

func resourceForms() []string {
	_, f := driver.ResourceSchemes()
	return f
}
