// Package objlocktest holds the tests that lockers/gcs and lockers/s3
// share: each runs against the backend's own emulator through a Harness
// that the backend's tests give it.
package objlocktest

import "strings"

// BadRecords are objects no Locker wrote: each must be refused as
// corrupt.
var BadRecords = []struct{ Name, Data string }{
	{"empty", ``},
	{"not JSON", `held by me`},
	{"JSON array", `[1,2]`},
	{"JSON null", `null`},
	{"truncated", `{"v":1,"state":"held","owner":"o","token":"3"`},
	{"trailing data", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w"} {}`},
	{"unknown field", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w","x":1}`},
	{"missing token", `{"v":1,"state":"held","owner":"o","ttl_ns":3000000000,"write":"w"}`},
	{"missing owner", `{"v":1,"state":"held","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"missing state", `{"v":1,"owner":"o","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"missing version", `{"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"missing ttl", `{"v":1,"state":"held","owner":"o","token":"3","write":"w"}`},
	{"missing write id", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000}`},
	{"future version", `{"v":2,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"zero token", `{"v":1,"state":"held","owner":"o","token":"0","ttl_ns":3000000000,"write":"w"}`},
	{"negative token", `{"v":1,"state":"held","owner":"o","token":"-1","ttl_ns":3000000000,"write":"w"}`},
	{"token as a number", `{"v":1,"state":"held","owner":"o","token":3,"ttl_ns":3000000000,"write":"w"}`},
	{"non-numeric token", `{"v":1,"state":"held","owner":"o","token":"three","ttl_ns":3000000000,"write":"w"}`},
	{"token over 64 bits", `{"v":1,"state":"held","owner":"o","token":"18446744073709551616","ttl_ns":3000000000,"write":"w"}`},
	{"unknown state", `{"v":1,"state":"taken","owner":"o","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"empty owner", `{"v":1,"state":"held","owner":"","token":"3","ttl_ns":3000000000,"write":"w"}`},
	{"zero ttl", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":0,"write":"w"}`},
	{"negative ttl", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":-5,"write":"w"}`},
	{"ttl over the limit", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":86400000000001,"write":"w"}`},
	{"fractional ttl", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":1.5,"write":"w"}`},
	{"empty write id", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":""}`},
	{"negative expiry", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w","expires_unix_ns":-1}`},
	{"free with an expiry", `{"v":1,"state":"free","owner":"o","token":"3","ttl_ns":3000000000,"write":"w","expires_unix_ns":5}`},
	{"value not base64", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w","value":"not base64!"}`},
	{"value as a number", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w","value":5}`},
	// 171 × "eHh4" is the base64 of 513 bytes, one more than
	// fence.MaxValueLen.
	{"value over the limit", `{"v":1,"state":"held","owner":"o","token":"3","ttl_ns":3000000000,"write":"w","value":"` + strings.Repeat("eHh4", 171) + `"}`},
	{"free with a value", `{"v":1,"state":"free","owner":"o","token":"3","ttl_ns":3000000000,"write":"w","value":"eA=="}`},
}
