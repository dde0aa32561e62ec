package testutil

import (
	"io"
	"net/http"
	"testing"
)

// Do sends req with c and returns the response, its body read and closed,
// and the body; an error sending it fails the test.
func Do(t testing.TB, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}
