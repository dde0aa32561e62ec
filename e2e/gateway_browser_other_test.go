//go:build !linux

package e2e

import "testing"

// testGatewayBrowser runs headless Chromium, which the tests start on
// Linux only.
func testGatewayBrowser(t *testing.T, _ string, _ *client) {
	t.Log("the browser check of the gateway runs on Linux")
}
