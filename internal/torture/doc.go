// Package torture attacks every locker and resource of fence with faults and
// checks, from what the resources stored, that no stale write was ever
// accepted.
//
// A run (Run) starts workers that repeatedly take a lease through the guard
// on one of a few keys and do a read-modify-write of a fenced resource with
// the lease's token: claim the name with the token (fence.Resource.Claim,
// which raises its high-water mark and keeps its value), read the stored
// list of entries, append an entry {worker, sequence, token}, and put the
// list back with the token. Some
// leases are long jobs, held for 2 to 3 TTLs through several renewals with
// a write every half TTL, then released; the last worker's first lease is
// one, on a key of its own and off the faults. How each lease ended is
// followed through the guard's Observer: leases lost, and releases the
// store refused after renewals, are counted and reported, and a refused
// release of that guaranteed long job fails the run.
//
// Every attempt is recorded with its times and outcome. Faults are injected
// meanwhile and counted: pauses longer than the TTL (the worker stops after
// reading and its renewals stop too, then it writes with its old token);
// delayed requests, requests dropped before sending and answers dropped
// after the store applied the request, through a fault-injecting
// http.RoundTripper (Transport) for the HTTP SDKs and a TCP proxy (Proxy)
// for the TCP stores; outages of the HTTP path; restarts of the run's
// private stores (PostgreSQL, MariaDB, dynalite, MinIO, fake-gcs-server,
// Azurite; see Result.Disruptions); failovers of its private clusters (the
// leader of three etcd members or ZooKeeper servers killed, a Redis primary
// killed behind Sentinel); and skewed clocks for lockers in trusted-clock
// mode.
//
// With Config.Processes (cmd/torture's -processes, on by default; the
// short run too), each worker is an OS process of its own: the program
// re-executed, which calls WorkerMain first. The run's process keeps the
// stores, private servers, disruptions and proxies and the records; each
// worker process opens its locker and resources from the URLs, with a
// fault-injecting Transport of its own, and sends every record (write
// attempts announced before the write and completed after it, reads,
// leases, long jobs, refusals, fault counts) on a pipe as it happens. The
// run then stops whole processes (SIGSTOP, renewal goroutines included)
// for 1.5 to 2.5 TTLs, worker 1's guaranteed pause among them, and kills
// (SIGKILL) workers while they hold a lease, a fresh process with a new
// worker number taking each one's place; a write in flight in a killed
// process is recorded as of unknown outcome. The pairs whose store lives
// in the run's process (memory/memory, gcs-trusted/memory) run their
// workers in it; their mode lacks the "/procs" of the others.
//
// After the run, the checker (Check) reads every resource back through a
// client without faults and judges the stored lists, not what the workers
// believe: per resource, the tokens of applied writes never decrease; no
// write whose token was lower than that of a write acknowledged before it
// began is present; no write reported as refused is present; no write
// acknowledged as applied is missing, unless a holder with a higher token
// that had read the list before the write landed overwrote it (a lost update
// that fencing alone cannot prevent, counted apart, and failing a fenced run
// since the workers claim before they read). The recorded history is also
// checked with the porcupine linearizability checker against a model of a
// fenced register, and the leases taken with CheckLeases: no token handed
// out twice on a key, none lower than one handed out before. Violations
// that a locker's documented guarantees allow in its configuration
// (LockerKind.Expected: Redis failover without WAIT) are reported apart,
// and a fenced run of such a pair fails when it did not show them.
//
// A control run is the same run with the resource-side check switched off:
// its checker must find violations, or the faults were too weak to prove
// anything and the run fails.
//
// Every backend is opened from a URL, through the URL opener its package
// registers (package backends imports them all), as any program opens it:
// a LockerKind or ResourceKind names its store by URLs unique to the run,
// one through the faults and one without, and the run creates the store,
// opens the workers' lockers and resources, and removes the store at the
// end. Adding a backend to the run is one such entry and a line in Pairs.
//
// The transfer workload (Config.Transfer) attacks multi-key locks: its
// lease keys are accounts in the pair's SQL database, and each worker
// repeatedly takes two or three of them with fence.Session.LockAll, in
// random orders, reads their balances and writes them back with a random
// amount moved from one to the others, under the same faults. Fenced,
// the read and the write each run in one transaction that first checks
// every account's fence row with that account's own token
// (resources/sql Fences.Check per key); the control run leaves the checks
// out. The checker reads the accounts and the recorded transfers back and
// requires the total to be kept, no account below zero and every balance
// to be its initial one plus the transfers recorded (see transfer.go).
// TransferPairs pairs every locker with an SQL resource.
//
// Pairs lists the locker × resource pairs; the package's tests run each for
// 30 to 50 seconds in two waves (the short run), and the transfer workload
// on a few lockers for 12 seconds; cmd/torture runs them all for as long
// as asked (the long run).
package torture
