//go:build !linux

package testutil

import (
	"context"
	"errors"
	"net"
)

// DialInNetns needs Linux network namespaces; elsewhere it fails.
func DialInNetns(ctx context.Context, netns, network, addr string) (net.Conn, error) {
	return nil, errors.New("network namespaces need Linux")
}
