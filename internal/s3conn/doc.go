// Package s3conn holds what lockers/s3 and resources/s3 share about
// reaching S3: the bucket, region, endpoint and path-style parameters of
// an s3:// URL (Parse), the client built from the SDK's default
// configuration (Config.Client), bucket creation (CreateBucket), and the
// reading of S3's error answers (StatusOf, CodeOf, LostRace).
package s3conn
