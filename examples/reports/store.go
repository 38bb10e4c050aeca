package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fencekit/fence"
	fenceazblob "github.com/fencekit/fence/resources/azblob"
	fencegcs "github.com/fencekit/fence/resources/gcs"
	memres "github.com/fencekit/fence/resources/memory"
	fences3 "github.com/fencekit/fence/resources/s3"
)

// objectStore is where reports are uploaded. upload is the fenced write
// (the store refuses a token lower than the highest it has seen for the
// object, with fence.ErrStaleToken), except in control runs, where it writes
// without any check. read returns an object and the token it was written
// with; an absent object is an error matching fence.ErrNotFound.
type objectStore interface {
	upload(ctx context.Context, name string, token fence.Token, csv []byte) error
	read(ctx context.Context, name string) ([]byte, fence.Token, error)
}

// memoryStore is the in-process fenced store of resources/memory.
type memoryStore struct{ res *fence.Resource }

func newMemoryStore(unfenced bool) *memoryStore {
	return &memoryStore{res: memres.New(&memres.Options{Unfenced: unfenced})}
}

func (m *memoryStore) upload(ctx context.Context, name string, token fence.Token, csv []byte) error {
	return m.res.Put(ctx, name, token, csv)
}

func (m *memoryStore) read(ctx context.Context, name string) ([]byte, fence.Token, error) {
	return m.res.Get(ctx, name)
}

// s3Store uploads through resources/s3: the token in the object's user
// metadata, the write one conditional PUT.
type s3Store struct {
	client   *s3.Client
	name     string // the bucket's
	bucket   *fence.Resource
	unfenced bool
}

// newS3Store writes into bucket, creating it when it does not exist.
func newS3Store(ctx context.Context, client *s3.Client, bucket string, unfenced bool) (*s3Store, error) {
	_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)})
	var owned *s3types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return nil, fmt.Errorf("create bucket %q: %w", bucket, err)
	}
	b, err := fences3.New(client, bucket, nil)
	if err != nil {
		return nil, err
	}
	return &s3Store{client: client, name: bucket, bucket: b, unfenced: unfenced}, nil
}

func (s *s3Store) upload(ctx context.Context, name string, token fence.Token, csv []byte) error {
	if s.unfenced {
		// Control run: a plain PUT that records the token the way the
		// fenced writer does, but checks nothing.
		_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(s.name), Key: aws.String(name), Body: bytes.NewReader(csv),
			ContentType: aws.String("text/csv"),
			Metadata:    map[string]string{fences3.MetaToken: token.String(), fences3.MetaWriteID: randomID()},
		})
		return err
	}
	// A bytes.Reader is seekable, so the package streams it and seeks
	// back for a retry instead of buffering it.
	_, err := fences3.PutObject(ctx, s.bucket, name, token, bytes.NewReader(csv), &fences3.PutOptions{ContentType: "text/csv"})
	return err
}

func (s *s3Store) read(ctx context.Context, name string) ([]byte, fence.Token, error) {
	obj, err := fences3.GetObject(ctx, s.bucket, name)
	if err != nil {
		return nil, 0, err
	}
	defer obj.Body.Close()
	body, err := io.ReadAll(obj.Body)
	return body, obj.Token, err
}

// gcsStore uploads through resources/gcs: the token in the object's
// metadata, the write conditional on the generation whose token was checked.
type gcsStore struct {
	bucket   *storage.BucketHandle
	res      *fence.Resource
	unfenced bool
}

// newGCSStore writes into bucket, creating it when it does not exist.
func newGCSStore(ctx context.Context, client *storage.Client, bucket, project string, unfenced bool) (*gcsStore, error) {
	bh := client.Bucket(bucket)
	if _, err := bh.Attrs(ctx); errors.Is(err, storage.ErrBucketNotExist) {
		if err := bh.Create(ctx, project, nil); err != nil {
			return nil, fmt.Errorf("create bucket %q: %w", bucket, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("bucket %q: %w", bucket, err)
	}
	res, err := fencegcs.New(bh, &fencegcs.Options{RateLimitBackoff: 200 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	return &gcsStore{bucket: bh, res: res, unfenced: unfenced}, nil
}

func (g *gcsStore) upload(ctx context.Context, name string, token fence.Token, csv []byte) error {
	if g.unfenced {
		// Control run: a plain upload with the token in the metadata, no
		// precondition.
		w := g.bucket.Object(name).NewWriter(ctx)
		w.ContentType = "text/csv"
		w.Metadata = map[string]string{fencegcs.MetaToken: token.String(), fencegcs.MetaWriteID: randomID()}
		if _, err := w.Write(csv); err != nil {
			_ = w.Close()
			return err
		}
		return w.Close()
	}
	_, err := fencegcs.Upload(ctx, g.res, name, token, bytes.NewReader(csv), &fencegcs.UploadOptions{ContentType: "text/csv"})
	return err
}

func (g *gcsStore) read(ctx context.Context, name string) ([]byte, fence.Token, error) {
	r, err := fencegcs.NewReader(ctx, g.res, name)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	body, err := io.ReadAll(r)
	return body, r.Token, err
}

// azblobStore uploads through resources/azblob: the token in the blob's
// metadata, the write conditional on the ETag whose token was checked.
type azblobStore struct {
	client   *container.Client
	res      *fence.Resource
	unfenced bool
}

// newAzblobStore writes into the container of client, creating it when it
// does not exist.
func newAzblobStore(ctx context.Context, client *container.Client, unfenced bool) (*azblobStore, error) {
	res, err := fenceazblob.New(client, nil)
	if err != nil {
		return nil, err
	}
	if err := res.Create(ctx); err != nil {
		return nil, err
	}
	return &azblobStore{client: client, res: res, unfenced: unfenced}, nil
}

func (a *azblobStore) upload(ctx context.Context, name string, token fence.Token, csv []byte) error {
	if a.unfenced {
		// Control run: a plain Put Blob with the token in the metadata, no
		// condition.
		tok, id := token.String(), randomID()+randomID()
		ct := "text/csv"
		_, err := a.client.NewBlockBlobClient(name).Upload(ctx, streaming.NopCloser(bytes.NewReader(csv)), &blockblob.UploadOptions{
			Metadata:    map[string]*string{fenceazblob.MetaToken: &tok, fenceazblob.MetaWriteID: &id},
			HTTPHeaders: &blob.HTTPHeaders{BlobContentType: &ct},
		})
		return err
	}
	_, err := fenceazblob.PutBlob(ctx, a.res, name, token, bytes.NewReader(csv), &fenceazblob.PutOptions{ContentType: "text/csv"})
	return err
}

func (a *azblobStore) read(ctx context.Context, name string) ([]byte, fence.Token, error) {
	b, err := fenceazblob.GetBlob(ctx, a.res, name)
	if err != nil {
		return nil, 0, err
	}
	defer b.Body.Close()
	body, err := io.ReadAll(b.Body)
	return body, b.Token, err
}

// randomID returns 64 random bits in hex.
func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
