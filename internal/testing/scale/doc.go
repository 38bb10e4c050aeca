// Package scale measures what a fence.Session's renewals cost on every
// store of testlockers.Backends as the number of leases it holds grows.
// Its benchmark holds N = 1, 100, 1,000 and 10,000 leases in one Session
// and reports, per renewal interval: round trips on the wire, driver
// calls, client CPU, and the leases lost. See BenchmarkRenewScale.
package scale
