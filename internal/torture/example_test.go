package torture_test

import (
	"fmt"
	"time"

	"github.com/fencekit/fence/internal/torture"
)

// Check judges what a resource stored against what the workers recorded.
// Here worker 1 (token 1) paused after reading, worker 2 took the lease
// (token 2) and appended its entry, then worker 1 woke up and put back the
// list it had read plus its own entry: a resource without fencing applied
// it, losing worker 2's acknowledged write.
func ExampleCheck() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	attempts := []torture.Attempt{
		{Worker: 1, Seq: 1, Name: "r", Token: 1, ReadStart: ms(0), Start: ms(1), End: ms(2), Outcome: torture.Applied},
		{Worker: 2, Seq: 1, Name: "r", Token: 2, Parent: "w1.1", ReadStart: ms(10), Start: ms(11), End: ms(12), Outcome: torture.Applied},
		{Worker: 1, Seq: 2, Name: "r", Token: 1, Parent: "w1.1", ReadStart: ms(3), Start: ms(20), End: ms(21), Outcome: torture.Applied, Paused: true},
	}
	stored := map[string][]torture.Entry{"r": {{Worker: 1, Seq: 1, Token: 1}, {Worker: 1, Seq: 2, Token: 1}}}
	v := torture.Check(attempts, stored)
	for _, x := range v.Violations {
		fmt.Println(x)
	}
	for _, a := range v.Lost {
		fmt.Println("lost:", a)
	}
	// Output:
	// stale-accepted on "r": w1.2 of "r" with token 1 (applied, after a pause) is stored, but w2.1 of "r" with token 2 (applied) had been acknowledged 8ms before it began
	// lost: w2.1 of "r" with token 2 (applied)
}
