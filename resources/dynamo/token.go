package dynamo

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fencekit/fence"
)

// tokenValue is how a token is stored: a DynamoDB number.
func tokenValue(t fence.Token) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: t.String()}
}

// parseFence reads a fence attribute: 0 when av is nil (absent), the token
// when it is a number holding a positive integer of at most 64 bits, and a
// *fence.CorruptError naming resource otherwise.
func parseFence(resource, attr string, av types.AttributeValue) (fence.Token, error) {
	if av == nil {
		return 0, nil
	}
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0, &fence.CorruptError{Key: resource, Reason: fmt.Sprintf("fence attribute %q is of type %s, not a number", attr, typeName(av))}
	}
	tok, err := fence.ParseToken(n.Value)
	if err != nil {
		var ie *fence.InvalidError
		if errors.As(err, &ie) {
			err = errors.New(ie.Reason)
		}
		return 0, &fence.CorruptError{Key: resource, Reason: fmt.Sprintf("fence attribute %q is not a positive 64-bit integer", attr), Err: err}
	}
	return tok, nil
}
