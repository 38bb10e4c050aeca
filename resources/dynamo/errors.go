package dynamo

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ErrConditionFailed matches a fenced write refused by the caller's own
// ConditionExpression (the token was not stale). See ConditionFailedError.
var ErrConditionFailed = errors.New("fence/dynamo: condition failed")

// ConditionFailedError reports that the caller's ConditionExpression
// failed while the fence condition held. It matches ErrConditionFailed and
// unwraps to the SDK's *types.ConditionalCheckFailedException.
type ConditionFailedError struct {
	// Key names the item, as fence.StaleTokenError does.
	Key string
	// Item is the item as it was read back after the failure (a tombstone
	// included); nil when there was none.
	Item map[string]types.AttributeValue
	// Err is the SDK's error.
	Err error
}

// Error names the item and the SDK's error.
func (e *ConditionFailedError) Error() string {
	return fmt.Sprintf("condition failed on %q: %v", e.Key, e.Err)
}

// Is makes errors.Is(err, ErrConditionFailed) true.
func (e *ConditionFailedError) Is(target error) bool { return target == ErrConditionFailed }

// Unwrap returns the SDK's error.
func (e *ConditionFailedError) Unwrap() error { return e.Err }
