package dynamo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/fencekit/fence"
)

// write is one fenced write in progress.
type write struct {
	op       string // "put", "update", "delete", for messages
	token    fence.Token
	id       string // random, stored in the write id attribute
	key      map[string]types.AttributeValue
	resource string
	delete   bool // the write leaves a tombstone
	// maybe is set when an attempt of this write, before the last one the
	// SDK made, ended without a definite answer: it may have been applied.
	maybe atomic.Bool
}

// watch returns optFns plus a middleware that runs once per attempt the
// SDK makes (it sits after the retry middleware) and records in w.maybe an
// attempt that ended ambiguously. A later attempt refused by the condition
// then does not prove that the write was never applied.
func (w *write) watch(optFns []func(*dynamodb.Options)) []func(*dynamodb.Options) {
	attempt := middleware.FinalizeMiddlewareFunc("fence/dynamo: ambiguous attempts",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleFinalize(ctx, in)
			if err != nil && ambiguous(err) {
				w.maybe.Store(true)
			}
			return out, md, err
		})
	return append(slices.Clone(optFns), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Finalize.Add(attempt, middleware.After)
		})
	})
}

// begin checks what every fenced write needs and returns its write.
func (t *Table) begin(op string, token fence.Token, table *string, key map[string]types.AttributeValue) (*write, error) {
	if err := fence.ValidateToken(token); err != nil {
		return nil, err
	}
	if err := t.checkTable(table); err != nil {
		return nil, err
	}
	return &write{op: op, token: token, id: rand.Text(), key: key, resource: t.describeKey(key), delete: op == "delete"}, nil
}

// checkTable refuses an input naming another table than t's.
func (t *Table) checkTable(table *string) error {
	if table != nil && *table != t.o.Table {
		return &fence.InvalidError{Field: "TableName", Reason: fmt.Sprintf("%q, but this Table writes to %q", *table, t.o.Table)}
	}
	return nil
}

// checkLegacy refuses the legacy parameters, which DynamoDB does not mix
// with expressions.
func checkLegacy(expected map[string]types.ExpectedAttributeValue, op types.ConditionalOperator) error {
	if len(expected) > 0 {
		return &fence.InvalidError{Field: "Expected", Reason: "legacy conditions cannot be combined with the fence; use ConditionExpression"}
	}
	if op != "" {
		return &fence.InvalidError{Field: "ConditionalOperator", Reason: "legacy conditions cannot be combined with the fence; use ConditionExpression"}
	}
	return nil
}

// settle turns the error of a fenced write into the package's errors. It
// reports applied when reading the item back shows that this write was
// applied after all (a lost response, or an SDK retry of an applied
// attempt). A write that may have been applied and is not found is a
// *fence.UnknownOutcomeError, never a stale token.
func (t *Table) settle(ctx context.Context, w *write, err error) (applied bool, _ error) {
	if ccf, ok := errors.AsType[*types.ConditionalCheckFailedException](err); ok {
		item := ccf.Item
		if len(item) == 0 {
			// No ReturnValuesOnConditionCheckFailure (dynalite), or
			// there was no item: read what is there now. The fence
			// only grows, so a fence that refused us still does.
			var rerr error
			if item, rerr = t.read(ctx, w.key); rerr != nil {
				return false, fmt.Errorf("fence/dynamo: %s %q: condition failed (%w), and reading the item back failed: %w", w.op, w.resource, err, rerr)
			}
		}
		if t.mine(w, item) {
			return true, nil
		}
		highest, perr := parseFence(w.resource, t.o.FenceAttribute, item[t.o.FenceAttribute])
		if perr != nil {
			return false, perr
		}
		if w.maybe.Load() {
			// An earlier attempt may have landed and been replaced since:
			// neither "stale" nor the caller's condition failing is known.
			ue := &fence.UnknownOutcomeError{Key: w.resource, Token: w.token, Err: err}
			if highest > w.token {
				ue.Highest = highest
			}
			return false, ue
		}
		if highest > w.token {
			return false, &fence.StaleTokenError{Key: w.resource, Token: w.token, Highest: highest}
		}
		return false, &ConditionFailedError{Resource: w.resource, Item: item, Err: err}
	}
	if !w.maybe.Load() {
		// Every attempt was refused or never sent: nothing was applied.
		return false, fmt.Errorf("fence/dynamo: %s %q: %w", w.op, w.resource, err)
	}
	// An attempt was sent and its answer lost: read back, unless ctx is
	// done. Not finding this write does not prove it was never applied
	// (a higher token may have replaced it, or the request may still
	// land), so the outcome stays unknown.
	ue := &fence.UnknownOutcomeError{Key: w.resource, Token: w.token, Err: err}
	if cerr := ctx.Err(); cerr != nil {
		if !errors.Is(err, cerr) {
			ue.Err = errors.Join(err, cerr)
		}
		return false, ue
	}
	item, rerr := t.read(ctx, w.key)
	if rerr != nil {
		ue.Err = errors.Join(err, fmt.Errorf("reading the item back: %w", rerr))
		return false, ue
	}
	if t.mine(w, item) {
		return true, nil
	}
	if highest, perr := parseFence(w.resource, t.o.FenceAttribute, item[t.o.FenceAttribute]); perr == nil && highest > w.token {
		ue.Highest = highest
	}
	return false, ue
}

// ambiguous reports whether err leaves the outcome of a write unknown:
// anything but an answer of the service that refuses the request.
func ambiguous(err error) bool {
	if ae, ok := errors.AsType[smithy.APIError](err); ok {
		return ae.ErrorFault() == smithy.FaultServer
	}
	return true
}

// mine reports whether item is the result of w: it carries w's token and
// write id, and is a tombstone exactly when w is a delete.
func (t *Table) mine(w *write, item map[string]types.AttributeValue) bool {
	id, ok := item[t.o.WriteIDAttribute].(*types.AttributeValueMemberS)
	if !ok || id.Value != w.id {
		return false
	}
	tok, err := parseFence(w.resource, t.o.FenceAttribute, item[t.o.FenceAttribute])
	if err != nil || tok != w.token {
		return false
	}
	_, tomb := item[t.o.TombstoneAttribute]
	return tomb == w.delete
}

// read returns the item under key with a consistent read; nil when there
// is none.
func (t *Table) read(ctx context.Context, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := t.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(t.o.Table),
		Key:            key,
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// visible returns what a caller sees of item: nil for a tombstone, and
// the item without the write id attribute otherwise.
func (t *Table) visible(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if item == nil {
		return nil
	}
	if _, tomb := item[t.o.TombstoneAttribute]; tomb {
		return nil
	}
	if _, ok := item[t.o.WriteIDAttribute]; !ok {
		return item
	}
	item = maps.Clone(item)
	delete(item, t.o.WriteIDAttribute)
	return item
}
