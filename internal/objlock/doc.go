// Package objlock is the lock driver that lockers/gcs and lockers/s3
// share: one small JSON record per key in an object store that can write
// an object on the condition that it is (or is not yet) a given version.
//
// A backend implements Bucket (one read, one conditional write and one
// conditional probe of an object, and the classification of its errors)
// and makes a Store with New. The Store implements the Acquire, Renew,
// Release, Break and Inspect of driver.Locker, driver.Publisher and
// driver.ReleaseNotifier over it: the record's format, what a Locker remembers of each key and
// the clock-free or trusted-clock judgement of expiry (internal/clockfree),
// the retries of throttled and failed requests, the reconciliation of a
// write whose answer was lost, and the probes that wake a waiter
// (internal/probe). The backend adds Info, As, its names, its URL opener
// and its package doc.
//
// Versions are strings that the store gives each write ("" stands for an
// object that does not exist). When Config.OrderedVersions is set they
// are decimal numbers that grow with each write (Cloud Storage
// generations), and a late answer that shows an older version than one
// already seen is ignored; otherwise (S3 ETags) every new version seen
// restarts the clock-free wait, which only delays a takeover.
package objlock
