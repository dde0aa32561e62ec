package main

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestGatewayUp(t *testing.T) {
	g := &gateway{}
	c := gatewayUp(g)
	if v := testutil.ToFloat64(c); v != 1 {
		t.Fatalf("serving gateway: rsbd_gateway_up %v", v)
	}
	err := errors.New("listener closed")
	g.failed.Store(&err)
	if v := testutil.ToFloat64(c); v != 0 {
		t.Fatalf("failed gateway: rsbd_gateway_up %v", v)
	}
}
