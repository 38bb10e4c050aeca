package storeurl_test

import (
	"fmt"

	"github.com/fencekit/fence/cmd/fence/internal/storeurl"
)

func ExampleParse() {
	s, err := storeurl.Parse("postgres://app:hunter2@db.internal/app?table=ops.locks&sslmode=require")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Kind, s.Table)
	fmt.Println(s.Redacted)
	fmt.Println(storeurl.Scrub("server said: password hunter2 rejected", s.Password))

	s, _ = storeurl.Parse("dynamodb://locks?region=eu-west-1&trusted-clock=true&max-clock-skew=500ms")
	fmt.Println(s.Kind, s.Table, s.Region, s.TrustedClock, s.MaxClockSkew)
	// Output:
	// postgres ops.locks
	// postgres://app:xxxxx@db.internal/app?table=ops.locks&sslmode=require
	// server said: password xxxxx rejected
	// dynamodb locks eu-west-1 true 500ms
}
