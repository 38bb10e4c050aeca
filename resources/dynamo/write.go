package dynamo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/driver"
)

// write is one fenced write in progress.
type write struct {
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

// checkWrite checks what every fenced item method needs.
func (r *store) checkWrite(token fence.Token, table *string, expected map[string]types.ExpectedAttributeValue, op types.ConditionalOperator, names map[string]string, values map[string]types.AttributeValue) error {
	if err := driver.ValidateToken(token); err != nil {
		return err
	}
	if err := r.checkTable(table); err != nil {
		return err
	}
	if err := checkLegacy(expected, op); err != nil {
		return err
	}
	if err := checkNames(names); err != nil {
		return err
	}
	return checkValues(values)
}

// newWrite returns the write of op ("put", "update", "delete") with
// token on the item of key.
func (r *store) newWrite(op string, token fence.Token, key map[string]types.AttributeValue) *write {
	return &write{token: token, id: rand.Text(), key: key, resource: r.describeKey(key), delete: op == "delete"}
}

// checkTable refuses an input naming another table than r's.
func (r *store) checkTable(table *string) error {
	if table != nil && *table != r.table {
		return &fence.InvalidError{Field: "TableName", Reason: fmt.Sprintf("%q, but this resource writes to %q", *table, r.table)}
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
func (r *store) settle(ctx context.Context, w *write, err error) (applied bool, _ error) {
	if ccf, ok := errors.AsType[*types.ConditionalCheckFailedException](err); ok {
		item := ccf.Item
		if len(item) == 0 {
			// No ReturnValuesOnConditionCheckFailure (dynalite), or
			// there was no item: read what is there now. The fence
			// only grows, so a fence that refused us still does.
			var rerr error
			if item, rerr = r.read(ctx, w.key); rerr != nil {
				return false, fmt.Errorf("condition failed (%w), and reading the item back failed: %w", err, rerr)
			}
		}
		if r.mine(w, item) {
			return true, nil
		}
		highest, perr := parseFence(w.resource, r.o.FenceAttribute, item[r.o.FenceAttribute])
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
		return false, &ConditionFailedError{Key: w.resource, Item: item, Err: err}
	}
	if !w.maybe.Load() {
		// Every attempt was refused or never sent: nothing was applied.
		return false, storeErr(err)
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
	item, rerr := r.read(ctx, w.key)
	if rerr != nil {
		ue.Err = errors.Join(err, fmt.Errorf("reading the item back: %w", rerr))
		return false, ue
	}
	if r.mine(w, item) {
		return true, nil
	}
	if highest, perr := parseFence(w.resource, r.o.FenceAttribute, item[r.o.FenceAttribute]); perr == nil && highest > w.token {
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
func (r *store) mine(w *write, item map[string]types.AttributeValue) bool {
	id, ok := item[r.o.WriteIDAttribute].(*types.AttributeValueMemberS)
	if !ok || id.Value != w.id {
		return false
	}
	tok, err := parseFence(w.resource, r.o.FenceAttribute, item[r.o.FenceAttribute])
	if err != nil || tok != w.token {
		return false
	}
	_, tomb := item[r.o.TombstoneAttribute]
	return tomb == w.delete
}

// visible returns what a caller sees of item: nil for a tombstone, and
// the item without the write id attribute otherwise.
func (r *store) visible(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if item == nil {
		return nil
	}
	if _, tomb := item[r.o.TombstoneAttribute]; tomb {
		return nil
	}
	if _, ok := item[r.o.WriteIDAttribute]; !ok {
		return item
	}
	item = maps.Clone(item)
	delete(item, r.o.WriteIDAttribute)
	return item
}
