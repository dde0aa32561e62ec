package mqtt

import (
	"context"

	"github.com/rsbd/rsbd/bridge"
)

// receiveLoop is the receive loop both protocol versions run: once the
// connection is up (await), it hands each message of inbox to handle, in
// the broker's order, until ctx ends, the receiver closes (closed), the
// connection goes down (down: ErrDisconnected) or handle fails.
func receiveLoop[T any](ctx context.Context, await func(context.Context) error, down <-chan struct{},
	closed <-chan struct{}, inbox <-chan T, handle func(T) error) error {
	if err := await(ctx); err != nil {
		return err
	}
	select {
	case <-down: // a loss before the connection came up is over
	default:
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-closed:
			return bridge.ErrClosed
		case <-down:
			return ErrDisconnected
		case m := <-inbox:
			if err := handle(m); err != nil {
				return err
			}
		}
	}
}
