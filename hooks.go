package fence

import (
	"context"

	"github.com/fencekit/fence/internal/hook"
)

// The functions packages driver and guard reach through internal/hook.
func init() {
	hook.NewLocker = func(s hook.LockerSpec) (any, error) { return newLocker(s) }
	hook.Locker = func(l any) hook.LockerSpec { return l.(*Locker).spec }
	hook.NewResource = func(s hook.ResourceSpec) (any, error) { return newResource(s) }
	hook.Resource = func(r any) hook.ResourceSpec { return r.(*Resource).spec }
	hook.ValidateKey = validateKey
	hook.ValidateTTL = validateTTL
	hook.ValidateToken = func(t uint64) error { return validateToken(Token(t)) }
	hook.WorkContext = func(h any, parent context.Context) context.Context { return h.(*Handle).context(parent) }
	hook.EndWork = func(ctx context.Context) { ctx.(*handleCtx).cancel() }
	hook.Register = func(kind, scheme string, opener any) {
		switch kind {
		case "Locker":
			lockerURLs.register(kind, scheme, opener.(lockerOpener))
		case "Resource":
			resourceURLs.register(kind, scheme, opener.(resourceOpener))
		}
	}
	hook.Schemes = func(kind string) ([]string, []string) {
		if kind == "Locker" {
			return lockerURLs.schemes(), lockerURLs.forms(lockerOpener.URLForm)
		}
		return resourceURLs.schemes(), resourceURLs.forms(resourceOpener.URLForm)
	}
}
